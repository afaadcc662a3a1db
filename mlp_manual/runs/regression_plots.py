"""The figures of a regression run's folder: predictions.png (predicted against true) and, for a
model with one input feature, fit.png (the data and the fitted curve).

N = samples, D = features, K = targets, G = points of the curve.
"""

from pathlib import Path

import numpy as np

from ..datasets.dataset import target_labels
from ..training.evaluation import model_outputs
from ..training.experiment import Experiment


def write_regression_plots(exp: Experiment, run_dir: Path) -> None:
    """predictions.png on the test split (else validation, else training), and for one input
    feature fit.png: the training data and the model's curve, in the feature's raw units."""
    from ..plots import regression as plots_regression

    d, name = exp.data, exp.cfg.name
    split = next(s for s in ("test", "val", "train") if getattr(d, f"X_{s}") is not None)
    X, y = getattr(d, f"X_{split}"), getattr(d, f"y_{split}")  # (N, D), (N, K)
    targets = target_labels(d.target_names, d.target_width)
    units = d.target_preprocessing.invert if d.target_preprocessing else (lambda A: A)  # y in the data's units
    plots_regression.plot_predictions(units(y), units(model_outputs(exp.model, X)), targets,
                                      run_dir / "predictions.png", f"{name}: predicted against true, {split} split")
    if d.n_features == 1:
        unscale = d.preprocessing.invert if d.preprocessing else (lambda A: A)
        grid = np.linspace(d.X_train.min(), d.X_train.max(), 300, dtype=d.X_train.dtype)[:, None]  # (G, 1)
        plots_regression.plot_fit(unscale(d.X_train)[:, 0], units(d.y_train), unscale(grid)[:, 0],
                                  units(model_outputs(exp.model, grid)), (d.feature_names or ("x",))[0], targets,
                                  run_dir / "fit.png", f"{name}: fitted curve (training data)")

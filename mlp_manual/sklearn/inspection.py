"""A fitted estimator's network seen as mlp-gradcheck and mlp-explain see a trained model:
its hand-written gradients checked against float64 central differences, and its forward and
backward pass walked through on a few rows, as text or as the stepping page.

N = rows, D = features, K = output units.
"""

import numpy as np

from ..files import write_text
from ..losses import LOSSES
from .outputs import loss_and_seed


def gradcheck(est, X, y, **settings):
    """The GradcheckReport of the network on X (N, D), y, with the estimator's own output layer
    and loss (``mlp_manual.gradcheck.check_model``; ``settings`` as its)."""
    from ..gradcheck.check import check_model

    X, Y = est._validate_input(X, y, incremental=True, reset=False, inspecting=True)
    output = est._output()
    return check_model(est._network(), lambda z, T: loss_and_seed(output, z, T, None)[:2], _dense(X),
                       Y.astype(np.float64), label=f"{type(est).__name__} {est.out_activation_}", **settings)


def explain(est, X, y, rows: int = 4, seed: int = 0, html=None) -> str:
    """mlp-explain's walk through the network on ``rows`` rows of X (N, D), y drawn by ``seed``,
    with the loss a model file names for it (softmax cross-entropy, binary cross-entropy on the
    logit, or mean squared error): the text, every gradient checked; with ``html``, the stepping
    page written there instead, and its path returned. ValueError for outputs a model file has no
    loss for (multilabel, poisson)."""
    from ..explain.text import format_trace
    from ..explain.trace import pick_rows, trace

    loss = LOSSES[est.model_info().loss]
    X, _ = est._validate_input(X, y, incremental=True, reset=False, inspecting=True)
    targets = np.searchsorted(est.classes_, np.asarray(y)) if hasattr(est, "classes_") else np.asarray(y, float)
    picked = pick_rows(X.shape[0], rows, seed)
    result = trace(est._network(), loss, _dense(X[picked]), targets[picked], check=html is None, seed=seed)
    title = f"{type(est).__name__}: rows {', '.join(map(str, picked))} of {X.shape[0]}, fitted weights, loss {loss.name}"
    if html is None:
        return format_trace(result, title)
    from ..explain.html import pass_data, render

    write_text(html, render(pass_data(result, title, False, (picked, X.shape[0]))))
    return str(html)


def _dense(X) -> np.ndarray:
    return X.toarray() if hasattr(X, "toarray") else np.asarray(X)

"""Small real tabular datasets, trained with mlp-train and predicted with mlp-predict, against
scikit-learn's MLPClassifier on the same split.

For each dataset that ships with scikit-learn (iris, wine, breast cancer, digits) and each seed:
a stratified 75/25 split; the training rows go to a CSV with named columns and text labels, the
held-out rows to a CSV without the label and with its columns in another order. mlp-manual
trains on the first with one short config (standardised inputs, one hidden layer of 64 ReLU
units, Adam, early stopping on a 10% validation split), then `mlp-predict` (the command, in a
subprocess) predicts the second from the model file alone. scikit-learn's `MLPClassifier()`
with its defaults (100 ReLU units, Adam, 200 iterations) is trained on the same training rows,
as given (its documented defaults) and behind a `StandardScaler`. Prints a Markdown table of
held-out accuracy (mean and spread over the seeds) and wall time per run (one BLAS thread unless
OPENBLAS_NUM_THREADS says otherwise; mlp-manual's time is the whole of writing the CSVs, training
with its run folder and plots, and starting the mlp-predict command).

    python benchmarks/tabular.py               # seeds 0 1 2, about two minutes
    python benchmarks/tabular.py --seeds 0
    python benchmarks/tabular.py --holes 0.1   # 10% of the feature cells empty, and an ID column

With ``--holes F``, a fraction F of the feature cells (training and held-out rows alike, drawn
from the seed) is left empty and each CSV starts with an ``id`` column. mlp-manual's config adds
``data.missing: mean`` and ``data.drop: [id]``, and ``mlp-predict --keep id`` writes the IDs
beside the predictions (checked against the held-out rows' IDs); scikit-learn's models get a
``SimpleImputer()`` (the mean) first, on the rows without the ID.

Needs scikit-learn (not a dependency of mlp-manual).
"""

import argparse
import csv
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # steady times on a shared machine
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mlp_manual.config import config_from_dict  # noqa: E402
from mlp_manual.runs.run import train_run  # noqa: E402

CONFIG = {
    "data": {"name": "csv", "target": "label", "preprocess": "standardize", "val_fraction": 0.1},
    "model": {"layers": [{"type": "linear", "units": 64}, "relu", {"type": "linear"}]},
    "optimizer": {"name": "adam", "lr": 0.003},
    "training": {"epochs": 200, "batch_size": 32, "checkpoint_every": 0,
                 "early_stopping": {"patience": 20, "monitor": "val_loss", "restore_best": True}},
}


def datasets():
    from sklearn import datasets as sk

    return {"iris": sk.load_iris(), "wine": sk.load_wine(), "breast cancer": sk.load_breast_cancer(),
            "digits": sk.load_digits()}


def write_csv(path: Path, X: np.ndarray, names: list[str], labels=None, ids=None) -> None:
    """A CSV of X (a NaN as an empty cell), with an ``id`` column first when ``ids`` are given."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow((["id"] if ids is not None else []) + names + (["label"] if labels is not None else []))
        for i, row in enumerate(X):
            w.writerow(([ids[i]] if ids is not None else []) + ["" if np.isnan(v) else repr(float(v)) for v in row]
                       + ([labels[i]] if labels is not None else []))


def mlp_manual_accuracy(folder: Path, X_train, y_train, X_test, y_test, names, seed,
                        holes: bool) -> tuple[float, float]:
    """Train from a CSV, predict the held-out CSV with the mlp-predict command; (accuracy, seconds)."""
    started = time.perf_counter()
    ids = (lambda n, first: [f"r{first + i}" for i in range(n)]) if holes else (lambda n, first: None)
    write_csv(folder / "train.csv", X_train, names, y_train, ids(len(X_train), 0))
    order = np.random.default_rng(seed).permutation(len(names))  # another column order, no label
    test_ids = ids(len(X_test), len(X_train))
    write_csv(folder / "new.csv", X_test[:, order], [names[j] for j in order], ids=test_ids)
    filled = {"missing": "mean", "drop": ["id"]} if holes else {}
    data = dict(CONFIG["data"], path=str(folder / "train.csv"), **filled)
    cfg = config_from_dict(dict(CONFIG, seed=seed, name="tabular", data=data))
    train_run(cfg, str(folder / "run"), echo=lambda line: None)
    subprocess.run([sys.executable, "-m", "mlp_manual.cli.predict", "--model", str(folder / "run" / "model.npz"),
                    "--input", str(folder / "new.csv"), "--output", str(folder / "pred.csv")]
                   + (["--keep", "id"] if holes else []),
                   check=True, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True)
    with open(folder / "pred.csv", newline="") as f:
        rows = list(csv.reader(f))[1:]
    if holes:
        assert [row[0] for row in rows] == test_ids, "mlp-predict --keep id lost the IDs"
        rows = [row[1:] for row in rows]
    predicted = [row[0] for row in rows]
    return float(np.mean(np.array(predicted) == np.array(y_test))), time.perf_counter() - started


def sklearn_accuracy(X_train, y_train, X_test, y_test, seed, scaled: bool, holes: bool) -> tuple[float, float]:
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.impute import SimpleImputer
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    started = time.perf_counter()
    model = MLPClassifier(random_state=seed)
    if scaled:
        model = make_pipeline(StandardScaler(), model)
    if holes:
        model = make_pipeline(SimpleImputer(), model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X_train, y_train)
    return float(np.mean(model.predict(X_test) == y_test)), time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--holes", type=float, default=0.0, help="the fraction of feature cells left empty")
    args = parser.parse_args()
    from sklearn.model_selection import train_test_split

    rows = []
    for name, d in datasets().items():
        labels = np.array([str(d.target_names[t]) for t in d.target])  # text labels, as a user's CSV has
        names = [str(n) for n in d.feature_names]
        results = {"mlp-manual": [], "sklearn": [], "sklearn scaled": []}
        for seed in args.seeds:
            X = d.data.astype(float)
            if args.holes:
                X = np.where(np.random.default_rng(seed).random(X.shape) < args.holes, np.nan, X)
            X_tr, X_te, y_tr, y_te = train_test_split(X, labels, test_size=0.25, stratify=labels, random_state=seed)
            holes = args.holes > 0
            with tempfile.TemporaryDirectory() as tmp:
                results["mlp-manual"].append(mlp_manual_accuracy(Path(tmp), X_tr, y_tr, X_te, y_te, names, seed, holes))
            results["sklearn"].append(sklearn_accuracy(X_tr, y_tr, X_te, y_te, seed, scaled=False, holes=holes))
            results["sklearn scaled"].append(sklearn_accuracy(X_tr, y_tr, X_te, y_te, seed, scaled=True, holes=holes))
            print(f"{name} seed {seed}: " + ", ".join(f"{k} {v[-1][0]:.4f}" for k, v in results.items()),
                  file=sys.stderr)
        n_test = len(labels) - round(0.75 * len(labels))
        rows.append((name, len(labels) - n_test, n_test, len(names), len(d.target_names), results))
    print(table(rows, args.seeds, args.holes))


def table(rows, seeds, holes: float = 0.0) -> str:
    cell = (lambda runs: f"{100 * np.mean([a for a, _ in runs]):.1f} ± {100 * np.std([a for a, _ in runs]):.1f}")
    secs = (lambda runs: f"{np.mean([s for _, s in runs]):.1f}")
    header = ("| dataset | train / test rows | features | classes | mlp-manual (mlp-train + mlp-predict) "
              "| MLPClassifier() | StandardScaler + MLPClassifier() | seconds: mlp-manual / sklearn / sklearn scaled |")
    if holes:
        header = header.replace("MLPClassifier()", "SimpleImputer + MLPClassifier()", 1).replace(
            "StandardScaler + MLPClassifier()", "SimpleImputer + StandardScaler + MLPClassifier()")
    lines = [f"Held-out accuracy (%), mean ± standard deviation over seeds {', '.join(map(str, seeds))}; "
             + "seconds per run (mean)." + (f" {holes:.0%} of the feature cells empty." if holes else ""),
             "", header, "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, n_train, n_test, d, c, r in rows:
        lines.append(f"| {name} | {n_train} / {n_test} | {d} | {c} | {cell(r['mlp-manual'])} | {cell(r['sklearn'])} "
                     f"| {cell(r['sklearn scaled'])} | {secs(r['mlp-manual'])} / {secs(r['sklearn'])} / "
                     f"{secs(r['sklearn scaled'])} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()

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
    python benchmarks/tabular.py --holes 0.1 --categories 4   # and 4 columns of text categories

With ``--holes F``, a fraction F of the feature cells (training and held-out rows alike, drawn
from the seed) is left empty and each CSV starts with an ``id`` column. mlp-manual's config adds
``data.missing: mean`` and ``data.drop: [id]``, and ``mlp-predict --keep id`` writes the IDs
beside the predictions (checked against the held-out rows' IDs); scikit-learn's models get a
``SimpleImputer()`` (the mean) first, on the rows without the ID.

With ``--categories K``, K feature columns of each dataset (evenly spaced) become text: each
value is replaced by one of four words by the training rows' quartiles (the words in an order
of their own per column, so the text says nothing of the order). mlp-manual finds the text
columns itself (data.categorical left out) and reads an unseen word as zeros; scikit-learn's
models get a ``ColumnTransformer``: ``SimpleImputer(strategy="most_frequent")`` and
``OneHotEncoder(handle_unknown="ignore")`` on those columns, the mean imputer (and the
scaler) on the others. The mlp-manual model is then exported with mlp-export's function and
ONNX Runtime predicts the raw held-out rows (numbers with NaN, text with empty strings): the
largest difference from mlp-predict's probabilities and the count of differing labels are
printed.

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
from mlp_manual.process import keep_freed_memory  # noqa: E402
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
            w.writerow(([ids[i]] if ids is not None else []) + [cell(v) for v in row]
                       + ([labels[i]] if labels is not None else []))


WORDS = ("amber", "basil", "cedar", "dune")


def with_categories(X_train: np.ndarray, X_test: np.ndarray, k: int, seed: int):
    """X_train and X_test as object arrays whose ``k`` evenly spaced columns hold words, by the
    training rows' quartiles (an empty string for a missing value); and those columns' indices."""
    columns = sorted(set(np.linspace(0, X_train.shape[1] - 1, k).round().astype(int).tolist())) if k else []
    rng = np.random.default_rng(seed)
    train, test = X_train.astype(object), X_test.astype(object)
    for j in columns:
        edges = np.nanquantile(X_train[:, j], [0.25, 0.5, 0.75])
        words = rng.permutation(WORDS)
        for X, out in ((X_train, train), (X_test, test)):
            out[:, j] = ["" if np.isnan(v) else str(words[int(np.searchsorted(edges, v))]) for v in X[:, j]]
    return train, test, columns


def cell(v) -> str:
    """A CSV cell: a word as it is, a number exactly, a missing number (NaN) empty."""
    if isinstance(v, str):
        return v
    return "" if np.isnan(v) else repr(float(v))


def mlp_manual_accuracy(folder: Path, X_train, y_train, X_test, y_test, names, seed,
                        holes: bool, categories: list[int]) -> tuple[float, float]:
    """Train from a CSV, predict the held-out CSV with the mlp-predict command; (accuracy, seconds).
    With ``categories`` (text columns), ONNX Runtime predicts the held-out rows too."""
    started = time.perf_counter()
    ids = (lambda n, first: [f"r{first + i}" for i in range(n)]) if holes else (lambda n, first: None)
    write_csv(folder / "train.csv", X_train, names, y_train, ids(len(X_train), 0))
    order = np.random.default_rng(seed).permutation(len(names))  # another column order, no label
    test_ids = ids(len(X_test), len(X_train))
    write_csv(folder / "new.csv", X_test[:, order], [names[j] for j in order], ids=test_ids)
    filled = {"missing": "mean", "drop": ["id"]} if holes else {}
    if categories:
        filled["unseen_category"] = "zeros"
    data = dict(CONFIG["data"], path=str(folder / "train.csv"), **filled)
    cfg = config_from_dict(dict(CONFIG, seed=seed, name="tabular", data=data))
    train_run(cfg, str(folder / "run"), echo=lambda line: None)
    subprocess.run([sys.executable, "-m", "mlp_manual.cli.predict", "--model", str(folder / "run" / "model.npz"),
                    "--input", str(folder / "new.csv"), "--output", str(folder / "pred.csv"), "--proba"]
                   + (["--keep", "id"] if holes else []),
                   check=True, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True)
    with open(folder / "pred.csv", newline="") as f:
        rows = list(csv.reader(f))[1:]
    if holes:
        assert [row[0] for row in rows] == test_ids, "mlp-predict --keep id lost the IDs"
        rows = [row[1:] for row in rows]
    predicted = [row[0] for row in rows]
    seconds = time.perf_counter() - started
    onnx = onnx_agreement(folder, X_test, rows, categories) if categories else None
    return float(np.mean(np.array(predicted) == np.array(y_test))), seconds, onnx


def onnx_agreement(folder: Path, X_test: np.ndarray, rows: list, categories: list[int]) -> tuple[float, int]:
    """Export the run's model to ONNX and predict the raw rows X_test with ONNX Runtime: the
    largest difference from mlp-predict's probabilities (``rows``: label, p_...) and how many
    labels differ."""
    import onnxruntime

    from mlp_manual.export.onnx import export_file

    export_file(folder / "run" / "model.npz", folder / "model.onnx")
    session = onnxruntime.InferenceSession(str(folder / "model.onnx"), providers=["CPUExecutionProvider"])
    numbers = [j for j in range(X_test.shape[1]) if j not in categories]
    feed = {"categories": X_test[:, categories].astype(str)}
    if numbers:
        feed["input"] = X_test[:, numbers].astype(np.float32)
    probabilities, labels = session.run(["probabilities", "label"], feed)
    expected = np.array([row[1:] for row in rows], dtype=float)
    return float(np.abs(probabilities - expected).max()), int(sum(a != b[0] for a, b in zip(labels, rows)))


def sklearn_accuracy(X_train, y_train, X_test, y_test, seed, scaled: bool, holes: bool,
                     categories: list[int]) -> tuple[float, float, None]:
    from sklearn.compose import ColumnTransformer
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.preprocessing import FunctionTransformer, OneHotEncoder
    from sklearn.impute import SimpleImputer
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    started = time.perf_counter()
    model = MLPClassifier(random_state=seed)
    if categories:
        numbers = [j for j in range(X_train.shape[1]) if j not in categories]
        steps = [FunctionTransformer(lambda A: A.astype(float))] + ([SimpleImputer()] if holes else []) \
            + ([StandardScaler()] if scaled else [])
        text = make_pipeline(SimpleImputer(strategy="most_frequent", missing_values=""),
                             OneHotEncoder(handle_unknown="ignore"))
        model = make_pipeline(ColumnTransformer([("numbers", make_pipeline(*steps), numbers),
                                                 ("categories", text, categories)]), model)
    else:
        if scaled:
            model = make_pipeline(StandardScaler(), model)
        if holes:
            model = make_pipeline(SimpleImputer(), model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X_train, y_train)
    return float(np.mean(model.predict(X_test) == y_test)), time.perf_counter() - started, None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--holes", type=float, default=0.0, help="the fraction of feature cells left empty")
    parser.add_argument("--categories", type=int, default=0, help="feature columns made text categories")
    args = parser.parse_args()
    keep_freed_memory()  # as every console script does when it starts (mlp_manual/process.py)
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
            X_tr, X_te, text = with_categories(X_tr, X_te, args.categories, seed)
            with tempfile.TemporaryDirectory() as tmp:
                results["mlp-manual"].append(mlp_manual_accuracy(Path(tmp), X_tr, y_tr, X_te, y_te, names, seed, holes,
                                                                 text))
            for key, scaled in (("sklearn", False), ("sklearn scaled", True)):
                results[key].append(sklearn_accuracy(X_tr, y_tr, X_te, y_te, seed, scaled, holes, text))
            print(f"{name} seed {seed}: " + ", ".join(f"{k} {v[-1][0]:.4f}" for k, v in results.items()),
                  file=sys.stderr)
        n_test = len(labels) - round(0.75 * len(labels))
        rows.append((name, len(labels) - n_test, n_test, len(names), len(d.target_names), results))
    print(table(rows, args.seeds, args.holes, args.categories))


def table(rows, seeds, holes: float = 0.0, categories: int = 0) -> str:
    cell = (lambda runs: f"{100 * np.mean([a for a, *_ in runs]):.1f} ± {100 * np.std([a for a, *_ in runs]):.1f}")
    secs = (lambda runs: f"{np.mean([s for _, s, _ in runs]):.1f}")
    header = ("| dataset | train / test rows | features | classes | mlp-manual (mlp-train + mlp-predict) "
              "| MLPClassifier() | StandardScaler + MLPClassifier() | seconds: mlp-manual / sklearn / sklearn scaled |")
    if holes:
        header = header.replace("MLPClassifier()", "SimpleImputer + MLPClassifier()", 1).replace(
            "StandardScaler + MLPClassifier()", "SimpleImputer + StandardScaler + MLPClassifier()")
    if categories:
        header = header.replace("| MLPClassifier()", "| one-hot + MLPClassifier()").replace(
            "| SimpleImputer + MLPClassifier()", "| imputers + one-hot + MLPClassifier()").replace(
            "| SimpleImputer + StandardScaler", "| imputers + one-hot + StandardScaler").replace(
            "| StandardScaler + MLPClassifier()", "| one-hot + StandardScaler + MLPClassifier()")
        header += " ONNX Runtime on raw rows: largest probability difference / labels differing |"
    lines = [f"Held-out accuracy (%), mean ± standard deviation over seeds {', '.join(map(str, seeds))}; "
             + "seconds per run (mean)." + (f" {holes:.0%} of the feature cells empty." if holes else "")
             + (f" {categories} feature columns of text categories." if categories else ""),
             "", header, "| --- " * header.count(" |") + "|"]
    for name, n_train, n_test, d, c, r in rows:
        onnx = ""
        if categories:
            runs = [o for _, _, o in r["mlp-manual"]]
            onnx = f" {max(o[0] for o in runs):.1e} / {sum(o[1] for o in runs)} |"
        lines.append(f"| {name} | {n_train} / {n_test} | {d} | {c} | {cell(r['mlp-manual'])} | {cell(r['sklearn'])} "
                     f"| {cell(r['sklearn scaled'])} | {secs(r['mlp-manual'])} / {secs(r['sklearn'])} / "
                     f"{secs(r['sklearn scaled'])} |{onnx}")
    return "\n".join(lines)


if __name__ == "__main__":
    main()

"""mlp-manual's scikit-learn estimators against scikit-learn's own, side by side in one run.

    python benchmarks/sklearn_peer.py              # 3 problems x 5 seeds, a few minutes on 2 cores
    python benchmarks/sklearn_peer.py --quick      # seeds 0 1
    python benchmarks/sklearn_peer.py --seeds 0 1 2 --threads 1
    python benchmarks/sklearn_peer.py --write      # also replaces its section in benchmarks/README.md

``mlp_manual.sklearn.MLPClassifier``/``MLPRegressor`` follow scikit-learn's MLP semantics (its
parameters, glorot initialisation from the RandomState, shuffling and stopping rule), so both
libraries get identical parameters: scikit-learn's defaults (one hidden layer of 100 ReLU units,
adam, lr 0.001, batch min(200, rows), max_iter 200, tol 1e-4) and ``random_state=seed``.

Three problems, each with a seeded 75/25 split (random_state=0): ``load_digits`` (10 classes, the
pixels as given), ``load_breast_cancer`` behind a StandardScaler fitted on the training rows, and
``make_regression`` (2000 rows, 20 features, noise 10) with y standardised by the training rows.
For each problem and seed the two libraries fit in turn (mlp-manual, then scikit-learn), so a
machine whose speed drifts slows both alike; only ``.fit`` is timed (``time.perf_counter``), after
one untimed short fit of each per problem. Reported per problem: the median test accuracy (R^2 for
regression) and fit time over the seeds, mlp-manual's accuracy minus scikit-learn's in points
(R^2 difference), and the time ratio mlp-manual / scikit-learn (median of the per-seed ratios,
lowest-highest). ConvergenceWarning is silenced: either library may stop at max_iter.

Goals, printed at the end with MET / NOT MET: accuracy within 0.5 points (R^2 within 0.005) of
scikit-learn's, and a fit time at most 0.6 of scikit-learn's, on every problem.

Needs scikit-learn (not a dependency of mlp-manual); threadpoolctl is used when installed.
"""

import argparse
import os
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

README = ROOT / "benchmarks" / "README.md"
SECTION = "## mlp-manual's estimators against scikit-learn's"
ACCURACY_GOAL, R2_GOAL, TIME_GOAL = 0.5, 0.005, 0.6  # points, R^2, time ratio
PARAMS = {"hidden_layer_sizes": (100,), "solver": "adam", "max_iter": 200}  # scikit-learn's defaults


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4], help="seeds (default 0 1 2 3 4)")
    p.add_argument("--quick", action="store_true", help="seeds 0 1 only")
    p.add_argument("--threads", type=int, default=2, help="BLAS threads for both libraries (default 2)")
    p.add_argument("--write", action="store_true", help=f"replace the section '{SECTION[3:]}' in benchmarks/README.md")
    return p.parse_args()


ARGS = parse_args()
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(ARGS.threads)  # before numpy loads its BLAS; threadpoolctl confirms below

import numpy as np  # noqa: E402
import sklearn  # noqa: E402
from sklearn import neural_network  # noqa: E402
from sklearn.datasets import load_breast_cancer, load_digits, make_regression  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from mlp_manual import sklearn as ours  # noqa: E402
from mlp_manual.files import write_text  # noqa: E402
from mlp_manual.process import keep_freed_memory  # noqa: E402
from readme_section import replace_section  # noqa: E402

try:
    import threadpoolctl
except ImportError:
    threadpoolctl = None


# ---------------------------------------------------------------- problems

def split(X, y):
    return train_test_split(X, y, test_size=0.25, random_state=0)


def digits():
    X, y = load_digits(return_X_y=True)
    return split(X, y)


def breast_cancer():
    X_train, X_test, y_train, y_test = split(*load_breast_cancer(return_X_y=True))
    scaler = StandardScaler().fit(X_train)
    return scaler.transform(X_train), scaler.transform(X_test), y_train, y_test


def regression():
    X, y = make_regression(n_samples=2000, n_features=20, noise=10.0, random_state=0)
    X_train, X_test, y_train, y_test = split(X, y)
    mean, std = y_train.mean(), y_train.std()
    return X_train, X_test, (y_train - mean) / std, (y_test - mean) / std


# name -> (data, estimator class name, metric): .score is accuracy for a classifier, R^2 for a regressor
PROBLEMS = {"digits": (digits, "MLPClassifier", "accuracy"),
            "breast cancer (scaled)": (breast_cancer, "MLPClassifier", "accuracy"),
            "make_regression (y scaled)": (regression, "MLPRegressor", "R^2")}
LIBRARIES = {"mlp-manual": ours, "scikit-learn": neural_network}


# ---------------------------------------------------------------- measuring

def timed_fit(estimator, X, y) -> float:
    start = time.perf_counter()
    estimator.fit(X, y)
    return time.perf_counter() - start


def measure(problem: str, seeds: list[int]) -> dict:
    """{library: {"score": [...], "seconds": [...]}} over ``seeds``, the libraries in turn per seed."""
    load, kind, _ = PROBLEMS[problem]
    X_train, X_test, y_train, y_test = load()
    for module in LIBRARIES.values():  # untimed: first calls load code and warm caches
        getattr(module, kind)(**{**PARAMS, "max_iter": 2}, random_state=0).fit(X_train, y_train)
    results = {name: {"score": [], "seconds": []} for name in LIBRARIES}
    for seed in seeds:
        for name, module in LIBRARIES.items():
            estimator = getattr(module, kind)(**PARAMS, random_state=seed)
            seconds = timed_fit(estimator, X_train, y_train)
            results[name]["seconds"].append(seconds)
            results[name]["score"].append(estimator.score(X_test, y_test))
            print(f"[{problem} seed {seed}] {name}: score {results[name]['score'][-1]:.4f}, "
                  f"fit {seconds:.3f} s, {estimator.n_iter_} iterations", flush=True)
    return results


def summary(problem: str, results: dict) -> dict:
    """The figures of one problem's row: medians, the difference of the medians, and the paired ratios."""
    metric = PROBLEMS[problem][2]
    scale = 100.0 if metric == "accuracy" else 1.0  # accuracy in points
    mine, theirs = results["mlp-manual"], results["scikit-learn"]
    ratios = [a / b for a, b in zip(mine["seconds"], theirs["seconds"])]
    score_mine, score_theirs = (scale * statistics.median(r["score"]) for r in (mine, theirs))
    return {"problem": problem, "metric": metric, "mine": score_mine, "theirs": score_theirs,
            "difference": score_mine - score_theirs,
            "time_mine": statistics.median(mine["seconds"]), "time_theirs": statistics.median(theirs["seconds"]),
            "ratio": (statistics.median(ratios), min(ratios), max(ratios))}


# ---------------------------------------------------------------- reporting

def score_text(row: dict, value: float, signed=False) -> str:
    if row["metric"] == "accuracy":
        return f"{value:+.2f}" if signed else f"{value:.2f}%"
    return f"{value:+.4f}" if signed else f"{value:.4f}"


def table(rows: list[dict]) -> str:
    lines = ["| problem | metric | mlp-manual | scikit-learn | difference | mlp-manual fit (s) "
             "| scikit-learn fit (s) | time ratio (lowest-highest) |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        median, low, high = r["ratio"]
        unit = "accuracy (points)" if r["metric"] == "accuracy" else "R^2"
        lines.append(f"| {r['problem']} | {unit} | {score_text(r, r['mine'])} | {score_text(r, r['theirs'])} "
                     f"| {score_text(r, r['difference'], signed=True)} | {r['time_mine']:.3f} "
                     f"| {r['time_theirs']:.3f} | {median:.2f} ({low:.2f}-{high:.2f}) |")
    return "\n".join(lines)


def goal_lines(rows: list[dict]) -> list[str]:
    """One line per goal: MET or NOT MET, with each problem's figure."""
    def verdict(ok):
        return "MET" if ok else "NOT MET"

    close = [abs(r["difference"]) <= (ACCURACY_GOAL if r["metric"] == "accuracy" else R2_GOAL) for r in rows]
    fast = [r["ratio"][0] <= TIME_GOAL for r in rows]
    accuracy = "; ".join(f"{r['problem']} {score_text(r, r['difference'], signed=True)}" for r in rows)
    speed = "; ".join(f"{r['problem']} {r['ratio'][0]:.2f}" for r in rows)
    return [f"Goal: accuracy within {ACCURACY_GOAL} points (R^2 within {R2_GOAL}) of scikit-learn's: "
            f"{verdict(all(close))} ({accuracy})",
            f"Goal: fit time at most {TIME_GOAL} of scikit-learn's: {verdict(all(fast))} ({speed})"]


def machine_line(threads: int) -> str:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    pools = ""
    if threadpoolctl is not None:
        info = threadpoolctl.threadpool_info()
        pools = "; " + ", ".join(f"{p['internal_api']} {p.get('version') or ''} x{p['num_threads']}".replace("  ", " ")
                                 for p in info)
    return (f"{platform.machine()}, {cores} cores, Python {platform.python_version()}, numpy {np.__version__}, "
            f"scikit-learn {sklearn.__version__}, {threads} threads{pools}")


def command_line() -> str:
    return "python benchmarks/sklearn_peer.py " + " ".join(sys.argv[1:]).replace("--write", "").strip()


def section(rows: list[dict], seeds: list[int], threads: int) -> str:
    return "\n".join([
        SECTION, "",
        "`sklearn_peer.py`: `mlp_manual.sklearn.MLPClassifier`/`MLPRegressor` against scikit-learn's, with "
        "identical parameters (scikit-learn's defaults: 100 ReLU units, adam, max_iter 200) and "
        f"`random_state` = each seed ({', '.join(map(str, seeds))}); the two fit in turn per seed, only `.fit` "
        "timed. Scores on the 25% test split are medians over the seeds; the time ratio is mlp-manual's fit "
        "over scikit-learn's, the median of the per-seed ratios.", "",
        "```bash", command_line().strip(), "```", "",
        f"- machine: {machine_line(threads)}", "",
        table(rows), "", *(f"- {line}" for line in goal_lines(rows)), ""])


def main():
    keep_freed_memory()  # as every console script does when it starts (mlp_manual/process.py)
    if threadpoolctl is not None:
        threadpoolctl.threadpool_limits(ARGS.threads)
    seeds = [0, 1] if ARGS.quick else ARGS.seeds
    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    print(f"machine: {machine_line(ARGS.threads)}\n", flush=True)
    rows = [summary(problem, measure(problem, seeds)) for problem in PROBLEMS]
    print("\n" + table(rows) + "\n")
    for line in goal_lines(rows):
        print(line)
    if ARGS.write:
        write_text(README, replace_section(README.read_text(encoding="utf-8"), SECTION, section(rows, seeds, ARGS.threads)))
        print(f"\nwrote the section '{SECTION[3:]}' of {README.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

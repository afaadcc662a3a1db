"""Regenerate the accuracy table: each config trained with several seeds, test accuracy on the official
(or seeded) test split, epochs and wall time.

    python benchmarks/accuracy.py                       # every benchmark, seeds 0 1 2
    python benchmarks/accuracy.py --only digits mnist1d mnist1d_residual --seeds 0 1 2
    python benchmarks/accuracy.py --table-only          # print the table from benchmarks/results.json
    python benchmarks/accuracy.py --only mnist_best fashion_best   # the records (each run at most 30 minutes)
    python benchmarks/accuracy.py --only digits digits_best        # the digits record beside digits.yaml

Needs MNIST in a data directory (`mlp-data fetch mnist`). Results are merged into
benchmarks/results.json (one entry per config and seed) and the table is printed as Markdown.
Wall time is the whole run (loading, training, evaluation, plots). On a machine shared with
other CPU-bound work, set OPENBLAS_NUM_THREADS=1: OpenBLAS threads that wait for a busy core
can make a matrix product ten times slower.
"""

import argparse
import json
import platform
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mlp_manual.config import load_config  # noqa: E402
from mlp_manual.process import keep_freed_memory  # noqa: E402
from mlp_manual.runs.run import train_run  # noqa: E402

BENCHMARKS = {  # benchmark (the dataset, or the dataset and a variant): (config, published reference)
    "digits": ("configs/digits.yaml", "97.9% scikit-learn MLPClassifier defaults"),
    "mnist1d": ("configs/mnist1d.yaml", "68% MLP baseline (Greydanus 2020)"),
    "mnist1d_residual": ("configs/mnist1d_residual.yaml", "the plain MLP of the row above"),
    "mnist": ("configs/mnist.yaml", "98.40% Keras mnist_mlp example (20 epochs)"),
    "fashion_mnist": ("configs/fashion_mnist.yaml", "no target set"),
    "mnist_best": ("configs/mnist_best.yaml", "about 99% dropout MLPs (Srivastava et al. 2014); shifted images"),
    "fashion_best": ("configs/fashion_best.yaml", "90.0% best MLP of Fashion-MNIST's benchmark table; mirrored images"),
    "digits_best": ("configs/digits_best.yaml", "the digits row above"),
}
RESULTS = ROOT / "benchmarks" / "results.json"


def run(dataset: str, seed: int) -> dict:
    config, _ = BENCHMARKS[dataset]
    cfg = load_config(ROOT / config, [f"seed={seed}"])
    with tempfile.TemporaryDirectory() as out:
        summary = train_run(cfg, out, overwrite=True, echo=lambda line: print(f"[{dataset} seed {seed}] {line}", flush=True))
    return {"dataset": dataset, "config": config, "seed": seed, "test_acc": summary["test"]["acc"],
            "test_loss": summary["test"]["loss"], "epochs": summary["epochs_run"],
            "wall_seconds": summary["wall_seconds"], "machine": f"{platform.machine()}, {_cores()} cores"}


def _cores() -> int:
    import os
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def table(results: list[dict]) -> str:
    lines = ["| dataset | config | test accuracy (mean ± std; median; each seed) | epochs | wall time per run, median (range) "
             "| published reference |",
             "| --- | --- | --- | --- | --- | --- |"]
    for dataset, (config, reference) in BENCHMARKS.items():
        rows = sorted((r for r in results if r["dataset"] == dataset), key=lambda r: r["seed"])
        if not rows:
            continue
        accs = [100 * r["test_acc"] for r in rows]
        spread = statistics.stdev(accs) if len(accs) > 1 else 0.0
        walls = [r["wall_seconds"] for r in rows]
        seeds = ", ".join(str(r["seed"]) for r in rows)
        each = " / ".join(f"{a:.2f}" for a in accs)
        lines.append(f"| {dataset} | `{config}` | {statistics.mean(accs):.2f}% ± {spread:.2f}; median "
                     f"{statistics.median(accs):.2f}% ({each}; seeds {seeds}) "
                     f"| {rows[0]['epochs']} | {statistics.median(walls):.0f} s ({min(walls):.0f}-{max(walls):.0f}) | {reference} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=list(BENCHMARKS), default=list(BENCHMARKS)[:5],
                        help="benchmarks to run (default: all but the records, mnist_best, fashion_best and digits_best)")
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--table-only", action="store_true")
    args = parser.parse_args()
    keep_freed_memory()  # as every console script does when it starts (mlp_manual/process.py)
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else []
    if not args.table_only:
        for dataset in args.only:
            for seed in args.seeds:
                row = run(dataset, seed)
                results = [r for r in results if (r["dataset"], r["seed"]) != (dataset, seed)] + [row]
                RESULTS.write_text(json.dumps(results, indent=2) + "\n")  # after every run: a crash keeps the rest
    print(table(results))


if __name__ == "__main__":
    main()

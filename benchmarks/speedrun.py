"""MNIST speedrun: test accuracy and training time of one recipe over 10 seeds, in mlp-manual,
PyTorch eager and JAX, side by side in one run.

    python benchmarks/speedrun.py                       # configs/mnist_speedrun.yaml, seeds 0-9, 2 threads
    python benchmarks/speedrun.py --seeds 0 1 2         # fewer seeds
    python benchmarks/speedrun.py --write               # also replaces its section in benchmarks/README.md

The goal: a mean test accuracy of at least 98.0% over the seeds, with at most 2.0 seconds of
training per run on 2 cores.

Each run is a fresh process (time_to_accuracy.py's runs, given `--final-only`): the recipe in
mlp-manual's Trainer, written the usual PyTorch way, and written the usual JAX way (one
`jax.jit` step per batch, its compilation inside the training time). Training time is from
the first step to the last; the process start (imports) and data loading (reading the IDX files,
preprocessing, building the model) are reported apart; the test split is evaluated once, after
the last step. For seed s every library trains with seed s, one after the other (who goes first
rotates), and the ratios are taken between the runs of one seed: median (lowest-highest).
Writes benchmarks/results_speedrun.json.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

import time_to_accuracy as tta  # noqa: E402
from readme_section import replace_section  # noqa: E402

README = HERE / "README.md"
RESULTS = HERE / "results_speedrun.json"
SECTION = "## MNIST speedrun"
GOAL_ACCURACY, GOAL_SECONDS = 0.980, 2.0
LABELS = {"mlp-manual": "mlp-manual", "pytorch": "PyTorch eager", "jax": "JAX jit step"}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", default=str(ROOT / "configs" / "mnist_speedrun.yaml"), help="the recipe")
    p.add_argument("--seeds", type=int, nargs="+", default=list(range(10)), help="seeds (default 0-9)")
    p.add_argument("--threads", type=int, default=2, help="threads for every library (default 2)")
    p.add_argument("--data-dir", help="the data directory holding mnist/ (default: $MLP_MANUAL_DATA)")
    p.add_argument("--only", nargs="+", choices=sorted(LABELS), help="run these libraries only")
    p.add_argument("--out", default=str(RESULTS), help="the JSON results file (default benchmarks/results_speedrun.json)")
    p.add_argument("--write", action="store_true", help=f"replace the section '{SECTION[3:]}' in benchmarks/README.md")
    args = p.parse_args()
    args.data_dir = args.data_dir or os.environ.get("MLP_MANUAL_DATA")
    args.final_only, args.target = True, GOAL_ACCURACY  # as time_to_accuracy's runs read them
    return args


def measure(args, names, recipe_path) -> dict:
    """{library: [run, ...]} in seed order; a run's times in seconds."""
    runs = {name: [] for name in names}
    for i, seed in enumerate(args.seeds):
        for name in names[i % len(names):] + names[:i % len(names)]:  # who goes first rotates
            raw = tta.run_child(args, name, seed, recipe_path)
            ev = raw["events"]
            run = {"seed": seed, "train_s": ev["trained"] - ev["ready"], "acc": raw["epochs"][-1]["test_acc"],
                   "imports_s": ev["imported"], "data_s": ev["ready"] - ev["imported"], "total_s": raw["total"]}
            runs[name].append(run)
            print(f"seed {seed} {name:10s} training {run['train_s']:.2f} s, test accuracy {run['acc']:.2%} "
                  f"(imports {run['imports_s']:.2f} s, data and model {run['data_s']:.2f} s, "
                  f"process {run['total_s']:.2f} s)", flush=True)
    return runs


def mean_sd(values, fmt) -> str:
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{fmt.format(statistics.mean(values))} ± {fmt.format(sd)} ({fmt.format(min(values))}-{fmt.format(max(values))})"


def report(args, bt, runs) -> list[str]:
    epochs = json.loads(Path(args.recipe_path).read_text())["training"]["epochs"]
    rows = [(LABELS[name], mean_sd([r["train_s"] for r in rs], "{:.2f}"), mean_sd([r["acc"] * 100 for r in rs], "{:.2f}"),
             f"{statistics.mean(r['imports_s'] for r in rs):.2f}", f"{statistics.mean(r['data_s'] for r in rs):.2f}")
            for name, rs in runs.items()]
    lines = [f"- recipe: `{Path(args.config).name}` ({epochs} epochs); seeds {', '.join(map(str, args.seeds))}; "
             f"{args.threads} threads", *bt.machine_lines(args.threads),
             f"- matmul peak after the runs: {bt.matmul_peak():.0f} GFLOP/s (one 2048^3 float32 product)", "",
             *bt.table(["library", "training (s): mean ± sd (range)", "test accuracy (%): mean ± sd (range)",
                        "imports (s), mean", "data and model (s), mean"], rows), ""]
    ours = runs.get("mlp-manual")
    for name in ("pytorch", "jax"):
        if ours and name in runs:
            ratio = bt.paired_ratio({"a": [r["train_s"] for r in ours], "b": [r["train_s"] for r in runs[name]]}, "a", "b")
            lines.append(f"- mlp-manual / {LABELS[name]}, training time paired per seed: "
                         "{:.2f} ({:.2f}-{:.2f})".format(*ratio))
        elif ours:
            lines.append(f"- {LABELS[name]}: not run (not installed, or left out with --only)")
    if ours:
        accuracy, slowest = statistics.mean(r["acc"] for r in ours), max(r["train_s"] for r in ours)
        met = accuracy >= GOAL_ACCURACY and slowest <= GOAL_SECONDS
        lines.append(f"- goal (mean test accuracy >= {GOAL_ACCURACY:.1%}, every run's training <= {GOAL_SECONDS} s): "
                     f"{accuracy:.2%} and at most {slowest:.2f} s: {'MET' if met else 'NOT MET'}")
    return lines


def main():
    args = parse_args()
    for var in tta.BLAS_VARS:
        os.environ[var] = str(args.threads)  # before numpy loads its BLAS
    bt = tta.import_bench_train(args.threads)
    if not args.data_dir:
        raise SystemExit("give the data directory: --data-dir DIR or $MLP_MANUAL_DATA")
    from dataclasses import asdict

    from mlp_manual.config import load_config
    from mlp_manual.files import write_text

    cfg = load_config(args.config, [f"data.data_dir={args.data_dir}"])
    installed = {"mlp-manual": True, "pytorch": bt.torch is not None, "jax": bt.jax is not None}
    names = [n for n in LABELS if installed[n] and (not args.only or n in args.only)]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(asdict(cfg), f)
    args.recipe_path = f.name
    try:
        runs = measure(args, names, f.name)
        lines = report(args, bt, runs)
    finally:
        os.unlink(f.name)
    print("\n" + "\n".join(lines))
    write_text(args.out, json.dumps({"config": Path(args.config).name, "threads": args.threads, "runs": runs},
                                   indent=1) + "\n")
    if args.write:
        command = "python benchmarks/speedrun.py " + " ".join(a for a in sys.argv[1:] if a != "--write")
        section = [SECTION, "", __doc__.split("\n\n")[3].replace("\n", " "), "", "```bash", command.strip(), "```", "",
                   *lines, ""]
        write_text(README, replace_section(README.read_text(encoding="utf-8"), SECTION, "\n".join(section)))
        print(f"wrote the section '{SECTION[3:]}' of {README.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

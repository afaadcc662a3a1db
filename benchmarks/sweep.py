"""mlp-sweep's figures of merit, measured side by side in one run: a 40-trial sweep of
configs/spirals.yaml (learning rate, width, batch size; TPE, median pruner) with 1 and with 2
workers on the default journal file, and the base config itself.

    python benchmarks/sweep.py            # about 2 minutes on 2 cores

Reports: finished trials (exactly the budget), the share pruned, the best objective against the
base config's, the sweep's own overhead, and the wall time of 2 workers over 1. The overhead
is everything but the trials' runs: the time of the workers that is not spent inside a run
(``summary.json``'s ``wall_seconds``, which includes writing the run's files and figures),
plus the time the pruning takes inside the runs; Python's start-up of the command and the
final figures count too. Prints a Markdown table for benchmarks/README.md and writes
results_sweep.json.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SWEEP = {"name": "spirals-bench", "base": str(ROOT / "configs" / "spirals.yaml"),
         "objective": {"metric": "val_loss", "direction": "minimize"}, "trials": 40,
         "sampler": {"name": "tpe", "seed": 0}, "pruner": {"name": "median", "warmup_epochs": 5},
         "space": {"optimizer.lr": {"low": 1.0e-4, "high": 0.3, "log": True},
                   "model.layers.0.units": {"choices": [16, 32, 64, 128]},
                   "training.batch_size": {"choices": [16, 32, 64]}}}


def sweep(folder: Path, workers: int) -> dict:
    path = folder / "sweep.yaml"
    path.write_text(yaml.safe_dump(SWEEP))
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "mlp_manual.cli.sweep", "run", str(path), "--out",
                           str(folder / "out"), "--workers", str(workers)], capture_output=True, text=True)
    wall = time.perf_counter() - started
    assert done.returncode == 0, done.stderr
    from mlp_manual.sweep.storage import StudyStorage
    from mlp_manual.sweep.study import load_study

    study = load_study(StudyStorage(None, folder / "out"), SWEEP["name"])
    trials = study.trials
    states = [t.state.name for t in trials]
    runs = sum(t.user_attrs.get("run_seconds", 0) for t in trials)
    pruning = sum(t.user_attrs.get("report_seconds", 0) for t in trials)
    spans = sum((t.datetime_complete - t.datetime_start).total_seconds() for t in trials)
    from mlp_manual.sweep.figures import draw_figures

    drawing = time.perf_counter()
    draw_figures(study, folder)
    drawing = time.perf_counter() - drawing
    return {"workers": workers, "wall": wall, "trials": len(trials), "finished": sum(
        s in ("COMPLETE", "PRUNED", "FAIL") for s in states), "pruned": states.count("PRUNED"),
        "best": study.best_value, "pruning_seconds": pruning, "run_seconds": runs, "trial_seconds": spans,
        # what each trial costs besides its run: sampling, storage, starting the run, pruning
        "per_trial_overhead": (spans - runs + pruning) / spans,
        # all of the workers' time that is not inside a run: the above, plus each process's start-up,
        # the final figures, and a worker waiting for the other's last trial
        "overhead": (workers * wall - runs + pruning) / (workers * wall), "figures_seconds": drawing}


def base_objective(folder: Path) -> float:
    out = folder / "base"
    subprocess.run([sys.executable, "-m", "mlp_manual.cli.train", str(ROOT / "configs" / "spirals.yaml"), "--out",
                    str(out), "-q"], check=True, capture_output=True)
    return json.loads((out / "summary.json").read_text())["final"]["val_loss"]


def main():
    os.chdir(ROOT)
    with tempfile.TemporaryDirectory() as tmp:
        base = base_objective(Path(tmp))
        results = {}
        for workers in (1, 2):
            folder = Path(tmp) / f"w{workers}"
            folder.mkdir()
            results[workers] = sweep(folder, workers)
            print(results[workers], flush=True)
    one, two = results[1], results[2]
    print(f"\nbase config (configs/spirals.yaml): val_loss {base:.4g}\n")
    print("| workers | finished trials | pruned | best val_loss | wall time | 2 workers / 1 | overhead per trial "
          "| overhead in all |")
    print("|---|---|---|---|---|---|---|---|")
    for r in (one, two):
        ratio = f"{two['wall'] / one['wall']:.2f}" if r is two else ""
        print(f"| {r['workers']} | {r['finished']} of {r['trials']} | {r['pruned']} ({r['pruned'] / r['trials']:.0%}) | "
              f"{r['best']:.3g} | {r['wall']:.1f} s | {ratio} | {r['per_trial_overhead']:.1%} | {r['overhead']:.1%} |")
    print(f"\nthe four figures of 40 trials: {one['figures_seconds']:.2f} s")
    (ROOT / "benchmarks" / "results_sweep.json").write_text(json.dumps({"base": base, **{str(k): v for k, v in
                                                                                          results.items()}}, indent=2) + "\n")


if __name__ == "__main__":
    main()

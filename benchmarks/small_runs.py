"""Latency of the small runs a user starts first: `mlp-train` on xor and moons against a floor.

    python benchmarks/small_runs.py              # 5 rounds
    python benchmarks/small_runs.py --rounds 9 --threads 1

Each `mlp-train --config configs/<name>.yaml --out <temporary folder> --quiet` is a subprocess
timed from launch to exit (`python -m mlp_manual.cli.train`, so this checkout's code runs). Its
floor is a process that imports the same libraries (numpy, matplotlib with the Agg backend, yaml,
click), reads the same config and writes the same PNG files: the same names, as many, each of the
same pixel size (read from the run's own files), every figure one Axes with one line, drawn
through matplotlib's object API. Whatever the run spends beyond the floor goes to training,
checkpoints, other files and the way its plots are drawn. A bare `python -c pass` is timed too.

Before timing, the package and this folder are compiled to .pyc files, as pip does when it
installs a package (an editable checkout compiles on first import, unless
PYTHONDONTWRITEBYTECODE is set: then every run would compile mlp_manual's sources again, about
35 ms that no installed copy spends).

A second floor, "floor, frozen exit", is the same script ending as mlp-train's commands do
(mlp_manual/process.py): the garbage collector is frozen at exit, so Python's final pass
over every object is skipped. The ratio against it shows what the run costs beyond the floor
once that exit saving is taken out.

Runs and floors alternate within each round (the order rotates by round); each ratio run / floor
is taken within a round and reported as the median (lowest-highest). The target is 1.3x against
the plain floor. Writes benchmarks/results_small_runs.json.
"""

import argparse
import compileall
import json
import os
import statistics
import struct
import sys
import tempfile
from pathlib import Path

from time_to_accuracy import BLAS_VARS, ROOT, import_bench_train, time_process

HERE = Path(__file__).resolve().parent
CONFIGS = ("xor", "moons")
FROZEN = "floor, frozen exit"
KINDS = ("mlp-train", "floor", FROZEN)
TARGET = 1.3


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=5, help="rounds (default 5)")
    p.add_argument("--threads", type=int, default=2, help="BLAS threads of every process (default 2)")
    p.add_argument("--out", default=str(HERE / "results_small_runs.json"), help="the JSON results file")
    p.add_argument("--floor-child", nargs=4, metavar=("CONFIG", "OUT", "PNGS", "EXIT"), help=argparse.SUPPRESS)
    return p.parse_args()


def floor_child(config, out, pngs, exit_kind):
    """Import what mlp-train imports, read the config, write each PNG name:WxH at that size;
    with ``exit_kind`` "frozen", freeze the garbage collector at exit as mlp-train does."""
    if exit_kind == "frozen":
        import atexit
        import gc
        atexit.register(gc.freeze)
    import click  # noqa: F401  (imported because mlp-train imports it)
    import matplotlib
    matplotlib.use("Agg")
    import numpy as np
    import yaml
    from matplotlib.figure import Figure

    epochs = yaml.safe_load(Path(config).read_text())["training"]["epochs"]
    for item in pngs.split(","):
        name, size = item.split(":")
        width, height = (int(v) for v in size.split("x"))
        fig = Figure(figsize=(width / 100, height / 100), dpi=100)
        fig.add_subplot().plot(np.arange(epochs), np.linspace(1, 0, epochs))
        fig.savefig(Path(out) / name)


def png_sizes(folder):
    """{file name: (width, height)} of the PNG files in a folder, from their IHDR chunk."""
    return {p.name: struct.unpack(">II", p.read_bytes()[16:24]) for p in sorted(Path(folder).glob("*.png"))}


def run_once(name, threads):
    """One mlp-train run: (seconds, {png: size})."""
    with tempfile.TemporaryDirectory() as tmp:
        seconds = time_process([sys.executable, "-m", "mlp_manual.cli.train", "--config",
                                 str(ROOT / "configs" / f"{name}.yaml"), "--out", f"{tmp}/run", "--quiet"], threads)
        return seconds, png_sizes(f"{tmp}/run")


def floor_once(name, sizes, threads, exit_kind):
    pngs = ",".join(f"{png}:{w}x{h}" for png, (w, h) in sizes.items())
    with tempfile.TemporaryDirectory() as tmp:
        seconds = time_process([sys.executable, __file__, "--floor-child", str(ROOT / "configs" / f"{name}.yaml"),
                                 tmp, pngs, exit_kind], threads)
        if png_sizes(tmp) != sizes:
            raise SystemExit(f"the floor of {name} wrote {png_sizes(tmp)}, the run {sizes}")
        return seconds


def main():
    args = parse_args()
    if args.floor_child:
        floor_child(*args.floor_child)
        return
    for var in BLAS_VARS:
        os.environ[var] = str(args.threads)
    bt = import_bench_train(args.threads)
    for folder in (ROOT / "mlp_manual", HERE):
        compileall.compile_dir(folder, quiet=1)
    load_before = os.getloadavg()
    times = {f"{kind} {name}": [] for name in CONFIGS for kind in KINDS}
    times["python -c pass"] = []
    sizes = {name: run_once(name, args.threads)[1] for name in CONFIGS}  # untimed: the files a floor writes
    for r in range(args.rounds):
        for name in CONFIGS:
            for kind in KINDS[r % 3:] + KINDS[:r % 3]:
                times[f"{kind} {name}"].append(
                    run_once(name, args.threads)[0] if kind == "mlp-train"
                    else floor_once(name, sizes[name], args.threads, "frozen" if kind == FROZEN else "plain"))
        times["python -c pass"].append(time_process([sys.executable, "-c", "pass"], args.threads))
        print(f"round {r + 1}/{args.rounds}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items()), flush=True)
    report(args, bt, times, sizes, load_before)


def report(args, bt, times, sizes, load_before):
    ratios = {name: bt.paired_ratio(times, f"mlp-train {name}", f"floor {name}") for name in CONFIGS}
    frozen = {name: bt.paired_ratio(times, f"mlp-train {name}", f"{FROZEN} {name}") for name in CONFIGS}
    rows = []
    for key, values in times.items():
        name, run = key.split()[-1], key.startswith("mlp-train")
        rows.append((key, f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})",
                     "{:.2f} ({:.2f}-{:.2f})".format(*ratios[name]) if run else "-",
                     "{:.2f} ({:.2f}-{:.2f})".format(*frozen[name]) if run else "-",
                     ("yes" if ratios[name][0] <= TARGET else "NO") if run else "-"))
    lines = ["### Small-run latency: `mlp-train` on xor and moons against a floor", "",
             *bt.machine_lines(args.threads),
             f"- load average before: {' '.join(f'{v:.1f}' for v in load_before)}",
             f"- {args.rounds} rounds; seconds from launch to exit, median (lowest-highest); ratio paired per round",
             "- PNG files written by each run and its floor: "
             + "; ".join(f"{name}: " + ", ".join(f"{p} {w}x{h}" for p, (w, h) in s.items()) for name, s in sizes.items()),
             ""]
    lines += bt.table(["process", "seconds", "run / floor", "run / floor with frozen exit", f"within {TARGET}x"], rows)
    print("\n".join(lines))
    Path(args.out).write_text(json.dumps({
        "threads": args.threads, "rounds": args.rounds, "load_before": load_before, "load_after": os.getloadavg(),
        "machine": bt.machine_lines(args.threads), "seconds": times, "png_sizes": sizes,
        "ratios": {name: dict(zip(("median", "lowest", "highest"), r)) for name, r in ratios.items()},
        "ratios_frozen_exit_floor": {name: dict(zip(("median", "lowest", "highest"), r)) for name, r in frozen.items()},
        "target": TARGET}, indent=1) + "\n")
    print(f"- results written to {args.out}")


if __name__ == "__main__":
    main()

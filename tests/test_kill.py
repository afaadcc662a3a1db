"""Kill loops: mlp-train stopped again and again by kill -9, Ctrl-C, SIGTERM or SIGHUP at random
(seeded) moments,
from its start through its checkpoint writes to its final files, then resumed each time, ends
with the files of an uninterrupted run.

Each config is first run uninterrupted, and timed. Then each of EPISODES runs of it is started,
stopped by a random signal at a uniform random fraction of that time after its start, resumed,
and so on up to SIGNALS times, then left to finish. A checkpoint after every step makes
checkpoint writes a large part of training. Behind the ``slow`` marker (about a minute on two
cores).
"""

import json
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from conftest import assert_same_run

from mlp_manual.config import load_config
from mlp_manual.runs.checkpoint import load_checkpoint

pytestmark = pytest.mark.slow

MOONS_LAYERS = "[{type: linear, units: 16}, batchnorm, relu, dropout, {type: linear}]"
RUNS = {
    "moons-dropout-batchnorm-adam-test-split": ["--config", "configs/moons.yaml", "--set", "training.epochs=8",
                                                "--set", "data.n_samples=200", "--set", "training.batch_size=32",
                                                "--set", f"model.layers={MOONS_LAYERS}", "--diagnostics"],
    "spirals-sgd-early-stopping": ["--config", "configs/spirals.yaml", "--set", "training.epochs=60",
                                   "--set", "data.n_samples=150", "--set", "optimizer.lr=0.5",
                                   "--set", "schedule.name=constant", "--set", "training.early_stopping.patience=2"],
}
EVERY_STEP = ["--set", "training.checkpoint_seconds=0.000001"]
EPISODES, SIGNALS = 3, 3
COMMAND_FRAME = re.compile(r'(mlp_manual/cli/train|click/core)\.py", line \d+, in main$', re.MULTILINE)


def start(args):
    return subprocess.Popen([sys.executable, "-m", "mlp_manual.cli.train", "-q", *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})


def check_stopped(proc, err: str, sig: int, log: list[str]) -> None:
    """kill -9 ends the process. Ctrl-C, SIGTERM and SIGHUP end it with 128 + the signal's number
    and one line once the command runs; before that (Python still starting or importing) and after
    it (Python shutting down, the run complete) Python's own handling ends it, with 1 or the
    signal, never inside main."""
    if sig == signal.SIGKILL:
        assert proc.returncode == -signal.SIGKILL, (err, log)
    elif proc.returncode == 128 + sig:
        assert err.startswith("Interrupted") and len(err.strip().splitlines()) == 1, (err, log)
    else:
        assert proc.returncode == -sig or (proc.returncode == 1 and "Fatal Python error" in err), (err, log)
        assert not COMMAND_FRAME.search(err), (err, log)


def complete(run_dir) -> bool:
    summary = run_dir / "summary.json"
    return summary.exists() and json.loads(summary.read_text())["status"] in ("completed", "stopped_early")


def phase(run_dir) -> str:
    """Where a stopped run stood, from its folder."""
    if not (run_dir / "config.yaml").exists():
        return "starting"
    if not (run_dir / "checkpoint.npz").exists():
        return "before its first checkpoint"
    if complete(run_dir):
        return "done"
    meta = load_checkpoint(run_dir / "checkpoint.npz")["meta"]
    epochs = load_config(run_dir / "config.yaml").training.epochs
    finished = meta["stopped_early"] or (meta["epoch"] == epochs and meta["epoch_state"] is None)
    return "final writes" if finished else f"training, epoch {meta['epoch']}"


def stop_and_resume(fresh: list[str], cut, span: float, rng, log: list[str]) -> None:
    """Start the run, then stop it with a random signal at a random moment and resume it, up to
    SIGNALS times, and let the last resume finish."""
    args = fresh
    for _ in range(SIGNALS):
        proc = start(args)
        sig = [signal.SIGKILL, signal.SIGINT, signal.SIGTERM, signal.SIGHUP][int(rng.integers(4))]
        try:
            proc.wait(timeout=rng.uniform(0, span))
        except subprocess.TimeoutExpired:
            proc.send_signal(sig)
        _, err = proc.communicate(timeout=300)
        log.append(f"{args[0]} {signal.Signals(sig).name} -> {proc.returncode} ({phase(cut)})")
        if proc.returncode == 0 or complete(cut):
            return
        check_stopped(proc, err, sig, log)
        # a folder with its config resumes; one stopped before that is started again
        args = ["--resume", str(cut)] if (cut / "config.yaml").exists() else [*fresh, "--overwrite"]
    proc = start(args)
    assert proc.wait(timeout=300) == 0, (proc.stderr.read(), log)


@pytest.mark.parametrize("name", list(RUNS))
def test_random_kills_and_ctrl_c_then_resume_end_with_the_uninterrupted_run(tmp_path, name):
    rng = np.random.default_rng(list(RUNS).index(name))
    straight = tmp_path / "straight"
    began = time.perf_counter()
    proc = start([*RUNS[name], *EVERY_STEP, "--out", str(straight)])
    assert proc.wait(timeout=300) == 0, proc.stderr.read()
    span = time.perf_counter() - began
    assert not (straight / ".lock").exists()
    for episode in range(EPISODES):
        cut, log = tmp_path / f"cut{episode}", []
        stop_and_resume([*RUNS[name], *EVERY_STEP, "--out", str(cut)], cut, span, rng, log)
        print(f"\n{name} {episode}: " + "; ".join(log))
        assert_same_run(straight, cut)
        if (straight / "diagnostics.csv").exists():
            assert (straight / "diagnostics.csv").read_text() == (cut / "diagnostics.csv").read_text()
        assert {p.name for p in straight.iterdir()} <= {p.name for p in cut.iterdir()}
    proc = start(["--resume", str(cut)])
    assert proc.wait(timeout=300) == 1 and "the run is complete" in proc.stderr.read()

"""The training path of this checkout against another revision's, side by side: is a change
slower on the CPU?

    python benchmarks/side_by_side.py --base 0406823            # 7 rounds
    python benchmarks/side_by_side.py --base main --rounds 11 --optimizer adam

Each round runs one fresh process per tree, in turns (the order alternates by round), and each
process times ``Trainer.fit`` epochs of bench_train.py's network, 784-256-256-10 ReLU at batch
128 in float32 on random MNIST-shaped data (60000 x 784), after one warm-up epoch. The figure is
the median over rounds of this tree's epoch time divided by the base's in the same round, with
the lowest and highest. The base is checked out with ``git worktree`` into a temporary folder
and removed afterwards.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import json, sys, time
import numpy as np
sys.path.insert(0, sys.argv[1])
from mlp_manual.config import config_from_dict
from mlp_manual.losses import LOSSES
from mlp_manual.model import build_model
from mlp_manual.training.experiment import training_plan
from mlp_manual.training.trainer import Trainer

epochs, optimizer = int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(0)
X = rng.random((60000, 784), dtype=np.float32)
y = rng.integers(0, 10, 60000)
layers = [{"type": "linear", "units": 256}, "relu", {"type": "linear", "units": 256}, "relu", {"type": "linear"}]
cfg = config_from_dict({"model": {"layers": layers}, "optimizer": {"name": optimizer, "lr": 0.01},
                        "training": {"epochs": epochs + 1, "batch_size": 128}}, "side_by_side")
model = build_model(list(cfg.model.layers), 784, 10, np.random.default_rng(1))
trainer = Trainer(model, LOSSES["softmax_cross_entropy"], training_plan(cfg), np.random.default_rng(2))
trainer.fit(X, y)
seconds = trainer.history.columns["seconds"][1:]  # after the warm-up epoch
print(json.dumps(seconds))
"""


def epoch_seconds(tree: Path, epochs: int, optimizer: str, threads: int) -> float:
    """The median epoch time of ``tree``'s training path in a fresh process."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": str(threads), "OMP_NUM_THREADS": str(threads),
           "MKL_NUM_THREADS": str(threads)}
    out = subprocess.run([sys.executable, "-c", CHILD, str(tree), str(epochs), optimizer], capture_output=True,
                         text=True, env=env, cwd=tempfile.gettempdir())
    if out.returncode != 0:
        sys.exit(f"{tree}: the timing process failed:\n{out.stderr[-2000:]}")
    return statistics.median(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base", required=True, help="the revision to compare with (a commit, a branch)")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--epochs", type=int, default=3, help="timed epochs per process")
    p.add_argument("--optimizer", default="sgd")
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(base), args.base], check=True)
        try:
            ratios = []
            for r in range(args.rounds):
                trees = [("this", ROOT), ("base", base)]
                times = dict((name, epoch_seconds(tree, args.epochs, args.optimizer, args.threads))
                             for name, tree in (trees if r % 2 == 0 else trees[::-1]))
                ratios.append(times["this"] / times["base"])
                print(f"round {r + 1}: this {times['this']:.3f} s, base {times['base']:.3f} s, "
                      f"ratio {ratios[-1]:.3f}", flush=True)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=False)
    print(f"epoch time of this tree / {args.base}: median {statistics.median(ratios):.3f} "
          f"(lowest {min(ratios):.3f}, highest {max(ratios):.3f}) over {args.rounds} rounds, "
          f"784-256-256-10, batch 128, {args.optimizer}, {args.threads} threads")


if __name__ == "__main__":
    main()

"""The hand-written backward on a GPU against PyTorch eager on the same GPU, side by side.

    python benchmarks/gpu.py            # prints the table
    python benchmarks/gpu.py --write    # and writes it to benchmarks/README.md, "GPU"

Both train bench_train.py's network, 784-256-256-10 ReLU with softmax cross-entropy and plain
SGD in float32, on 60000 MNIST-shaped rows (MNIST itself when $MLP_MANUAL_DATA holds it),
at batch 128 and at batch 1024. mlp-manual runs its real training path (``Trainer.fit`` with
``device: cuda``: the data on the GPU, one gather per batch, the loss read back after every
step); PyTorch gathers each batch from a tensor on the GPU too and reads its loss back as
often, so neither waits less for the GPU than the other. After one warm-up epoch each, the two
take turns epoch by epoch; the figures are the median epoch times and the median of the
per-round ratios. The goals: at most 1.0 of PyTorch's time at batch 1024, at most 0.25 s per
epoch at batch 128. Where there is no GPU (or no CuPy), it says so, and ``--write`` writes that
nothing was measured.
"""

import argparse
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from readme_section import replace_section  # noqa: E402

from mlp_manual.config import config_from_dict  # noqa: E402
from mlp_manual.devices import DEVICES  # noqa: E402
from mlp_manual.errors import DeviceError  # noqa: E402
from mlp_manual.files import write_text  # noqa: E402
from mlp_manual.losses import LOSSES  # noqa: E402
from mlp_manual.model import build_model  # noqa: E402
from mlp_manual.training.experiment import training_plan  # noqa: E402
from mlp_manual.training.trainer import Trainer  # noqa: E402

README = ROOT / "benchmarks" / "README.md"
SECTION = "## GPU"
LAYERS = [{"type": "linear", "units": 256}, {"type": "relu"}, {"type": "linear", "units": 256}, {"type": "relu"},
          {"type": "linear"}]
GOAL_RATIO, GOAL_SECONDS = 1.0, 0.25


def data() -> tuple[np.ndarray, np.ndarray, str]:
    """MNIST's training split when it can be read, else random rows of its shape."""
    try:
        from mlp_manual.datasets.real import read_idx_dataset
        arrays = read_idx_dataset("mnist")
        return arrays["X_train"].astype(np.float32) / 255, arrays["y_train"].astype(np.int64), "MNIST"
    except Exception:  # no data directory: the shapes are what matters for speed
        rng = np.random.default_rng(0)
        return rng.random((60000, 784), dtype=np.float32), rng.integers(0, 10, 60000), "random MNIST-shaped data"


class Ours:
    """mlp-manual's Trainer on device cuda, one epoch more at each call."""

    def __init__(self, X, y, batch: int, device: str = "cuda"):
        cfg = config_from_dict({"device": device, "model": {"layers": LAYERS}, "optimizer": {"name": "sgd", "lr": 0.01},
                                "training": {"epochs": 1, "batch_size": batch, "checkpoint_seconds": 0}}, "gpu")
        model = build_model(LAYERS, 784, 10, np.random.default_rng(1))
        self.trainer = Trainer(model, LOSSES["softmax_cross_entropy"], training_plan(cfg), np.random.default_rng(2))
        self.X, self.y = X, y

    def epoch(self) -> float:
        t = self.trainer
        t.plan = replace(t.plan, epochs=t.epoch + 1)
        t.fit(self.X, self.y)  # the data moves once per call, outside the epoch's own seconds
        return t.history.columns["seconds"][-1]


class Torch:
    """The same network and step in PyTorch eager on the GPU (``device``)."""

    def __init__(self, X, y, batch: int, device: str = "cuda"):
        import torch
        self.torch, self.batch, self.device = torch, batch, device
        torch.manual_seed(0)
        self.X, self.y = torch.from_numpy(X).to(device), torch.from_numpy(y).to(device)
        self.model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256),
                                         torch.nn.ReLU(), torch.nn.Linear(256, 10)).to(device)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.01)

    def epoch(self) -> float:
        torch = self.torch
        self.synchronize()
        started = time.perf_counter()
        order = torch.randperm(len(self.X), device=self.device)
        for lo in range(0, len(self.X), self.batch):
            rows = order[lo:lo + self.batch]
            loss = torch.nn.functional.cross_entropy(self.model(self.X[rows]), self.y[rows])
            self.opt.zero_grad(set_to_none=True)
            loss.backward()
            self.opt.step()
            loss.item()  # read back every step, as the trainer reads its loss
        self.synchronize()
        return time.perf_counter() - started

    def synchronize(self) -> None:
        if self.device == "cuda":
            self.torch.cuda.synchronize()


def measure(X, y, batch: int, rounds: int, devices: tuple[str, str] = ("cuda", "cuda")) -> dict:
    ours, torch = Ours(X, y, batch, devices[0]), Torch(X, y, batch, devices[1])
    ours.epoch(), torch.epoch()  # warm-up: kernels compiled and cached, memory pools filled
    times = {"ours": [], "torch": []}
    for r in range(rounds):
        for name, lib in ((("ours", ours), ("torch", torch)) if r % 2 == 0 else (("torch", torch), ("ours", ours))):
            times[name].append(lib.epoch())
    ratios = [a / b for a, b in zip(times["ours"], times["torch"])]
    return {"ours": statistics.median(times["ours"]), "torch": statistics.median(times["torch"]),
            "ratio": statistics.median(ratios), "low": min(ratios), "high": max(ratios)}


def table(gpu: str, source: str, results: dict) -> list[str]:
    lines = [SECTION, "", f"Measured on {gpu}, {time.strftime('%Y-%m-%d')}, on {source}, by "
             "`python benchmarks/gpu.py --write`: median epoch seconds after a warm-up epoch, the two taking turns.", "",
             "| batch | mlp-manual (cuda) | PyTorch eager (cuda) | ratio (median, lowest-highest) | goal |",
             "| --- | --- | --- | --- | --- |"]
    for batch, r in results.items():
        goal = (f"ratio <= {GOAL_RATIO}: {'met' if r['ratio'] <= GOAL_RATIO else 'NOT met'}" if batch == 1024 else
                f"<= {GOAL_SECONDS} s: {'met' if r['ours'] <= GOAL_SECONDS else 'NOT met'}")
        lines.append(f"| {batch} | {r['ours']:.3f} s | {r['torch']:.3f} s | {r['ratio']:.2f} ({r['low']:.2f}-{r['high']:.2f}) "
                     f"| {goal} |")
    return lines + [""]


def not_measured(why: str) -> list[str]:
    return [SECTION, "", "Not measured: no figure in this section comes from a GPU. The last `python benchmarks/gpu.py "
            f"--write` ran where it could not reach one ({time.strftime('%Y-%m-%d')}): {why}", "",
            "Run it where `nvidia-smi` lists a GPU, with CuPy (`pip install -e '.[gpu]'`) and PyTorch for CUDA; "
            "the command and the goals are in the training guide, \"GPU\".", ""]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=5, help="timed epochs of each library per batch size")
    p.add_argument("--write", action="store_true", help="write the table to benchmarks/README.md")
    p.add_argument("--check", action="store_true", help="run this script's code without a GPU (mlp-manual on "
                   "array-api-strict, PyTorch on the CPU, 4096 rows, one round) to check it; prints, writes nothing")
    args = p.parse_args()
    if args.check:
        X, y, _ = data()
        for batch in (128, 1024):
            print(batch, measure(X[:4096], y[:4096], batch, 1, ("array-api-strict", "cpu")))
        return
    try:
        cp = DEVICES["cuda"].namespace()
        import torch
        if not torch.cuda.is_available():
            raise DeviceError("PyTorch was built without CUDA, or sees no GPU")
    except (DeviceError, ImportError) as e:
        lines = not_measured(str(e))
    else:
        import cupy
        gpu = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
        X, y, source = data()
        results = {batch: measure(X, y, batch, args.rounds) for batch in (128, 1024)}
        lines = table(gpu, source, results)
        del cp
    print("\n".join(lines))
    if args.write:
        write_text(README, replace_section(README.read_text(encoding="utf-8"), SECTION, "\n".join(lines)))


if __name__ == "__main__":
    main()

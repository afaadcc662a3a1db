"""Time to 98.4% MNIST test accuracy: mlp-manual against the same recipe in PyTorch eager.

    python benchmarks/time_to_accuracy.py --data-dir DIR   # 5 rounds, seeds 0-4 (or set MLP_MANUAL_DATA)
    python benchmarks/time_to_accuracy.py --quick                            # 2 rounds, no CLI run
    python benchmarks/time_to_accuracy.py --threads 1 --config configs/mnist.yaml --target 0.985

Each run is a fresh Python process, started the way a user starts one, and is timed from its
launch: imports, reading the IDX files, preprocessing, building the model, training, and the
test set evaluated after every epoch. The time to the target is the moment the first epoch whose
test accuracy reaches it has been evaluated; the total is the moment the process has exited.
In round r both libraries train with seed r, one after the other (who goes first alternates);
ratios are taken between the two runs of one round and reported as the median (lowest-highest).

The PyTorch run is the same recipe written the usual PyTorch way: the IDX files read with gzip
and numpy, nn.Linear layers initialised with the config's scheme (its own draws from
torch.manual_seed), the torch.optim optimizer with the same hyperparameters (weight decay on
weight matrices only, as mlp-manual does), the warmup-cosine schedule per step through LambdaLR,
torch.randperm batches of the same size, float32, and the same thread count through
torch.set_num_threads and the BLAS environment variables. Without torch it is skipped.

The floor is the training steps' matrix products alone (bench_train's MatmulsOnly: 3 forward,
3 weight gradients, 2 input gradients per step) for the same number of steps in numpy, timed in
this process. Without --quick, one `mlp-train` run of the same config (plots, checkpoints and
all) is timed at the end for reference. Writes benchmarks/results_time_to_accuracy.json.
"""

import argparse
import dataclasses
import gzip
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results_time_to_accuracy.json"
BLAS_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", default=str(ROOT / "configs" / "mnist_fast.yaml"), help="the recipe")
    p.add_argument("--target", type=float, default=0.984, help="test accuracy to reach (default 0.984)")
    p.add_argument("--rounds", type=int, help="rounds, seeds 0..rounds-1 (default 5, --quick 2)")
    p.add_argument("--threads", type=int, default=2, help="threads for both libraries (default 2)")
    p.add_argument("--data-dir", help="the data directory holding mnist/ (default: $MLP_MANUAL_DATA)")
    p.add_argument("--quick", action="store_true", help="2 rounds and no mlp-train reference run")
    p.add_argument("--out", default=str(RESULTS), help="the JSON results file")
    p.add_argument("--child", choices=("mlp-manual", "pytorch"), help=argparse.SUPPRESS)
    p.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)  # of a child
    p.add_argument("--launched", type=float, help=argparse.SUPPRESS)  # time.time() when the parent started it
    p.add_argument("--recipe", help=argparse.SUPPRESS)  # the resolved config as JSON, for the PyTorch child
    return p.parse_args()


# ---------------------------------------------------------------- the two runs, each in its own process

class Clock:
    """Seconds since the parent launched this process, with the events of the run."""

    def __init__(self, launched):
        self.launched, self.events, self.epochs = launched, {}, []

    def now(self):
        return time.time() - self.launched

    def mark(self, name):
        self.events[name] = self.now()

    def epoch(self, acc):
        self.epochs.append({"seconds": self.now(), "test_acc": float(acc)})

    def report(self, **extra):
        print(json.dumps({"events": self.events, "epochs": self.epochs, **extra}))


def run_mlp_manual(args, clock):
    from mlp_manual.config import load_config
    from mlp_manual.training.experiment import prepare
    from mlp_manual.training.trainer import Trainer, evaluate
    clock.mark("imported")
    overrides = [f"seed={args.seed}"] + ([f"data.data_dir={args.data_dir}"] if args.data_dir else [])
    cfg = load_config(args.config, overrides)
    ex = prepare(cfg)  # reads the IDX files, preprocesses, builds the model
    data = ex.data
    clock.mark("ready")

    def on_epoch(row):
        clock.epoch(evaluate(ex.model, ex.loss, data.X_test, data.y_test)["acc"])

    Trainer(ex.model, ex.loss, cfg, ex.train_rng, on_epoch=on_epoch).fit(data.X_train, data.y_train,
                                                                         data.X_val, data.y_val)
    clock.report(n_train=len(data.X_train))


def read_idx(path):
    """An IDX file (gzipped or not) as a uint8 array: (N, 784) images or (N,) labels."""
    import numpy as np
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        raw = f.read()
    dims = raw[3]
    shape = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    flat = np.frombuffer(raw, np.uint8, offset=4 + 4 * dims)
    return flat.reshape(shape[0], -1) if dims > 1 else flat


def torch_layers(recipe, n_in, n_out):
    """nn.Sequential of the recipe's layers, initialised with its scheme (biases at zero)."""
    import torch
    nn = torch.nn
    inits = {"he_uniform": lambda w: nn.init.kaiming_uniform_(w, nonlinearity="relu"),
             "he_normal": lambda w: nn.init.kaiming_normal_(w, nonlinearity="relu"),
             "glorot_uniform": nn.init.xavier_uniform_, "glorot_normal": nn.init.xavier_normal_,
             "lecun_uniform": lambda w: nn.init.kaiming_uniform_(w, nonlinearity="linear"),
             "lecun_normal": lambda w: nn.init.kaiming_normal_(w, nonlinearity="linear")}
    aliases = {"kaiming_uniform": "he_uniform", "kaiming_normal": "he_normal",
               "xavier_uniform": "glorot_uniform", "xavier_normal": "glorot_normal"}
    activations = {"relu": nn.ReLU, "tanh": nn.Tanh, "sigmoid": nn.Sigmoid, "identity": nn.Identity}
    modules, width = [], n_in
    for spec in recipe["model"]["layers"]:
        kind = spec["type"]
        if kind == "linear":
            layer = nn.Linear(width, spec.get("units") or n_out, bias=spec.get("bias", True))
            init = spec.get("init") or recipe["model"]["init"]
            inits[aliases.get(init, init)](layer.weight)
            if layer.bias is not None:
                nn.init.zeros_(layer.bias)
            modules.append(layer)
            width = layer.out_features
        elif kind == "dropout":
            modules.append(nn.Dropout(spec.get("p", 0.5)))
        elif kind in activations:
            modules.append(activations[kind]())
        else:
            raise SystemExit(f"the PyTorch side does not translate layer type {kind!r}")
    return nn.Sequential(*modules)


def torch_optimizer(recipe, net):
    """The torch.optim optimizer of the recipe; weight decay on weight matrices only."""
    import torch
    o = recipe["optimizer"]
    weights = [p for p in net.parameters() if p.ndim >= 2]
    others = [p for p in net.parameters() if p.ndim < 2]
    groups = [{"params": weights, "weight_decay": o["weight_decay"]}, {"params": others, "weight_decay": 0.0}]
    if o["name"] == "sgd":
        return torch.optim.SGD(groups, lr=o["lr"], momentum=o["momentum"], nesterov=o["nesterov"])
    if o["name"] == "rmsprop":
        return torch.optim.RMSprop(groups, lr=o["lr"], alpha=o["rho"], eps=o["eps"])
    cls = torch.optim.AdamW if o["name"] == "adamw" else torch.optim.Adam
    return cls(groups, lr=o["lr"], betas=(o["beta1"], o["beta2"]), eps=o["eps"])


def lr_factor(recipe, steps_per_epoch):
    """step -> learning rate / base rate, for torch.optim.lr_scheduler.LambdaLR."""
    s, base = recipe["schedule"], recipe["optimizer"]["lr"]
    if s["name"] == "constant":
        return lambda step: 1.0
    if s["name"] != "cosine":
        raise SystemExit(f"the PyTorch side does not translate schedule {s['name']!r}")
    warmup = round(s["warmup_epochs"] * steps_per_epoch)
    total = steps_per_epoch * recipe["training"]["epochs"]

    def factor(step):
        if step < warmup:
            return (step + 1) / warmup
        progress = min(1.0, (step - warmup) / max(1, total - warmup))
        return (s["min_lr"] + 0.5 * (base - s["min_lr"]) * (1 + math.cos(math.pi * progress))) / base
    return factor


def run_pytorch(args, clock):
    import numpy as np
    import torch
    torch.set_num_threads(args.threads)
    F = torch.nn.functional
    clock.mark("imported")
    recipe = json.loads(Path(args.recipe).read_text())
    if recipe["loss"] != "softmax_cross_entropy" or recipe["dtype"] != "float32":
        raise SystemExit("the PyTorch side translates float32 softmax cross-entropy recipes only")
    folder = Path(recipe["data"]["data_dir"]) / recipe["data"]["name"]
    files = {p.name.split(".")[0]: p for p in folder.iterdir()}
    X = {part: read_idx(files[f"{prefix}-images-idx3-ubyte"]).astype(np.float32)
         for part, prefix in (("train", "train"), ("test", "t10k"))}
    if recipe["data"]["preprocess"] == "scale":
        lo, hi = X["train"].min(), X["train"].max()
        X = {k: (v - lo) / (hi - lo) for k, v in X.items()}
    elif recipe["data"]["preprocess"] == "standardize":
        mean, std = X["train"].mean(0), X["train"].std(0)
        std[std == 0] = 1.0
        X = {k: (v - mean) / std for k, v in X.items()}
    X_train, X_test = torch.from_numpy(X["train"]), torch.from_numpy(X["test"])
    y_train = torch.from_numpy(read_idx(files["train-labels-idx1-ubyte"]).astype(np.int64))
    y_test = torch.from_numpy(read_idx(files["t10k-labels-idx1-ubyte"]).astype(np.int64))
    torch.manual_seed(args.seed)
    net = torch_layers(recipe, X_train.shape[1], int(y_train.max()) + 1)
    opt = torch_optimizer(recipe, net)
    n, batch = len(X_train), recipe["training"]["batch_size"]
    bounds = [(lo, min(lo + batch, n)) for lo in range(0, n, batch)]
    if len(bounds) > 1 and bounds[-1][1] - bounds[-1][0] == 1:  # as mlp-manual: no batch of one row
        bounds[-2:] = [(bounds[-2][0], n)]
    schedule = torch.optim.lr_scheduler.LambdaLR(opt, lr_factor(recipe, len(bounds)))
    clock.mark("ready")
    for _ in range(recipe["training"]["epochs"]):
        net.train()
        order = torch.randperm(n)
        for lo, hi in bounds:
            idx = order[lo:hi]
            loss = F.cross_entropy(net(X_train[idx]), y_train[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            schedule.step()
        net.eval()
        with torch.no_grad():
            logits = net(X_test)
            F.cross_entropy(logits, y_test)  # mlp-manual's evaluate computes the loss too
            clock.epoch((logits.argmax(1) == y_test).double().mean().item())
    clock.report()


# ---------------------------------------------------------------- the parent: rounds, floor, report

def import_bench_train(threads):
    """bench_train reads its options when imported: give it ours, not this script's."""
    argv, sys.argv = sys.argv, [str(HERE / "bench_train.py"), "--threads", str(threads)]
    try:
        sys.path.insert(0, str(HERE))
        import bench_train
    finally:
        sys.argv = argv
    return bench_train


def child_env(threads):
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, **{v: str(threads) for v in BLAS_VARS}, "PYTHONPATH": path}


def run_child(args, name, seed, recipe_path):
    """One run in a fresh process: its events in seconds since launch, and its exit time."""
    command = [sys.executable, __file__, "--child", name, "--seed", str(seed), "--config", args.config,
               "--threads", str(args.threads), "--recipe", recipe_path]
    command += ["--data-dir", args.data_dir] if args.data_dir else []
    launched = time.time()
    done = subprocess.run(command + ["--launched", repr(launched)], capture_output=True, text=True,
                          env=child_env(args.threads), check=False)  # a failure is reported below
    exited = time.time() - launched
    if done.returncode:
        raise SystemExit(f"the {name} run failed:\n{done.stderr}")
    run = json.loads(done.stdout.strip().splitlines()[-1])
    reached = [e["seconds"] for e in run["epochs"] if e["test_acc"] >= args.target]
    return {**run, "seed": seed, "total": exited, "to_target": reached[0] if reached else None,
            "epoch_reached": next((i + 1 for i, e in enumerate(run["epochs"]) if e["test_acc"] >= args.target), None)}


def floor_seconds(bt, recipe, n_train):
    """The training steps' matmuls alone in numpy, or None when the recipe is not 784-W-W-10."""
    import numpy as np
    widths = [s.get("units") for s in recipe["model"]["layers"] if s["type"] == "linear"]
    if len(widths) != 3 or widths[0] != widths[1] or widths[2] not in (None, bt.C):
        return None
    X = np.zeros((n_train, bt.D), dtype=np.float32)  # only its length and first batch are read: pages never touched
    floor = bt.MatmulsOnly(X, None, widths[0], recipe["training"]["batch_size"])
    floor.epoch()  # warm-up, untimed
    return sum(bt.timed(floor.epoch) for _ in range(recipe["training"]["epochs"]))


def cli_reference(args):
    """One whole `mlp-train` run of the config: (wall seconds, test accuracy)."""
    with tempfile.TemporaryDirectory() as tmp:
        command = [sys.executable, "-m", "mlp_manual.cli.train", "--config", args.config, "--quiet",
                   "--out", str(Path(tmp) / "run")] + (["--data-dir", args.data_dir] if args.data_dir else [])
        seconds = time_process(command, args.threads)
        return seconds, json.loads((Path(tmp) / "run" / "summary.json").read_text())["test"]["acc"]


def time_process(command, threads):
    """Seconds from launch to exit of a command that must succeed."""
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=child_env(threads))
    return time.perf_counter() - started


def spread(values):
    """'median (lowest-highest)' of the values that are not None."""
    values = [v for v in values if v is not None]
    return f"{statistics.median(values):.1f} ({min(values):.1f}-{max(values):.1f})" if values else "not reached"


def ratio_text(bt, runs, a, b, key):
    paired = [(x, y) for x, y in zip(runs[a], runs[b]) if x[key] is not None and y[key] is not None]
    if not paired:
        return None, "-"
    r = bt.paired_ratio({a: [x[key] for x, _ in paired], b: [y[key] for _, y in paired]}, a, b)
    return r, "{:.2f} ({:.2f}-{:.2f})".format(*r) + (f", {len(paired)} of {len(runs[a])} rounds"
                                                     if len(paired) < len(runs[a]) else "")


def main():
    args = parse_args()
    for var in BLAS_VARS:
        os.environ[var] = str(args.threads)  # before numpy loads its BLAS
    if args.child:
        clock = Clock(args.launched)
        (run_mlp_manual if args.child == "mlp-manual" else run_pytorch)(args, clock)
        return
    args.data_dir = args.data_dir or os.environ.get("MLP_MANUAL_DATA")
    rounds = args.rounds or (2 if args.quick else 5)
    bt = import_bench_train(args.threads)
    if bt.threadpoolctl:
        bt.threadpoolctl.threadpool_limits(args.threads)
    if bt.torch is not None:
        bt.torch.set_num_threads(args.threads)
    from mlp_manual.config import load_config
    cfg = load_config(args.config, [f"data.data_dir={args.data_dir}"] if args.data_dir else [])
    recipe = dataclasses.asdict(cfg)
    if not recipe["data"]["data_dir"]:
        raise SystemExit("give the data directory: --data-dir DIR or $MLP_MANUAL_DATA")
    names = ["mlp-manual"] + (["pytorch"] if bt.torch is not None else [])
    load_before, peak_before = os.getloadavg(), bt.matmul_peak()
    runs, floors = {n: [] for n in names}, []
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(recipe, f)
    try:
        for seed in range(rounds):
            for name in names if seed % 2 == 0 else names[::-1]:
                runs[name].append(run_child(args, name, seed, f.name))
                r = runs[name][-1]
                print(f"round {seed + 1}/{rounds} {name:10s} " + " ".join(f"{e['test_acc']:.4f}" for e in r["epochs"])
                      + f"  to target {r['to_target'] or float('nan'):.1f} s, total {r['total']:.1f} s", flush=True)
            floors.append(floor_seconds(bt, recipe, runs["mlp-manual"][-1]["n_train"]))
    finally:
        os.unlink(f.name)
    cli = None if args.quick else cli_reference(args)
    report(args, bt, cfg, runs, floors, cli, load_before, peak_before)


def report(args, bt, cfg, runs, floors, cli, load_before, peak_before):
    peak_after, load_after = bt.matmul_peak(), os.getloadavg()
    label = {"mlp-manual": "mlp-manual", "pytorch": "PyTorch eager"}
    rows = []
    for name, rs in runs.items():
        finals = [r["epochs"][-1]["test_acc"] for r in rs]
        rows.append((label[name], spread(r["to_target"] for r in rs), spread(r["total"] for r in rs),
                     "/".join(str(r["epoch_reached"] or "-") for r in rs),
                     f"{statistics.mean(finals):.2%} ({min(finals):.2%}-{max(finals):.2%})",
                     spread(r["events"]["imported"] for r in rs),
                     spread(r["events"]["ready"] - r["events"]["imported"] for r in rs)))
    if floors[0] is not None:
        rows.append(("matmuls only (floor)", "-", spread(floors), "-", "-", "-", "-"))
    lines = [f"### Time to {args.target:.1%} MNIST test accuracy: `{Path(args.config).name}`", "",
             *bt.machine_lines(args.threads),
             (f"- load average before: {' '.join(f'{v:.1f}' for v in load_before)}; matmul peak "
              f"{peak_before:.0f} GFLOP/s before, {peak_after:.0f} after (one 2048^3 float32 product)"),
             (f"- {len(floors)} rounds, seed r in round r; a fresh process per run, timed from its launch. "
              "Times: median (lowest-highest) in seconds."), ""]
    lines += bt.table([f"run ({cfg.training.epochs} epochs)", f"time to {args.target:.1%}", "total",
                       "epoch reached, per seed", "final test acc, mean (range)", "imports", "data and model"], rows)
    ratios = {}
    if "pytorch" in runs:
        ratios["to_target"], to_target = ratio_text(bt, runs, "mlp-manual", "pytorch", "to_target")
        ratios["total"], total = ratio_text(bt, runs, "mlp-manual", "pytorch", "total")
        lines += ["", f"- mlp-manual / PyTorch eager, paired per round: time to target {to_target}, total {total}"]
    else:
        lines += ["", "- PyTorch is not installed: skipped, mlp-manual alone"]
    if floors[0] is not None:
        paired = [r["total"] / s for r, s in zip(runs["mlp-manual"], floors)]
        ratios["floor"] = (statistics.median(paired), min(paired), max(paired))
        lines.append("- mlp-manual total / matmuls alone: {:.2f} ({:.2f}-{:.2f})".format(*ratios["floor"]))
    if cli:
        lines.append(f"- one whole `mlp-train --config {Path(args.config).name}` run (seed 0, plots and checkpoints): "
                     f"{cli[0]:.1f} s, test accuracy {cli[1]:.2%}")
    print("\n".join(lines))
    Path(args.out).write_text(json.dumps({
        "config": str(Path(args.config).resolve().relative_to(ROOT)) if Path(args.config).resolve().is_relative_to(ROOT)
        else args.config, "target": args.target, "threads": args.threads,
        "load_before": load_before, "load_after": load_after, "matmul_peak_gflops": [peak_before, peak_after],
        "machine": bt.machine_lines(args.threads), "runs": runs, "floor_seconds": floors,
        "ratios": ratios, "mlp_train": None if cli is None else {"seconds": cli[0], "test_acc": cli[1]},
    }, indent=1) + "\n")
    print(f"- results written to {args.out}")


if __name__ == "__main__":
    main()

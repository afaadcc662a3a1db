"""Time to 98.4% MNIST test accuracy: mlp-manual against the same recipe in PyTorch eager and JAX.

    python benchmarks/time_to_accuracy.py --data-dir DIR   # 5 rounds, seeds 0-4 (or set MLP_MANUAL_DATA)
    python benchmarks/time_to_accuracy.py --quick                            # 2 rounds, no CLI run
    python benchmarks/time_to_accuracy.py --threads 1 --config configs/mnist.yaml --target 0.985

Each run is a fresh Python process, started the way a user starts one, and is timed from its
launch: imports, reading the IDX files, preprocessing, building the model, training, and the
test set evaluated after every epoch. The time to the target is the moment the first epoch whose
test accuracy reaches it has been evaluated; the total is the moment the process has exited.
In round r every library trains with seed r, one after the other (who goes first rotates);
ratios are taken between the runs of one round and reported as the median (lowest-highest).

The PyTorch run is the same recipe written the usual PyTorch way: the IDX files read with gzip
and numpy, nn.Linear layers initialised with the config's scheme (its own draws from
torch.manual_seed), the torch.optim optimizer with the same hyperparameters (weight decay on
weight matrices only, as mlp-manual does), the warmup-cosine schedule per step through LambdaLR,
torch.randperm batches of the same size, float32, and the same thread count through
torch.set_num_threads and the BLAS environment variables. Without torch it is skipped.

The JAX run is the same recipe written the usual JAX way (``run_jax``): the same arrays, the
weights drawn by numpy with the config's scheme, a pure loss, ``jax.grad``, the optimizer's
update written as array expressions (as mlp-manual computes it), and the whole step with the
batch's gather under one ``jax.jit`` called per batch; its compilations count in its time. XLA
runs on its own thread pool: with --threads 1 it is held to one thread through XLA_FLAGS.
Without jax it is skipped.

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
    p.add_argument("--threads", type=int, default=2, help="threads for every library (default 2)")
    p.add_argument("--isa", choices=("as-set", "native", "avx2"), default="as-set",
                   help="what every library may use of the CPU, as bench_train's --isa (default as-set)")
    p.add_argument("--data-dir", help="the data directory holding mnist/ (default: $MLP_MANUAL_DATA)")
    p.add_argument("--quick", action="store_true", help="2 rounds and no mlp-train reference run")
    p.add_argument("--out", default=str(RESULTS), help="the JSON results file")
    p.add_argument("--final-only", action="store_true",
                   help="evaluate the test split after the last epoch only (benchmarks/speedrun.py)")
    p.add_argument("--child", choices=("mlp-manual", "pytorch", "jax"), help=argparse.SUPPRESS)
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

    def epoch(self, acc, number):
        self.epochs.append({"seconds": self.now(), "test_acc": float(acc), "epoch": number})

    def report(self, **extra):
        print(json.dumps({"events": self.events, "epochs": self.epochs, **extra}))


def run_mlp_manual(args, clock):
    from mlp_manual.config import load_config
    from mlp_manual.process import keep_freed_memory
    from mlp_manual.training.experiment import prepare, training_plan
    from mlp_manual.training.trainer import Trainer, evaluate
    keep_freed_memory()  # as every console script does when it starts (mlp_manual/process.py)
    clock.mark("imported")
    overrides = [f"seed={args.seed}"] + ([f"data.data_dir={args.data_dir}"] if args.data_dir else [])
    cfg = load_config(args.config, overrides)
    ex = prepare(cfg)  # reads the IDX files, preprocesses, builds the model
    data = ex.data
    clock.mark("ready")

    def on_epoch(row):
        if not args.final_only:
            clock.epoch(evaluate(ex.model, ex.loss, data.X_test, data.y_test)["acc"], row["epoch"])

    trainer = Trainer(ex.model, ex.loss, training_plan(cfg), ex.train_rng, on_epoch=on_epoch)
    history = trainer.fit(data.X_train, data.y_train, data.X_val, data.y_val, ex.augment)
    clock.mark("trained")
    if args.final_only:
        clock.epoch(evaluate(ex.model, ex.loss, data.X_test, data.y_test)["acc"], history.last()["epoch"])
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


def flat_section(recipe, name):
    """A config section with the options of the thing it names beside its own keys
    (``optimizer: {name: adam, lr: ..., beta1: ...}``), as a config file writes them."""
    section = dict(recipe[name])
    options = section.pop("options", {})
    return {**section, **options}


def torch_optimizer(recipe, net):
    """The torch.optim optimizer of the recipe; weight decay on weight matrices only."""
    import torch
    o = flat_section(recipe, "optimizer")
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
    s, base = flat_section(recipe, "schedule"), recipe["optimizer"]["lr"]
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


def read_recipe(args, side):
    """The resolved config the parent wrote, checked to be one the ``side`` translates."""
    recipe = json.loads(Path(args.recipe).read_text())
    loss = recipe["loss"]  # the loss section: its name, its class weights
    if loss["name"] != "softmax_cross_entropy" or loss["class_weights"] or recipe["dtype"] != "float32":
        raise SystemExit(f"the {side} side translates float32 softmax cross-entropy recipes only")
    if recipe["data"].get("augment_shift") or recipe["data"].get("augment_flip"):
        raise SystemExit(f"the {side} side does not translate data.augment_shift or data.augment_flip")
    return recipe


def mnist_arrays(recipe):
    """X_train (M, D) float32, y_train (M,) int64, X_test, y_test read from the recipe's IDX files
    with gzip and numpy and preprocessed as the recipe says (statistics of the training images)."""
    import numpy as np
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
    y = {part: read_idx(files[f"{prefix}-labels-idx1-ubyte"]).astype(np.int64)
         for part, prefix in (("train", "train"), ("test", "t10k"))}
    return X["train"], y["train"], X["test"], y["test"]


def batch_bounds(n, batch):
    """(start, stop) of each batch; as mlp-manual, a last batch of one row joins the one before."""
    bounds = [(lo, min(lo + batch, n)) for lo in range(0, n, batch)]
    if len(bounds) > 1 and bounds[-1][1] - bounds[-1][0] == 1:
        bounds[-2:] = [(bounds[-2][0], n)]
    return bounds


def run_pytorch(args, clock):
    import torch
    torch.set_num_threads(args.threads)
    F = torch.nn.functional
    clock.mark("imported")
    recipe = read_recipe(args, "PyTorch")
    X_train, y_train, X_test, y_test = map(torch.from_numpy, mnist_arrays(recipe))
    torch.manual_seed(args.seed)
    net = torch_layers(recipe, X_train.shape[1], int(y_train.max()) + 1)
    opt = torch_optimizer(recipe, net)
    n, batch = len(X_train), recipe["training"]["batch_size"]
    bounds = batch_bounds(n, batch)
    schedule = torch.optim.lr_scheduler.LambdaLR(opt, lr_factor(recipe, len(bounds)))
    clock.mark("ready")
    for epoch in range(recipe["training"]["epochs"]):
        net.train()
        order = torch.randperm(n)
        for lo, hi in bounds:
            idx = order[lo:hi]
            loss = F.cross_entropy(net(X_train[idx]), y_train[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            schedule.step()
        if epoch == recipe["training"]["epochs"] - 1:
            clock.mark("trained")
        elif args.final_only:
            continue
        net.eval()
        with torch.no_grad():
            logits = net(X_test)
            F.cross_entropy(logits, y_test)  # mlp-manual's evaluate computes the loss too
            clock.epoch((logits.argmax(1) == y_test).double().mean().item(), epoch + 1)
    clock.report()


def jax_weight(init, rng, fan_in, fan_out):
    """A (fan_in, fan_out) float32 weight matrix drawn by numpy with the recipe's scheme."""
    import numpy as np
    aliases = {"kaiming_uniform": "he_uniform", "kaiming_normal": "he_normal",
               "xavier_uniform": "glorot_uniform", "xavier_normal": "glorot_normal"}
    family, _, kind = aliases.get(init, init).partition("_")
    fan = fan_in + fan_out if family == "glorot" else fan_in
    gain = {"he": 2.0, "lecun": 1.0, "glorot": 2.0}[family]  # the variance is gain / fan
    if kind == "uniform":
        a = math.sqrt(3 * gain / fan)
        return rng.uniform(-a, a, (fan_in, fan_out)).astype(np.float32)
    return (rng.standard_normal((fan_in, fan_out)) * math.sqrt(gain / fan)).astype(np.float32)


def run_jax(args, clock):
    """The recipe written the usual JAX way: a pure loss of (params, X, y), ``jax.grad`` of it,
    the optimizer's update as array expressions, and the whole step (the batch's gather
    included) under one ``jax.jit``, called once per batch from Python."""
    import numpy as np
    import jax
    import jax.numpy as jnp
    clock.mark("imported")
    recipe = read_recipe(args, "JAX")
    X_train, y_train, X_test, y_test = mnist_arrays(recipe)
    activations = {"relu": jax.nn.relu, "tanh": jnp.tanh, "sigmoid": jax.nn.sigmoid, "identity": lambda h: h}
    rng, n_out, width = np.random.default_rng(args.seed), int(y_train.max()) + 1, X_train.shape[1]
    params, kinds = [], []  # params: (W, b) of each linear layer; kinds: the layers in order
    for spec in recipe["model"]["layers"]:
        if spec["type"] == "linear":
            units = spec.get("units") or n_out
            W = jax_weight(spec.get("init") or recipe["model"]["init"], rng, width, units)
            params.append((jnp.asarray(W), jnp.zeros(units, jnp.float32)))
            kinds.append("linear")
            width = units
        elif spec["type"] in activations:
            kinds.append(spec["type"])
        else:
            raise SystemExit(f"the JAX side does not translate layer type {spec['type']!r}")

    def forward(params, X):
        h, i = X, 0
        for kind in kinds:
            if kind == "linear":
                h, i = h @ params[i][0] + params[i][1], i + 1
            else:
                h = activations[kind](h)
        return h

    def loss(params, X, y):
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(forward(params, X)), y[:, None], axis=1))

    o = flat_section(recipe, "optimizer")
    if o["name"] not in ("sgd", "adam", "adamw"):
        raise SystemExit(f"the JAX side does not translate optimizer {o['name']!r}")
    decay = [(o["weight_decay"], 0.0)] * len(params)  # (on W, on b): weight matrices only

    def update(params, state, grads, lr, t):
        """One step of the recipe's optimizer: (params, state) -> (params, state)."""
        new_params, new_state = [], []
        for (p_pair, s_pair, g_pair, wd_pair) in zip(params, state, grads, decay):
            ps, ss = [], []
            for p, s, g, wd in zip(p_pair, s_pair, g_pair, wd_pair):
                if o["name"] == "sgd":
                    g = g + wd * p  # L2
                    v = o["momentum"] * s + g
                    p = p - lr * ((g + o["momentum"] * v) if o["nesterov"] else v)
                    ps.append(p)
                    ss.append(v)
                    continue
                if o["name"] == "adamw":
                    p = p - lr * wd * p  # decoupled
                else:
                    g = g + wd * p  # L2
                m, v = s
                m = o["beta1"] * m + (1 - o["beta1"]) * g
                v = o["beta2"] * v + (1 - o["beta2"]) * g * g
                step = lr / (1 - o["beta1"] ** t)
                ps.append(p - step * m / (jnp.sqrt(v / (1 - o["beta2"] ** t)) + o["eps"]))
                ss.append((m, v))
            new_params.append(tuple(ps))
            new_state.append(tuple(ss))
        return new_params, new_state

    zeros = jnp.zeros_like
    state = [tuple(zeros(p) if o["name"] == "sgd" else (zeros(p), zeros(p)) for p in pair) for pair in params]

    @jax.jit
    def train_step(params, state, X, y, idx, lr, t):
        grads = jax.grad(loss)(params, X[idx], y[idx])
        return update(params, state, grads, lr, t)

    @jax.jit
    def test_metrics(params, X, y):
        logits = forward(params, X)
        nll = -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], axis=1))
        return nll, jnp.mean(jnp.argmax(logits, axis=1) == y)  # the loss too, as mlp-manual's evaluate

    X_train, y_train = jnp.asarray(X_train), jnp.asarray(y_train.astype(np.int32))
    X_test, y_test = jnp.asarray(X_test), jnp.asarray(y_test.astype(np.int32))
    n, batch = len(X_train), recipe["training"]["batch_size"]
    bounds = batch_bounds(n, batch)
    factor, base = lr_factor(recipe, len(bounds)), o["lr"]
    order_rng = np.random.default_rng(args.seed + 1)
    jax.block_until_ready((params, X_train, y_train, X_test, y_test))  # copies dispatched ahead: not training
    clock.mark("ready")
    step = 0
    for epoch in range(recipe["training"]["epochs"]):
        order = order_rng.permutation(n).astype(np.int32)
        for lo, hi in bounds:
            step += 1
            params, state = train_step(params, state, X_train, y_train, order[lo:hi],
                                       np.float32(base * factor(step - 1)), np.float32(step))
        if epoch == recipe["training"]["epochs"] - 1:
            jax.block_until_ready(params)  # the steps are dispatched ahead: wait for the last
            clock.mark("trained")
        elif args.final_only:
            continue
        clock.epoch(float(test_metrics(params, X_test, y_test)[1]), epoch + 1)
    clock.report()


# ---------------------------------------------------------------- the parent: rounds, floor, report

def import_bench_train(threads, isa="as-set"):
    """bench_train reads its options when imported: give it ours, not this script's. It sets the
    ``isa`` settings in this process's environment, which the runs' processes inherit."""
    argv, sys.argv = sys.argv, [str(HERE / "bench_train.py"), "--threads", str(threads), "--isa", isa]
    try:
        sys.path.insert(0, str(HERE))
        import bench_train
    finally:
        sys.argv = argv
    return bench_train


def child_env(threads):
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, **{v: str(threads) for v in BLAS_VARS}, "PYTHONPATH": path}
    if threads == 1:  # XLA's CPU backend: one thread for its kernels and its Eigen pool
        env["XLA_FLAGS"] = " ".join(filter(None, [os.environ.get("XLA_FLAGS"), "--xla_cpu_multi_thread_eigen=false",
                                                  "intra_op_parallelism_threads=1"]))
    return env


def run_child(args, name, seed, recipe_path):
    """One run in a fresh process: its events in seconds since launch, and its exit time."""
    command = [sys.executable, __file__, "--child", name, "--seed", str(seed), "--config", args.config,
               "--threads", str(args.threads), "--recipe", recipe_path]
    command += ["--data-dir", args.data_dir] if args.data_dir else []
    command += ["--final-only"] if args.final_only else []
    launched = time.time()
    done = subprocess.run(command + ["--launched", repr(launched)], capture_output=True, text=True,
                          env=child_env(args.threads), check=False)  # a failure is reported below
    exited = time.time() - launched
    if done.returncode:
        raise SystemExit(f"the {name} run failed:\n{done.stderr}")
    run = json.loads(done.stdout.strip().splitlines()[-1])
    reached = [e["seconds"] for e in run["epochs"] if e["test_acc"] >= args.target]
    return {**run, "seed": seed, "total": exited, "to_target": reached[0] if reached else None,
            "epoch_reached": next((e["epoch"] for e in run["epochs"] if e["test_acc"] >= args.target), None)}


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
        {"mlp-manual": run_mlp_manual, "pytorch": run_pytorch, "jax": run_jax}[args.child](args, clock)
        return
    args.data_dir = args.data_dir or os.environ.get("MLP_MANUAL_DATA")
    rounds = args.rounds or (2 if args.quick else 5)
    bt = import_bench_train(args.threads, args.isa)
    if bt.threadpoolctl:
        bt.threadpoolctl.threadpool_limits(args.threads)
    if bt.torch is not None:
        bt.torch.set_num_threads(args.threads)
    from mlp_manual.config import load_config
    cfg = load_config(args.config, [f"data.data_dir={args.data_dir}"] if args.data_dir else [])
    recipe = dataclasses.asdict(cfg)
    if not recipe["data"]["data_dir"]:
        raise SystemExit("give the data directory: --data-dir DIR or $MLP_MANUAL_DATA")
    names = ["mlp-manual"] + [name for name, lib in (("pytorch", bt.torch), ("jax", bt.jax)) if lib is not None]
    load_before, peak_before = os.getloadavg(), bt.matmul_peak()
    runs, floors = {n: [] for n in names}, []
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(recipe, f)
    try:
        for seed in range(rounds):
            for name in names[seed % len(names):] + names[:seed % len(names)]:  # who goes first rotates
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
    label = {"mlp-manual": "mlp-manual", "pytorch": "PyTorch eager", "jax": "JAX jit step"}
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
    ratios, lines = {}, lines + [""]
    for name, key in (("pytorch", ""), ("jax", "jax_")):
        if name in runs:
            ratios[key + "to_target"], to_target = ratio_text(bt, runs, "mlp-manual", name, "to_target")
            ratios[key + "total"], total = ratio_text(bt, runs, "mlp-manual", name, "total")
            lines.append(f"- mlp-manual / {label[name]}, paired per round: time to target {to_target}, total {total}")
        else:
            lines.append(f"- {label[name].split()[0]} is not installed: skipped")
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

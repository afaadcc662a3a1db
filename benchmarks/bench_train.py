"""Training speed side by side: mlp-manual, PyTorch eager, JAX and scikit-learn's MLPClassifier.

    python benchmarks/bench_train.py            # full run, under 10 minutes on 2 cores
    python benchmarks/bench_train.py --quick    # under a minute
    python benchmarks/bench_train.py --threads 1
    python benchmarks/bench_train.py --isa avx2 # every library held to AVX2, as on a CPU without AVX-512

Every library trains the same network (784-W-W-10, ReLU, softmax cross-entropy, plain SGD,
float32) on the same data with the same batch size and thread count. The libraries take turns
epoch by epoch inside one process, so a machine whose speed drifts slows them alike; the figures
that matter are ratios, taken between the epochs of one round and reported as the median over
rounds with the lowest and highest. mlp-manual runs its real training path
(``Trainer.fit``: per-epoch permutation, one gather per batch, ``train_step``).

The physical reference is the step's matrix products alone (forward, weight gradients and the
input gradients a step needs) at the same shapes, timed in the same rotation: it gives the
fraction of a step spent outside BLAS. Peak memory is measured in a fresh subprocess per library.

JAX runs twice: a ``jit`` step called once per batch from Python (the gather of the batch inside
the compiled step), and a ``jit`` of the whole epoch (``lax.scan`` over the batches). A breakdown
of mlp-manual's step times each part of the real training path (every layer's forward and
backward, the loss, the finite check, the optimizer, the accuracy count) and calls the rest
(the batch gather among it) Python overhead.

MNIST-shaped data is random (60000 x 784 float32) unless $MLP_MANUAL_DATA holds MNIST and this
version of mlp-manual can read it. PyTorch, JAX and scikit-learn are optional: a missing one is
skipped with a note. scikit-learn also runs once on a float64 copy of the data, for reference only: it
computes in the dtype of its input. Prints Markdown tables for the README.

M = samples, B = batch size, D = 784 input features, W = hidden width, C = 10 classes.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

D, C, LR = 784, 10, 0.01
WIDTHS, BATCHES = (64, 256, 1024), (32, 128, 512)

# What each library may use of the CPU, through the settings they read when they load: OpenBLAS's
# kernel family, numpy's dispatched loops, XLA's instruction set and PyTorch's kernels. "as-set"
# leaves the environment as it is (a machine may set OPENBLAS_CORETYPE, for example).
ISA_SETTINGS = ("OPENBLAS_CORETYPE", "NPY_DISABLE_CPU_FEATURES", "XLA_FLAGS", "ATEN_CPU_CAPABILITY")
ISAS = {"as-set": None,
        "native": {},  # every library detects the CPU itself
        "avx2": {"OPENBLAS_CORETYPE": "Haswell", "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
                 "XLA_FLAGS": "--xla_cpu_max_isa=AVX2", "ATEN_CPU_CAPABILITY": "avx2"}}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="fewer epochs and a smaller grid: under a minute")
    p.add_argument("--threads", type=int, default=2, help="threads for every library (default 2)")
    p.add_argument("--isa", choices=ISAS, default="as-set",
                   help="native: every library uses all the CPU has; avx2: every library is held to AVX2 "
                        "(a CPU without AVX-512); as-set (default): the environment's settings")
    p.add_argument("--memory-child", choices=("mlp-manual", "pytorch"), help=argparse.SUPPRESS)
    p.add_argument("--epochs", type=int, default=2, help=argparse.SUPPRESS)  # of a memory child
    return p.parse_args()


def use_isa(isa):
    """Set the libraries' CPU settings for ``isa`` (a key of ISAS) in this process's environment,
    before any of them loads; child processes inherit them."""
    if ISAS[isa] is None:
        return
    for var in ISA_SETTINGS:
        os.environ.pop(var, None)
    os.environ.update(ISAS[isa])


ARGS = parse_args()
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(ARGS.threads)  # before numpy loads its BLAS; threadpoolctl confirms below
use_isa(ARGS.isa)

import numpy as np  # noqa: E402

from mlp_manual.config import config_from_dict  # noqa: E402
from mlp_manual.losses import LOSSES  # noqa: E402
from mlp_manual.model import build_model  # noqa: E402
from mlp_manual.process import keep_freed_memory  # noqa: E402
from mlp_manual.training.experiment import training_plan  # noqa: E402
from mlp_manual.training.trainer import Trainer  # noqa: E402

keep_freed_memory()  # as every console script does when it starts (mlp_manual/process.py)


def optional(name):
    try:
        return __import__(name)
    except ImportError:
        return None


torch = optional("torch") if ARGS.memory_child != "mlp-manual" else None  # its child runs without
jax = optional("jax") if not ARGS.memory_child else None
threadpoolctl = optional("threadpoolctl")
sklearn = optional("sklearn") if not ARGS.memory_child else None


# ---------------------------------------------------------------- data

def mnist_shaped(rng, n=60000):
    """X (M, D) float32 in [0, 1), y (M,) int64: real MNIST when available, else random."""
    if os.environ.get("MLP_MANUAL_DATA"):
        try:
            from mlp_manual.datasets.real import read_idx_dataset
            arrays = read_idx_dataset("mnist")
            X = arrays["X_train"][:n].astype(np.float32)
            X *= np.float32(1 / 255)
            return X, arrays["y_train"][:n].astype(np.int64), "MNIST training images"
        except Exception as e:  # any failure falls back to random data, with the reason
            note = f"random (MNIST not read: {type(e).__name__}: {e})"
    else:
        note = "random ($MLP_MANUAL_DATA not set)"
    X = rng.random((n, D), dtype=np.float32)  # drawn in float32: no float64 copy on the way
    return X, rng.integers(0, C, n), note


# ---------------------------------------------------------------- the contestants

class MlpManual:
    name = "mlp-manual"

    def __init__(self, X, y, width, batch, seed=0):
        layers = [{"type": "linear", "units": width}, "relu", {"type": "linear", "units": width}, "relu",
                  {"type": "linear"}]
        self.cfg = config_from_dict({"model": {"layers": layers}, "optimizer": {"name": "sgd", "lr": LR},
                                     "schedule": {"name": "constant"},
                                     "training": {"epochs": 1, "batch_size": batch}}, "bench")
        model = build_model(list(self.cfg.model.layers), D, C, np.random.default_rng(seed))
        self.trainer = Trainer(model, LOSSES["softmax_cross_entropy"], training_plan(self.cfg), np.random.default_rng(seed + 1))
        self.X, self.y = X, y

    def epoch(self):
        # Trainer.fit resumes after its last completed epoch: one more planned epoch runs one more.
        t = self.trainer
        t.plan = replace(t.plan, epochs=t.epoch + 1)
        t.fit(self.X, self.y)


class PyTorchEager:
    name = "PyTorch eager"

    def __init__(self, X, y, width, batch, seed=0):
        nn = torch.nn
        torch.manual_seed(seed)
        self.net = nn.Sequential(nn.Linear(D, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
                                 nn.Linear(width, C))
        self.opt = torch.optim.SGD(self.net.parameters(), lr=LR)
        self.X, self.y = torch.from_numpy(X), torch.from_numpy(y)  # shares the numpy memory
        self.batch, self.gen = batch, torch.Generator().manual_seed(seed)

    def epoch(self):
        order = torch.randperm(len(self.X), generator=self.gen)
        for lo in range(0, len(self.X), self.batch):
            idx = order[lo:lo + self.batch]
            loss = torch.nn.functional.cross_entropy(self.net(self.X[idx]), self.y[idx])
            self.opt.zero_grad(set_to_none=True)
            loss.backward()
            self.opt.step()


def jax_mlp(width, seed):
    """The network's parameters as JAX arrays (PyTorch's default init, as PyTorchEager) and its
    SGD step on one batch: (params, X, y) -> params."""
    import jax.numpy as jnp
    rng = np.random.default_rng(seed)
    params = []
    for fan_in, fan_out in ((D, width), (width, width), (width, C)):
        bound = 1 / np.sqrt(fan_in)
        params.append((jnp.asarray(rng.uniform(-bound, bound, (fan_in, fan_out)).astype(np.float32)),
                       jnp.asarray(rng.uniform(-bound, bound, fan_out).astype(np.float32))))

    def loss(params, X, y):
        h = X
        for W, b in params[:-1]:
            h = jax.nn.relu(h @ W + b)
        logits = h @ params[-1][0] + params[-1][1]
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], axis=1))

    def step(params, X, y):
        grads = jax.grad(loss)(params, X, y)
        return jax.tree_util.tree_map(lambda p, g: p - LR * g, params, grads)
    return params, step


class JaxJitStep:
    """JAX's compiled step called per batch from Python; the batch is gathered inside it."""

    name = "JAX jit step"

    def __init__(self, X, y, width, batch, seed=0):
        import jax.numpy as jnp
        self.params, step = jax_mlp(width, seed)
        self.step = jax.jit(lambda params, X, y, idx: step(params, X[idx], y[idx]))
        self.X, self.y = jnp.asarray(X), jnp.asarray(y.astype(np.int32))
        self.batch, self.rng = batch, np.random.default_rng(seed + 1)

    def epoch(self):
        order = self.rng.permutation(len(self.X)).astype(np.int32)
        for lo in range(0, len(order), self.batch):
            self.params = self.step(self.params, self.X, self.y, order[lo:lo + self.batch])
        jax.block_until_ready(self.params)


class JaxJitEpoch(JaxJitStep):
    """JAX's whole epoch compiled: ``lax.scan`` over the full batches, then the last partial one."""

    name = "JAX jit epoch"

    def __init__(self, X, y, width, batch, seed=0):
        super().__init__(X, y, width, batch, seed)
        _, step = jax_mlp(width, seed)
        full = len(X) // batch

        def epoch(params, X, y, order):
            def body(params, idx):
                return step(params, X[idx], y[idx]), None
            params, _ = jax.lax.scan(body, params, order[:full * batch].reshape(full, batch))
            rest = order[full * batch:]
            return step(params, X[rest], y[rest]) if len(rest) else params
        self.run = jax.jit(epoch)

    def epoch(self):
        order = self.rng.permutation(len(self.X)).astype(np.int32)
        self.params = jax.block_until_ready(self.run(self.params, self.X, self.y, order))


class ScikitLearn:
    name = "scikit-learn"

    def __init__(self, X, y, width, batch, seed=0):
        from sklearn.neural_network import MLPClassifier
        self.clf = MLPClassifier((width, width), activation="relu", solver="sgd", alpha=0.0, batch_size=batch,
                                 learning_rate="constant", learning_rate_init=LR, momentum=0.0,
                                 nesterovs_momentum=False, shuffle=True, random_state=seed, max_iter=1)
        self.X, self.y = X, y

    def epoch(self):
        self.clf.partial_fit(self.X, self.y, classes=np.arange(C))  # one pass of mini-batch SGD


class ScikitLearnFloat64(ScikitLearn):
    """Not a target: scikit-learn given the data in float64, which it then computes in."""

    name = "scikit-learn, float64 data"

    def __init__(self, X, y, width, batch, seed=0):
        super().__init__(X.astype(np.float64), y, width, batch, seed)


class MatmulsOnly:
    """The step's matrix products alone, into preallocated outputs: 3 forward, 3 weight gradients,
    2 input gradients (nobody needs the data's)."""

    name = "matmuls only"

    def __init__(self, X, y, width, batch, seed=0):
        rng = np.random.default_rng(seed)
        f32 = np.float32
        self.W = [rng.standard_normal(s, dtype=f32) * f32(0.05) for s in ((D, width), (width, width), (width, C))]
        self.bounds = [(lo, min(lo + batch, len(X))) for lo in range(0, len(X), batch)]
        self.x = X[:batch].copy()  # (B, D)
        self.h = [rng.standard_normal((batch, width), dtype=f32) for _ in range(4)]  # (B, W) each
        self.out = rng.standard_normal((batch, C), dtype=f32)  # (B, C)
        self.dW = [np.empty_like(w) for w in self.W]

    def epoch(self):
        W, x, h, out, dW = self.W, self.x, self.h, self.out, self.dW
        for lo, hi in self.bounds:
            n = hi - lo
            np.matmul(x[:n], W[0], out=h[0][:n])
            np.matmul(h[0][:n], W[1], out=h[1][:n])
            np.matmul(h[1][:n], W[2], out=out[:n])
            np.matmul(h[1][:n].T, out[:n], out=dW[2])
            np.matmul(out[:n], W[2].T, out=h[2][:n])
            np.matmul(h[0][:n].T, h[2][:n], out=dW[1])
            np.matmul(h[2][:n], W[1].T, out=h[3][:n])
            np.matmul(x[:n].T, h[3][:n], out=dW[0])


def step_flops(width, n):
    """Floating-point operations of the matmuls above for n samples."""
    fwd = 2 * n * (D * width + width * width + width * C)
    return 2 * fwd + 2 * n * (width * width + width * C)


def matmul_peak(size=2048, repeats=3):
    """GFLOP/s of one large float32 square matmul: the most this BLAS gets out of the threads."""
    a = np.random.default_rng(0).standard_normal((size, size), dtype=np.float32)
    out = np.empty_like(a)
    np.matmul(a, a, out=out)
    best = min(timed(lambda: np.matmul(a, a, out=out)) for _ in range(repeats))
    return 2 * size ** 3 / best / 1e9


def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def race(contestants, rounds, warm_up=True):
    """One untimed warm-up epoch each (if ``warm_up``), then ``rounds`` rounds of one epoch each,
    in turn. Returns {name: [seconds of each round]}."""
    for c in contestants if warm_up else ():
        c.epoch()
    times = {c.name: [] for c in contestants}
    for _ in range(rounds):
        for c in contestants:
            times[c.name].append(timed(c.epoch))
    return times


def paired_ratio(times, a, b):
    """(median, lowest, highest) over rounds of a's epoch / b's epoch in the same round: pairing
    the epochs of one round cancels most of the drift of a shared machine."""
    ratios = [x / y for x, y in zip(times[a], times[b])]
    return statistics.median(ratios), min(ratios), max(ratios)


# ---------------------------------------------------------------- where mlp-manual's step goes

class Stopwatch:
    """Seconds spent in each wrapped callable, by label, exclusive of the wrapped calls it makes
    (the trainer's backward calls the layers' backwards: each is counted once)."""

    def __init__(self):
        self.spent, self.inner = {}, []  # inner: time of wrapped calls made by each open call

    def wrap(self, label, fn):
        def timed_call(*args, **kwargs):
            self.inner.append(0.0)
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                took = time.perf_counter() - start
                inner = self.inner.pop()
                self.spent[label] = self.spent.get(label, 0.0) + took - inner
                if self.inner:
                    self.inner[-1] += took
        return timed_call


def step_breakdown(X, y, width=256, batch=128, epochs=3):
    """Time each part of mlp-manual's real training step over ``epochs`` epochs (after one warm-up):
    every layer's forward and backward, the loss, the finite check (gradient norm), the
    optimizer and the accuracy count; the rest of the epoch is the batch gather and Python."""
    from mlp_manual.training import trainer as trainer_module

    contestant = MlpManual(X, y, width, batch)
    contestant.epoch()
    watch, t = Stopwatch(), contestant.trainer
    for i, layer in enumerate(t.model.layers):
        kind = type(layer).__name__
        for method in ("forward", "backward"):
            setattr(layer, method, watch.wrap(f"layers.{i} {kind} {method}", getattr(layer, method)))
    t.loss = replace(t.loss, fn=watch.wrap("loss (softmax cross-entropy and dlogits)", t.loss.fn))
    t.optimizer.step = watch.wrap("optimizer step (SGD)", t.optimizer.step)
    saved = {name: getattr(trainer_module, name)
             for name in ("grad_norm", "count_correct", "backward_without_data_grad")}
    trainer_module.grad_norm = watch.wrap("finite check (gradient norm)", saved["grad_norm"])
    trainer_module.count_correct = watch.wrap("accuracy count", saved["count_correct"])
    trainer_module.backward_without_data_grad = watch.wrap(  # what it computes itself: the first layer's grads
        "layers.0 Linear backward (its params only)", saved["backward_without_data_grad"])
    try:
        total = sum(timed(contestant.epoch) for _ in range(epochs))
    finally:
        for name, value in saved.items():
            setattr(trainer_module, name, value)
    steps = epochs * -(-len(X) // batch)
    parts = sorted(watch.spent.items(), key=lambda kv: -kv[1])
    parts.append(("the rest: the batch gather (X[idx]), Python between the calls, schedule, bookkeeping", total - sum(watch.spent.values())))
    rows = [(label, f"{s / steps * 1e6:.0f}", f"{s / total:.0%}") for label, s in parts]
    lines = [f"### Where mlp-manual's step goes: 784-{width}-{width}-10, batch {batch} ({epochs} epochs after a "
             f"warm-up, {total / epochs:.3f} s an epoch)", ""]
    return lines + table(["part", "microseconds a step", "share of the epoch"], rows) + [""]


def step_products(width=256, batch=128):
    """The step's 8 matrix products at the MNIST point, as mlp-manual computes them:
    (label, shape of a, shape of b, whether a is used transposed, whether b is)."""
    B, W = batch, width
    return [("layers.0 forward, x @ W", (B, D), (D, W), False, False),
            ("layers.2 forward, h @ W", (B, W), (W, W), False, False),
            ("layers.4 forward, h @ W", (B, W), (W, C), False, False),
            ("layers.4 dW = h.T @ dout", (B, W), (B, C), True, False),
            ("layers.4 dx = dout @ W.T", (B, C), (W, C), False, True),
            ("layers.2 dW = h.T @ dout", (B, W), (B, W), True, False),
            ("layers.2 dx = dout @ W.T", (B, W), (W, W), False, True),
            ("layers.0 dW = x.T @ dout", (B, D), (B, W), True, False)]


def product_kernels(repeats=400, blocks=5):
    """Each of the step's products timed alone: numpy's (OpenBLAS, into a preallocated output)
    and, with JAX, XLA's (one jitted product called ``repeats`` times, its dispatch included:
    the last row times a jitted function that does nothing). Median of ``blocks`` blocks, in
    microseconds a call. Returns the Markdown lines."""
    rng = np.random.default_rng(0)
    rows, totals = [], [0.0, 0.0]

    def per_call(fn, done=lambda r: None):
        times = []
        for _ in range(blocks):
            start = time.perf_counter()
            for _ in range(repeats):
                r = fn()
            done(r)
            times.append((time.perf_counter() - start) / repeats)
        return statistics.median(times) * 1e6

    for label, sa, sb, ta, tb in step_products():
        a, b = rng.standard_normal(sa, dtype=np.float32), rng.standard_normal(sb, dtype=np.float32)
        av, bv = (a.T if ta else a), (b.T if tb else b)
        out = np.empty((av.shape[0], bv.shape[1]), dtype=np.float32)
        ours = per_call(lambda: np.matmul(av, bv, out=out))
        theirs = None
        if jax is not None:
            product = jax.jit(lambda a, b: (a.T if ta else a) @ (b.T if tb else b))
            ja, jb = jax.numpy.asarray(a), jax.numpy.asarray(b)
            jax.block_until_ready(product(ja, jb))
            theirs = per_call(lambda: product(ja, jb), jax.block_until_ready)
            totals[1] += theirs
        totals[0] += ours
        flops = 2 * av.shape[0] * av.shape[1] * bv.shape[1]
        rows.append((label, f"{av.shape[0]}x{av.shape[1]} @ {bv.shape[0]}x{bv.shape[1]}", f"{ours:.0f}",
                     f"{flops / ours / 1e3:.0f}", "-" if theirs is None else f"{theirs:.0f}",
                     "-" if theirs is None else f"{ours / theirs:.2f}"))
    rows.append(("the 8 products", "", f"{totals[0]:.0f}", "", f"{totals[1]:.0f}" if jax else "-",
                 f"{totals[0] / totals[1]:.2f}" if jax else "-"))
    if jax is not None:
        nothing = jax.jit(lambda a: a)
        small = jax.numpy.zeros(1, jax.numpy.float32)
        jax.block_until_ready(nothing(small))
        rows.append(("a jitted call that does nothing (dispatch)", "", "-", "", f"{per_call(lambda: nothing(small), jax.block_until_ready):.0f}", "-"))
    lines = ["### The step's matrix products alone: numpy (OpenBLAS) against XLA", "",
             f"Each product called {repeats} times in a row, median of {blocks} blocks; microseconds a call.", ""]
    return lines + table(["product", "shapes", "numpy (us)", "numpy GFLOP/s", "XLA (us)", "numpy / XLA"],
                         rows) + [""]


def simd_level():
    """Whether the CPU has AVX-512, and the SIMD targets numpy's kernels dispatch to (the
    AVX-512 ones decide the last bits and much of the speed of the elementwise passes)."""
    try:
        from numpy._core import _multiarray_umath as umath
    except ImportError:
        from numpy.core import _multiarray_umath as umath
    found, targets = umath.__cpu_features__, getattr(umath, "__cpu_dispatch__", [])
    used = [t for t in targets if found.get(t)]
    return (f"the CPU has AVX-512: {'yes' if found.get('AVX512F') else 'no'}; numpy dispatches to "
            f"{', '.join(used) or 'its baseline only'} (of {', '.join(targets) or 'none'})")


def library_kernels():
    """The kernel families the libraries chose: OpenBLAS's, and PyTorch's CPU capability."""
    parts = []
    if threadpoolctl:
        parts += [f"OpenBLAS {p['architecture']}" for p in threadpoolctl.threadpool_info()
                  if p["internal_api"] == "openblas" and "numpy" in p["filepath"]]
    if torch is not None:
        parts.append(f"PyTorch {torch.backends.cpu.get_cpu_capability()}")
    return ", ".join(parts) or "not known (threadpoolctl not installed)"


# ---------------------------------------------------------------- memory, in a fresh process each

def peak_mib():
    """This process's peak resident memory. On Linux VmHWM: ru_maxrss would report the parent's
    peak, because it survives the fork and exec that start this process."""
    status = Path("/proc/self/status")
    if status.exists():
        return next(int(line.split()[1]) for line in status.open() if line.startswith("VmHWM")) / 1024
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20  # bytes on macOS


def memory_child(name, epochs):
    """Print peak RSS after imports, after making the data, and after training."""

    cls = {"mlp-manual": MlpManual, "pytorch": PyTorchEager}[name]
    after_imports = peak_mib()
    rng = np.random.default_rng(0)
    X, y = rng.random((60000, D), dtype=np.float32), rng.integers(0, C, 60000)
    after_data = peak_mib()
    contestant = cls(X, y, 256, 128)
    for _ in range(epochs):
        contestant.epoch()
    print(json.dumps({"imports": after_imports, "data": after_data, "peak": peak_mib(),
                      "arrays": (X.nbytes + y.nbytes) / 2 ** 20}))


def measure_memory(name, threads, epochs):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, __file__, "--threads", str(threads), "--memory-child", name,
                           "--epochs", str(epochs)],
                          capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- report

def machine_lines(threads):
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               platform.processor()) if Path("/proc/cpuinfo").exists() else platform.processor()
    lines = [f"- machine: {cpu}, {os.cpu_count()} logical cores, {platform.system()} {platform.machine()}",
             f"- SIMD: {simd_level()}; kernels chosen: {library_kernels()}",
             f"- --isa {ARGS.isa}: " + ", ".join(f"{v}={os.environ.get(v, 'unset')}" for v in ISA_SETTINGS),
             f"- Python {platform.python_version()}, numpy {np.__version__}"
             + (f", PyTorch {torch.__version__}" if torch else ", PyTorch not installed (skipped)")
             + (f", JAX {jax.__version__} (XLA's own thread pool: all cores)" if jax else ", JAX not installed (skipped)")
             + (f", scikit-learn {sklearn.__version__}" if sklearn else ", scikit-learn not installed (skipped)")]
    if threadpoolctl:
        pools = [f"{p['internal_api']} {p.get('version') or ''} ({Path(p['filepath']).name}): {p['num_threads']}"
                 for p in threadpoolctl.threadpool_info()]
        lines.append("- thread pools: " + "; ".join(pools))
    else:
        lines.append(f"- threadpoolctl not installed: threads set through OPENBLAS/OMP/MKL_NUM_THREADS={threads}")
    if torch:
        lines.append(f"- torch.get_num_threads() = {torch.get_num_threads()}")
    lines.append(f"- load average at the end: {' '.join(f'{v:.1f}' for v in os.getloadavg())} "
                 "(other work on the machine slows every library alike; ratios are what to read)")
    return lines


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return out + ["| " + " | ".join(str(v) for v in row) + " |" for row in rows]


def mnist_point(X, y, data_note, threads, rounds, warm_up):
    """Race every library and the matmul reference at 784-256-256-10, batch 128."""
    peers = [cls for cls, lib in ((PyTorchEager, torch), (JaxJitStep, jax), (JaxJitEpoch, jax), (ScikitLearn, sklearn),
                                  (ScikitLearnFloat64, sklearn)) if lib is not None]
    peak = matmul_peak()
    times = race([cls(X, y, 256, 128) for cls in (MlpManual, *peers, MatmulsOnly)], rounds, warm_up)
    peak = max(peak, matmul_peak())
    med = {name: statistics.median(t) for name, t in times.items()}
    ratios = {name: paired_ratio(times, MlpManual.name, name) for name in times}
    flops, ours, gemm = step_flops(256, len(X)), med["mlp-manual"], med["matmuls only"]
    rows = [(name, f"{s:.3f}", "{:.2f} ({:.2f}-{:.2f})".format(*ratios[name]),
             "-" if name in (MatmulsOnly.name, ScikitLearnFloat64.name)  # float64 products are not the reference's
             else f"{1 - ratios[name][0] / ratios[MatmulsOnly.name][0]:.0%}",
             f"{flops / s / 1e9:.0f}", "-" if name == ScikitLearnFloat64.name else f"{flops / s / 1e9 / peak:.0%}")
            for name, s in med.items()]
    lines = ["### MNIST point: 784-256-256-10, batch 128, float32, plain SGD", "",
             *machine_lines(threads), f"- data: {len(X)} x {D}, {data_note}",
             f"- {rounds} rounds{' after one warm-up epoch each' if warm_up else ''}; in a round each library "
             "trains one epoch, in turn. Epoch: the median. Ratio: the median (lowest-highest) over rounds of "
             "mlp-manual's epoch / the library's epoch in the same round.", ""]
    lines += table(["library", "epoch (s)", "mlp-manual / library", "time outside matmuls", "GFLOP/s",
                    "of the matmul peak"], rows)
    lines += ["", f"The two references, measured in this run: the matmul peak (one 2048^3 float32 product, the best "
              f"of the runs before and after the race) is {peak:.0f} GFLOP/s; the FLOP floor of an epoch (its "
              f"products alone: 3 forward, 3 weight gradients and 2 input gradients a step) is {flops / 1e9:.1f} "
              f"GFLOP, {flops / peak / 1e9:.3f} s at that peak. GFLOP/s is the floor over a library's epoch; "
              f"mlp-manual reaches {flops / ours / 1e9 / peak:.0%} of the peak, its matmuls alone "
              f"{flops / gemm / 1e9 / peak:.0%}.", ""]
    return ratios, lines


def grid(X, y, rounds, warm_up):
    """mlp-manual / PyTorch for every width and batch size."""
    ratios, rows = {}, []
    for width in WIDTHS:
        for batch in BATCHES:
            times = race([MlpManual(X, y, width, batch), PyTorchEager(X, y, width, batch)], rounds, warm_up)
            ours, theirs = (statistics.median(times[c.name]) for c in (MlpManual, PyTorchEager))
            ratios[width, batch] = paired_ratio(times, MlpManual.name, PyTorchEager.name)[0]
            rows.append((width, batch, f"{ours * 1e3:.0f}", f"{theirs * 1e3:.0f}", f"{ratios[width, batch]:.2f}"))
    lines = [f"### Grid: mlp-manual against PyTorch eager ({len(X)} samples an epoch, {rounds} rounds, "
             "medians; ratio as above)", ""]
    return ratios, lines + table(["width", "batch", "mlp-manual (ms)", "PyTorch (ms)", "ratio"], rows) + [""]


def memory(threads, epochs):
    """Peak memory of each library's training process; returns {name: added fraction}, lines."""
    added, rows = {}, []
    for name in ("mlp-manual", "pytorch") if torch is not None else ("mlp-manual",):
        m = measure_memory(name, threads, epochs)
        extra = m["peak"] - m["imports"] - m["arrays"]
        added[name] = extra / m["arrays"]
        rows.append((name, f"{m['arrays']:.0f}", f"{m['imports']:.0f}", f"{m['peak']:.0f}",
                     f"{extra:.0f} ({added[name]:.0%})"))
    lines = [f"### Peak memory, MNIST-shaped run ({epochs} epoch(s), a fresh process each)", ""]
    return added, lines + table(["library", "arrays X, y (MiB)", "after imports (MiB)", "peak (MiB)",
                                 "training adds beyond the arrays (MiB)"], rows) + [""]


def targets(ratios, grid_ratios, added):
    """The issue's targets against this run: (target, measured, limit, shown as percent)."""
    found = [("time outside matmuls <= 35%", 1 - 1 / ratios[MatmulsOnly.name][0], 0.35, True),
             ("memory added beyond the arrays < 10%", added["mlp-manual"], 0.10, True)]
    if torch is not None:
        found.insert(0, ("MNIST point vs PyTorch eager <= 0.75x", ratios[PyTorchEager.name][0], 0.75, False))
        found.append(("grid, width <= 256: <= 1.0x PyTorch (worst point)",
                      max(r for (w, _), r in grid_ratios.items() if w <= 256), 1.0, False))
        found.append(("grid, width 1024: <= 1.1x PyTorch (worst point)",
                      max(r for (w, _), r in grid_ratios.items() if w > 256), 1.1, False))
    if sklearn is not None:
        found.insert(1, ("MNIST point vs scikit-learn <= 0.4x", ratios[ScikitLearn.name][0], 0.4, False))
    if jax is not None:
        found += [("MNIST point vs JAX jit step <= 1.0x", ratios[JaxJitStep.name][0], 1.0, False),
                  ("MNIST point vs the matmuls alone <= 1.25x", ratios[MatmulsOnly.name][0], 1.25, False),
                  ("stretch: MNIST point vs JAX jit epoch <= 1.0x", ratios[JaxJitEpoch.name][0], 1.0, False)]
    rows = [(t, f"{v:.0%}" if percent else f"{v:.2f}", "yes" if v <= limit else "NO")
            for t, v, limit, percent in found]
    return ["### Targets", ""] + table(["target", "measured", "met"], rows)


def main():
    threads = ARGS.threads
    if threadpoolctl:
        threadpoolctl.threadpool_limits(threads)  # stays in force: no context manager restores it
    if torch is not None:
        torch.set_num_threads(threads)
    if ARGS.memory_child:
        memory_child(ARGS.memory_child, ARGS.epochs)
        return
    # quick: no warm-up epoch (the median of three drops a slow first one), a smaller grid
    rounds, grid_rounds, grid_n, memory_epochs = (3, 3, 2048, 1) if ARGS.quick else (11, 5, 8192, 2)
    warm_up = not ARGS.quick
    started = time.perf_counter()
    X, y, data_note = mnist_shaped(np.random.default_rng(0))
    ratios, report = mnist_point(X, y, data_note, threads, rounds, warm_up)
    report += step_breakdown(X, y, epochs=1 if ARGS.quick else 3)
    report += product_kernels(repeats=100 if ARGS.quick else 400)
    grid_ratios = {}
    if torch is not None:
        grid_ratios, lines = grid(X[:grid_n], y[:grid_n], grid_rounds, warm_up)
        report += lines
    added, lines = memory(threads, memory_epochs)
    report += lines + targets(ratios, grid_ratios, added) + [""]
    report += [f"- {name} is not installed: skipped" for name, lib in (("PyTorch", torch), ("JAX", jax),
                                                                          ("scikit-learn", sklearn)) if lib is None]
    report += [f"- total benchmark time {time.perf_counter() - started:.0f} s",
               "- rerun: `python benchmarks/bench_train.py [--quick] [--threads N]`"]
    print("\n".join(report))


if __name__ == "__main__":
    main()

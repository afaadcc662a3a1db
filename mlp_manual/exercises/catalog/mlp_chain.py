"""The two-layer MLP of the mlp_backward exercise as a chain of named steps: its forward (the
cache the student's backward receives), the expected gradients by the core, the gradients of each
step from the student's own earlier ones (judged step by step), and central differences.

N = batch size, T = 3 characters of context, E = embedding dim, H = hidden units, V = 27.
"""

from functools import lru_cache

import numpy as np

from ...core import BatchNorm1d, Embedding, Linear, Tanh, softmax_cross_entropy
from ...datasets.text import NAMES_FILE, examples, read_words
from ...datasets.vocabulary import Vocabulary
from ...gradcheck.numgrad import numerical_gradient

EPS = 1e-5  # batch norm's eps, the core's
T = 3  # characters of context, makemore's block size
PARAMS = ("C", "W1", "b1", "bngain", "bnbias", "W2", "b2")

# fwd, one line per intermediate, as the exercise's docstring writes it; v holds what came before
STEPS = (
    ("emb", lambda v: v["C"][v["Xb"]]),  # (N, T, E)
    ("embcat", lambda v: v["emb"].reshape(v["Xb"].shape[0], -1)),  # (N, T*E)
    ("hprebn", lambda v: v["embcat"] @ v["W1"] + v["b1"]),  # (N, H)
    ("bnmeani", lambda v: v["hprebn"].mean(0, keepdims=True)),  # (1, H)
    ("bndiff", lambda v: v["hprebn"] - v["bnmeani"]),  # (N, H)
    ("bndiff2", lambda v: v["bndiff"]**2),  # (N, H)
    ("bnvar", lambda v: v["bndiff2"].sum(0, keepdims=True) / v["Xb"].shape[0]),  # (1, H), biased
    ("bnvar_inv", lambda v: (v["bnvar"] + EPS)**-0.5),  # (1, H)
    ("bnraw", lambda v: v["bndiff"] * v["bnvar_inv"]),  # (N, H)
    ("hpreact", lambda v: v["bngain"] * v["bnraw"] + v["bnbias"]),  # (N, H)
    ("h", lambda v: np.tanh(v["hpreact"])),  # (N, H)
    ("logits", lambda v: v["h"] @ v["W2"] + v["b2"]),  # (N, V)
    ("logit_maxes", lambda v: v["logits"].max(1, keepdims=True)),  # (N, 1)
    ("norm_logits", lambda v: v["logits"] - v["logit_maxes"]),  # (N, V)
    ("counts", lambda v: np.exp(v["norm_logits"])),  # (N, V)
    ("counts_sum", lambda v: v["counts"].sum(1, keepdims=True)),  # (N, 1)
    ("counts_sum_inv", lambda v: v["counts_sum"]**-1),  # (N, 1)
    ("probs", lambda v: v["counts"] * v["counts_sum_inv"]),  # (N, V)
    ("logprobs", lambda v: np.log(v["probs"])),  # (N, V)
    ("loss", lambda v: -v["logprobs"][range(v["Xb"].shape[0]), v["Yb"]].mean()),  # ()
)
ORDER = [name for name, _ in STEPS]


@lru_cache(maxsize=1)
def names() -> tuple[Vocabulary, list[str]]:
    """The shipped names and their vocabulary ('.' and a..z)."""
    words, _ = read_words(NAMES_FILE.read_bytes(), "names")
    return Vocabulary.from_words(words), words


def batch(rng: np.random.Generator, n: int, start: bool) -> tuple[np.ndarray, np.ndarray]:
    """Xb (N, T), Yb (N,): N windows of names drawn from ``rng``, made as the names dataset makes
    them; ``start``: the first N windows of one name ('...' -> e, '..e' -> m, ...)."""
    vocab, words = names()
    picked = rng.integers(len(words), size=1 if start else n)
    X, y = examples([vocab.encode(words[i]) for i in picked], T)
    rows = np.arange(n) if start else rng.choice(len(X), size=n, replace=False)
    return X[rows], y[rows]


def forward(case, start: int = 0, given: dict | None = None) -> dict:
    """Every intermediate of ``case``'s batch, keyed as in the exercise; ``given``: values that
    replace the case's (a perturbed one), the steps from ``start`` recomputed."""
    v = given if given is not None else {**case["params"], "Xb": case["Xb"], "Yb": case["Yb"]}
    for name, step in STEPS[start:]:
        v[name] = step(v)
    return v


def _layers(case) -> tuple:
    p, (_, e), h = case["params"], case["params"]["C"].shape, case["params"]["W1"].shape[1]
    emb = Embedding(27, T, e, rng=np.random.default_rng(0), dtype=np.float64)
    first = Linear(T * e, h, rng=np.random.default_rng(0), dtype=np.float64)
    bn = BatchNorm1d(h, eps=EPS, dtype=np.float64)
    second = Linear(h, 27, rng=np.random.default_rng(0), dtype=np.float64)
    for layer, keys in ((emb, {"W": "C"}), (first, {"W": "W1", "b": "b1"}), (bn, {"gamma": "bngain", "beta": "bnbias"}),
                        (second, {"W": "W2", "b": "b2"})):
        layer.params.update({k: p[key].copy() for k, key in keys.items()})
    return emb, first, bn, Tanh(), second


def reference(case) -> dict:
    """The expected gradients: the core's layers and loss where the core has the step, the loss's
    intermediates in closed form, batch norm's inner steps from the core's dbnraw."""
    v = forward(case)
    emb, first, bn, tanh, second = _layers(case)
    _, dlogits = softmax_cross_entropy(second.forward(tanh.forward(bn.forward(first.forward(emb.forward(case["Xb"]))))),
                                       case["Yb"])
    n = len(case["Yb"])
    onehot = np.zeros_like(v["probs"])  # (N, V)
    onehot[range(n), case["Yb"]] = 1.0
    g = {"dlogprobs": -onehot / n, "dprobs": -onehot / (n * v["probs"]), "dcounts_sum_inv": -v["counts_sum"] / n,
         "dcounts_sum": v["counts_sum_inv"] / n, "dcounts": (v["counts_sum_inv"] - onehot / v["counts"]) / n,
         "dnorm_logits": dlogits, "dlogit_maxes": np.zeros((n, 1)), "dlogits": dlogits}
    g["dh"] = second.backward(dlogits)
    g["dW2"], g["db2"] = second.grads["W"], second.grads["b"]
    g["dhpreact"] = tanh.backward(g["dh"])
    g["dhprebn"] = bn.backward(g["dhpreact"])
    g["dbngain"], g["dbnbias"] = bn.grads["gamma"], bn.grads["beta"]
    g["dbnraw"] = v["bngain"] * g["dhpreact"]
    g["dbnvar_inv"] = (v["bndiff"] * g["dbnraw"]).sum(0, keepdims=True)
    g["dbnvar"] = -0.5 * (v["bnvar"] + EPS)**-1.5 * g["dbnvar_inv"]
    g["dbndiff2"] = np.ones_like(v["bndiff"]) * g["dbnvar"] / n
    g["dbndiff"] = v["bnvar_inv"] * g["dbnraw"] + 2 * v["bndiff"] * g["dbndiff2"]
    g["dbnmeani"] = -g["dbndiff"].sum(0, keepdims=True)
    g["dembcat"] = first.backward(g["dhprebn"])
    g["dW1"], g["db1"] = first.grads["W"], first.grads["b"]
    g["demb"] = g["dembcat"].reshape(v["emb"].shape)
    emb.backward(g["dembcat"])
    g["dC"] = emb.grads["W"]
    return {**g, "fwd": v}


def _linear_back(case, which: int, x, dout) -> tuple:
    layer = _layers(case)[which]
    layer.x = x
    dx = layer.backward(dout)
    return dx, layer.grads["W"], layer.grads["b"]


def _embedding_back(case, demb):
    emb = _layers(case)[0]
    emb.x = case["Xb"]
    emb.backward(demb.reshape(len(demb), -1))
    return emb.grads["W"]


def _bn_scale_shift(case, v, dhpreact) -> tuple:
    bn = _layers(case)[2]
    bn.xhat = v["bnraw"]
    dbnraw = bn.scale_shift_backward(dhpreact)
    return bn.grads["gamma"], bn.grads["beta"], dbnraw


# each step from the student's own earlier tensors y (v: the forward values, c: the case)
LOCAL = (
    ("dlogprobs", lambda c, v, y: reference_loss_seed(v, c)),
    ("dprobs", lambda c, v, y: y["dlogprobs"] / v["probs"]),
    ("dcounts_sum_inv", lambda c, v, y: (v["counts"] * y["dprobs"]).sum(1, keepdims=True)),
    ("dcounts_sum", lambda c, v, y: -v["counts_sum"]**-2 * y["dcounts_sum_inv"]),
    ("dcounts", lambda c, v, y: v["counts_sum_inv"] * y["dprobs"] + y["dcounts_sum"]),
    ("dnorm_logits", lambda c, v, y: v["counts"] * y["dcounts"]),
    ("dlogit_maxes", lambda c, v, y: -y["dnorm_logits"].sum(1, keepdims=True)),
    ("dlogits", lambda c, v, y: y["dnorm_logits"] + _at_max(v["logits"]) * y["dlogit_maxes"]),
    ("dh", lambda c, v, y: _linear_back(c, 4, v["h"], y["dlogits"])[0]),
    ("dW2", lambda c, v, y: _linear_back(c, 4, v["h"], y["dlogits"])[1]),
    ("db2", lambda c, v, y: _linear_back(c, 4, v["h"], y["dlogits"])[2]),
    ("dhpreact", lambda c, v, y: (1 - v["h"] * v["h"]) * y["dh"]),
    ("dbngain", lambda c, v, y: _bn_scale_shift(c, v, y["dhpreact"])[0]),
    ("dbnbias", lambda c, v, y: _bn_scale_shift(c, v, y["dhpreact"])[1]),
    ("dbnraw", lambda c, v, y: _bn_scale_shift(c, v, y["dhpreact"])[2]),
    ("dbnvar_inv", lambda c, v, y: (v["bndiff"] * y["dbnraw"]).sum(0, keepdims=True)),
    ("dbnvar", lambda c, v, y: -0.5 * (v["bnvar"] + EPS)**-1.5 * y["dbnvar_inv"]),
    ("dbndiff2", lambda c, v, y: np.ones_like(v["bndiff"]) * y["dbnvar"] / len(v["Yb"])),
    ("dbndiff", lambda c, v, y: v["bnvar_inv"] * y["dbnraw"] + 2 * v["bndiff"] * y["dbndiff2"]),
    ("dbnmeani", lambda c, v, y: -y["dbndiff"].sum(0, keepdims=True)),
    ("dhprebn", lambda c, v, y: y["dbndiff"] + y["dbnmeani"] / len(v["Yb"])),
    ("dembcat", lambda c, v, y: _linear_back(c, 1, v["embcat"], y["dhprebn"])[0]),
    ("dW1", lambda c, v, y: _linear_back(c, 1, v["embcat"], y["dhprebn"])[1]),
    ("db1", lambda c, v, y: _linear_back(c, 1, v["embcat"], y["dhprebn"])[2]),
    ("demb", lambda c, v, y: y["dembcat"].reshape(v["emb"].shape)),
    ("dC", lambda c, v, y: _embedding_back(c, y["demb"])),
)
TENSORS = tuple(name for name, _ in LOCAL)


def reference_loss_seed(v, case) -> np.ndarray:
    """dlogprobs: -1/N at each picked entry, 0 elsewhere."""
    n = len(case["Yb"])
    d = np.zeros_like(v["logprobs"])  # (N, V)
    d[range(n), case["Yb"]] = -1.0 / n
    return d


def _at_max(logits) -> np.ndarray:
    at = np.zeros_like(logits)  # (N, V), 1 at each row's largest logit
    at[range(len(logits)), logits.argmax(1)] = 1.0
    return at


def local(case, yours: dict) -> dict:
    """Each tensor from the student's own earlier ones; where those cannot make it (a wrong
    shape), the student's own tensor, which an earlier wrong one already explains."""
    v = forward(case)
    found = {"fwd": v}
    for name, step in LOCAL:
        try:
            with np.errstate(all="ignore"):
                found[name] = np.asarray(step(case, v, yours), dtype=np.float64)
        except (ValueError, IndexError, TypeError):
            found[name] = yours[name]
    return found


NUMERIC_MAX_N = 8  # central differences on the cases of at most 8 rows (the first three), well under 1 s
NOT_NUMERIC = ("dlogit_maxes", "db1")  # exactly 0 (the max and batch norm's mean cancel): rounding only


def numeric(case) -> dict | None:
    """Central differences of the loss with respect to every parameter and intermediate (each
    perturbed, the steps after it recomputed), on the small cases; with two rows batch norm makes
    every normalised value about +-1 whatever its input, so below it the gradients are ~1e-7 and
    only the steps above it are differenced."""
    n = len(case["Yb"])
    if n > NUMERIC_MAX_N:
        return None
    base = forward(case)
    found = {}
    for name in (*PARAMS, *ORDER[:-1]):
        key = f"d{name}"
        if key in NOT_NUMERIC or (n == 2 and ORDER.index("hpreact") > (ORDER.index(name) if name in ORDER else -1)):
            continue
        start = ORDER.index(name) + 1 if name in ORDER else 0
        v = dict(base)
        v[name] = np.ascontiguousarray(base[name], dtype=np.float64).copy()
        found[key] = numerical_gradient(lambda: forward(case, start, v)["loss"], v[name], eps=1e-6)
    return found

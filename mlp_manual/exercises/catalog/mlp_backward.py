"""A whole two-layer MLP's backward, intermediate by intermediate (makemore part 4, exercise 1),
on batches of the shipped names: the student's ``backward(cache)`` returns the gradient of every
intermediate and parameter, each compared with the core's (catalog/mlp_chain.py) in the reverse
order of the forward.

Every tensor is also judged alone (``Exercise.local``): computed from the student's own earlier
tensors, a step that is right is not blamed for a wrong one before it, so a mistake is named on
the first tensor it makes wrong and the tensors after it are reported as wrong only through it.

N = batch size, T = 3, E = embedding dim, H = hidden units, V = 27.
"""

import numpy as np

from ..exercise import Case, Exercise, Mistake
from ..student import WrongAnswer, as_tensor
from . import mlp_chain
from .mistakes import extra_one_over_n, missing_one_over_n, transposed, wrong_sign

FIXED = [(2, 2, 4), (4, 3, 8), (8, 4, 16)]  # N, E, H: the first a name's first two windows


def cases(seed: int) -> list[Case]:
    shape_rng = np.random.default_rng([seed, 1])
    drawn = [(int(shape_rng.integers(9, 33)), int(shape_rng.integers(4, 11)), int(shape_rng.integers(16, 65)))
             for _ in range(2)]
    shapes = FIXED + sorted(drawn, key=np.prod)  # smallest first
    rng = np.random.default_rng(seed)
    found = []
    for i, (n, e, h) in enumerate(shapes):
        Xb, Yb = mlp_chain.batch(rng, n, start=i == 0)
        found.append(Case(f"N={n}, E={e}, H={h}", n * e * h, {"Xb": Xb, "Yb": Yb, "params": _params(rng, e, h)}))
    return found


def _params(rng: np.random.Generator, e: int, h: int) -> dict:
    """makemore's: nothing at zero or one, so that no wrong gradient hides; tanh not saturated."""
    return {"C": rng.standard_normal((27, e)),  # (V, E)
            "W1": rng.standard_normal((mlp_chain.T * e, h)) * (5 / 3) / np.sqrt(mlp_chain.T * e),  # (T*E, H)
            "b1": rng.standard_normal(h) * 0.1,  # (H,)
            "bngain": rng.standard_normal(h) * 0.1 + 1.0,  # (H,)
            "bnbias": rng.standard_normal(h) * 0.1,  # (H,)
            "W2": rng.standard_normal((h, 27)) * 0.1,  # (H, V)
            "b2": rng.standard_normal(27) * 0.1}  # (V,)


def run(fn, case: Case, call) -> dict:
    cache = {k: np.copy(v) for k, v in mlp_chain.forward(case).items()}
    grads = call("backward(cache)", fn, cache)
    if not isinstance(grads, dict):
        raise WrongAnswer(f"backward(cache) returned a {type(grads).__name__}, not a dict of gradients "
                          "('dlogprobs': ..., 'dC': ...)")
    return {name: as_tensor(grads.get(name), f"backward's {name!r}") for name in mlp_chain.TENSORS}


def _m(key: str, tensor: str, says: str, look: str, fn) -> Mistake:
    """A mistake on ``tensor`` computed by ``fn(v, g, n)``: v the forward's values, g the
    student's earlier gradients, n the batch size."""
    return Mistake(key, tensor, says, look, lambda case, e: np.asarray(fn(e["fwd"], e, len(case["Yb"])), dtype=float))


def _assigned(v, g, n):
    dC = np.zeros_like(v["C"])
    dC[v["Xb"]] = g["demb"]
    return dC


N_OF = {"n": lambda case: len(case["Yb"])}
LOOK_LOSS = ("dlogprobs: loss = -logprobs[range(N), Yb].mean() is a mean over N rows: -1/N at [range(N), Yb], "
             "0 elsewhere")
LOOK_PROBS = "dprobs: the derivative of log(p) is 1/p: dprobs = (1.0 / probs) * dlogprobs"
LOOK_CSI = ("dcounts_sum_inv: in probs = counts * counts_sum_inv the (N, 1) column is broadcast along the V columns, "
            "so its gradient sums over them: (counts * dprobs).sum(1, keepdims=True), shape (N, 1)")
LOOK_COUNTS = ("dcounts: counts is used twice, by probs and by counts_sum: dcounts = counts_sum_inv * dprobs, "
               "then dcounts += dcounts_sum (broadcast along V): the second path adds, `+=` not `=`")
LOOK_LIN2 = "logits = h @ W2 + b2: dW2 = h.T @ dlogits (H, V), db2 = dlogits.sum(0) (V,)"
LOOK_TANH = "dhpreact: tanh'(x) = 1 - tanh(x)**2, and tanh(hpreact) is h: dhpreact = (1.0 - h**2) * dh"
LOOK_BN = ("batch norm: bndiff feeds bndiff2 and bnraw, hprebn feeds bnmeani and bndiff; each gets the sum of "
           "both paths: dbndiff = bnvar_inv * dbnraw + 2 * bndiff * dbndiff2; dhprebn = dbndiff + dbnmeani / N")
LOOK_VAR = ("dbndiff2: bnvar = bndiff2.sum(0, keepdims=True) / N, so dbndiff2 = (1/N) * ones * dbnvar "
            "(this forward's 1/N)")
LOOK_LIN1 = "hprebn = embcat @ W1 + b1: dW1 = embcat.T @ dhprebn, db1 = dhprebn.sum(0) (H,)"
LOOK_EMB = ("dC: emb = C[Xb] picks a row of C once per occurrence; a character picked k times gets the sum of its k "
            "gradients: np.add.at(dC, Xb, demb) (dC[Xb] = demb or dC[Xb] += demb keeps only one of them)")

MISTAKES = (
    missing_one_over_n("dlogprobs", LOOK_LOSS, **N_OF), extra_one_over_n("dlogprobs", LOOK_LOSS, **N_OF),
    wrong_sign("dlogprobs", LOOK_LOSS),
    _m("dprobs_without_1_over_probs", "dprobs", "dprobs is dlogprobs passed through: the 1/probs of log's derivative "
       "is missing", LOOK_PROBS, lambda v, g, n: g["dlogprobs"]),
    _m("dprobs_times_probs", "dprobs", "dprobs multiplies dlogprobs by probs where it divides: d log(p)/dp is 1/p",
       LOOK_PROBS, lambda v, g, n: v["probs"] * g["dlogprobs"]),
    _m("counts_sum_inv_not_summed", "dcounts_sum_inv", "dcounts_sum_inv is not summed over the columns: "
       "counts_sum_inv (N, 1) is broadcast along V, so its gradient sums the V entries of each row", LOOK_CSI,
       lambda v, g, n: v["counts"] * g["dprobs"]),
    _m("counts_sum_inv_wrong_axis", "dcounts_sum_inv", "dcounts_sum_inv is summed over the wrong axis: over the N "
       "rows (axis 0) instead of the V columns (axis 1)", LOOK_CSI,
       lambda v, g, n: (v["counts"] * g["dprobs"]).sum(0, keepdims=True)),
    wrong_sign("dcounts_sum", "dcounts_sum: d(x**-1)/dx = -x**-2: dcounts_sum = (-counts_sum**-2) * dcounts_sum_inv"),
    _m("counts_missing_sum_path", "dcounts", "dcounts misses the path through counts_sum: counts feeds probs directly "
       "and through counts_sum, and the two gradients add", LOOK_COUNTS,
       lambda v, g, n: v["counts_sum_inv"] * g["dprobs"]),
    _m("counts_missing_direct_path", "dcounts", "dcounts keeps only the path through counts_sum: `dcounts = ...` "
       "where `dcounts += ...` belongs overwrote the direct path through probs", LOOK_COUNTS,
       lambda v, g, n: np.ones_like(v["counts"]) * g["dcounts_sum"]),
    transposed("dW2", LOOK_LIN2),
    _m("db2_not_summed", "db2", "db2 is not summed over the batch: b2 is added to every row, so db2 adds up the N "
       "rows of dlogits", LOOK_LIN2, lambda v, g, n: g["dlogits"]),
    _m("db2_wrong_axis", "db2", "db2 is summed over the wrong axis: over the V columns (axis 1) instead of the N rows",
       LOOK_LIN2, lambda v, g, n: g["dlogits"].sum(1)),
    extra_one_over_n("db2", LOOK_LIN2, **N_OF),
    _m("tanh_derivative_missing", "dhpreact", "dhpreact is dh passed through: the tanh derivative 1 - h**2 is missing",
       LOOK_TANH, lambda v, g, n: g["dh"]),
    _m("tanh_derivative_of_input", "dhpreact", "dhpreact uses 1 - hpreact**2, the tanh derivative written with the "
       "input: it is 1 - tanh(hpreact)**2 = 1 - h**2", LOOK_TANH, lambda v, g, n: (1 - v["hpreact"]**2) * g["dh"]),
    _m("bnvar_inv_not_summed", "dbnvar_inv", "dbnvar_inv is not summed over the batch: bnvar_inv (1, H) is broadcast "
       "along the N rows", "dbnvar_inv = (bndiff * dbnraw).sum(0, keepdims=True), shape (1, H)",
       lambda v, g, n: v["bndiff"] * g["dbnraw"]),
    wrong_sign("dbnvar", "dbnvar: d(x**-0.5)/dx = -0.5 * x**-1.5: dbnvar = (-0.5 * (bnvar + EPS)**-1.5) * dbnvar_inv"),
    missing_one_over_n("dbndiff2", LOOK_VAR, **N_OF),
    _m("bessel_in_backward", "dbndiff2", "dbndiff2 divides by N - 1 (Bessel's correction, as makemore's forward does) "
       "but this forward's variance divides by N", LOOK_VAR,
       lambda v, g, n: np.ones_like(v["bndiff"]) * g["dbnvar"] / (n - 1)),
    _m("bndiff_missing_bndiff2_path", "dbndiff", "dbndiff misses the path through bndiff2 (the variance): bndiff "
       "feeds bnraw and bndiff2, and the two gradients add", LOOK_BN, lambda v, g, n: v["bnvar_inv"] * g["dbnraw"]),
    _m("bndiff_missing_direct_path", "dbndiff", "dbndiff keeps only the path through bndiff2: `dbndiff = ...` where "
       "`dbndiff += ...` belongs overwrote the direct path through bnraw", LOOK_BN,
       lambda v, g, n: 2 * v["bndiff"] * g["dbndiff2"]),
    _m("hprebn_missing_mean_path", "dhprebn", "dhprebn misses the path through the batch mean: hprebn feeds bndiff "
       "directly and through bnmeani, so dhprebn = dbndiff + dbnmeani / N", LOOK_BN, lambda v, g, n: g["dbndiff"]),
    transposed("dW1", LOOK_LIN1),
    _m("db1_not_summed", "db1", "db1 is not summed over the batch: b1 is added to every row, so db1 adds up the N "
       "rows of dhprebn", LOOK_LIN1, lambda v, g, n: g["dhprebn"]),
    _m("embedding_not_accumulated", "dC", "dC is assigned where it must accumulate: a character that appears several "
       "times in the batch gets only one of its gradients (dC[Xb] = demb and dC[Xb] += demb both write each row once)",
       LOOK_EMB, _assigned),
)

EXERCISE = Exercise(
    "mlp_backward", "a two-layer MLP's backward, intermediate by intermediate, on the names", "backward",
    mlp_chain.TENSORS, cases, mlp_chain.reference, run, numeric=mlp_chain.numeric, mistakes=MISTAKES,
    local=mlp_chain.local,
    hints=(
        "Walk the forward from the bottom up, one line at a time: each intermediate's gradient is its shape, and "
        "is the sum, over every line that uses it, of that line's local derivative times the gradient of what the "
        "line made. counts, bndiff and hprebn are each used twice. Where the forward broadcast a (N, 1) column or a "
        "(1, H) row, the backward sums over the axis it was broadcast along, keepdims=True.",
        "dlogprobs is -1/N at [range(N), Yb]; dprobs = dlogprobs / probs; dcounts_sum_inv = (counts * "
        "dprobs).sum(1, keepdims=True); dcounts_sum = -counts_sum**-2 * dcounts_sum_inv; dcounts = counts_sum_inv "
        "* dprobs, plus dcounts_sum. Then the layers: dh = dlogits @ W2.T, dW2 = h.T @ dlogits, db2 = dlogits.sum(0), "
        "dhpreact = (1 - h**2) * dh. In batch norm bnvar divides by N: dbndiff2 = ones * dbnvar / N.",
        "dbnraw = bngain * dhpreact; dbnvar_inv = (bndiff * dbnraw).sum(0, keepdims=True); dbndiff = bnvar_inv * "
        "dbnraw; dbnvar = -0.5 * (bnvar + EPS)**-1.5 * dbnvar_inv; dbndiff += 2 * bndiff * dbndiff2; dbnmeani = "
        "-dbndiff.sum(0, keepdims=True); dhprebn = dbndiff + dbnmeani / N; dembcat = dhprebn @ W1.T; demb = "
        "dembcat.reshape(emb.shape); dC = zeros, then np.add.at(dC, Xb, demb).",
    ),
)

"""Structural checks of a backward pass: it leaves its inputs alone, is deterministic and linear
in dout, and returns gradients shaped and typed like their parameters.
"""

import numpy as np

from .compare import kind_of
from .report import StructureCheck

LINEARITY_RTOL = 1e-9  # float64 roundoff is ~1e-16 per operation; a real violation is O(1)



def structure_checks(target, x, seed, rng):
    """Backward once for the analytic gradients, then again for the structural checks."""
    x_in, d = x.copy(), seed.copy()
    target.forward(x_in)
    dx, grads = target.backward(d, x)
    checks = [StructureCheck("forward leaves its input unchanged", np.array_equal(x_in, x), "x was written into"),
              StructureCheck("backward leaves dout unchanged", np.array_equal(d, seed), "dout was written into")]
    target.forward(x.copy())
    dx2, grads2 = target.backward(seed.copy(), x)
    differ = [n for n, a, b in _pairs(dx, grads, dx2, grads2) if not same(a, b)]
    checks.append(StructureCheck("deterministic: two backward passes agree", not differ,
                                 f"{', '.join(differ)} changed between two identical passes (accumulating with += ?)"))
    a, b = 0.75, -1.25
    g1, g2 = rng.normal(size=seed.shape), rng.normal(size=seed.shape)
    results = []
    for dout in (a * g1 + b * g2, g1, g2):
        target.forward(x.copy())
        results.append(target.backward(dout, x))
    (lx, lg), (x1, g1s), (x2, g2s) = results
    bad, triples = [], []
    for n, whole, p1, p2 in zip(["dx", *lg], [lx, *lg.values()], [x1, *g1s.values()], [x2, *g2s.values()]):
        if all(isinstance(v, np.ndarray) and v.shape == whole.shape for v in (whole, p1, p2)):
            triples.append((n, whole, a * p1 + b * p2))
    # a gradient that is 0 up to roundoff (a bias before batch norm) is judged on the pass's scale
    floor = 1e-2 * max([np.abs(w).max(initial=0.0) for _, w, _ in triples] + [1e-300])
    for n, whole, combo in triples:
        scale = max(np.abs(whole).max(initial=0.0), np.abs(combo).max(initial=0.0), floor)
        err = np.abs(whole - combo).max(initial=0.0) / scale
        if not err <= LINEARITY_RTOL:
            bad.append(f"{n} off by {err:.1e}")
    checks.append(StructureCheck("backward is linear in dout", not bad,
                                 "backward(a*g1 + b*g2) != a*backward(g1) + b*backward(g2): " + ", ".join(bad)))
    wrong = [f"dx is {dx.dtype}, not {x.dtype}"] if dx is not None and dx.dtype != x.dtype else []
    for name, owner, key in target.tensors:
        p, gr = owner.params[key], grads[name]
        if not isinstance(gr, np.ndarray):
            wrong.append(f"{name} is missing from grads" if gr is None else f"{name} is {kind_of(gr)}")
        elif gr.shape != p.shape or gr.dtype != p.dtype:
            wrong.append(f"{name} gradient is {gr.dtype}{gr.shape}, parameter {p.dtype}{p.shape}")
    extra = {id(o): sorted(set(o.grads) - set(o.params)) for _, o, _ in target.tensors}
    wrong += [f"grads has {k!r}, which is no parameter" for keys in extra.values() for k in keys]
    checks.append(StructureCheck("gradient shapes and dtypes equal their parameters'", not wrong, "; ".join(wrong)))
    return dx, grads, checks



def same(a, b) -> bool:
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
    return a is None and b is None



def _pairs(dx, grads, dx2, grads2):
    yield "dx", dx, dx2
    for n in grads:
        yield n, grads[n], grads2[n]

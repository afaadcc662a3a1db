"""Exercise: the chain rule by hand, on three numbers.

    L = (a*b + c)**2,  written in steps:  d = a*b,  e = d + c,  L = e**2

At a = 2, b = -3, c = 10 the forward pass gives d = -6, e = 4, L = 16. Write the backward pass:
the gradient of L with respect to every value, from L itself (the seed, dL/dL = 1) back to the
inputs, each as (the local gradient of one step) times (the gradient of that step's output):

    dL = dL/dL    de = dL/de    dd = dL/dd    dc = dL/dc    da = dL/da    db = dL/db

Every value is a plain number here; the same rule, a tensor at a time, is every backward pass
that follows. Check it with `mlp-exercise check chain_rule`.
"""


def chain_rule(a: float, b: float, c: float) -> dict:
    """The six gradients of L = (a*b + c)**2 at (a, b, c), keyed "dL", "de", "dd", "dc", "da", "db"."""
    d = a * b
    e = d + c
    L = e**2  # noqa: F841 - the forward pass, for reading
    # >>> write here: dL, de, dd, dc, da and db, each from the one before it
    dL = 1.0  # the seed: L changes one for one with itself
    de = 2 * e * dL  # fwd: L = e**2  =>  dL/de = 2e
    dd = 1.0 * de  # fwd: e = d + c  =>  a sum passes the gradient on unchanged
    dc = 1.0 * de
    da = b * dd  # fwd: d = a*b  =>  the local gradient of a is b
    db = a * dd
    # <<<
    return {"dL": dL, "de": de, "dd": dd, "dc": dc, "da": da, "db": db}

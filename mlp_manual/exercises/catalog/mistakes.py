"""Mistakes many exercises share, made for one tensor: the wrong sign, a transposed matrix, a
missing or an extra factor. Each predicts the mistaken tensor from the expected one."""

import numpy as np

from ..exercise import Mistake


def wrong_sign(tensor: str, look: str) -> Mistake:
    return Mistake("wrong_sign", tensor, f"{tensor} has the wrong sign: every entry is the negative of the right one",
                   look, lambda case, expected: -expected[tensor])


def transposed(tensor: str, look: str) -> Mistake:
    def predict(case, expected):
        e = expected[tensor]
        return e.T if e.ndim == 2 else None
    return Mistake("transposed", tensor, f"{tensor} is transposed: its rows are the columns of the right one",
                   look, predict)


def scaled(key: str, tensor: str, says: str, look: str, factor) -> Mistake:
    """A mistake that multiplies the right tensor by ``factor(case)`` (a number)."""
    return Mistake(key, tensor, says, look, lambda case, expected: factor(case) * expected[tensor])


def missing_one_over_n(tensor: str, look: str, n=lambda case: case["x"].shape[0]) -> Mistake:
    return scaled("missing_1_over_n", tensor, f"{tensor} is N times too large: the 1/N of the mean is missing",
                  look, n)


def extra_one_over_n(tensor: str, look: str, n=lambda case: case["x"].shape[0]) -> Mistake:
    return scaled("extra_1_over_n", tensor, f"{tensor} is N times too small: it is divided by N once too often "
                  "(a mean where a sum belongs)", look, lambda case: 1 / n(case))


def predicting(key: str, tensor: str, says: str, look: str, fn) -> Mistake:
    """A mistake whose tensor ``fn(case)`` computes from the case's inputs alone (None where it
    cannot be told)."""
    def predict(case, expected):
        found = fn(case)
        return None if found is None else np.asarray(found, dtype=np.float64)
    return Mistake(key, tensor, says, look, predict)


def accumulated(tensor: str, look: str) -> Mistake:
    """``self.grads[k] += ...``: the check calls backward twice, and the second call's gradient is
    twice the right one."""
    return scaled("accumulated_across_calls", tensor, f"{tensor} grows with every call of backward: `+=` into "
                  "self.grads adds this step's gradient to the last one's; backward sets it anew (`=`)", look,
                  lambda case: 2)


def scale_shift(xhat, xhat_name: str) -> tuple[Mistake, ...]:
    """The mistakes of out = gamma * xhat + beta's parameter gradients, shared by the
    normalisation layers: ``xhat(case)`` is the normalised input (N, D), ``xhat_name`` its name
    in the student's code."""
    look_dgamma = f"self.grads['gamma']: gamma (D,) scales every row, so dgamma = (dout * {xhat_name}).sum(axis=0)"
    look_dbeta = "self.grads['beta']: beta (D,) is added to every row, so dbeta = dout.sum(axis=0)"
    return (
        accumulated("dgamma", look_dgamma),
        predicting("not_summed_over_batch", "dgamma", "dgamma is not summed over the batch: every row uses gamma, "
                   "so its gradient adds up the N rows", look_dgamma, lambda c: c["dout"] * xhat(c)),
        wrong_sign("dgamma", look_dgamma),
        extra_one_over_n("dgamma", look_dgamma),
        predicting("not_summed_over_batch", "dbeta", "dbeta is not summed over the batch: every row adds beta, "
                   "so its gradient adds up the N rows", look_dbeta, lambda c: c["dout"]),
        wrong_sign("dbeta", look_dbeta),
        extra_one_over_n("dbeta", look_dbeta),
    )

"""Small layers with one classic backprop bug each, for the gradient checker to catch.

Each class's ``FAILS`` names the tensors the checker must report FAIL (and no others); the
``BREAKS`` of the structural cases name the structural check that must fail.

N = batch size, D = input features, H = output features.
"""

import numpy as np

from mlp_manual.layers import Layer, LayerNorm, sigmoid


class _Affine(Layer):
    """out = x @ W + b with random float64 weights: the forward the affine cases below share;
    each writes its own broken backward."""

    def __init__(self, d=4, h=3, seed=0):
        super().__init__()
        rng = np.random.default_rng(seed)
        self.params["W"], self.params["b"] = rng.normal(size=(d, h)), rng.normal(size=h)  # (D, H), (H,)
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        self.x = None

    def forward(self, x):
        self.x = x  # (N, D)
        return x @ self.params["W"] + self.params["b"]


class TransposedWeightGrad(_Affine):
    """out = x @ W + b with a square W, whose gradient is written transposed: the shapes match,
    so nothing but the numbers gives it away."""

    FAILS = {"W"}

    def __init__(self, d=4, seed=0):
        super().__init__(d, d, seed)

    def backward(self, dout):
        self.grads["W"] = dout.T @ self.x  # bug: should be x.T @ dout
        self.grads["b"] = dout.sum(axis=0)
        return dout @ self.params["W"].T


class SkipOverwritesGrad(Layer):
    """out = x @ W + x: x is used twice, and the second path's gradient overwrites the first's
    (``=`` where ``+=`` belongs)."""

    FAILS = {"dx"}

    def __init__(self, d=4, seed=0):
        super().__init__()
        self.params["W"] = np.random.default_rng(seed).normal(size=(d, d))  # (D, D)
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        self.x = None

    def forward(self, x):
        self.x = x  # (N, D)
        return x @ self.params["W"] + x

    def backward(self, dout):
        self.grads["W"] = self.x.T @ dout
        dx = dout @ self.params["W"].T  # through the matmul
        dx = dout  # bug: through the skip, should be dx += dout
        return dx


class CenteringMissingOneOverN(Layer):
    """out = x - mean(x) per row, whose backward sums dout where it should average it."""

    FAILS = {"dx"}

    def __init__(self):
        super().__init__()
        self.ran = None

    def forward(self, x):
        self.ran = True
        return x - x.mean(axis=1, keepdims=True)

    def backward(self, dout):
        self.saved(self.ran)
        return dout - dout.sum(axis=1, keepdims=True)  # bug: should be dout.mean(axis=1, keepdims=True)


class SigmoidFromPreactivation(Layer):
    """out = sigmoid(x), whose derivative s (1 - s) is computed from x instead of s."""

    FAILS = {"dx"}

    def __init__(self):
        super().__init__()
        self.x = None

    def forward(self, x):
        self.x = x  # (N, D)
        return sigmoid(x)

    def backward(self, dout):
        x = self.saved(self.x)
        return dout * x * (1 - x)  # bug: should be s * (1 - s) with s = sigmoid(x)


class ForgottenBiasGrad(_Affine):
    """out = x @ W + b, whose backward never writes the bias gradient (it stays at its zeros)."""

    FAILS = {"b"}

    def backward(self, dout):
        self.grads["W"] = self.x.T @ dout  # bug: no self.grads["b"] = dout.sum(axis=0)
        return dout @ self.params["W"].T


class ScaleWrongSign(Layer):
    """out = x * gamma per feature, whose gamma gradient has the wrong sign."""

    FAILS = {"gamma"}

    def __init__(self, d=4, seed=0):
        super().__init__()
        self.params["gamma"] = np.random.default_rng(seed).normal(size=d)  # (D,)
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        self.x = None

    def forward(self, x):
        self.x = x  # (N, D)
        return x * self.params["gamma"]

    def backward(self, dout):
        self.grads["gamma"] = -(dout * self.x).sum(axis=0)  # bug: the minus sign
        return dout * self.params["gamma"]


class SoftmaxDiagonalOnly(Layer):
    """Row-wise softmax whose backward keeps only the diagonal of the Jacobian, s (1 - s),
    and drops the off-diagonal terms -s_i s_j."""

    FAILS = {"dx"}

    def __init__(self):
        super().__init__()
        self.s = None

    def forward(self, x):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        self.s = e / e.sum(axis=1, keepdims=True)  # (N, D)
        return self.s

    def backward(self, dout):
        s = self.saved(self.s)
        return dout * s * (1 - s)  # bug: should be s * (dout - sum(dout * s))


CLASSIC_BUGS = [TransposedWeightGrad, SkipOverwritesGrad, CenteringMissingOneOverN, SigmoidFromPreactivation,
                ForgottenBiasGrad, ScaleWrongSign, SoftmaxDiagonalOnly]


class AccumulatingGrad(ForgottenBiasGrad):
    """Writes its weight gradient with ``+=``: the first backward is right, the second is not."""

    BREAKS = "deterministic: two backward passes agree"

    def backward(self, dout):
        self.grads["W"] += self.x.T @ dout  # bug: a layer writes its gradients, it does not accumulate
        self.grads["b"] = dout.sum(axis=0)
        return dout @ self.params["W"].T


class ScalesInputInPlace(ScaleWrongSign):
    """Right gradients, but forward multiplies its input in place."""

    BREAKS = "forward leaves its input unchanged"

    def forward(self, x):
        self.x = x.copy()
        x *= self.params["gamma"]  # bug: writes into the caller's array
        return x

    def backward(self, dout):
        self.grads["gamma"] = (dout * self.x).sum(axis=0)
        return dout * self.params["gamma"]


class MasksDoutInPlace(Layer):
    """ReLU whose backward zeroes the upstream gradient in place."""

    BREAKS = "backward leaves dout unchanged"

    def __init__(self):
        super().__init__()
        self.x = None

    def forward(self, x):
        self.x = x
        return np.maximum(x, 0)

    def backward(self, dout):
        dout[self.x <= 0] = 0  # bug: the caller's dout is changed
        return dout


class SquaresDout(MasksDoutInPlace):
    """A backward that is not linear in dout (it squares it)."""

    BREAKS = "backward is linear in dout"

    def backward(self, dout):
        return dout * dout * (self.x > 0)


class Float32WeightGrad(ForgottenBiasGrad):
    """Right numbers, but the weight gradient comes back float32 for float64 weights."""

    BREAKS = "gradient shapes and dtypes equal their parameters'"

    def backward(self, dout):
        self.grads["W"] = (self.x.T @ dout).astype(np.float32)
        self.grads["b"] = dout.sum(axis=0)
        return dout @ self.params["W"].T


STRUCTURAL_BUGS = [AccumulatingGrad, ScalesInputInPlace, MasksDoutInPlace, SquaresDout, Float32WeightGrad]


class LayerNormNaiveVariance(LayerNorm):
    """LayerNorm with the variance computed as E[x^2] - E[x]^2. It is the same function, so its
    backward passes the float64 finite-difference check; but where the mean of a row is large
    next to its spread, the two terms nearly cancel, and in float32 most digits of the variance
    are rounding error. The precision check must FAIL it there; the built-in LayerNorm, which
    subtracts the mean first, passes on the same input."""

    def __init__(self, features: int = 5):
        super().__init__(features)

    def forward(self, x):
        mean = x.mean(axis=1, keepdims=True)  # (N, 1)
        var = (x * x).mean(axis=1, keepdims=True) - mean * mean  # (N, 1), cancels when |mean| >> spread
        self.rstd = 1 / np.sqrt(var + x.dtype.type(self.eps))  # (N, 1)
        return self.scale_shift((x - mean) * self.rstd)

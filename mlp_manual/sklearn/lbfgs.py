"""Training with L-BFGS (solver "lbfgs"): ``scipy.optimize.minimize`` over every parameter in
one flat vector, given the loss of the whole training set and its gradient from the layers'
hand-written backward passes. ``max_iter`` bounds its iterations, ``max_fun`` its loss
evaluations, and ``tol`` is its gradient tolerance, as in scikit-learn.

The flat vector holds every ``coefs_[i]`` (row by row), then every ``intercepts_[i]``, then
the other parameters (normalisation scales and shifts) in the model's order.

P = parameters in all.
"""

import warnings

import numpy as np
import scipy.optimize
from sklearn.exceptions import ConvergenceWarning

from ..core import Dropout
from .network import linears, loss_and_gradients


def _slots(model):
    """(layer, key) of every parameter, in the flat vector's order."""
    lin = linears(model)
    others = [(layer, k) for layer in model.layers if layer not in lin for k in layer.params]
    return [(layer, "W") for layer in lin] + [(layer, "b") for layer in lin] + others


def pack(model) -> np.ndarray:
    """Every parameter in one vector (P,), float64."""
    return np.concatenate([layer.params[k].ravel() for layer, k in _slots(model)]).astype(np.float64)


def unpack(model, theta: np.ndarray, dtype=None) -> None:
    """Set every parameter from the vector ``theta`` (P,): views of it, or copies in ``dtype``."""
    start = 0
    for layer, k in _slots(model):
        shape = layer.params[k].shape
        end = start + int(np.prod(shape))
        part = theta[start:end].reshape(shape)
        layer.params[k] = part if dtype is None else part.astype(dtype)
        start = end


def loss_and_gradient(est, theta: np.ndarray, X, Y, weights) -> tuple[float, np.ndarray]:
    """The loss of the whole of X (N, D), Y (N, K) at parameters ``theta`` (P,), and its gradient (P,)."""
    model = est.model_
    unpack(model, theta)
    loss = loss_and_gradients(model, est._output(), est.alpha, X, Y, weights)
    grad = np.concatenate([layer.grads[k].ravel() for layer, k in _slots(model)])  # (P,)
    return loss, grad.astype(np.float64, copy=False)


def fit_lbfgs(est, X, Y: np.ndarray, weights) -> None:
    """Minimise the loss of ``est.model_`` on X, Y with L-BFGS-B; ConvergenceWarning when it
    stops for a reason other than convergence (``max_iter``, ``max_fun``, a failed line search)."""
    if any(isinstance(layer, Dropout) and layer.p > 0 for layer in est.model_.layers):
        raise ValueError("solver='lbfgs' needs the same loss at every evaluation; dropout > 0 needs a "
                         "stochastic solver ('sgd' or 'adam')")
    dtype = est.model_.dtype
    est.n_iter_ = 0

    def each_iteration(intermediate_result):
        est.n_iter_ += 1
        est.loss_curve_.append(float(intermediate_result.fun))
        if est.verbose:
            print(f"Iteration {est.n_iter_}, loss = {intermediate_result.fun:.8f}")
        if est._hooks.end():
            raise StopIteration  # scipy ends the minimisation
        est._hooks.begin()

    theta = pack(est.model_)
    est._hooks.begin()
    try:
        result = scipy.optimize.minimize(
            lambda t: loss_and_gradient(est, t, X, Y, weights), theta, method="L-BFGS-B", jac=True,
            callback=each_iteration, options={"maxfun": est.max_fun, "maxiter": est.max_iter, "gtol": est.tol})
    except KeyboardInterrupt:
        warnings.warn("Training interrupted by user.")
        unpack(est.model_, pack(est.model_), dtype)  # the last parameters tried, as arrays of their own
        return
    unpack(est.model_, result.x, dtype)
    est.loss_ = float(result.fun)
    est.n_iter_ = min(int(result.nit), est.max_iter)
    if result.status != 0:
        warnings.warn(f"lbfgs failed to converge after {result.nit} iterations (status={result.status}): "
                      f"{result.message}. Increase max_iter or max_fun, or scale the data.", ConvergenceWarning)

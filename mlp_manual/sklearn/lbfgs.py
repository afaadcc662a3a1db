"""Training with L-BFGS (solver "lbfgs"): ``scipy.optimize.minimize`` over every parameter in
one flat vector, given the loss of the whole training set and its gradient from the layers'
hand-written backward passes. ``max_iter`` bounds its iterations, ``max_fun`` its loss
evaluations, and ``tol`` is its gradient tolerance, as in scikit-learn.

The vector is flat.py's: every ``coefs_[i]``, then every ``intercepts_[i]``, then the others.

P = parameters in all.
"""

import warnings

import numpy as np
import scipy.optimize
from sklearn.exceptions import ConvergenceWarning

from ..core import Dropout
from .flat import Flat, loss_and_gradients


def loss_and_gradient(est, flat: Flat, theta: np.ndarray, X, Y, weights) -> tuple[float, np.ndarray]:
    """The loss of the whole of X (N, D), Y (N, K) at parameters ``theta`` (P,), and its gradient (P,)."""
    flat.point(theta.astype(flat.theta.dtype, copy=False))
    loss = loss_and_gradients(est.model_, flat, est._output(), est.alpha, X, Y, weights)
    return loss, flat.grad.astype(np.float64)  # a copy: the next evaluation writes flat.grad again


def fit_lbfgs(est, X, Y: np.ndarray, weights) -> None:
    """Minimise the loss of ``est.model_`` on X, Y with L-BFGS-B; ConvergenceWarning when it
    stops for a reason other than convergence (``max_iter``, ``max_fun``, a failed line search)."""
    if any(isinstance(layer, Dropout) and layer.p > 0 for layer in est.model_.layers):
        raise ValueError("solver='lbfgs' needs the same loss at every evaluation; dropout > 0 needs a "
                         "stochastic solver ('sgd' or 'adam')")
    flat = Flat(est.model_)
    est.n_iter_, stopped = 0, []

    def each_iteration(intermediate_result):
        est.n_iter_ += 1
        est.loss_ = float(intermediate_result.fun)
        est.loss_curve_.append(est.loss_)
        if est.verbose:
            print(f"Iteration {est.n_iter_}, loss = {est.loss_:.8f}")
        if est._hooks.end():
            stopped.append(True)
            raise StopIteration  # scipy ends the minimisation
        est._hooks.begin()

    try:
        est._hooks.begin()
        result = scipy.optimize.minimize(
            lambda t: loss_and_gradient(est, flat, t, X, Y, weights), flat.theta.astype(np.float64),
            method="L-BFGS-B", jac=True, callback=each_iteration,
            options={"maxfun": est.max_fun, "maxiter": est.max_iter, "gtol": est.tol})
    except KeyboardInterrupt:
        warnings.warn("Training interrupted by user.")
        flat.point(flat.theta.copy())  # the last parameters tried, as arrays of their own
        return
    flat.point(result.x.astype(flat.theta.dtype))
    est.loss_ = float(result.fun)
    est.n_iter_ = min(int(result.nit), est.max_iter)
    if result.status != 0 and not stopped:  # a callback's stop is no failure to converge
        warnings.warn(f"lbfgs failed to converge after {result.nit} iterations (status={result.status}): "
                      f"{result.message}. Increase max_iter or max_fun, or scale the data.", ConvergenceWarning)

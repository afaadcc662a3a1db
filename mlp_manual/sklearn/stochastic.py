"""Training by mini-batches (solvers sgd, adam and mlp-manual's adamw, rmsprop), with
scikit-learn's rules: its learning-rate schedules, its stopping rule on ``tol`` and
``n_iter_no_change``, its early stopping, its warnings.

The stopping rule: after each epoch, the epoch counts as no improvement when the training loss
is above the best loss so far minus ``tol`` (with ``early_stopping``: the validation score below
the best score plus ``tol``); training stops when more than ``n_iter_no_change`` epochs in a
row counted so. With ``learning_rate="adaptive"`` (sgd), a stop divides the learning rate by 5
instead, until it is at most 1e-6.

N = samples, D = features, K = output units.
"""

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split

from ..core.namespace import like, namespace
from ..devices import device
from .flat import loss_and_gradients
from .placement import Placement
from .solvers import solver

MIN_ADAPTIVE_RATE = 1e-6  # learning_rate="adaptive" stops once the rate is this small
AUTO_BATCH = 200  # batch_size="auto" is min(200, rows)
# up to this size the shuffled rows are gathered once an epoch; a larger X is gathered a batch at
# a time, so that training never holds a second copy of it
WHOLE_GATHER = 16 * 2**20


class StepRule:
    """scikit-learn's ``_optimizer``: mlp-manual's optimizer for ``est.solver`` and the
    ``learning_rate`` it steps with now, which the sgd schedules change after each epoch."""

    def __init__(self, est):
        self.optimizer = solver(est)
        self.learning_rate_init = self.learning_rate = float(est.learning_rate_init)
        self.schedule = est.learning_rate if est.solver == "sgd" else "constant"
        self.power_t = float(est.power_t)
        # adamw decays the weights apart from the gradient (core/optimizers.py's AdamW), by alpha;
        # the other solvers add alpha's L2 term to the loss
        self.decay = float(est.alpha) if est.solver == "adamw" else 0.0
        self.l2 = 0.0 if self.decay else float(est.alpha)

    def place(self, dev) -> None:
        """The solver's state on device ``dev`` (placement.py)."""
        self.optimizer.place(dev)

    def step(self, flat) -> None:
        if self.decay:
            W = flat.theta[:flat.n_coef]  # every weight matrix, flattened
            W *= 1.0 - self.learning_rate * self.decay  # W -= lr * alpha * W
        self.optimizer.step(flat.theta, flat.grad, self.learning_rate)

    def iteration_ends(self, samples_seen: int) -> None:
        """After each epoch: "invscaling" sets the rate to lr_init / (samples seen + 1)^power_t."""
        if self.schedule == "invscaling":
            self.learning_rate = self.learning_rate_init / (samples_seen + 1) ** self.power_t

    def trigger_stopping(self, message: str, verbose) -> bool:
        """Whether training stops on ``message``; "adaptive" divides the rate by 5 instead while it
        is above 1e-6."""
        if self.schedule != "adaptive" or self.learning_rate <= MIN_ADAPTIVE_RATE:
            if verbose:
                print(f"{message} Stopping.")
            return True
        self.learning_rate /= 5.0
        if verbose:
            print(f"{message} Setting learning rate to {self.learning_rate:f}")
        return False


def batch_rows(batch_size, n_rows: int) -> int:
    """Rows per batch: "auto" is min(200, rows); a larger size is clipped to the rows, with a warning."""
    if isinstance(batch_size, str):
        return min(AUTO_BATCH, n_rows)
    if batch_size > n_rows:
        warnings.warn("Got `batch_size` less than 1 or larger than sample size. It is going to be clipped",
                      UserWarning)
    return int(np.clip(batch_size, 1, n_rows))


def validation_split(est, X, Y, weights):
    """(X, Y, weights) for training and the validation split (X, y as given, weights) that early
    stopping watches (None without it): ``validation_fraction`` of the rows, stratified for a
    single-output classifier."""
    if not est.early_stopping:
        return X, Y, weights, None
    stratify = Y.astype(bool) if est._stratified_split() else None  # a class named by its label's truth
    parts = train_test_split(X, Y, *([] if weights is None else [weights]), random_state=est._random_state,
                             test_size=est.validation_fraction, stratify=stratify)
    X_train, X_val, Y_train, Y_val = parts[:4]
    w_train, w_val = parts[4:] if weights is not None else (None, None)
    if X_val.shape[0] < 2:
        raise ValueError("The validation set is too small. Increase 'validation_fraction' or the size of your dataset.")
    return X_train, Y_train, w_train, (X_val, est._targets_as_given(Y_val), w_val)


def fit_stochastic(est, X, Y: np.ndarray, weights, incremental: bool) -> None:
    """Train ``est.model_`` on X (N, D), Y (N, K): ``max_iter`` epochs at most (one with
    ``incremental``, partial_fit), stopping by scikit-learn's rule."""
    if not incremental or not hasattr(est, "_optimizer"):
        est._optimizer = StepRule(est)
    if est.early_stopping and incremental:
        raise ValueError("partial_fit does not support early_stopping=True")
    X, Y, weights, validation = validation_split(est, X, Y, weights)
    place = Placement(est, device(est.device))
    X, Y, weights = (place.device.put(a) for a in (X, Y, weights))  # once a fit
    batch = batch_rows(est.batch_size, X.shape[0])
    est.n_iter_ = 0
    try:
        for _ in range(est.max_iter):
            est._hooks.begin()
            with place.epoch() as flat:
                loss = _epoch(est, flat, X, Y, weights, batch)
            est.n_iter_ += 1
            est.loss_, est.t_ = loss, est.t_ + X.shape[0]
            est.loss_curve_.append(loss)
            if est.verbose:
                print(f"Iteration {est.n_iter_}, loss = {loss:.8f}")
            asked = est._hooks.end()
            if _stops(est, validation) or asked or incremental:
                break
            if est.n_iter_ == est.max_iter:
                warnings.warn(f"Stochastic Optimizer: Maximum iterations ({est.max_iter}) reached and the "
                              "optimization hasn't converged yet.", ConvergenceWarning)
    except KeyboardInterrupt:
        warnings.warn("Training interrupted by user.")
    finally:
        place.close()
    if validation is not None:
        est._restore_best()


def _epoch(est, flat, X, Y, weights, batch: int) -> float:
    """One pass over the rows in batches, shuffled first with ``shuffle``; returns the mean of
    the batches' losses weighted by their rows."""
    n, order = X.shape[0], None
    if est.shuffle:
        order = np.arange(n)
        est._random_state.shuffle(order)
        if not isinstance(X, np.ndarray) and not hasattr(X, "tocsr"):
            order = like(X, order)  # a device's X: its rows are gathered there
        if _nbytes(X) <= WHOLE_GATHER:
            # one gather an epoch, then each batch a view: fewer calls than a gather a batch
            X, Y, weights = (None if a is None else _rows(a, order) for a in (X, Y, weights))
            order = None
    model, step, output, total = est.model_, est._optimizer, est._output(), 0.0
    for start in range(0, n, batch):
        rows = slice(start, min(start + batch, n)) if order is None else order[start:start + batch]
        loss = loss_and_gradients(model, flat, output, step.l2, _rows(X, rows), _rows(Y, rows),
                                  None if weights is None else _rows(weights, rows))
        total += loss * (min(start + batch, n) - start)
        step.step(flat)
    return total / n


def _rows(A, rows):
    """The ``rows`` (a slice, or indices (B,)) of A (N, ...): numpy's and SciPy's indexing, or
    the standard's, which names every axis and gathers with ``take``."""
    if isinstance(A, np.ndarray) or hasattr(A, "tocsr"):
        return A[rows]
    return A[rows, ...] if isinstance(rows, slice) else namespace(A).take(A, rows, axis=0)


def _nbytes(X) -> int:
    if hasattr(X, "tocsr"):  # a SciPy sparse matrix: its entries
        return X.data.nbytes
    return X.shape[0] * X.shape[1] * namespace(X).finfo(X.dtype).bits // 8


def _stops(est, validation) -> bool:
    """Count the epoch as an improvement or not, and whether training stops (scikit-learn's rule)."""
    if validation is not None:
        score = float(est._score(*validation))
        est.validation_scores_.append(score)
        if est.verbose:
            print(f"Validation score: {score:f}")
        improved = not score < est.best_validation_score_ + est.tol
        if score > est.best_validation_score_:
            est.best_validation_score_ = score
            est._keep_best()
    else:
        improved = not est.loss_curve_[-1] > est.best_loss_ - est.tol
        est.best_loss_ = min(est.best_loss_, est.loss_curve_[-1])
    est._no_improvement_count = 0 if improved else est._no_improvement_count + 1
    est._optimizer.iteration_ends(est.t_)
    if est._no_improvement_count <= est.n_iter_no_change:
        return False
    watched = "Validation score" if validation is not None else "Training loss"
    message = f"{watched} did not improve more than tol={est.tol:f} for {est.n_iter_no_change} consecutive epochs."
    if est._optimizer.trigger_stopping(message, est.verbose):
        return True
    est._no_improvement_count = 0
    return False

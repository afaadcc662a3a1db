"""MLPClassifier (softmax cross-entropy) and MLPRegressor (mean squared error).

N = samples, D = features, C = classes, K = regression targets.
"""

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.metrics import r2_score
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from ..errors import DataError
from ..layers import Softmax
from ..losses import LOSSES
from ..training.evaluation import model_outputs
from .base import MLPBase

PARAMETERS = """
    Parameters: scikit-learn's own names and defaults, then mlp-manual's extras
    ----------
    hidden_layer_sizes : sequence of int, default=(100,)
        Units of each hidden linear layer; the output layer's width comes from the targets.
    activation : str, default="relu"
        The layer after each hidden linear: "identity", "logistic" (or "sigmoid"), "tanh", "relu",
        and mlp-manual's "leaky_relu", "gelu".
    solver : {"adam", "sgd", "adamw", "rmsprop"}, default="adam"
        optimizer.name. scikit-learn's "lbfgs" is not available (a full-batch quasi-Newton method).
    alpha : float, default=0.0001
        The L2 penalty, as scikit-learn scales it: alpha / 2 * ||W||^2 added to a batch's mean loss
        over its rows, that is optimizer.weight_decay = alpha / batch rows (weight matrices only).
    batch_size : int or "auto", default="auto"
        training.batch_size; "auto" is min(200, rows).
    learning_rate : str, default="constant"
        schedule.name: "constant", or mlp-manual's "step", "exponential", "cosine" (with their
        config defaults). scikit-learn's "invscaling" and "adaptive" are not available.
    learning_rate_init : float, default=0.001
        optimizer.lr.
    max_iter : int, default=200
        training.epochs: the most epochs ``fit`` trains.
    shuffle : bool, default=True
        training.shuffle.
    random_state : int, RandomState or None, default=None
        seed: one integer reproduces a fit bit for bit.
    tol : float, default=1e-4
        training.early_stopping.min_delta: the fall of the watched loss that counts as progress.
    momentum, nesterovs_momentum : float, bool, default=0.9, True
        optimizer.momentum and optimizer.nesterov, for solver="sgd".
    early_stopping : bool, default=False
        Hold out ``validation_fraction`` of the rows (stratified by class), stop when their loss has
        not fallen by ``tol`` for ``n_iter_no_change`` epochs and keep the best epoch's weights.
        Without it the training loss is watched the same way and the last weights are kept.
    validation_fraction : float, default=0.1
        data.val_fraction, with ``early_stopping``.
    beta_1, beta_2, epsilon : float, default=0.9, 0.999, 1e-8
        optimizer.beta1, beta2, eps, for the adam solvers (epsilon also for rmsprop).
    n_iter_no_change : int, default=10
        training.early_stopping.patience; 0 trains every ``max_iter`` epoch.
    dropout : float, default=0.0
        p of a dropout layer after each activation; 0 adds none.
    normalization : {None, "layernorm", "rmsnorm", "batchnorm"}, default=None
        A normalisation layer between each hidden linear and its activation.
    init : str, default="he_uniform"
        model.init: the weight initialiser of the linear layers.
    dtype : {"float32", "float64"}, default="float32"
        The dtype of the weights and of the computation.

    Fitted attributes
    -----------------
    model_ : mlp_manual.Model, the trained model (``mlp_manual.save_model`` writes it).
    config_ : mlp_manual.config.Config the fit ran with (``dump_config`` gives its YAML).
    n_features_in_, feature_names_in_ : as in scikit-learn.
    loss_curve_ : training loss per epoch.
    best_loss_ : the lowest training loss.
    validation_scores_ : SCORE on the validation split per epoch (None without one).
    best_validation_score_ : the highest of them (None without a validation split).
    n_iter_ : epochs trained, over every ``fit``/``partial_fit`` call since the last ``fit``.
"""


class MLPClassifier(ClassifierMixin, MLPBase):
    """A multilayer-perceptron classifier trained by mlp-manual's hand-written backward pass,
    with softmax cross-entropy. Labels may be any values numpy can sort (strings, integers).

    ``classes_`` : the labels, sorted; ``predict_proba`` has one column per label.
    """

    __doc__ += PARAMETERS.replace("SCORE", "accuracy")
    _loss = "softmax_cross_entropy"

    def _fit_data(self, X, y, dtype, reset, classes=None):
        X, y = validate_data(self, X, y, reset=reset, dtype=np.dtype(dtype))
        check_classification_targets(y)
        if reset:
            self.classes_ = np.unique(y if classes is None else classes)
            if len(self.classes_) < 2:
                raise DataError(f"{type(self).__name__} needs at least 2 classes, y holds "
                                f"{len(self.classes_)} class")
        elif classes is not None and not np.array_equal(np.unique(classes), self.classes_):
            raise DataError(f"classes {np.unique(classes).tolist()} differ from those of the first call "
                            f"{self.classes_.tolist()}")
        unknown = np.setdiff1d(y, self.classes_)
        if len(unknown):
            raise DataError(f"y holds labels {unknown[:3].tolist()} that are not among the classes "
                            f"{self.classes_.tolist()}")
        return X, np.searchsorted(self.classes_, y).astype(np.int64)

    def _output_width(self):
        return LOSSES[self._loss].output_width(len(self.classes_), 1)

    def _validation_score(self, row, X_val, y_val):
        return row["val_acc"]

    def partial_fit(self, X, y, classes=None):
        """One epoch on (X, y), keeping the model and optimizer state of earlier calls.

        Inputs: X (N, D), y (N,); classes, every label, required on the first call. Returns: self.
        """
        if not hasattr(self, "_trainer") and classes is None:
            raise DataError("the first call to partial_fit needs classes=, every label there will be")
        return self._partial_fit(X, y, classes)

    def predict(self, X):
        """Labels (N,) of the most probable class."""
        out = self._outputs(X)  # (N, C), checks that the model is fitted
        return self.classes_[LOSSES[self._loss].predict(out)]

    def predict_proba(self, X):
        """Class probabilities (N, C), float64, columns in the order of ``classes_``."""
        return Softmax().forward(self._outputs(X))


class MLPRegressor(RegressorMixin, MLPBase):
    """A multilayer-perceptron regressor trained by mlp-manual's hand-written backward pass,
    with mean squared error; y may have several columns.

    ``n_outputs_`` : target columns.
    """

    __doc__ += PARAMETERS.replace("SCORE", "R^2")
    _loss = "mse"

    def _fit_data(self, X, y, dtype, reset, classes=None):
        X, y = validate_data(self, X, y, reset=reset, dtype=np.dtype(dtype), multi_output=True, y_numeric=True)
        width = 1 if y.ndim == 1 else y.shape[1]
        if reset:
            self.n_outputs_ = width
        elif width != self.n_outputs_:
            raise DataError(f"y has {width} target columns, the model was fitted with {self.n_outputs_}")
        return X, LOSSES[self._loss].targets(y, np.dtype(dtype))

    def _output_width(self):
        return LOSSES[self._loss].output_width(None, self.n_outputs_)

    def _validation_score(self, row, X_val, y_val):
        return float(r2_score(y_val, model_outputs(self.model_, X_val)))

    def partial_fit(self, X, y):
        """One epoch on (X, y), keeping the model and optimizer state of earlier calls.

        Inputs: X (N, D), y (N,) or (N, K). Returns: self.
        """
        return self._partial_fit(X, y)

    def predict(self, X):
        """Predictions (N,) for one target column, (N, K) for several; float64."""
        out = self._outputs(X)  # (N, K)
        return out[:, 0] if out.shape[1] == 1 else out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

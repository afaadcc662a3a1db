"""MLPClassifier and MLPRegressor: scikit-learn's parameters, attributes and methods, with
mlp-manual's hand-written backward pass (and its extras: class weights, dropout, normalisation).

N = samples, D = features, C = classes (or labels), K = regression targets.
"""

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin, _fit_context
from sklearn.metrics import accuracy_score, r2_score
from sklearn.preprocessing import LabelBinarizer
from sklearn.utils._available_if import available_if
from sklearn.utils.class_weight import compute_class_weight, compute_sample_weight
from sklearn.utils.multiclass import _check_partial_fit_first_call, check_classification_targets, type_of_target
from sklearn.utils.multiclass import unique_labels
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from .base import FLOATS, MLPBase
from .params import CLASSIFIER, REGRESSOR, constraints, described

ATTRIBUTES = """
    Attributes
    ----------
    coefs_, intercepts_ : lists of the linear layers' W (D_i, D_i+1) and b (D_i+1,), the network's own arrays.
    loss_ : the last epoch's loss (the final loss for 'lbfgs'); loss_curve_ : the loss per epoch.
    best_loss_ : the lowest training loss (None with early_stopping).
    validation_scores_, best_validation_score_ : with early_stopping, the score per epoch and the best.
    n_iter_ : epochs of the last fit; t_ : training rows seen; n_layers_, n_outputs_, out_activation_.
    model_ : the mlp_manual.Model these arrays belong to (mlp_manual.save_model writes it).
    n_features_in_, feature_names_in_ : as in scikit-learn.
"""


def _finite_or_nan(estimator, X, y, sample_weight, score) -> float:
    predicted = estimator._predict(X)
    if np.issubdtype(np.asarray(predicted).dtype, np.floating) and not np.isfinite(predicted).all():
        return np.nan
    return score(y, predicted, sample_weight=sample_weight)


class MLPClassifier(ClassifierMixin, MLPBase):
    """A multilayer-perceptron classifier trained by mlp-manual's hand-written backward pass:
    softmax and cross-entropy for several classes, a logistic output and binary cross-entropy
    for two classes or for multilabel targets (an indicator matrix). ``classes_``: the labels.
    """

    __doc__ += described(CLASSIFIER) + ATTRIBUTES
    _parameter_constraints = constraints(CLASSIFIER)

    def __init__(self, hidden_layer_sizes=(100,), activation="relu", *, solver="adam", alpha=0.0001,
                 batch_size="auto", learning_rate="constant", learning_rate_init=0.001, power_t=0.5, max_iter=200,
                 shuffle=True, random_state=None, tol=1e-4, verbose=False, warm_start=False, momentum=0.9,
                 nesterovs_momentum=True, early_stopping=False, validation_fraction=0.1, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-8, n_iter_no_change=10, max_fun=15000, class_weight=None, dropout=0.0,
                 normalization=None, init=None, dtype=None, device="cpu"):
        for name, value in locals().items():
            if name != "self":
                setattr(self, name, value)

    def _validate_input(self, X, y, incremental, reset, inspecting=False):
        X, y = validate_data(self, X, y, accept_sparse=["csr", "csc"], multi_output=True, dtype=FLOATS, reset=reset)
        if y.ndim == 2 and y.shape[1] == 1:
            y = column_or_1d(y, warn=True)
        check_classification_targets(y)
        if not hasattr(self, "classes_") or (not self.warm_start and not incremental):
            self._label_binarizer = LabelBinarizer().fit(y)
            self.classes_ = self._label_binarizer.classes_
        else:
            classes = unique_labels(y)
            if self.warm_start and not inspecting:  # rows to inspect need not hold every class
                if set(classes) != set(self.classes_):
                    raise ValueError("warm_start can only be used where `y` has the same classes as in the previous "
                                     f"call to fit. Previously got {self.classes_}, `y` has {classes}")
            elif len(np.setdiff1d(classes, self.classes_, assume_unique=True)):
                raise ValueError(f"`y` has classes not in `self.classes_`. `self.classes_` has {self.classes_}. "
                                 f"'y' has {classes}.")
        dtype = np.dtype(self.dtype or X.dtype)
        return X.astype(dtype, copy=False), self._label_binarizer.transform(y).astype(dtype)

    def _out_activation(self):
        return "softmax" if self._label_binarizer.y_type_ == "multiclass" else "logistic"

    def _stratified_split(self):
        return self.n_outputs_ == 1

    def _targets_as_given(self, Y):
        return self._label_binarizer.inverse_transform(Y.ravel() if Y.shape[1] == 1 else Y)

    def _row_weights(self, y, sample_weight):
        if self.class_weight is None:
            return None
        if type_of_target(y).startswith("multilabel"):
            # each label a binary output: a row's weight is the product of its labels' weights
            return compute_sample_weight(self.class_weight, np.asarray(y))
        present, index = np.unique(column_or_1d(y), return_inverse=True)
        if not isinstance(self.class_weight, str):
            return compute_class_weight(self.class_weight, classes=present, y=present[index])[index]
        # "balanced": rows / (classes * rows of the class), a row of sample weight 2 counted as two
        counts = np.bincount(index, weights=sample_weight, minlength=len(present))  # (C,)
        weighed = counts > 0
        per_class = np.zeros(len(present))
        per_class[weighed] = counts.sum() / (weighed.sum() * counts[weighed])
        return per_class[index]

    def _score(self, X, y, sample_weight=None):
        return _finite_or_nan(self, X, y, sample_weight, accuracy_score)

    def _predict(self, X, check_input=False):
        p = self._forward(X, check_input)  # (N, C), or (N, 1) for two classes
        return self._label_binarizer.inverse_transform(p.ravel() if self.n_outputs_ == 1 else p)

    def predict(self, X):
        """The predicted labels (N,) (an indicator matrix (N, C) for multilabel targets)."""
        check_is_fitted(self)
        return self._predict(X, check_input=True)

    def predict_proba(self, X):
        """Probabilities (N, C), columns in the order of ``classes_``."""
        check_is_fitted(self)
        p = self._forward(X)  # (N, C), or (N, 1): the probability of the binarizer's positive label
        if self.n_outputs_ == 1 and len(self.classes_) == 2:
            return np.column_stack([1 - p[:, 0], p[:, 0]])
        return 1 - p if len(self.classes_) == 1 else p  # one class: the binarizer encodes it as 0

    def predict_log_proba(self, X):
        """log(predict_proba(X)) (N, C)."""
        proba = self.predict_proba(X)
        return np.log(proba, out=proba)

    @available_if(lambda est: est._check_solver())
    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, sample_weight=None, classes=None):
        """One epoch on X, y, going on from the last fit or partial_fit; ``classes`` (every label
        there will be) is needed on the first call. Returns self."""
        if isinstance(self.class_weight, str):  # "balanced" needs every row's class at once
            raise ValueError("class_weight='balanced' is not supported by partial_fit: a chunk's class counts are not "
                             "the data's. Give class_weight a dict, e.g. from sklearn.utils.class_weight."
                             "compute_class_weight('balanced', classes=classes, y=y) on all of y")
        if _check_partial_fit_first_call(self, classes):
            self._label_binarizer = LabelBinarizer()
            self._label_binarizer.fit(y if type_of_target(y).startswith("multilabel") else classes)
        return self._fit(X, y, sample_weight, incremental=True)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_label = True
        return tags


class MLPRegressor(RegressorMixin, MLPBase):
    """A multilayer-perceptron regressor trained by mlp-manual's hand-written backward pass:
    half the squared error with an identity output, or half the Poisson deviance with an exp
    output (``loss="poisson"``); y may have several columns.
    """

    __doc__ += described(REGRESSOR) + ATTRIBUTES
    _parameter_constraints = constraints(REGRESSOR)

    def __init__(self, loss="squared_error", hidden_layer_sizes=(100,), activation="relu", *, solver="adam",
                 alpha=0.0001, batch_size="auto", learning_rate="constant", learning_rate_init=0.001, power_t=0.5,
                 max_iter=200, shuffle=True, random_state=None, tol=1e-4, verbose=False, warm_start=False,
                 momentum=0.9, nesterovs_momentum=True, early_stopping=False, validation_fraction=0.1, beta_1=0.9,
                 beta_2=0.999, epsilon=1e-8, n_iter_no_change=10, max_fun=15000, dropout=0.0, normalization=None,
                 init=None, dtype=None, device="cpu"):
        for name, value in locals().items():
            if name != "self":
                setattr(self, name, value)

    def _validate_input(self, X, y, incremental, reset, inspecting=False):
        X, y = validate_data(self, X, y, accept_sparse=["csr", "csc"], multi_output=True, y_numeric=True,
                             dtype=FLOATS, reset=reset)
        if y.ndim == 2 and y.shape[1] == 1:
            y = column_or_1d(y, warn=True)
        if self.loss == "poisson" and np.any(y < 0):
            raise ValueError("loss='poisson' needs y >= 0; y holds negative values")
        dtype = np.dtype(self.dtype or X.dtype)
        return X.astype(dtype, copy=False), np.asarray(y, dtype=dtype).reshape(len(y), -1)

    def _out_activation(self):
        return "exp" if self.loss == "poisson" else "identity"

    def _targets_as_given(self, Y):
        return Y.ravel() if Y.shape[1] == 1 else Y

    def _score(self, X, y, sample_weight=None):
        return _finite_or_nan(self, X, y, sample_weight, r2_score)

    def _predict(self, X, check_input=False):
        p = self._forward(X, check_input)  # (N, K)
        return p.ravel() if p.shape[1] == 1 else p

    def predict(self, X):
        """Predictions (N,) for one target, (N, K) for several."""
        check_is_fitted(self)
        return self._predict(X, check_input=True)

    @available_if(lambda est: est._check_solver())
    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, sample_weight=None):
        """One epoch on X, y, going on from the last fit or partial_fit. Returns self."""
        return self._fit(X, y, sample_weight, incremental=True)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

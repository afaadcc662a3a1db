"""What MLPClassifier and MLPRegressor share: scikit-learn's fit, warm start and partial fit,
the fitted attributes, predictions, and pickles that hold the weights and settings only.

The network is mlp-manual's layers (network.py); ``coefs_`` and ``intercepts_`` are its linear
layers' own arrays, so setting them changes the predictions, as in scikit-learn.

N = samples, D = features, K = output units.
"""

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.callback import CallbackSupportMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from ..options import is_integer
from .callbacks import EpochHooks
from .network import attach, build_network, glorot, linears, network_copy
from . import inspection
from .outputs import OUTPUTS
from .params import STOCHASTIC
from .flat import Flat, slots
from .lbfgs import fit_lbfgs, loss_and_gradient
from .placement import check_device
from .stochastic import fit_stochastic

FLOATS = (np.float64, np.float32)
# out_activation_ -> the loss a model file names for it (a logistic output only with one unit, two classes)
MODEL_FILE_LOSSES = {"softmax": "softmax_cross_entropy", "logistic": "bce_with_logits", "identity": "mse"}
NON_FINITE = ("Solver produced non-finite parameter weights. The input data may contain large values and need to "
              "be preprocessed.")


def _sizes(hidden_layer_sizes) -> list[int]:
    sizes = list(hidden_layer_sizes) if hasattr(hidden_layer_sizes, "__iter__") else [hidden_layer_sizes]
    if np.any(np.array(sizes) <= 0):
        raise ValueError(f"hidden_layer_sizes must be > 0, got {sizes}.")
    return [int(s) for s in sizes]


class MLPBase(CallbackSupportMixin, BaseEstimator):
    """Training and prediction shared by MLPClassifier and MLPRegressor; see their docstrings."""

    # subclasses: how targets are checked and encoded (Y (N, K) in the model's dtype), which
    # output layer they need, how a fit is scored
    def _validate_input(self, X, y, incremental: bool, reset: bool, inspecting: bool = False):
        raise NotImplementedError

    def _out_activation(self) -> str:
        raise NotImplementedError

    def _score(self, X, y, sample_weight=None) -> float:
        raise NotImplementedError

    def _targets_as_given(self, Y):
        raise NotImplementedError

    def _stratified_split(self) -> bool:
        return False

    def _row_weights(self, y, sample_weight):
        """Weights (N,) the estimator gives rows besides sample_weight (class weights), or None."""
        return None

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Train on X (N, D) and y: a new network, or with ``warm_start`` the last one; at most
        ``max_iter`` epochs (iterations for 'lbfgs'), stopping by the rule of ``tol`` and
        ``n_iter_no_change``. ``sample_weight`` (N,): a row of weight 2 counts as two. Returns self."""
        return self._fit(X, y, sample_weight, incremental=False)

    def _check_solver(self) -> bool:
        if self.solver not in STOCHASTIC:
            raise AttributeError(f"partial_fit is only available for stochastic optimizers. {self.solver} is not "
                                 "stochastic.")
        return True

    def _fit(self, X, y, sample_weight, incremental: bool):
        sizes = _sizes(self.hidden_layer_sizes)
        first = not hasattr(self, "coefs_") or (not self.warm_start and not incremental)
        X, Y = self._validate_input(X, y, incremental, reset=first)
        check_device(self, X)
        if not first and hasattr(self, "model_"):
            X, Y = X.astype(self.model_.dtype, copy=False), Y.astype(self.model_.dtype, copy=False)
        weights = None if sample_weight is None else _check_sample_weight(sample_weight, X, dtype=X.dtype)
        extra = self._row_weights(y, weights)
        if extra is not None:
            weights = extra.astype(X.dtype) if weights is None else weights * extra
        self.n_outputs_ = Y.shape[1]
        self._random_state = check_random_state(self.random_state)
        units = [X.shape[1], *sizes, Y.shape[1]]
        if first:
            self._initialize(units, X.dtype)
        else:
            self._continue(units, X.dtype)
        lbfgs = self.solver == "lbfgs"
        self._hooks = EpochHooks(self, X, y, sample_weight, 1 if incremental else self.max_iter + lbfgs)
        try:
            if lbfgs:
                fit_lbfgs(self, X, Y, weights)
            else:
                fit_stochastic(self, X, Y, weights, incremental)
        finally:
            self._read_back()
            self.model_.drop_caches()  # a fitted estimator keeps no batch's rows
            self._hooks.close()
            self._hooks = None
        if not all(np.isfinite(w).all() for w in (*self.coefs_, *self.intercepts_)):
            raise ValueError(NON_FINITE)
        return self

    def _initialize(self, units: list[int], dtype) -> None:
        """A new network for layer widths ``units`` [D, hidden..., K] and scikit-learn's fresh
        fitted state."""
        self.n_iter_, self.t_, self.n_layers_ = 0, 0, len(units)
        self.out_activation_ = self._out_activation()
        dtype = np.dtype(self.dtype or dtype)
        seeded = self.dropout or self.init is not None  # a generator of mlp-manual's is drawn
        rng = np.random.default_rng(self._random_state.randint(np.iinfo(np.int32).max) if seeded else 0)
        self.model_ = build_network(self, units, rng, dtype)
        self._structure = {**self._structure_now(), "dtype": str(np.dtype(dtype))}
        if self.init is None:
            for layer in linears(self.model_):
                layer.params["W"], layer.params["b"] = glorot(self._random_state, layer.in_features,
                                                              layer.out_features, self.activation, dtype)
        self._read_back()
        self._keep_best()
        self.loss_curve_, self._no_improvement_count = [], 0
        if self.solver in STOCHASTIC:  # as scikit-learn's: lbfgs keeps no best loss
            self.best_loss_ = None if self.early_stopping else np.inf
        self.validation_scores_ = [] if self.early_stopping else None
        self.best_validation_score_ = -np.inf if self.early_stopping else None

    def _continue(self, units: list[int], dtype) -> None:
        """Go on from ``coefs_`` and ``intercepts_`` (set by an earlier fit, or by hand): the
        network is rebuilt where there is none, or where they no longer match it."""
        shapes = [np.shape(c) for c in self.coefs_]
        if shapes != list(zip(units[:-1], units[1:])):
            raise ValueError(f"coefs_ have shapes {shapes}, but the data and hidden_layer_sizes need "
                             f"{list(zip(units[:-1], units[1:]))}")
        model = getattr(self, "model_", None)
        if model is None or [(layer.in_features, layer.out_features) for layer in linears(model)] != shapes:
            dtype = np.dtype(self.dtype or np.asarray(self.coefs_[0]).dtype)
            self.model_ = build_network(self, units, np.random.default_rng(0), dtype)
        self.n_layers_ = len(units)
        self.out_activation_ = getattr(self, "out_activation_", None) or self._out_activation()
        for name, value in (("t_", 0), ("loss_curve_", []), ("_no_improvement_count", 0), ("n_iter_", 0)):
            if not hasattr(self, name):
                setattr(self, name, value)
        if self.solver in STOCHASTIC and getattr(self, "best_loss_", None) is None:
            self.best_loss_ = None if self.early_stopping else np.inf
        self._network()

    def _network(self):
        """The model, its linear layers given ``coefs_`` and ``intercepts_`` (arrays in its dtype:
        a list or another dtype assigned to them is converted, in place of the entry)."""
        built = getattr(self, "_structure", None)  # None where coefs_ were set by hand before a first fit
        if built is not None:
            for name, value in self._structure_now().items():
                if value != built[name] and not (name == "dtype" and value is None):
                    raise ValueError(f"{name}={value!r}, but the fitted network was built with {name}={built[name]!r}: "
                                     f"set it back, or fit anew (warm_start=False) to build a new network")
        dtype = self.model_.dtype
        self.coefs_, self.intercepts_ = list(self.coefs_), list(self.intercepts_)  # a tuple assigned: a list
        for arrays, ndim in ((self.coefs_, 2), (self.intercepts_, 1)):
            for i, a in enumerate(arrays):
                if not (isinstance(a, np.ndarray) and a.dtype == dtype and a.ndim == ndim):
                    arrays[i] = np.asarray(a, dtype=dtype).reshape(np.shape(a) if ndim == 2 else -1)
        shapes = [(layer.in_features, layer.out_features) for layer in linears(self.model_)]
        if [c.shape for c in self.coefs_] != shapes or [b.shape for b in self.intercepts_] != [(w,) for _, w in shapes]:
            raise ValueError(f"coefs_ and intercepts_ must have the shapes {shapes} and {[(w,) for _, w in shapes]} "
                             f"of the network, got {[c.shape for c in self.coefs_]} and "
                             f"{[b.shape for b in self.intercepts_]}")
        attach(self.model_, self.coefs_, self.intercepts_)
        return self.model_

    def _structure_now(self) -> dict:
        """The parameters that decide the network's layers beside hidden_layer_sizes."""
        return {"activation": self.activation, "normalization": self.normalization, "dropout": self.dropout,
                "dtype": self.dtype and str(np.dtype(self.dtype))}

    def _read_back(self) -> None:
        """``coefs_`` and ``intercepts_`` as the network's arrays now."""
        self.coefs_ = [layer.params["W"] for layer in linears(self.model_)]
        self.intercepts_ = [layer.params["b"] for layer in linears(self.model_)]

    def _keep_best(self) -> None:
        self._best_state = {k: v.copy() for k, v in self.model_.state().items()}

    def _restore_best(self) -> None:
        """The best epoch's parameters and buffers, copied into the network's own arrays."""
        for name, array in self.model_.state().items():
            array[...] = self._best_state[name]

    def _loss_grad_lbfgs(self, packed, X, y, sample_weight, *_work_arrays):
        """The loss on X (N, D), y (N, K) at the flat parameters ``packed`` (P,) and its gradient
        (P,) (lbfgs.py), under scikit-learn's name and arguments (its work arrays are not needed).
        The network's parameters are left as they were."""
        model = self._network()
        before = [(layer, k, layer.params[k]) for layer, k in slots(model)]
        Y = np.asarray(y, dtype=model.dtype).reshape(X.shape[0], -1)
        try:
            return loss_and_gradient(self, Flat(model), np.asarray(packed, dtype=np.float64), X, Y, sample_weight)
        finally:
            for layer, k, p in before:
                layer.params[k] = p

    def _output(self):
        return OUTPUTS[self.out_activation_]

    def _forward(self, X, check_input: bool = True) -> np.ndarray:
        """Predictions p (N, K) of the output layer for X (N, D), in the weights' dtype."""
        check_is_fitted(self)
        if check_input:
            X = validate_data(self, X, accept_sparse=["csr", "csc"], reset=False, dtype=FLOATS)
        # a copy of the layers (not of their arrays) in evaluation mode: predicting switches no
        # mode and keeps no rows in the fitted network, so threads may predict at once
        fitted = self._network()
        z = network_copy(fitted).eval().forward(X.astype(fitted.dtype, copy=False))  # (N, K)
        return self._output().activate(z)

    def gradcheck(self, X, y, **settings):
        """Check the fitted network's hand-written gradients on X (N, D), y against float64
        central differences, as mlp-gradcheck does, with the estimator's own output layer and
        loss; ``settings`` as ``mlp_manual.gradcheck.check_model``'s. Returns its GradcheckReport
        (``print(report)`` shows the table)."""
        check_is_fitted(self)
        return inspection.gradcheck(self, X, y, **settings)

    def explain(self, X, y, *, rows: int = 4, seed: int = 0, html=None) -> str:
        """mlp-explain on the fitted network: the forward and backward pass on ``rows`` rows of
        X, y drawn by ``seed``, each gradient's formula, values and finite-difference check, as
        text; with ``html=PATH``, the stepping page written there (its path is returned)."""
        check_is_fitted(self)
        return inspection.explain(self, X, y, rows, seed, html)

    def save(self, path) -> None:
        """Write the fitted network as a model file with the description of its data (task, loss,
        classes, feature names), so that mlp-predict, ``load_predictor`` and mlp-export read it as
        a file mlp-train wrote. The estimator takes its inputs as they are: no preprocessing."""
        from ..predict.model_file import save_model

        save_model(self._network(), path, info=self.model_info())

    def model_info(self, preprocessing=None, feature_names=None):
        """The ModelInfo of the fitted network (task, loss, classes, feature names), with the
        ``preprocessing`` its inputs get first (none by default) and the ``feature_names`` of those
        inputs (default: the names it was fitted with, if any). ValueError for the outputs a model
        file has no loss for: multilabel targets and loss='poisson'."""
        from .. import __version__
        from ..datasets.preprocessing import Preprocessing
        from ..predict.model_info import ModelInfo

        check_is_fitted(self)
        loss = MODEL_FILE_LOSSES.get(self.out_activation_)
        if loss is None or (loss == "bce_with_logits" and (self.n_outputs_ != 1 or len(self.classes_) != 2)):
            raise ValueError(f"a model file has no loss for out_activation_={self.out_activation_!r} with "
                             f"{self.n_outputs_} outputs (multilabel targets, one class, loss='poisson')")
        classes = None
        if hasattr(self, "classes_"):
            labels = [c.item() if hasattr(c, "item") else c for c in self.classes_]
            integers = all(is_integer(c, 0) for c in labels)
            classes = tuple(labels) if integers else tuple(str(c) for c in labels)
        names = getattr(self, "feature_names_in_", None) if feature_names is None else feature_names
        return ModelInfo("classification" if classes else "regression", loss, self.n_features_in_,
                         preprocessing or Preprocessing(), classes, None if names is None else tuple(map(str, names)),
                         None, None, __version__)

    def __getstate__(self):
        """The estimator without what training keeps between steps: the optimizer's state, the
        layers' caches and gradients (a pickle holds the weights and the settings)."""
        state = dict(super().__getstate__())  # a copy: object.__getstate__ gives __dict__ itself
        for name in ("_optimizer", "_hooks"):
            state.pop(name, None)
        if not self.early_stopping:
            state.pop("_best_state", None)
        if "model_" in state:
            state["model_"] = network_copy(state["model_"])
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        for layer in self.model_.layers if hasattr(self, "model_") else ():
            layer.grads = {k: np.zeros_like(v) for k, v in layer.params.items()}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

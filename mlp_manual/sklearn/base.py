"""What MLPClassifier and MLPRegressor share: the parameters, the Config they make (params.py),
training through the project's Trainer, and the fitted attributes in scikit-learn's conventions.

A fit is an mlp-train run on arrays: the same config checks, the same three generators from
one seed (validation split, initial weights and dropout, batch order), the same stratified
split and the same Trainer, so ``random_state`` reproduces a fit bit for bit.

N = samples, D = features, K = output units.
"""

import copy
import dataclasses

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted, validate_data

from ..config import Config
from ..config.memory import check_memory
from ..datasets.dataset import split
from ..errors import DataError, LayerError
from ..losses import LOSSES
from ..model import build_model
from ..options import is_integer
from ..training.evaluation import model_outputs
from ..training.experiment import run_generators, training_plan
from ..training.trainer import Trainer
from .params import estimator_config

def _rows(X) -> int:
    """The number of rows of X as given: an array, a DataFrame, a list, anything numpy reads
    (before validation, which says what is wrong with X); 1 when there is none."""
    shape = getattr(X, "shape", None)
    if shape:
        return int(shape[0])
    try:
        return len(X)
    except TypeError:
        pass
    try:
        return max(1, int(np.shape(X)[0]))
    except (TypeError, ValueError, IndexError):
        return 1


def _no_checkpoint() -> None:
    """Estimators keep no checkpoints (a module function, unlike a lambda, can be pickled)."""


class MLPBase(BaseEstimator):
    """Parameters and training shared by MLPClassifier and MLPRegressor; see their docstrings."""

    _loss: str  # the config's loss name

    def __init__(self, hidden_layer_sizes=(100,), activation="relu", *, solver="adam", alpha=0.0001,
                 batch_size="auto", learning_rate="constant", learning_rate_init=0.001, max_iter=200, shuffle=True,
                 random_state=None, tol=1e-4, momentum=0.9, nesterovs_momentum=True, early_stopping=False,
                 validation_fraction=0.1, beta_1=0.9, beta_2=0.999, epsilon=1e-8, n_iter_no_change=10,
                 dropout=0.0, normalization=None, init="he_uniform", dtype="float32"):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.solver = solver
        self.alpha = alpha
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.learning_rate_init = learning_rate_init
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.random_state = random_state
        self.tol = tol
        self.momentum = momentum
        self.nesterovs_momentum = nesterovs_momentum
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.n_iter_no_change = n_iter_no_change
        self.dropout = dropout
        self.normalization = normalization
        self.init = init
        self.dtype = dtype

    # subclasses say how targets are checked and encoded, how wide the output is, how a
    # validation epoch is scored
    def _fit_data(self, X, y, dtype, reset: bool, classes=None):
        raise NotImplementedError

    def _output_width(self) -> int:
        raise NotImplementedError

    def _validation_score(self, row: dict, X_val, y_val) -> float:
        raise NotImplementedError

    def fit(self, X, y):
        """Train a new model on (X, y) for at most ``max_iter`` epochs, stopping when the loss
        has not fallen by ``tol`` for ``n_iter_no_change`` epochs: the validation loss of the
        ``validation_fraction`` of the rows held out (stratified by class) with
        ``early_stopping``, else the training loss.

        Inputs: X (N, D), y (N,) (or (N, K) for MLPRegressor). Returns: self.
        """
        cfg = estimator_config(self, _rows(X))
        X, targets = self._fit_data(X, y, cfg.dtype, reset=True)
        data_rng, init_rng, train_rng = run_generators(cfg.seed)
        X_val = y_val = None
        if cfg.data.val_fraction > 0:
            X, targets, X_val, y_val = split(X, targets, cfg.data.val_fraction, data_rng,
                                             stratify=LOSSES[cfg.loss.name].classification)
            if len(X_val) == 0:
                X_val = y_val = None
        self._start(cfg, X.shape, init_rng, train_rng)
        self.validation_scores_ = None if X_val is None else []
        self._validation = None if X_val is None else (X_val, y_val)
        try:
            self._train(X, targets, X_val, y_val, cfg.training.epochs, cfg.training.early_stopping.patience)
        finally:
            self._validation = None
        self.best_validation_score_ = max(self.validation_scores_) if self.validation_scores_ else None
        return self

    def _partial_fit(self, X, y, classes=None):
        """One epoch on (X, y), continuing the model and optimizer state of earlier calls (or of
        ``fit``); no validation split and no early stopping."""
        first = not hasattr(self, "_trainer")
        cfg = estimator_config(self, _rows(X)) if first else self.config_
        X, targets = self._fit_data(X, y, cfg.dtype, reset=first, classes=classes)
        if first:
            _, init_rng, train_rng = run_generators(cfg.seed)
            self._start(cfg, X.shape, init_rng, train_rng)
            self.validation_scores_ = self.best_validation_score_ = None
        self._validation = None
        self._train(X, targets, None, None, len(self.loss_curve_) + 1, patience=0)
        return self

    def _start(self, cfg: Config, shape: tuple[int, int], init_rng, train_rng) -> None:
        """A new model and its trainer for training rows of ``shape`` (N, D): ``model_``,
        ``config_``, an empty ``loss_curve_``; ConfigError when the model would not fit in memory."""
        n_rows, n_features = shape
        check_memory(cfg, type(self).__name__, n_features, self._output_width(), n_rows)
        loss = LOSSES[cfg.loss.name]
        model = build_model(list(cfg.model.layers), n_features, self._output_width(), init_rng,
                            np.dtype(cfg.dtype), cfg.model.init)
        self.model_, self.config_, self.loss_curve_ = model, cfg, []
        self._trainer = Trainer(model, loss, training_plan(cfg), train_rng, on_epoch=self._record_epoch,
                                on_checkpoint=_no_checkpoint)

    def _train(self, X, targets, X_val, y_val, epochs: int, patience: int) -> None:
        """Run the trainer up to epoch ``epochs`` (counted over every call), in batches of at
        most the rows there are; set the training curve and the epoch count."""
        cfg = self.config_
        # the trainer reads its plan at every fit call, so one trainer (and its optimizer
        # state) can go on for more epochs, on other rows
        plan = training_plan(cfg)
        self._trainer.plan = dataclasses.replace(
            plan, epochs=epochs, batch_size=min(plan.batch_size, len(X)),
            early_stopping=dataclasses.replace(plan.early_stopping, patience=patience))
        try:
            history = self._trainer.fit(X, targets, X_val, y_val)
        except LayerError as e:  # e.g. batchnorm given a single row
            raise DataError(f"training on {len(X)} sample{'s' if len(X) != 1 else ''}: {e}") from None
        self.loss_curve_ = list(history["train_loss"])  # one entry per epoch since the last fit
        self.best_loss_ = min(self.loss_curve_)
        self.n_iter_ = len(self.loss_curve_)

    def save(self, path) -> None:
        """Write the fitted model as a model file with the description of its data (task, loss,
        classes, feature names), so that mlp-predict, ``load_predictor`` and mlp-export read it as
        a file mlp-train wrote. The estimator takes its inputs as they are: no preprocessing."""
        from ..predict.model_file import save_model

        save_model(self.model_, path, info=self.model_info())

    def model_info(self, preprocessing=None, feature_names=None):
        """The ModelInfo of the fitted model (task, loss, classes, feature names), with the
        ``preprocessing`` its inputs get first (none by default) and the ``feature_names`` of
        those inputs (default: the names it was fitted with, if any)."""
        from .. import __version__
        from ..datasets.preprocessing import Preprocessing
        from ..predict.model_info import ModelInfo

        check_is_fitted(self)
        classes = None
        if LOSSES[self._loss].classification:
            labels = [c.item() if hasattr(c, "item") else c for c in self.classes_]
            integers = all(is_integer(c, 0) for c in labels)
            classes = tuple(labels) if integers else tuple(str(c) for c in labels)
        names = getattr(self, "feature_names_in_", None) if feature_names is None else feature_names
        return ModelInfo("classification" if classes else "regression", self._loss, self.n_features_in_,
                         preprocessing or Preprocessing(), classes, None if names is None else tuple(map(str, names)),
                         None, None, __version__)

    def _record_epoch(self, row: dict) -> None:
        if self._validation is not None:
            self.validation_scores_.append(self._validation_score(row, *self._validation))

    def _outputs(self, X) -> np.ndarray:
        """The model's outputs (N, K) for X (N, D), in evaluation mode and in float64 whatever
        the training dtype: float32 matrix products change in the last bits with the number of
        rows they are given, float64 ones far below scikit-learn's tolerance, so a row's
        prediction does not depend on the rows predicted with it."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        model = self.model_ if self.model_.dtype == np.float64 else copy.deepcopy(self.model_).astype(np.float64)
        return model_outputs(model, X)

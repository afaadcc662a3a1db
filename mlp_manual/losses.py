"""Losses, and every rule that depends on which loss a run uses (its LossSpec).

Each loss returns the mean loss and its gradient with respect to the model output together,
so the backward pass is seeded explicitly:

    loss, dlogits = softmax_cross_entropy(logits, y)  # dlogits = (p - onehot) / N

N = batch size, C = classes, K = output units.
"""

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from . import scalar
from .core import Softmax, bce_with_logits, mse, sigmoid, smoothed_targets, softmax_cross_entropy
from .core.namespace import namespace
from .errors import DataError, did_you_mean


def uniform_guess_loss(n_classes: int) -> tuple[float, str]:
    """Softmax cross-entropy of a model that gives every one of C classes the same probability:
    ln(C). Returns the value and how to write it."""
    return math.log(n_classes), f"ln({n_classes})"


# What a loss's targets are
CLASS_INDEX = "class index"  # labels (N,) int64 in 0..C-1; one output unit per class
BINARY = "binary 0/1"  # floats (N, K) in {0, 1}; one output unit (logit) for a 2-class dataset
REAL = "real values"  # floats (N, K); one output unit per target column


@dataclass(frozen=True)
class LossSpec:
    """A loss function and the rules that come with it: the targets it takes, the output units
    it needs, how it predicts a class, what an untrained model should score, and which data and
    models fit it; and what mlp-explain (``scalar``, ``page``) and the gradient checker
    (``check_shapes``) need of it. ``LOSSES`` below is the table of them: code outside this
    module asks the spec; it never tests which loss it is."""

    name: str
    fn: Callable[..., tuple[float, np.ndarray]]  # (out, y) -> (loss, dout); with ``weights=`` when ``weighs``
    target: str  # CLASS_INDEX, BINARY or REAL
    formula: str  # the loss, as mlp-explain prints it
    seed_formula: str  # the gradient that starts the backward pass, the text of the function's docstring
    scalar: Callable  # its version one scalar at a time (scalar.py), for mlp-explain --scalar
    page: str  # the op of explain/page/explain.js that recomputes it when a number is edited
    check_shapes: tuple[tuple[int, int], ...]  # the (N, K) shapes the gradient checker tries
    # C -> (loss of a freshly initialised model, its formula), for a loss where that is known
    untrained_loss: Callable[[int], tuple[float, str]] | None = None
    # targets (N, K) -> the loss of predicting their mean, the scale a regression fit is judged on
    constant_loss: Callable[[np.ndarray], float] | None = None
    weighs: bool = False  # ``fn`` takes a weight per class (loss.class_weights)
    class_weights: np.ndarray | None = None  # (C,), when ``fn`` weighs with them
    smooths: bool = False  # ``fn`` takes ``smoothing=``, a share of the target spread over every class
    label_smoothing: float = 0.0  # that share, when ``fn`` smooths with it (loss.label_smoothing)

    @property
    def plain(self) -> bool:
        """The loss as its formula and scalar version have it: no class weights, no smoothing."""
        return self.class_weights is None and not self.label_smoothing

    def with_label_smoothing(self, smoothing: float) -> "LossSpec":
        """This loss against targets q = (1 - smoothing) onehot(y) + smoothing / C."""
        if not self.smooths:
            raise DataError(f"{self.name} has no label smoothing: loss.label_smoothing is for "
                            + ", ".join(name for name, spec in LOSSES.items() if spec.smooths))
        fn, smoothing = self.fn, float(smoothing)
        return replace(self, fn=lambda out, y, *weights: fn(out, y, *weights, smoothing=smoothing),
                       label_smoothing=smoothing,
                       formula=self.formula.replace("logits[y]", "sum(q * logits)"),
                       seed_formula=f"{self.seed_formula.replace('onehot(y)', 'q')}, q = {1 - smoothing:g} onehot(y) "
                                    f"+ {smoothing:g} / C")

    def with_class_weights(self, weights: np.ndarray) -> "LossSpec":
        """This loss with each sample weighted by its class's weight (weights (C,))."""
        if not self.weighs:
            raise DataError(f"{self.name} has no class weights: loss.class_weights is for classification losses")
        fn = self.fn
        return replace(self, fn=lambda out, y, **more: fn(out, y, weights, **more), class_weights=weights,
                       formula=f"loss = mean(w[y] * ({self.formula.removeprefix('loss = mean(')[:-1]}))",
                       seed_formula=f"{self.seed_formula.replace(' = ', ' = w[y] * ', 1)}")

    def lowest_loss(self, y: np.ndarray, n_classes: int | None) -> float:
        """The lowest value the loss can reach on targets ``y``: 0, or with label smoothing the
        loss of logits whose softmax is the smoothed target q itself (its entropy, weighted as
        the loss weighs its rows)."""
        if not self.label_smoothing:
            return 0.0
        q = smoothed_targets(np.eye(n_classes)[y], self.label_smoothing)  # (N, C)
        return self.fn(np.log(q), y)[0]

    @property
    def classification(self) -> bool:
        """Targets are class labels, so accuracy is reported."""
        return self.target != REAL

    def output_width(self, n_classes: int | None, target_width: int) -> int:
        """Units the last layer must have for this loss and these targets."""
        if self.target == CLASS_INDEX:
            return n_classes
        if self.target == BINARY:
            return 1
        return target_width

    def targets(self, y: np.ndarray, dtype) -> np.ndarray:
        """Labels as the loss wants them: int64 (N,) for class indices, ``dtype`` (N, K) otherwise."""
        if self.target == CLASS_INDEX:
            return y.astype(np.int64, copy=False)
        y = y.astype(dtype, copy=False)
        return y.reshape(-1, 1) if y.ndim == 1 else y

    def predict(self, out: np.ndarray) -> np.ndarray:
        """Class predictions (N,) from model outputs (N, K); classification losses only."""
        xp = namespace(out)
        if self.target == CLASS_INDEX:
            return xp.argmax(out, axis=1)
        if self.target == BINARY:
            return xp.astype(out[:, 0] > 0, xp.int64)  # logit > 0 <=> sigmoid > 1/2
        raise ValueError(f"{self.name} targets are {REAL}, not classes: it makes no class predictions")

    def probabilities(self, out: np.ndarray) -> np.ndarray:
        """Class probabilities (N, C) from model outputs (N, K), in float64, each row summing to 1:
        the softmax of C logits, or (1 - sigmoid(z), sigmoid(z)) of one logit."""
        z = out.astype(np.float64)
        if self.target == CLASS_INDEX:
            return Softmax().forward(z)
        if self.target == BINARY:
            p = sigmoid(z[:, 0])  # (N,), the probability of class 1
            return np.stack([1 - p, p], axis=1)
        raise ValueError(f"{self.name} targets are {REAL}, not classes: it gives no class probabilities")

    def random_targets(self, rng: np.random.Generator, n: int, k: int) -> np.ndarray:
        """Valid targets for (N, K) = (n, k) outputs, drawn from ``rng``: labels (N,) in 0..K-1,
        0/1 floats (N, K), or standard-normal reals (N, K)."""
        if self.target == CLASS_INDEX:
            return rng.integers(0, k, size=n)
        if self.target == BINARY:
            return rng.integers(0, 2, size=(n, k)).astype(np.float64)
        return rng.normal(size=(n, k))

    def check_fit(self, data: str, n_classes: int | None, target_width: int, width: int | None = None,
                  model: str | None = None, task_key: str | None = None) -> None:
        """Raise DataError unless dataset ``data`` (``n_classes`` classes, None for regression;
        ``target_width`` target columns) fits this loss and, when ``width`` is given, a model with
        ``width`` output units fits both. ``model`` names a saved model checked against the data;
        without it ``width`` is that of a model built for this data and loss. ``task_key`` is the
        config key that chose between class labels and numbers for this data, if one did."""
        if self.classification and n_classes is None:
            raise DataError(f"{self.name} needs class labels, but {data} is a regression dataset; use mse"
                            + (f", or set {task_key}: classification" if task_key else ""))
        if not self.classification and n_classes is not None:  # regressing class indices is never meant
            if task_key:
                raise DataError(f"{self.name} needs real-valued targets, but {data} has class labels ({task_key} "
                                f"is classification); set {task_key}: regression to read the target as numbers, "
                                "or use softmax_cross_entropy")
            raise DataError(f"{self.name} needs real-valued targets, but {data} has {n_classes} classes; "
                            "use softmax_cross_entropy" + (" or bce_with_logits" if n_classes == 2 else ""))
        if self.target == BINARY and n_classes != 2:
            raise DataError(f"{self.name} needs 2 classes, {data} has {n_classes}; use softmax_cross_entropy")
        if width is None:
            return
        needed = self.output_width(n_classes, target_width)
        if model is not None:
            if width != needed:
                raise DataError(f"{model} has {width} outputs, {data} with {self.name} needs {needed}")
            return
        if self.target == CLASS_INDEX and width < 2:
            raise DataError(f"{self.name} needs at least 2 output units, the model has {width}; "
                            "use bce_with_logits for a single output")
        if self.target == BINARY and width != 1:
            raise DataError(f"{self.name} needs exactly 1 output unit, the model has {width}; "
                            "use softmax_cross_entropy for several classes")
        if width != needed:
            columns = f"{target_width} target column{'s' if target_width != 1 else ''}"
            raise DataError(f"the model has {width} outputs but {data} has "
                            + (f"{n_classes} classes" if self.target == CLASS_INDEX else columns))


def mean_target_variance(y: np.ndarray) -> float:
    """The mean squared error of predicting each target's mean: the variance, averaged over targets."""
    return float(y.var(axis=0, dtype=np.float64).mean())


LOSSES = {spec.name: spec for spec in (
    LossSpec("softmax_cross_entropy", softmax_cross_entropy, CLASS_INDEX,
             "loss = mean(log(sum(exp(logits))) - logits[y])", "dlogits = (softmax(logits) - onehot(y)) / N",
             scalar.softmax_cross_entropy, "softmax_cross_entropy", ((1, 3), (7, 5)),
             untrained_loss=uniform_guess_loss, weighs=True, smooths=True),
    LossSpec("bce_with_logits", bce_with_logits, BINARY,
             "loss = mean(max(z, 0) - z * y + log(1 + exp(-|z|)))", "dlogits = (sigmoid(z) - y) / (N * K)",
             scalar.bce_with_logits, "bce_with_logits", ((1, 1), (7, 1), (5, 3)), weighs=True),
    LossSpec("mse", mse, REAL, "loss = mean((pred - y)^2)", "dpred = 2 (pred - y) / (N * K)",
             scalar.mse, "mse", ((1, 1), (7, 3)), constant_loss=mean_target_variance),
)}


def class_weights(setting, y_train: np.ndarray, n_classes: int, labels: tuple) -> np.ndarray:
    """The weight of each class (C,) that loss.class_weights asks for: "balanced", N / (C * n_c)
    with n_c the training rows of class c (scikit-learn's rule), or a mapping of class labels
    (``labels``: as in the data) to weights, a class it leaves out weighing 1. DataError for a
    label the data lacks."""
    if setting == "balanced":
        counts = np.bincount(y_train, minlength=n_classes)  # (C,)
        return len(y_train) / (n_classes * np.maximum(counts, 1))
    weights = np.ones(n_classes)
    names = [str(c) for c in labels]
    for label, w in setting.items():
        matches = [i for i, name in enumerate(names) if name in _texts(label)]
        if len(matches) != 1:
            quote = (f"; YAML reads yes, no, on, off, true and false as true or false: quote the label, "
                     f"'{'yes' if label else 'no'}'" if isinstance(label, bool) else "")
            raise DataError(f"loss.class_weights names the class {label!r}, which the data lacks (classes: "
                            f"{', '.join(names[:10])}{', ...' if len(names) > 10 else ''})"
                            + (quote or did_you_mean(str(label), names)))
        weights[matches[0]] = w
    return weights


def _texts(label) -> tuple[str, ...]:
    """The class labels a key of loss.class_weights may stand for: its text, or for a key YAML
    read as true or false, the words it reads so."""
    if isinstance(label, bool):
        words = ("true", "yes", "on", "y") if label else ("false", "no", "off", "n")
        return tuple(w for word in words for w in (word, word.capitalize(), word.upper()))
    return (str(label),)

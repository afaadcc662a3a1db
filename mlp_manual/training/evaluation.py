"""Evaluation of a trained model on a split: per class for a classifier (predictions, confusion
matrix, a per-class table), per target for regression (MSE, RMSE, MAE, R²).

N = samples, D = features, K = output units (regression: targets), C = classes.
"""

from dataclasses import dataclass

import numpy as np

from ..core.namespace import namespace
from ..losses import LossSpec
from ..model import Model


def model_outputs(model: Model, X: np.ndarray, batch_size: int = 2048) -> np.ndarray:
    """Outputs of ``model`` in evaluation mode (dropout off, running statistics), in batches;
    each layer's training flag is restored afterwards.

    Inputs: X (N, D). Returns: (N, K).
    """
    was_training = [layer.training for layer in model.layers]
    model.eval()
    try:
        n = X.shape[0]
        return namespace(X).concat([model.forward(X[i:min(i + batch_size, n), ...]) for i in range(0, n, batch_size)])
    finally:
        for layer, mode in zip(model.layers, was_training):
            layer.train(mode)


def evaluate(model: Model, loss: LossSpec, X: np.ndarray, y: np.ndarray) -> dict:
    """Mean loss (and accuracy for classification) over (X, y) in evaluation mode.

    Inputs: X (N, D); y as ``loss.targets`` makes it. Returns: {"loss": .., "acc": ..}.
    """
    out = model_outputs(model, X)  # (N, K)
    metrics = {"loss": loss.fn(out, y)[0]}
    if loss.classification:
        metrics["acc"] = count_correct(loss, out, y) / X.shape[0]
    return metrics


def count_correct(loss: LossSpec, out: np.ndarray, y: np.ndarray) -> int:
    """Correct class predictions in a batch of outputs (N, K)."""
    return int(namespace(out).count_nonzero(loss.predict(out) == class_labels(y)))


def class_labels(y: np.ndarray) -> np.ndarray:
    """Labels (N,) int64 from targets as a loss wants them, (N,) or (N, 1)."""
    xp = namespace(y)
    return xp.astype(y if y.ndim == 1 else y[:, 0], xp.int64)


def confusion_matrix(y_true: np.ndarray, y_pred: np.ndarray, n_classes: int) -> np.ndarray:
    """Counts (C, C): row = true class, column = predicted class."""
    return np.bincount(y_true * n_classes + y_pred, minlength=n_classes * n_classes).reshape(n_classes, n_classes)


@dataclass(frozen=True)
class Evaluation:
    loss: float
    y_true: np.ndarray  # (N,)
    y_pred: np.ndarray  # (N,)
    confusion: np.ndarray  # (C, C)

    @property
    def accuracy(self) -> float:
        return float(np.trace(self.confusion) / self.confusion.sum())


def evaluate_classes(model: Model, loss: LossSpec, X: np.ndarray, y: np.ndarray, n_classes: int) -> Evaluation:
    """Loss, predictions and confusion matrix of a classifier on (X, y).

    Inputs: X (N, D); y as ``loss.targets`` makes it.
    """
    out = model_outputs(model, X)  # (N, K)
    value, _ = loss.fn(out, y)
    y_true, y_pred = class_labels(y), loss.predict(out).astype(np.int64)
    return Evaluation(float(value), y_true, y_pred, confusion_matrix(y_true, y_pred, n_classes))


def class_table(confusion: np.ndarray, class_names) -> str:
    """Support, precision and recall per class, one line each, plus the totals."""
    support = confusion.sum(axis=1)
    predicted = confusion.sum(axis=0)
    hits = np.diag(confusion)
    names = [str(n) for n in class_names]
    width = max(5, *(len(n) for n in names))
    lines = [f"{'class':<{width}}  {'support':>7}  {'precision':>9}  {'recall':>6}"]
    for name, n, p, h in zip(names, support, predicted, hits):
        precision = f"{h / p:.4f}" if p else "-"
        recall = f"{h / n:.4f}" if n else "-"
        lines.append(f"{name:<{width}}  {n:>7}  {precision:>9}  {recall:>6}")
    lines.append(f"{'all':<{width}}  {support.sum():>7}  {'':>9}  {hits.sum() / max(support.sum(), 1):.4f}")
    return "\n".join(lines)


@dataclass(frozen=True)
class RegressionEvaluation:
    loss: float
    y_true: np.ndarray  # (N, K)
    y_pred: np.ndarray  # (N, K)

    def metrics(self) -> dict[str, dict[str, float]]:
        """{"mse", "rmse", "mae", "r2"} -> per-target values (K,) and "all": mean squared and
        absolute error over every value, RMSE of that MSE, and the mean of the targets' R².
        R² = 1 - SSE / SST is NaN for a target that is constant on the split."""
        err = self.y_pred.astype(np.float64) - self.y_true  # (N, K)
        mse, mae = (err ** 2).mean(axis=0), np.abs(err).mean(axis=0)  # (K,)
        sst = ((self.y_true - self.y_true.mean(axis=0)) ** 2).sum(axis=0)  # (K,)
        with np.errstate(divide="ignore", invalid="ignore"):
            r2 = np.where(sst > 0, 1 - (err ** 2).sum(axis=0) / sst, np.nan)  # (K,)
        overall = {"mse": float(mse.mean()), "rmse": float(np.sqrt(mse.mean())), "mae": float(mae.mean()),
                   "r2": float(np.nanmean(r2)) if np.isfinite(r2).any() else float("nan")}
        return {key: {"targets": values, "all": overall[key]}
                for key, values in (("mse", mse), ("rmse", np.sqrt(mse)), ("mae", mae), ("r2", r2))}


def evaluate_regression(model: Model, loss: LossSpec, X: np.ndarray, y: np.ndarray,
                        targets=None) -> RegressionEvaluation:
    """Loss and predictions of a regression model on (X, y). Inputs: X (N, D), y (N, K);
    ``targets``, the Preprocessing the model's targets y were standardized with
    (data.target_preprocess), by which outputs and y go back to the targets' units first."""
    out = model_outputs(model, X)  # (N, K)
    if targets is not None:
        out, y = targets.invert(out.astype(np.float64)), targets.invert(y.astype(np.float64))
    return RegressionEvaluation(float(loss.fn(out, y)[0]), y, out)


def regression_table(result: RegressionEvaluation, target_names) -> str:
    """MSE, RMSE, MAE and R² per target, one line each, plus the overall values."""
    m = result.metrics()
    names = [str(n) for n in target_names]
    width = max(6, *(len(n) for n in names))
    number = (lambda v: f"{v:>10.4g}" if np.isfinite(v) else f"{'-':>10}")
    lines = [f"{'target':<{width}}  " + "  ".join(f"{h:>10}" for h in ("MSE", "RMSE", "MAE", "R2"))]
    rows = [(n, [m[k]["targets"][j] for k in m]) for j, n in enumerate(names)]
    if len(names) > 1:
        rows.append(("all", [m[k]["all"] for k in m]))
    lines += [f"{n:<{width}}  " + "  ".join(number(v) for v in values) for n, values in rows]
    return "\n".join(lines)

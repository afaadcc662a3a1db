"""The named arrays that let a reader of mlp-explain redo a loss's seed gradient by hand
(``softmax(logits)`` and ``onehot(y)``, or the smoothed ``q``, for softmax cross-entropy). The
loss and seed formulas themselves are on the loss's spec (``LossSpec.formula``,
``LossSpec.seed_formula``).

N = rows, K = outputs (C = classes for softmax cross-entropy).
"""

import numpy as np

from ..core import smoothed_targets
from ..layers import Softmax, sigmoid
from ..losses import BINARY, CLASS_INDEX, LossSpec


def seed_parts(loss: LossSpec, z: np.ndarray, y: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """The arrays the seed gradient of ``loss`` is made of, named as in its seed formula:
    logits or predictions ``z`` (N, K) and targets ``y``."""
    if loss.target == CLASS_INDEX:
        q = smoothed_targets(np.eye(z.shape[1])[y], loss.label_smoothing)  # (N, C)
        return [("softmax(logits)", Softmax().forward(z)), ("q" if loss.label_smoothing else "onehot(y)", q)]
    if loss.target == BINARY:
        return [("sigmoid(z)", sigmoid(z)), ("y", y)]
    return [("pred", z), ("y", y)]

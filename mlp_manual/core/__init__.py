"""The core of mlp-manual: the whole of backpropagation for a multilayer perceptron, in numpy's
array-API functions and nothing else: each function computes in the namespace of its input
(``namespace.py``), so the same lines run on numpy, on CuPy on a GPU, and on array-api-strict.
Read it in this order:

1. ``layers.py``: the layer contract, and the linear layer and the activations, each forward
   beside its backward;
2. ``norms.py``: layer, RMS and batch normalisation;
3. ``blocks.py``: dropout, the embedding table, the residual block;
4. ``losses.py``: each loss with the gradient that starts the backward pass;
5. ``model.py``: forward in order, backward in reverse;
6. ``init.py``, ``optimizers.py``, ``schedules.py``: how weights start and how they move;
7. ``train.py``: the loop that ties them together.

Nothing here imports the rest of the package; the rest builds on it (the configs, the trainer
that checkpoints and resumes, the commands).
"""

from .blocks import Dropout, Embedding, Residual
from .errors import LayerError, MLPManualError
from .init import init_weight
from .layers import (
           GELU,
           Identity,
           Layer,
           LeakyReLU,
           Linear,
           ReLU,
           Sigmoid,
           Softmax,
           Tanh,
           sigmoid,
)
from .losses import bce_with_logits, mse, smoothed_targets, softmax_cross_entropy
from .model import Model
from .norms import BatchNorm1d, LayerNorm, RMSNorm
from .optimizers import SGD, Adam, AdamW, Optimizer, RMSProp, clip_grad_norm, grad_norm
from .schedules import constant, cosine, exponential, step_decay
from .train import batches, train

__all__ = ["Layer", "Linear", "Identity", "ReLU", "LeakyReLU", "Sigmoid", "Tanh", "GELU", "Softmax", "sigmoid",
           "LayerNorm", "RMSNorm", "BatchNorm1d", "Dropout", "Embedding", "Residual", "softmax_cross_entropy",
           "smoothed_targets", "bce_with_logits", "mse", "Model", "init_weight", "Optimizer", "SGD", "RMSProp", "Adam", "AdamW",
           "grad_norm", "clip_grad_norm", "constant", "step_decay", "exponential", "cosine", "batches", "train",
           "LayerError", "MLPManualError"]

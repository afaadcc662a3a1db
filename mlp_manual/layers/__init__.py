"""Built-in layers, and the registry of layer types by config name (``registry.LAYERS``)."""

from .activations import (
           GELU,
           Identity,
           LeakyReLU,
           ReLU,
           Sigmoid,
           Softmax,
           Tanh,
           sigmoid,
)
from .base import Layer
from .dropout import Dropout
from .embedding import Embedding
from .linear import Linear
from .normalization import BatchNorm1d, LayerNorm, RMSNorm
from .registry import LAYER_TYPES, LAYERS
from .residual import Residual

__all__ = ["Layer", "Linear", "ReLU", "LeakyReLU", "Sigmoid", "Tanh", "GELU", "Identity", "Softmax",
           "Dropout", "LayerNorm", "RMSNorm", "BatchNorm1d", "Residual", "Embedding", "LAYER_TYPES", "LAYERS",
           "sigmoid"]

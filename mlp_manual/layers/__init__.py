"""Layer types: the table of every built-in type (types.py), the registry that builds layers
from config specs (registry.py), and a user's own types (user_modules.py). The layer classes
themselves are in ``mlp_manual/core/``."""

from ..core import (
    GELU,
    BatchNorm1d,
    Dropout,
    Embedding,
    Identity,
    Layer,
    LayerNorm,
    LeakyReLU,
    Linear,
    ReLU,
    Residual,
    RMSNorm,
    Sigmoid,
    Softmax,
    Tanh,
    sigmoid,
)
from .registry import LAYER_TYPES, LAYERS

__all__ = ["Layer", "Linear", "ReLU", "LeakyReLU", "Sigmoid", "Tanh", "GELU", "Identity", "Softmax",
           "Dropout", "LayerNorm", "RMSNorm", "BatchNorm1d", "Residual", "Embedding", "LAYER_TYPES", "LAYERS",
           "sigmoid"]

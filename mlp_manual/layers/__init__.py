"""Built-in layers and the table that maps config names to them."""

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
from .linear import Linear
from .normalization import BatchNorm1d, LayerNorm, RMSNorm

LAYER_TYPES: dict[str, type[Layer]] = {
    "linear": Linear,
    "relu": ReLU,
    "leaky_relu": LeakyReLU,
    "sigmoid": Sigmoid,
    "tanh": Tanh,
    "gelu": GELU,
    "identity": Identity,
    "softmax": Softmax,
    "dropout": Dropout,
    "layernorm": LayerNorm,
    "rmsnorm": RMSNorm,
    "batchnorm": BatchNorm1d,
}
TYPE_NAMES = {cls: name for name, cls in LAYER_TYPES.items()}

__all__ = ["Layer", "Linear", "ReLU", "LeakyReLU", "Sigmoid", "Tanh", "GELU", "Identity", "Softmax",
           "Dropout", "LayerNorm", "RMSNorm", "BatchNorm1d", "LAYER_TYPES", "TYPE_NAMES", "sigmoid"]

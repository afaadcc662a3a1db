"""mlp-manual: a multilayer-perceptron trainer whose every gradient is written by hand."""

from .errors import ConfigError, DataError, LayerError, MLPManualError, ModelFileError
from .gradcheck.check import check_layer, check_loss, check_model
from .layers import (
                     GELU,
                     BatchNorm1d,
                     Dropout,
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
)
from .losses import bce_with_logits, mse, softmax_cross_entropy
from .model import Model, build_model
from .runs.model_file import load_model, save_model
from .runs.predictor import Predictor, load_predictor

__version__ = "0.1.0"
__all__ = ["Layer", "Linear", "ReLU", "LeakyReLU", "Sigmoid", "Tanh", "GELU", "Identity", "Softmax",
           "Dropout", "LayerNorm", "RMSNorm", "BatchNorm1d", "Residual", "Model", "build_model", "load_model",
           "save_model", "load_predictor", "Predictor", "softmax_cross_entropy", "bce_with_logits", "mse",
           "MLPManualError", "ConfigError", "DataError", "LayerError", "ModelFileError", "check_layer",
           "check_loss", "check_model"]

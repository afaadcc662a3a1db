"""mlp-manual: a multilayer-perceptron trainer whose every gradient is written by hand.

The public names below are imported on first use (PEP 562). Importing the package itself loads
nothing, because every console script starts in a module of it (process.py, through
cli/process.py), and that module installs its signal handling before numpy loads: Ctrl-C during
the first half second then ends the command in one line, not in numpy's "initialization failed"
traceback. (Speed is not the reason: importing every module of the package that needs no
optional library costs 18 ms more than what mlp-train imports, about 2% of a small run.)
"""

import importlib

__version__ = "0.1.0"

_LAZY = {  # public name -> the module (relative to this package) that defines it
    **dict.fromkeys(["GELU", "BatchNorm1d", "Dropout", "Identity", "Layer", "LayerNorm", "LeakyReLU",
                     "Linear", "ReLU", "Residual", "RMSNorm", "Sigmoid", "Softmax", "Tanh"], ".layers"),
    **dict.fromkeys(["bce_with_logits", "mse", "softmax_cross_entropy"], ".losses"),
    **dict.fromkeys(["Model", "build_model"], ".model"),
    **dict.fromkeys(["load_model", "save_model"], ".predict.model_file"),
    **dict.fromkeys(["Predictor", "load_predictor"], ".predict.predictor"),
    **dict.fromkeys(["check_layer", "check_loss", "check_model"], ".gradcheck.check"),
    **dict.fromkeys(["MLPManualError", "ConfigError", "DataError", "LayerError", "ModelFileError"], ".errors"),
}

__all__ = ["Layer", "Linear", "ReLU", "LeakyReLU", "Sigmoid", "Tanh", "GELU", "Identity", "Softmax",
           "Dropout", "LayerNorm", "RMSNorm", "BatchNorm1d", "Residual", "Model", "build_model", "load_model",
           "save_model", "load_predictor", "Predictor", "softmax_cross_entropy", "bce_with_logits", "mse",
           "MLPManualError", "ConfigError", "DataError", "LayerError", "ModelFileError", "check_layer",
           "check_loss", "check_model"]


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    globals()[name] = value  # later look-ups find it directly
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

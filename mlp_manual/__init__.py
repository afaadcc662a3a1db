"""mlp-manual: a multilayer-perceptron trainer whose every gradient is written by hand.

The public names below are imported on first use (PEP 562), so that a command loads only the
modules it needs: ``mlp-train`` never loads the gradient checker, for instance. Importing the
package itself loads nothing, so that a console script installs its signal handling
(cli/process.py) before any real work.
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

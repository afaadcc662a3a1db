"""scikit-learn estimators that train mlp-manual models: MLPClassifier and MLPRegressor.

scikit-learn is an optional dependency: ``pip install "mlp-manual[sklearn]"``.
"""

try:
    import sklearn  # noqa: F401
except ImportError as e:
    raise ImportError('mlp_manual.sklearn needs scikit-learn; install it with: pip install "mlp-manual[sklearn]"') from e

from .estimators import MLPClassifier, MLPRegressor
from .export import to_onnx

__all__ = ["MLPClassifier", "MLPRegressor", "to_onnx"]

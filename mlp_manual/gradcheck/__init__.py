"""The gradient checker: ``check_layer``, ``check_loss`` and ``check_model`` (check.py), the
built-in suite (suites.py), and checks of a user's own layer or config (user.py)."""

from .check import check_layer, check_loss, check_model

__all__ = ["check_layer", "check_loss", "check_model"]

"""The errors the core raises. Every error of mlp-manual is a ``ValueError``, so that callers who
do not know these types still catch them; the rest of the package adds its own kinds
(``mlp_manual.errors``) under the same base."""


class MLPManualError(ValueError):
    """Base class of every error mlp-manual raises for a mistake in its input."""


class LayerError(MLPManualError):
    """A layer was used against its contract (backward before forward, wrong input width)."""

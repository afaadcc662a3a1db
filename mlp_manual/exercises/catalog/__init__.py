"""The exercises, in learning order: each has its own module here (the cases, the reference,
the mistakes it names, the hints) and its reference answer in ``exercises/solutions/``, from
which the scaffold is cut (exercises/files.py)."""

from ...errors import ExerciseError, did_you_mean
from ..exercise import Exercise
from . import adam, batchnorm, chain_rule, mse, softmax_ce, value, dropout, embedding, layernorm, linear, mlp_backward, relu, residual, sigmoid, tanh

EXERCISES: tuple[Exercise, ...] = tuple(m.EXERCISE for m in (
    chain_rule, value, linear, relu, tanh, sigmoid, softmax_ce, mse, layernorm, batchnorm, dropout, embedding, residual, mlp_backward, adam))


def find(name: str) -> Exercise:
    """The exercise called ``name``; ExerciseError with a did-you-mean otherwise."""
    for ex in EXERCISES:
        if ex.name == name:
            return ex
    names = [ex.name for ex in EXERCISES]
    raise ExerciseError(f"no exercise {name!r}{did_you_mean(name, names)}; `mlp-exercise list` lists them: "
                        f"{', '.join(names)}")

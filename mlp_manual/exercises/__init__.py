"""Exercises: write a backward pass yourself and have it checked on the spot, tensor by tensor,
against the core's own implementation and central differences; a wrong answer is told by the
classic mistake it matches ("dW is transposed"), at the smallest input where it shows.

    from mlp_manual.exercises import check
    check("linear", Linear)      # a table in a notebook; print() gives the command's text

``mlp-exercise`` (cli/exercise.py) writes the scaffolds and keeps the student's progress.
"""

from ..errors import ExerciseError
from .catalog import EXERCISES, find
from .check import check

__all__ = ["check", "EXERCISES", "find", "ExerciseError"]

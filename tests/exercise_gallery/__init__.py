"""Planted mistakes and other correct answers, one module per exercise, for
tests/test_exercise_mistakes.py. Each module has:

- ``PLANTED``: (the key of the mistake the check must name, the edits that plant it in the
  reference answer: (old, new) text replacements, each of which must apply);
- ``CORRECT``: edits that give another correct answer (an einsum for a matmul, a loop for a
  sum), which the check must pass without naming a mistake.
"""

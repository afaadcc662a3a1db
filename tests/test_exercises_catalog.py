"""Every exercise of the table: its scaffold fails its check (saying what is not written yet), its
reference answer passes, the solution is the scaffold with the part to write filled in, and
its hints come one more each time. The mistakes each exercise names: tests/test_exercise_mistakes.py."""

import ast
import types

import pytest

from mlp_manual.exercises import EXERCISES, check
from mlp_manual.exercises.files import reference_source, scaffold, solution

NAMES = [ex.name for ex in EXERCISES]


def load(tmp_path, ex, text):
    """The module ``text``, from a file named as the student's (so that places name it)."""
    path = tmp_path / ex.file
    path.write_text(text, encoding="utf-8")
    module = types.ModuleType(path.stem)
    module.__file__ = str(path)
    exec(compile(text, str(path), "exec"), module.__dict__)
    return module


@pytest.mark.parametrize("ex", EXERCISES, ids=NAMES)
def test_the_reference_answer_passes_and_the_scaffold_fails(ex, tmp_path):
    passed = check(ex, load(tmp_path, ex, solution(ex)))
    assert passed.passed, str(passed)
    assert not passed.findings and passed.rows and all(r.vs_core.ok for r in passed.rows)
    (tmp_path / ex.file).write_text(scaffold(ex), encoding="utf-8")
    failed = check(ex, tmp_path / ex.file)
    assert not failed.passed
    assert "NotImplementedError: not written yet" in failed.problem, str(failed)
    assert f"{ex.file}, line" in failed.problem


@pytest.mark.parametrize("ex", EXERCISES, ids=NAMES)
def test_the_scaffold_is_the_solution_with_the_marked_part_cut_out(ex):
    source, cut, answer = reference_source(ex), scaffold(ex), solution(ex)
    assert "# >>> write here:" in source and "# >>>" not in cut and "# >>>" not in answer
    assert "# TODO write here:" in cut and "raise NotImplementedError" in cut
    for text in (cut, answer):
        ast.parse(text)
    assert ast.get_docstring(ast.parse(cut)), f"{ex.name}: the scaffold starts with its docstring"
    assert len(answer.splitlines()) < len(source.splitlines())


@pytest.mark.parametrize("ex", EXERCISES, ids=NAMES)
def test_every_exercise_declares_hints_mistakes_and_tensors(ex):
    assert len(ex.hints) >= 3 and ex.tensors and ex.mistakes
    assert {m.tensor for m in ex.mistakes} <= set(ex.tensors)
    assert all(m.says and m.look for m in ex.mistakes)
    cases = ex.cases(0)
    assert [c.size for c in cases[:3]] == sorted(c.size for c in cases[:3]), "the smallest cases come first"


def test_there_are_at_least_twelve_exercises_in_learning_order():
    assert len(EXERCISES) >= 12
    assert len(set(NAMES)) == len(NAMES)
    order = [n for n in ("chain_rule", "value", "linear", "relu", "tanh", "softmax_ce", "mse", "layernorm",
                         "batchnorm", "dropout", "embedding", "residual", "mlp_backward", "adam") if n in NAMES]
    assert [n for n in NAMES if n in order] == order


def test_a_check_gives_the_same_verdict_every_time(tmp_path):
    ex = EXERCISES[NAMES.index("linear")]
    wrong = load(tmp_path, ex, solution(ex).replace("x.T @ dout  #", "dout.T @ x  #"))
    verdicts = {(check(ex, wrong).named[0], str(check(ex, wrong))) for _ in range(5)}
    assert len(verdicts) == 1 and next(iter(verdicts))[0] == "transposed"

"""The relu, tanh, sigmoid, layernorm, batchnorm, dropout, embedding and residual exercises: the
reference answer passes and the scaffold stops at its NotImplementedError; every planted mistake
of each gallery module is named as planted, and every other correct answer passes with nothing
named; the reference passes on every seed with nothing named."""

import importlib
import types

import pytest

from mlp_manual.exercises import check, find
from mlp_manual.exercises.files import scaffold, solution

NAMES = ("relu", "tanh", "sigmoid", "layernorm", "batchnorm", "dropout", "embedding", "residual")


def _load(text: str, name: str, tmp_path) -> types.ModuleType:
    path = tmp_path / f"{name}.py"
    path.write_text(text, encoding="utf-8")
    module = types.ModuleType(name)
    exec(compile(text, str(path), "exec"), module.__dict__)
    return module


def _edited(source: str, edits) -> str:
    for old, new in edits:
        assert old in source, f"the edit does not apply: {old!r}"
        source = source.replace(old, new)
    return source


def _gallery(name: str):
    return importlib.import_module(f"tests.exercise_gallery.{name}")


def _cases(kind: str):
    found = []
    for name in NAMES:
        entries = _gallery(name).PLANTED if kind == "planted" else [(None, e) for e in _gallery(name).CORRECT]
        found += [pytest.param(name, key, edits, id=f"{name}-{i}-{key or 'correct'}")
                  for i, (key, edits) in enumerate(entries)]
    return found


@pytest.mark.parametrize("name", NAMES)
def test_the_reference_passes_and_the_scaffold_stops_at_its_todo(name, tmp_path):
    ex = find(name)
    report = check(name, _load(solution(ex), name, tmp_path))
    assert report.passed and not report.named, str(report)
    report = check(name, _load(scaffold(ex), name, tmp_path))
    assert not report.passed
    assert "NotImplementedError" in report.problem and "Traceback" not in str(report)


@pytest.mark.parametrize(("name", "key", "edits"), _cases("planted"))
def test_a_planted_mistake_is_named(name, key, edits, tmp_path):
    report = check(name, _load(_edited(solution(find(name)), edits), name, tmp_path))
    assert not report.passed
    # the first tensor the mistake shows in names it; batch norm also names it where it starts
    # (an intermediate), and no wrong tensor is left unexplained
    assert report.named[:1] == [key] and set(report.named) <= {key, "missing_variance_path"}, str(report)
    assert all(f.mistake is not None for f in report.findings), str(report)


@pytest.mark.parametrize(("name", "key", "edits"), _cases("correct"))
def test_another_correct_answer_passes(name, key, edits, tmp_path):
    report = check(name, _load(_edited(solution(find(name)), edits), name, tmp_path))
    assert report.passed and not report.named, str(report)


@pytest.mark.parametrize("name", NAMES)
def test_the_reference_passes_on_every_seed_with_nothing_named(name, tmp_path):
    module = _load(solution(find(name)), name, tmp_path)
    for seed in range(50):
        report = check(name, module, seed=seed)
        assert report.passed and not report.named, f"seed {seed}:\n{report}"


@pytest.mark.parametrize("name", NAMES)
def test_each_exercise_has_three_hints_and_every_mistake_says_where_to_look(name):
    ex = find(name)
    assert len(ex.hints) == 3
    assert all(m.says and m.look for m in ex.mistakes)

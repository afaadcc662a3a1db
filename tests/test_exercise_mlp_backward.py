"""What the mlp_backward exercise adds to every exercise's tests (tests/test_exercises_catalog.py,
tests/test_exercise_mistakes.py): each tensor judged from the student's own earlier ones, so a
planted mistake is named on the first tensor it makes wrong only and the later ones are
inherited; the check's forward is the scaffold's; the first case repeats a character."""

import importlib
import types

import numpy as np
import pytest

from mlp_manual.exercises import check, find
from mlp_manual.exercises.catalog import mlp_chain
from mlp_manual.exercises.files import solution

NAME = "mlp_backward"
GALLERY = importlib.import_module(f"tests.exercise_gallery.{NAME}")


def load(text: str, tmp_path, name: str = NAME) -> types.ModuleType:
    path = tmp_path / f"{name}.py"
    path.write_text(text, encoding="utf-8")
    module = types.ModuleType(name)
    exec(compile(text, str(path), "exec"), module.__dict__)
    return module


def edited(edits) -> str:
    text = solution(find(NAME))
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


@pytest.mark.parametrize("key, edits", GALLERY.PLANTED, ids=[f"{k}-{i}" for i, (k, _) in enumerate(GALLERY.PLANTED)])
def test_a_planted_mistake_is_named_on_its_own_tensor_only(tmp_path, key, edits):
    report = check(NAME, load(edited(edits), tmp_path))
    assert report.named == [key], str(report)
    first = next(f for f in report.findings if not f.inherited)
    assert first.mistake is not None and first.mistake.key == key
    assert all(f.mistake is None for f in report.findings if f.inherited)


def test_a_wrong_first_step_leaves_the_later_tensors_reported_as_inherited(tmp_path):
    report = check(NAME, load(edited([("= -1.0 / n", "= -1.0")]), tmp_path))
    inherited = [f.tensor for f in report.findings if f.inherited]
    assert [f.tensor for f in report.findings if not f.inherited] == ["dlogprobs"]
    assert {"dprobs", "dlogits", "dhprebn", "dC"} <= set(inherited)
    assert "wrong only through the wrong tensors before them" in str(report)
    assert "wrong only through" in report._repr_html_()


def test_the_given_forward_is_the_checks_forward(tmp_path):
    module = load(solution(find(NAME)), tmp_path)
    for case in find(NAME).cases(3):
        ours = mlp_chain.forward(case)
        theirs = module.forward(case["params"], case["Xb"], case["Yb"])
        assert set(ours) == set(theirs)
        for k, v in ours.items():
            assert np.array_equal(v, theirs[k]), k


def test_the_first_case_is_two_windows_with_a_repeated_character():
    first = find(NAME).cases(0)[0]
    assert first["Xb"].shape == (2, 3) and list(first["Xb"][0]) == [0, 0, 0]
    sizes = [c.size for c in find(NAME).cases(0)]
    assert sizes == sorted(sizes)


def test_batch_norm_s_inner_steps_add_up_to_the_core_s_input_gradient():
    for case in find(NAME).cases(1):
        g = mlp_chain.reference(case)
        n = len(case["Yb"])
        np.testing.assert_allclose(g["dbndiff"] + g["dbnmeani"] / n, g["dhprebn"], rtol=1e-9, atol=1e-14)
        np.testing.assert_allclose(g["dlogit_maxes"], 0.0)


def test_mistakes_in_several_steps_are_each_named_judged_from_the_students_own_earlier_tensors(tmp_path):
    edits = [("= -1.0 / n", "= -1.0"), ("dhpreact = (1.0 - h**2) * dh", "dhpreact = dh"),
             ("db1 = dhprebn.sum(0)", "db1 = dhprebn"), ("np.add.at(dC, Xb, demb)", "dC[Xb] = demb")]
    report = check(NAME, load(edited(edits), tmp_path))
    assert report.named == ["missing_1_over_n", "tanh_derivative_missing", "db1_not_summed",
                            "embedding_not_accumulated"], str(report)
    assert [f.tensor for f in report.findings if not f.inherited] == ["dlogprobs", "dhpreact", "db1", "dC"]


def test_an_exercise_without_local_judging_reports_no_inherited_tensor(tmp_path):
    text = solution(find("linear")).replace("x.T @ dout  #", "dout.T @ x  #")
    report = check("linear", load(text, tmp_path, "linear"))
    assert report.named == ["transposed"] and not any(f.inherited for f in report.findings)

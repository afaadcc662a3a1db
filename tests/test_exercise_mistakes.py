"""The mistakes the exercises name, measured on a gallery of planted mistakes
(tests/exercise_gallery/): at least 90% named correctly; no mistake named on at least 1,000
correct answers over random shapes and seeds; the same verdict on 100 of 100 reruns.

A planted mistake is a real edit of an exercise's reference answer, as a student would write it,
never the exercise's own prediction of it.
"""

import importlib
import types

import pytest

from mlp_manual.exercises import EXERCISES, check
from mlp_manual.exercises.files import solution

NAMES = [ex.name for ex in EXERCISES]


def gallery(ex):
    return importlib.import_module(f"exercise_gallery.{ex.name}")


def edited(ex, edits) -> str:
    text = solution(ex)
    for old, new in edits:
        assert old in text, f"{ex.name}: the edit {old!r} does not apply to the reference answer"
        text = text.replace(old, new)
    return text


def module(ex, text, tmp_path=None):
    m = types.ModuleType(ex.name)
    exec(compile(text, f"{ex.name}.py", "exec"), m.__dict__)
    return m


def planted():
    return [(ex, key, edits) for ex in EXERCISES for key, edits in gallery(ex).PLANTED]


def correct_answers():
    return [(ex, edited(ex, edits)) for ex in EXERCISES for edits in [[]] + list(gallery(ex).CORRECT)]


def test_every_exercise_has_a_gallery_planting_each_of_its_mistakes():
    for ex in EXERCISES:
        keys = {key for key, _ in gallery(ex).PLANTED}
        assert keys == {m.key for m in ex.mistakes}, f"{ex.name}: planted {sorted(keys)}"


def test_at_least_90_percent_of_the_planted_mistakes_are_named_correctly():
    verdicts = []
    for ex, key, edits in planted():
        report = check(ex, module(ex, edited(ex, edits)), isolated=False)
        assert not report.passed, f"{ex.name}: planting {key} with {edits} still passes"
        verdicts.append((ex.name, key, report.named))
    right = [v for v in verdicts if v[2][:1] == [v[1]]]
    wrong = [v for v in verdicts if v[2] and v[2][:1] != [v[1]]]
    assert len(right) >= 0.9 * len(verdicts), f"{len(right)} of {len(verdicts)}: " + "; ".join(
        f"{n} planted {k}, named {named or 'nothing'}" for n, k, named in verdicts if named[:1] != [k])
    assert not wrong, f"misnamed: {wrong}"


@pytest.mark.parametrize("seeds", [range(1, 4)], ids=["3 seeds"])
def test_correct_answers_pass_with_nothing_named(seeds):
    for ex, text in correct_answers():
        answer = module(ex, text)
        for seed in seeds:
            report = check(ex, answer, seed=seed, isolated=False)
            assert report.passed and not report.named, f"{ex.name}, seed {seed}:\n{report}"


@pytest.mark.slow
def test_a_thousand_correct_answers_over_random_shapes_and_seeds_have_no_mistake_named():
    answers = correct_answers()
    seeds_each = -(-1000 // len(answers))
    count = 0
    for i, (ex, text) in enumerate(answers):
        answer = module(ex, text)
        for seed in range(100 + i * seeds_each, 100 + (i + 1) * seeds_each):
            report = check(ex, answer, seed=seed, isolated=False)
            assert report.passed and not report.named, f"{ex.name}, seed {seed}:\n{report}"
            count += 1
    assert count >= 1000


@pytest.mark.slow
def test_the_same_verdict_on_100_of_100_reruns():
    first = {}
    for ex, key, edits in planted():
        first.setdefault(ex.name, (ex, key, edits))
    for ex, key, edits in first.values():
        answer = module(ex, edited(ex, edits))
        verdicts = {str(check(ex, answer)) for _ in range(100)}
        assert len(verdicts) == 1, f"{ex.name} ({key}) gave {len(verdicts)} different verdicts"

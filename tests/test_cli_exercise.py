"""mlp-exercise end to end: through the console script for what a student types (the output, the
exit codes, the files), and every mistake of theirs ends in a report or one line, never a
traceback: an exception, a wrong shape, a NaN, a call to exit, an endless loop."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mlp_manual.exercises import EXERCISES, find
from mlp_manual.exercises.files import PROGRESS, scaffold, solution

ROOT = Path(__file__).resolve().parents[1]


def mlp_exercise(cwd, *args, stdin=""):
    done = subprocess.run([sys.executable, "-m", "mlp_manual.cli.process", "exercise", *args], cwd=cwd,
                          capture_output=True, text=True, input=stdin, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr
    return done


def plant(tmp_path, old, new, name="linear"):
    ex = find(name)
    (tmp_path / "exercises").mkdir(exist_ok=True)
    text = solution(ex)
    assert old in text
    (tmp_path / "exercises" / ex.file).write_text(text.replace(old, new), encoding="utf-8")


def test_list_start_check_and_the_statuses_they_leave(tmp_path):
    listed = mlp_exercise(tmp_path, "list")
    assert listed.returncode == 0
    lines = listed.stdout.splitlines()
    assert [line.split()[1] for line in lines] == [ex.name for ex in EXERCISES]
    assert all("not started" in line for line in lines)
    started = mlp_exercise(tmp_path, "start", "linear")
    assert started.returncode == 0 and "wrote exercises/linear.py" in started.stdout
    assert (tmp_path / "exercises/linear.py").read_text() == scaffold(find("linear"))
    assert re.search(r"linear +started ", mlp_exercise(tmp_path, "list").stdout)
    failed = mlp_exercise(tmp_path, "check", "linear")
    assert failed.returncode == 1
    assert "Linear.backward raised NotImplementedError: not written yet" in failed.stdout
    assert "(linear.py, line" in failed.stdout and failed.stdout.splitlines()[-1].startswith("FAIL linear")
    assert re.search(r"linear +failing ", mlp_exercise(tmp_path, "list").stdout)
    (tmp_path / "exercises/linear.py").write_text(solution(find("linear")))
    passed = mlp_exercise(tmp_path, "check")
    assert passed.returncode == 0 and passed.stdout.splitlines()[-1].startswith("PASS linear")
    for tensor in ("out", "dx", "dW", "db"):
        assert any(line.split()[:1] == [tensor] and line.endswith("ok") for line in passed.stdout.splitlines())
    assert re.search(r"linear +passed ", mlp_exercise(tmp_path, "list").stdout)
    progress = json.loads((tmp_path / "exercises" / PROGRESS).read_text())
    assert progress["linear"]["verdict"] == "passed"


def test_start_never_overwrites_a_changed_file(tmp_path):
    assert mlp_exercise(tmp_path, "start", "linear", "--dir", "work").returncode == 0
    again = mlp_exercise(tmp_path, "start", "linear", "--dir", "work")
    assert again.returncode == 0, "an untouched scaffold may be written again"
    path = tmp_path / "work/linear.py"
    path.write_text(path.read_text() + "# mine\n")
    refused = mlp_exercise(tmp_path, "start", "linear", "--dir", "work")
    assert refused.returncode == 1
    assert refused.stderr.strip() == ("Error: work/linear.py has changes of yours and was left as it is; move it "
                                      "away to start over")
    assert path.read_text().endswith("# mine\n")


def test_a_wrong_answer_is_named_at_the_smallest_input_where_it_shows(tmp_path):
    plant(tmp_path, "dout.sum(axis=0)", "dout.sum(axis=1)")
    out = mlp_exercise(tmp_path, "check", "linear")
    assert out.returncode == 1
    assert "db is summed over the wrong axis" in out.stdout
    assert "smallest input where it shows: N=1, D=1, H=1" not in out.stdout
    assert "smallest input where it shows: N=1, D=2, H=3" in out.stdout
    assert "where to look: self.grads['b']" in out.stdout
    assert out.stdout.splitlines()[-1] == "FAIL linear: 1 of 4 tensors wrong (hint: mlp-exercise hint linear)"


@pytest.mark.parametrize("old, new, says", [
    ("return dout @", "while True:\n            pass\n        return dout @",
     "Linear.backward took longer than 1.5 s: an endless loop, or very slow code?"),
    ("return dout @", "raise SystemExit(3)\n        return dout @", "Linear.backward raised SystemExit(3)"),
    ("return dout @", "import os; os._exit(5)\n        return dout @", "Linear.backward ended the process (exit code 5)"),
    ("dout.sum(axis=0)", "dout.sum(axis=0) * np.nan", "db  "),
    ("x.T @ dout  #", "x.T @ dout[:, :1]  #", "dW is wrong (shape (2, 1), expected (2, 3))"),
    ("x = self.x  #", "x = self.x.undefined  #", "AttributeError: 'numpy.ndarray' object has no attribute 'undefined'"),
    ("return dout @", "return\n        dout @", "Linear.backward's return (dx) is None"),
    ("class Linear(Layer):", "class Linear(Layer)", "importing linear.py raised SyntaxError"),
    ("class Linear(Layer):", "class Linearr(Layer):", "linear defines no Linear"),
    ("return dout @", "self.grads = (self.grads['W'], self.grads['b'])\n        return dout @",
     "Linear.backward (called a second time) raised TypeError: 'tuple' object does not support item assignment"),
    ('self.grads["W"] = x.T @ dout  # (D, H)\n        self.grads["b"] = dout.sum(axis=0)  # (H,)',
     'self.grads = (x.T @ dout, dout.sum(axis=0))',
     "self.grads is a tuple, not a dict keyed like self.params (W, b)"),
])
def test_whatever_the_code_does_ends_in_a_report(tmp_path, old, new, says):
    plant(tmp_path, old, new)
    out = mlp_exercise(tmp_path, "check", "linear")
    assert out.returncode == 1, out.stdout + out.stderr
    assert says in out.stdout, out.stdout
    assert out.stdout.splitlines()[-1].startswith("FAIL linear")


@pytest.mark.parametrize("old, new", [
    ("\nimport numpy as np\n", "\nimport time\nimport numpy as np\ntime.sleep(2)\n"),
    ("\nimport numpy as np\n", "\nfrom __future__ import annotations\nimport dataclasses\nimport numpy as np\n\n\n"
                               "@dataclasses.dataclass\nclass Shape:\n    n: int = 0\n"),
])
def test_a_slow_import_or_a_dataclass_in_the_file_is_no_mistake(tmp_path, old, new):
    plant(tmp_path, old, new)
    out = mlp_exercise(tmp_path, "check", "linear")
    assert out.returncode == 0 and out.stdout.splitlines()[-1].startswith("PASS linear"), out.stdout


def test_what_the_code_prints_comes_after_the_table_counted_not_in_full(tmp_path):
    plant(tmp_path, "x = self.x  #", "[print('debug', i) for i in range(1000)]\n        x = self.x  #")
    out = mlp_exercise(tmp_path, "check", "linear")
    lines = out.stdout.splitlines()
    assert out.returncode == 0 and len(lines) < 20, out.stdout
    assert "  your code printed 14,000 lines, the first 5:" in lines
    assert lines[lines.index("  your code printed 14,000 lines, the first 5:") + 1] == "    | debug 0"


def test_check_train_takes_no_name(tmp_path):
    out = mlp_exercise(tmp_path, "check", "linear", "--train")
    assert out.returncode == 2 and "--train checks your layer exercises together" in out.stderr


def test_a_nan_is_counted(tmp_path):
    plant(tmp_path, "dout.sum(axis=0)", "dout.sum(axis=0) * np.nan")
    out = mlp_exercise(tmp_path, "check", "linear")
    assert "core: NaN in 1 of 1 entries" in out.stdout or "NaN in" in out.stdout


def test_hints_come_one_more_each_time_and_the_solution_asks_first(tmp_path):
    ex = find("linear")
    mlp_exercise(tmp_path, "start", "linear")
    said = [mlp_exercise(tmp_path, "hint", "linear").stdout.strip() for _ in range(len(ex.hints) + 1)]
    assert said[:len(ex.hints)] == [f"hint {i} of {len(ex.hints)} for linear: {h}" for i, h in enumerate(ex.hints, 1)]
    assert said[-1] == said[-2], "past the last hint, the last one again"
    declined = mlp_exercise(tmp_path, "solution", "linear", stdin="n\n")
    assert declined.returncode == 1 and "x.T @ dout" not in declined.stdout
    assert "Error: the solution of linear was not shown (--yes shows it without asking)" in declined.stderr
    no_answer = mlp_exercise(tmp_path, "solution", "linear")
    assert no_answer.returncode == 1 and "x.T @ dout" not in no_answer.stdout
    shown = mlp_exercise(tmp_path, "solution", "linear", stdin="y\n")
    assert shown.returncode == 0 and solution(ex).rstrip("\n") in shown.stdout
    assert mlp_exercise(tmp_path, "solution", "linear", "--yes").stdout == solution(ex).rstrip("\n") + "\n"


@pytest.mark.parametrize("args, message", [
    (("check", "lineer"), "Error: no exercise 'lineer' (did you mean 'linear'?)"),
    (("start", "lineer"), "Error: no exercise 'lineer' (did you mean 'linear'?)"),
    (("check", "linear"), "Error: exercises/linear.py is not a file: start the exercise with mlp-exercise start linear"),
    (("check",), "Error: no exercise started in exercises/: start one with mlp-exercise start"),
])
def test_mistakes_in_the_command_are_one_line(tmp_path, args, message):
    out = mlp_exercise(tmp_path, *args)
    assert out.returncode == 1 and out.stderr.startswith(message) and len(out.stderr.splitlines()) == 1


def test_a_file_that_is_not_text_is_one_line(tmp_path):
    (tmp_path / "exercises").mkdir()
    (tmp_path / "exercises/linear.py").write_bytes(b"\xff\xfe not utf-8")
    out = mlp_exercise(tmp_path, "check", "linear")
    assert out.returncode == 1 and out.stderr.startswith("Error: exercises/linear.py: cannot read it (")
    assert len(out.stderr.splitlines()) == 1


def test_hand_edited_progress_fields_are_dropped_not_fatal(tmp_path):
    mlp_exercise(tmp_path, "start", "linear")
    (tmp_path / "exercises" / PROGRESS).write_text(json.dumps({"linear": {"hints": "x", "verdict": "maybe"},
                                                               "relu": [1]}))
    out = mlp_exercise(tmp_path, "hint", "linear")
    assert out.returncode == 0 and out.stdout.startswith("hint 1 of 3 for linear: ")
    assert re.search(r"linear +started ", mlp_exercise(tmp_path, "list").stdout)


def test_a_damaged_progress_file_is_one_line(tmp_path):
    mlp_exercise(tmp_path, "start", "linear")
    (tmp_path / "exercises" / PROGRESS).write_text("{not json")
    out = mlp_exercise(tmp_path, "list")
    assert out.returncode == 1 and "cannot read the progress file" in out.stderr
    assert "delete it to start the record afresh (your exercise files stay)" in out.stderr


def test_check_train_trains_moons_with_the_students_own_layers(tmp_path):
    for name in ("linear", "relu"):
        plant(tmp_path, "", "", name)
    out = mlp_exercise(tmp_path, "check", "--train")
    assert out.returncode == 0, out.stdout + out.stderr
    last = out.stdout.splitlines()[-1]
    assert last.startswith("PASS train: your linear and relu layers reach ") and "test accuracy on moons (pass at 95%)" in last
    assert float(last.split("reach ")[1].split("%")[0]) >= 95


def test_check_train_refuses_layers_that_fail_their_check(tmp_path):
    for name in ("linear", "relu"):
        plant(tmp_path, "", "", name)
    plant(tmp_path, "x.T @ dout  #", "dout.T @ x  #")
    out = mlp_exercise(tmp_path, "check", "--train")
    assert out.returncode == 1 and "dW is transposed" in out.stdout
    assert out.stdout.splitlines()[-1] == "FAIL train: linear does not pass its check yet; it would not train"


def test_the_training_config_is_the_shipped_moons_config():
    ours = yaml.safe_load((ROOT / "mlp_manual/exercises/moons.yaml").read_text())
    assert ours == yaml.safe_load((ROOT / "configs/moons.yaml").read_text())

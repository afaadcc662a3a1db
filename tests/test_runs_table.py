"""mlp-runs: every run folder under the given folders as a table; the values that differ, the
metrics, sorting, filtering, CSV, and the mean and spread over seeds."""

import csv
import io
import json
import shutil
import statistics
import tempfile
from pathlib import Path

import pytest
from conftest import invoke_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mlp_manual.cli.runs import main as runs_cli
from mlp_manual.cli.train import main as train_cli


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Six moons runs: learning rates 0.05 and 0.2, seeds 0, 1 and 2; and a run folder whose
    training never ended (config.yaml only)."""
    folder = tmp_path_factory.mktemp("runs")
    for lr in (0.05, 0.2):
        for seed in (0, 1, 2):
            result = invoke_cli(train_cli, "configs/moons.yaml", "--set", f"optimizer.lr={lr}", "--seed", str(seed),
                                "--epochs", "5", "--out", str(folder / f"lr{lr}-s{seed}"), "-q")
            assert result.exit_code == 0, result.output
    (folder / "broken").mkdir()
    (folder / "broken" / "config.yaml").write_text((folder / "lr0.05-s0" / "config.yaml").read_text())
    return folder


def _csv(*args) -> list[dict]:
    result = invoke_cli(runs_cli, *args, "--csv")
    assert result.exit_code == 0, result.output
    return list(csv.DictReader(io.StringIO(result.stdout)))


def _summary(folder, name) -> dict:
    return json.loads((folder / name / "summary.json").read_text())


def test_a_row_per_run_with_what_differs_and_its_metrics(runs):
    rows = _csv(str(runs))
    assert list(rows[0]) == ["run", "name", "status", "lr", "seed", "val_loss", "val_acc", "train_loss",
                             "train_acc", "test_loss", "test_acc", "epochs", "seconds"]
    assert len(rows) == 7
    by_run = {r["run"].rsplit("/", 1)[-1]: r for r in rows}
    summary = _summary(runs, "lr0.2-s1")
    row = by_run["lr0.2-s1"]
    assert (row["status"], row["lr"], row["seed"], row["epochs"]) == ("completed", "0.2", "1", "5")
    assert float(row["val_loss"]) == summary["best"]["val_loss"]
    assert float(row["seconds"]) == summary["wall_seconds"]
    assert float(row["test_acc"]) == summary["test"]["acc"]
    assert by_run["broken"]["status"] == "unfinished" and by_run["broken"]["val_loss"] == ""


def test_sorted_best_first_filtered_and_reversed(runs):
    rows = _csv(str(runs), "--where", "status=completed")
    losses = [float(r["val_loss"]) for r in rows]
    assert len(rows) == 6 and losses == sorted(losses)
    accs = [float(r["val_acc"]) for r in _csv(str(runs), "--sort", "val_acc", "--where", "status=completed")]
    assert accs == sorted(accs, reverse=True)
    reversed_ = [float(r["val_loss"]) for r in _csv(str(runs), "--where", "status=completed", "--reverse")]
    assert reversed_ == sorted(losses, reverse=True)
    only = _csv(str(runs), "--where", "lr=0.2", "--where", "seed=0")
    assert [r["run"].rsplit("/", 1)[-1] for r in only] == ["lr0.2-s0"]
    assert _csv(str(runs), "--where", "optimizer.lr=0.05", "--where", "status=completed")[0]["lr"] == "0.05"


def test_group_by_gives_the_mean_and_spread_over_seeds(runs):
    rows = _csv(str(runs), "--where", "status=completed", "--group-by", "lr")
    assert [k for k in rows[0]][:4] == ["lr", "runs", "val_loss_mean", "val_loss_std"]
    for row in rows:
        losses = [_summary(runs, f"lr{row['lr']}-s{s}")["best"]["val_loss"] for s in (0, 1, 2)]
        assert row["runs"] == "3"
        assert float(row["val_loss_mean"]) == pytest.approx(statistics.fmean(losses), rel=1e-12)
        assert float(row["val_loss_std"]) == pytest.approx(statistics.stdev(losses), rel=1e-12)
    assert float(rows[0]["val_loss_mean"]) <= float(rows[1]["val_loss_mean"])


def test_the_table_is_aligned_with_readable_numbers(runs, monkeypatch):
    monkeypatch.chdir(runs)
    lines = invoke_cli(runs_cli, ".", "--where", "lr=0.2", "--where", "seed=2").output.splitlines()
    assert lines[0].split() == ["run", "name", "status", "lr", "seed", "val_loss", "val_acc", "train_loss",
                                "train_acc", "test_loss", "test_acc", "epochs", "seconds"]
    cells = lines[1].split()
    assert cells[0] == "lr0.2-s2" and cells[2] == "completed"
    assert cells[5] == f"{_summary(runs, 'lr0.2-s2')['best']['val_loss']:.4f}"
    assert [line.index("status") for line in lines[:1]] == [lines[1].index("completed")]


@pytest.mark.parametrize("args, message", [
    (["--sort", "val_los"], "Error: --sort val_los: not a column of this table (run, name, status, lr, seed, "
                            "val_loss, val_acc, train_loss, train_acc, test_loss, test_acc, epochs, seconds) (did you mean "
                            "'val_loss'?)"),
    (["--where", "lr"], "Error: --where lr: expected KEY=VALUE, e.g. --where status=completed"),
    (["--group-by", "sead"], "(did you mean 'seed'?)"),
])
def test_mistakes_are_one_line(runs, args, message):
    result = invoke_cli(runs_cli, str(runs), *args)
    assert result.exit_code == 1 and message in result.output and len(result.output.strip().splitlines()) == 1


def test_folders_without_runs_are_named(tmp_path):
    assert invoke_cli(runs_cli, str(tmp_path / "none")).output.strip() == f"Error: {tmp_path / 'none'}: no such folder"
    assert "no run folders in it" in invoke_cli(runs_cli, str(tmp_path)).output


def test_a_loss_written_as_its_name_and_one_written_as_a_section_share_one_column(tmp_path):
    from mlp_manual.results.compare import read_configs

    for name, loss in (("plain", "loss: mse\n"), ("weighted", "loss: {name: softmax_cross_entropy, "
                                                               "class_weights: balanced}\n")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.yaml").write_text(loss)
    plain, weighted = read_configs([tmp_path / "plain", tmp_path / "weighted"])
    assert plain == {"loss.name": "mse"}
    assert weighted == {"loss.name": "softmax_cross_entropy", "loss.class_weights": "balanced"}


def test_a_key_that_applies_to_some_runs_only_differs_between_those_and_is_empty_for_the_others(tmp_path):
    """moons (adam, cosine), its config.yaml holding every key as earlier versions wrote it;
    spirals (sgd, step); xor (adam, constant; its size is data.copies, not data.n_samples). No
    run shows a default of a key it never used, and a key that only one run has, or that the
    runs which have it agree on, is no column: their data.name, optimizer.name, schedule.name say it."""
    from conftest import with_every_key

    for config in ("moons", "spirals", "xor"):
        result = invoke_cli(train_cli, f"configs/{config}.yaml", "--epochs", "2", "--out", str(tmp_path / config), "-q")
        assert result.exit_code == 0, result.output
    assert "context" in with_every_key(tmp_path / "moons" / "config.yaml")["data"]
    rows = {r["name"]: r for r in _csv(str(tmp_path))}
    assert [rows[n]["data.n_samples"] for n in ("moons", "spirals", "xor")] == ["600", "900", ""]
    assert [rows[n]["data.noise"] for n in ("moons", "spirals", "xor")] == ["0.2", "0.15", "0.1"]
    for key in ("data.context", "data.arms", "data.copies", "optimizer.beta1", "optimizer.momentum",
                "schedule.warmup_epochs", "schedule.step_size"):
        assert key not in rows["moons"], key
    assert {"data.name", "optimizer.name", "schedule.name"} <= set(rows["moons"])
    table = invoke_cli(runs_cli, str(tmp_path)).output.splitlines()  # left-aligned columns: a cell starts where
    lines = {line.split()[1]: line for line in table[1:]}                # its column's name does
    assert lines["xor"][table[0].index("data.n_samples"):].split()[0] == "-"


WRONG_VALUES = st.one_of(st.lists(st.integers(), max_size=3), st.text(max_size=8), st.booleans(),
                         st.dictionaries(st.text(max_size=4), st.integers(), max_size=2), st.just([1, 2]),
                         st.just("x"), st.just("many"))


def _paths(summary: dict, prefix=()) -> list[tuple]:
    """The key path of every value of a summary, nested ones included."""
    found = []
    for k, v in summary.items():
        found.append((*prefix, k))
        if isinstance(v, dict):
            found += _paths(v, (*prefix, k))
    return found


@pytest.mark.parametrize("key, value, why", [
    ("best", [1, 2], '"best" is [1, 2], not a mapping of metrics'),
    ("test", "x", """"test" is 'x', not a mapping of metrics"""),
    ("epochs_run", "many", """"epochs_run" is 'many', not a whole number"""),
    ("status", 3, '"status" is 3, not a word'),
])
def test_a_summary_with_a_value_of_the_wrong_type_is_a_damaged_row(runs, tmp_path, key, value, why):
    shutil.copytree(runs / "lr0.05-s0", tmp_path / "good")
    shutil.copytree(runs / "lr0.05-s0", tmp_path / "bad")
    summary = _summary(tmp_path, "bad")
    summary[key] = value
    (tmp_path / "bad" / "summary.json").write_text(json.dumps(summary))
    result = invoke_cli(runs_cli, str(tmp_path), "--csv")
    assert result.exit_code == 0
    rows = {r["run"].rsplit("/", 1)[-1]: r for r in csv.DictReader(io.StringIO(result.stdout))}
    assert rows["good"]["status"] == "completed" and rows["good"]["val_loss"]
    assert rows["bad"]["status"] == "damaged" and rows["bad"]["val_loss"] == "" and rows["bad"]["name"] == "moons"
    assert result.stderr == f"damaged: {tmp_path / 'bad' / 'summary.json'}: {why}\n"


def test_every_run_damaged_is_exit_1_after_the_table(runs, tmp_path):
    shutil.copytree(runs / "lr0.05-s0", tmp_path / "bad")
    (tmp_path / "bad" / "summary.json").write_text("[1, 2")
    result = invoke_cli(runs_cli, str(tmp_path))
    assert result.exit_code == 1
    assert result.stdout.splitlines()[1].split()[2] == "damaged"
    assert result.stderr.splitlines() == [
        f"damaged: {tmp_path / 'bad' / 'summary.json'}: not JSON (Expecting ',' delimiter: line 1 column 6 (char 5))",
        "Error: no run could be read: every summary.json is damaged (1 run)"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_value_of_any_key_leaves_the_rest_of_the_table_standing(runs, data):
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        shutil.copytree(runs / "lr0.05-s0", folder / "good")
        shutil.copytree(runs / "lr0.05-s0", folder / "bad")
        summary = _summary(folder, "bad")
        path = data.draw(st.sampled_from(_paths(summary)))
        parent = summary
        for k in path[:-1]:
            parent = parent[k]
        parent[path[-1]] = data.draw(WRONG_VALUES)
        (folder / "bad" / "summary.json").write_text(json.dumps(summary))
        for args in ((), ("--csv",), ("--group-by", "status"), ("--sort", "epochs")):
            result = invoke_cli(runs_cli, str(folder), *args)
            assert result.exit_code == 0, result.output
        rows = {r["run"].rsplit("/", 1)[-1]: r for r in _csv(str(folder))}
        assert rows["good"]["status"] == "completed"
        if rows["bad"]["status"] == "damaged":
            assert result.stderr.startswith(f"damaged: {folder / 'bad' / 'summary.json'}: ")

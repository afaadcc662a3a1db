"""mlp-runs: every run folder under the given folders as a table; the values that differ, the
metrics, sorting, filtering, CSV, and the mean and spread over seeds."""

import csv
import io
import json
import statistics

import pytest
from conftest import invoke_cli

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
    return list(csv.DictReader(io.StringIO(result.output)))


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

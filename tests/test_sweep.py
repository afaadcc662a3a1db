"""mlp-sweep: the sweep file's checks, trials as run folders, status, best, the figures, pruning,
failures, and workers that share, lose and resume trials on a journal file."""

import csv
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import yaml

pytest.importorskip("optuna")

from conftest import invoke_cli  # noqa: E402
from sweeps import (  # noqa: E402
    MEDIUM,
    MOONS,
    process_gone,
    run_sweep,
    running_trials,
    study_of,
    sweep_command,
    wait_for,
    write_sweep,
)

from mlp_manual.cli.sweep import main as sweep_cli  # noqa: E402
from mlp_manual.cli.train import main as train_cli  # noqa: E402
from mlp_manual.errors import ConfigError  # noqa: E402
from mlp_manual.sweep.spec import load_sweep, yaml_scalar  # noqa: E402

# --- the sweep file ------------------------------------------------------------------------

def _error(tmp_path, **keys) -> str:
    with pytest.raises(ConfigError) as e:
        load_sweep(write_sweep(tmp_path, **keys))
    return str(e.value)


@pytest.mark.parametrize("keys, expected", [
    ({"trails": 5}, "unknown key 'trails' (did you mean 'trials'?)"),
    ({"space": {"optimizer.lrr": {"low": 0.1, "high": 1.0}}},
     "space optimizer.lrr: "),
    ({"space": {"optimizer.lr": {"low": -1.0, "high": 1.0}}}, "optimizer.lr must be > 0, got -1"),
    ({"space": {"model.layers.0.units": {"choices": [4, -2]}}}, "space model.layers.0.units: "),
    ({"space": {"optimizer.lr": {"low": 0.5, "high": 0.1}}}, "low (0.5) must be below high (0.1)"),
    ({"space": {"optimizer.lr": {"low": 0.0, "high": 0.1, "log": True}}}, "a log range needs low > 0"),
    ({"space": {"optimizer.lr": {"low": 0.1, "hi": 0.2}}}, "unknown key 'hi' (did you mean 'high'?)"),
    ({"space": {"model.layers": {"choices": [[1, 2]]}}}, "each choice must be a number, a string"),
    ({"pruner": {"name": "hyperband", "warmup_epochs": 5}},
     "unknown option 'pruner.warmup_epochs' for the hyperband pruner (its options: min_epochs, reduction_factor) "
     "(it is an option of median)"),
    ({"pruner": {"name": "medain"}}, "pruner.name must be one of median, hyperband, none; got 'medain' "
                                    "(did you mean 'median'?)"),
    ({"sampler": {"name": "grid"}}, "the grid sampler needs a step or choices for space optimizer.lr"),
    ({"objective": {"metric": "test_acc"}}, "would choose the parameters on the test split"),
    ({"space": {"loss.label_smoothing": {"low": 0.0, "high": 0.3}}},
     "objective.metric val_loss cannot compare trials that search loss.label_smoothing: it changes the loss itself "
     "(a smoothed loss cannot go as low as a plain one); use val_acc"),
    ({"objective": {"metric": "val_los"}}, "(did you mean 'val_loss'?)"),
    ({"objective": {"metric": "val_acc", "direction": "up"}}, "objective.direction must be minimize or maximize"),
    ({"trials": 0}, "trials must be an integer >= 1, got 0"),
    ({"stale_after": 0}, "stale_after must be a number of seconds between 1 and 86400"),
    ({"base": "moons.yaml"}, "give the config trials start from as base: FILE or config: {...} (one of them)"),
])
def test_sweep_file_mistakes_are_one_line_errors_naming_the_key(tmp_path, keys, expected):
    message = _error(tmp_path, **keys)
    assert expected in message and "\n" not in message
    assert message.startswith(str(tmp_path))


def test_unknown_space_key_is_named_with_the_config_key_it_resembles(tmp_path):
    message = _error(tmp_path, space={"optimizer.lrr": {"low": 0.1, "high": 1.0}})
    assert "unknown key 'optimizer.lrr' (did you mean 'optimizer.lr'?)" in message


def test_objective_needs_what_the_base_config_reports(tmp_path):
    no_val = {**MOONS, "data": {**MOONS["data"], "val_fraction": 0.0}}
    assert "needs a validation split" in _error(tmp_path, config=no_val)
    regression = {"data": {"name": "sine"}, "loss": "mse"}
    assert "is measured for classification" in _error(tmp_path, config=regression,
                                                        objective={"metric": "val_acc"})


def test_the_base_config_file_is_read_relative_to_the_sweep_file(tmp_path):
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "moons.yaml").write_text(yaml.safe_dump(MOONS))
    sweep = load_sweep(_with_base(tmp_path))
    cfg = sweep.trial_config({"optimizer.lr": 0.01, "model.layers.0.units": 4}, "moons-0")
    assert cfg.optimizer.lr == 0.01 and cfg.model.layers[0]["units"] == 4 and cfg.data.n_samples == 200


def _with_base(tmp_path):
    path = write_sweep(tmp_path)
    doc = yaml.safe_load(path.read_text())
    del doc["config"]
    doc["base"] = "configs/moons.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.mark.parametrize("value", [1e-05, 0.1, 3, True, None, "relu", 2.5e20])
def test_a_trial_value_reads_back_as_itself(value):
    assert yaml.safe_load(yaml_scalar(value)) == value or (isinstance(value, float) and
                                                           float(yaml.safe_load(yaml_scalar(value))) == value)


def test_grid_budget_defaults_to_the_grid(tmp_path):
    sweep = load_sweep(write_sweep(tmp_path, sampler={"name": "grid"}, trials=None,
                                   space={"optimizer.lr": {"low": 0.1, "high": 0.3, "step": 0.1},
                                          "model.layers.0.units": {"choices": [4, 8]}}))
    assert sweep.trials == 6


# --- one worker, in process ----------------------------------------------------------------

@pytest.fixture(scope="module")
def finished_sweep(tmp_path_factory):
    """A finished 6-trial sweep on moons, run from its folder into folder/out: (folder/out, output
    of run). Shared by the tests that only read it (and write beside it)."""
    folder = tmp_path_factory.mktemp("sweep")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        path = write_sweep(folder)
        result = invoke_cli(sweep_cli, "run", str(path), "--out", "out")
    assert result.exit_code == 0, result.output
    return folder / "out", result.output


@pytest.fixture
def moons_sweep(finished_sweep, tmp_path, monkeypatch):
    """A copy of the finished sweep in tmp_path/out, with its sweep file, for a test that changes
    it; tmp_path is the current folder."""
    folder, output = finished_sweep
    shutil.copytree(folder, tmp_path / "out")
    shutil.copy(folder.parent / "moons.yaml", tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path / "out", output


def test_a_sweep_runs_its_budget_as_ordinary_run_folders(finished_sweep):
    folder, output = finished_sweep
    assert "6 of 6 trials finished" in output
    study = study_of(folder, name="moons")
    assert sorted(t.number for t in study.trials) == list(range(6))
    assert all(t.state.name in ("COMPLETE", "PRUNED") for t in study.trials)
    for t in study.trials:
        run = folder / "trials" / str(t.number)
        assert {"config.yaml", "metrics.csv", "summary.json", "model.npz"} <= {p.name for p in run.iterdir()}
        summary = json.loads((run / "summary.json").read_text())
        assert summary["status"] == ("pruned" if t.state.name == "PRUNED" else "completed")
        assert t.user_attrs["run_dir"] == str(run.resolve()) and t.user_attrs["host"]
        assert summary["epochs_run"] == t.user_attrs["epochs"] == len(t.intermediate_values)
        history = [float(r.split(",")[4]) for r in (run / "metrics.csv").read_text().splitlines()[1:]]
        # val_loss of every epoch (metrics.csv keeps 6 significant digits)
        assert [t.intermediate_values[e] for e in sorted(t.intermediate_values)] == pytest.approx(history, rel=1e-5)
        if t.state.name == "COMPLETE":
            assert t.value == summary["final"]["val_loss"]
    for figure in ("history.png", "params.png", "importance.png", "curves.png"):
        assert (folder / figure).stat().st_size > 1000


def test_status_lists_every_trial_best_first_and_as_csv(finished_sweep):
    folder, _ = finished_sweep
    table = invoke_cli(sweep_cli, "status", str(folder)).output.splitlines()
    assert table[0].startswith("study moons: 6 trials of a budget of 6 (")
    assert table[1].split() == ["number", "state", "optimizer.lr", "model.layers.0.units", "val_loss", "epochs",
                                "seconds", "host", "run_dir", "note"]
    rows = list(csv.DictReader(io.StringIO(invoke_cli(sweep_cli, "status", str(folder), "--csv").output)))
    assert len(rows) == 6 and {r["state"] for r in rows} <= {"complete", "pruned"}
    complete = [float(r["val_loss"]) for r in rows if r["state"] == "complete"]
    assert complete == sorted(complete) and rows[0]["state"] == "complete"
    assert table[2].split()[0] == rows[0]["number"]
    for r in rows:
        assert os.path.isdir(r["run_dir"]) and int(r["epochs"]) >= 1 and float(r["seconds"]) > 0


def test_best_writes_a_config_that_reproduces_the_trial_bit_for_bit(finished_sweep, tmp_path):
    folder, _ = finished_sweep
    result = invoke_cli(sweep_cli, "best", str(folder))
    assert result.exit_code == 0 and "train it with: mlp-train --config" in result.output
    best = study_of(folder, name="moons").best_trial
    again = invoke_cli(train_cli, "--config", str(folder / "best.yaml"), "--out", str(tmp_path / "again"), "-q")
    assert again.exit_code == 0, again.output
    summary = json.loads((tmp_path / "again" / "summary.json").read_text())
    assert summary["final"]["val_loss"] == best.value  # bit for bit
    with np.load(tmp_path / "again" / "model.npz") as a, np.load(folder / "trials" / str(best.number) / "model.npz") as b:
        assert all(np.array_equal(a[k], b[k]) for k in a.files if k != "__spec__")


def test_trials_of_the_sweep_work_with_the_other_commands(finished_sweep):
    from mlp_manual.cli.evaluate import main as eval_cli

    folder, _ = finished_sweep
    run = folder / "trials" / "0"
    result = invoke_cli(eval_cli, "--model", str(run / "model.npz"), "--split", "val")
    assert result.exit_code == 0 and "accuracy" in result.output, result.output


def test_running_again_when_the_budget_is_used_runs_nothing_and_a_larger_budget_continues(moons_sweep):
    folder, _ = moons_sweep
    path = folder.parent / "moons.yaml"
    again = invoke_cli(sweep_cli, "run", str(path), "--out", str(folder))
    assert again.exit_code == 0 and "trial " not in again.output.replace("best: trial", "")
    more = invoke_cli(sweep_cli, "run", str(path), "--out", str(folder), "--trials", "8")
    assert more.exit_code == 0 and "8 of 8 trials finished" in more.output
    assert sorted(t.number for t in study_of(folder, name="moons").trials) == list(range(8))


def test_joining_a_study_with_another_space_is_refused(finished_sweep):
    folder, _ = finished_sweep
    (folder.parent / "other").mkdir()
    other = write_sweep(folder.parent / "other", space={"optimizer.momentum": {"low": 0.0, "high": 0.9}})
    result = invoke_cli(sweep_cli, "run", str(other), "--out", str(folder))
    assert result.exit_code == 1
    assert "was made with space ['optimizer.lr', 'model.layers.0.units']" in result.output


def test_a_pruned_trial_says_why_and_resumes_to_its_end(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # the grid's order with seed 5 is 0.5, 0.4, 0.3, then 1e-4, which barely moves: the median
    # pruner stops it after its warm-up
    path = write_sweep(tmp_path, trials=None, sampler={"name": "grid", "seed": 5},
                       pruner={"name": "median", "warmup_epochs": 2, "startup_trials": 3},
                       space={"optimizer.lr": {"choices": [0.5, 0.4, 0.3, 0.0001]}})
    result = invoke_cli(sweep_cli, "run", str(path), "--out", "out")
    assert result.exit_code == 0, result.output
    trials = study_of(tmp_path / "out", name="moons").trials
    assert [t.params["optimizer.lr"] for t in trials] == [0.5, 0.4, 0.3, 0.0001]  # each point of the grid once
    pruned = [t for t in trials if t.state.name == "PRUNED"]
    assert [t.params["optimizer.lr"] for t in pruned] == [0.0001], result.output
    run = tmp_path / "out" / "trials" / str(pruned[0].number)
    summary = json.loads((run / "summary.json").read_text())
    assert summary["status"] == "pruned" and summary["epochs_run"] < 30
    assert summary["stop_reason"].startswith(f"pruned by the median pruner at epoch {summary['epochs_run']}: val_loss")
    resumed = invoke_cli(train_cli, "--resume", str(run), "-q")
    assert resumed.exit_code == 0, resumed.output
    assert json.loads((run / "summary.json").read_text())["epochs_run"] == 30


def test_a_diverged_trial_fails_with_its_reason_and_the_sweep_goes_on(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write_sweep(tmp_path, trials=3, sampler={"name": "grid"}, pruner="none",
                       space={"optimizer.lr": {"choices": [0.1, 1.0e+6, 0.05]}})
    result = invoke_cli(sweep_cli, "run", str(path), "--out", "out")
    assert result.exit_code == 0, result.output
    study = study_of(tmp_path / "out", name="moons")
    states = {t.params["optimizer.lr"]: t.state.name for t in study.trials}
    assert states == {0.1: "COMPLETE", 1.0e+6: "FAIL", 0.05: "COMPLETE"}
    failed = next(t for t in study.trials if t.state.name == "FAIL")
    assert failed.user_attrs["reason"].startswith("diverged: ")
    assert study.best_trial.params["optimizer.lr"] != 1.0e+6
    assert "3 of 3 trials finished (2 complete, 1 failed)" in result.output
    assert json.loads((tmp_path / "out" / "trials" / str(failed.number) / "summary.json").read_text())["status"] \
        == "diverged"


def test_without_optuna_the_command_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "optuna", None)
    result = invoke_cli(sweep_cli, "run", str(write_sweep(tmp_path)), "--out", str(tmp_path / "out"))
    assert result.exit_code == 1
    assert result.output.strip() == 'Error: mlp-sweep needs optuna; install it with: pip install "mlp-manual[sweep]"'


def test_status_of_a_folder_that_is_not_a_sweep(tmp_path):
    result = invoke_cli(sweep_cli, "status", str(tmp_path))
    assert result.exit_code == 1 and "not a sweep folder (no sweep.json" in result.output


# --- the figures, through matplotlib's objects ------------------------------------------------

@pytest.fixture
def sweep_figures(monkeypatch):
    import matplotlib.pyplot as plt

    from mlp_manual.plots import sweep as plots

    drawn = {}
    monkeypatch.setattr(plots, "save", lambda fig, path: drawn.__setitem__(path.name, fig))
    yield drawn
    for fig in drawn.values():
        plt.close(fig)


TRIALS = [
    {"number": 0, "state": "complete", "params": {"lr": 0.1, "units": 16}, "value": 0.5,
     "curve": {1: 0.9, 2: 0.7, 3: 0.5}},
    {"number": 1, "state": "pruned", "params": {"lr": 0.001, "units": 32}, "value": 0.95, "curve": {1: 1.0, 2: 0.95}},
    {"number": 2, "state": "complete", "params": {"lr": 0.05, "units": 32}, "value": 0.3,
     "curve": {1: 0.8, 2: 0.5, 3: 0.3}},
    {"number": 3, "state": "failed", "params": {"lr": 9.0, "units": 16}, "value": None, "curve": {}},
]


def test_history_shows_each_trial_and_the_best_so_far(sweep_figures, tmp_path):
    from mlp_manual.plots.sweep import plot_history

    plot_history(TRIALS, "val_loss", "minimize", tmp_path / "history.png", "t")
    ax = sweep_figures["history.png"].axes[0]
    points = {c.get_label().split(" ")[0]: c.get_offsets().tolist() for c in ax.collections}
    assert points == {"complete": [[0, 0.5], [2, 0.3]], "pruned": [[1, 0.95]]}
    best = next(line for line in ax.lines if line.get_label().startswith("best so far"))
    assert list(best.get_ydata()) == [0.5, 0.3, 0.3] and "1 failed, not shown" in ax.get_xlabel()


def test_curves_cut_pruned_trials_short_with_a_cross(sweep_figures, tmp_path):
    from mlp_manual.plots.sweep import plot_trial_curves

    plot_trial_curves(TRIALS, "val_loss", tmp_path / "curves.png", "t", best_number=2)
    ax = sweep_figures["curves.png"].axes[0]
    crosses = [line for line in ax.lines if line.get_marker() == "x"]
    assert len(crosses) == 1 and list(crosses[0].get_xdata()) == [2] and list(crosses[0].get_ydata()) == [0.95]
    assert any(line.get_label() == "best: trial 2" and list(line.get_ydata()) == [0.8, 0.5, 0.3] for line in ax.lines)


def test_params_has_a_panel_per_parameter_with_choices_in_order(sweep_figures, tmp_path):
    from mlp_manual.plots.sweep import plot_params

    plot_params(TRIALS, ["lr", "units"], "val_loss", tmp_path / "params.png", "t", {"lr"}, {"units"})
    lr, units = [ax for ax in sweep_figures["params.png"].axes if ax.get_visible()]
    assert lr.get_xscale() == "log" and lr.get_xlabel() == "lr"
    assert [t.get_text() for t in units.get_xticklabels()] == ["16", "32"]
    assert sorted(units.collections[0].get_offsets().tolist()) == [[0, 0.5], [1, 0.3]]


def test_importance_bars_are_ordered_with_their_share(sweep_figures, tmp_path):
    from mlp_manual.plots.sweep import plot_importance

    plot_importance({"lr": 0.8, "units": 0.2}, "over 2 trials", tmp_path / "importance.png", "t")
    ax = sweep_figures["importance.png"].axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["units", "lr"]
    assert [round(p.get_width(), 3) for p in ax.patches] == [0.2, 0.8]
    plot_importance({}, "importances need at least 2 complete trials; 1 so far", tmp_path / "importance.png", "t")
    assert "at least 2 complete trials" in sweep_figures["importance.png"].axes[0].texts[0].get_text()



def test_a_sweep_whose_every_trial_failed_draws_its_figures_without_a_legend_or_a_warning(sweep_figures, tmp_path):
    import warnings

    from mlp_manual.plots.sweep import plot_history, plot_params, plot_trial_curves

    failed = [t for t in TRIALS if t["state"] == "failed"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib's "No artists with labels" is a UserWarning
        plot_history(failed, "val_loss", "minimize", tmp_path / "history.png", "t")
        plot_params(failed, ["lr", "units"], "val_loss", tmp_path / "params.png", "t", {"lr"}, {"units"})
        plot_trial_curves(failed, "val_loss", tmp_path / "curves.png", "t")
    assert set(sweep_figures) == {"history.png", "params.png", "curves.png"}
    assert all(ax.get_legend() is None for fig in sweep_figures.values() for ax in fig.axes)
    plot_params(TRIALS[1:], ["lr", "units"], "val_loss", tmp_path / "params.png", "t", {"lr"}, {"units"})
    assert sweep_figures["params.png"].axes[0].get_legend() is not None

# --- many workers on the journal file, as programs ---------------------------------------------

def _finished(study) -> list:
    from mlp_manual.sweep.study import continued_numbers

    gone = continued_numbers(study.trials)
    return [t for t in study.trials if t.number not in gone]


@pytest.mark.slow  # two worker processes through a whole sweep
def test_two_workers_share_the_budget_exactly(tmp_path):
    path = write_sweep(tmp_path, trials=8)
    result = run_sweep("run", path, "--out", tmp_path / "out", "--workers", "2")
    assert result.returncode == 0, result.stderr
    study = study_of(tmp_path / "out", name="moons")
    assert sorted(t.number for t in study.trials) == list(range(8))
    assert all(t.state.name in ("COMPLETE", "PRUNED") for t in study.trials)
    assert len({t.user_attrs["pid"] for t in study.trials}) == 2  # both worked
    assert "8 of 8 trials finished" in result.stdout
    assert sorted(int(p.name) for p in (tmp_path / "out" / "trials").iterdir()) == list(range(8))


# a trial of about 4 s that writes a checkpoint every 10 epochs
SLOW = {**MOONS, "data": {**MOONS["data"], "n_samples": 2000}, "training": {"epochs": 800, "batch_size": 16,
                                                                          "checkpoint_every": 10}}


def _running(folder):
    """Whether a trial is running and has written its first checkpoint."""
    try:
        trials = study_of(folder, name="moons").trials
    except Exception:  # the study is not created yet
        return False
    return any(t.state.name == "RUNNING" and "run_dir" in t.user_attrs
               and os.path.exists(os.path.join(t.user_attrs["run_dir"], "checkpoint.npz")) for t in trials)


@pytest.mark.slow  # a kill loop
def test_a_killed_worker_trial_is_taken_over_and_resumed_from_its_checkpoint(tmp_path):
    path = write_sweep(tmp_path, trials=2, config=SLOW, stale_after=2, pruner="none")
    folder = tmp_path / "out"
    worker = subprocess.Popen(sweep_command("run", path, "--out", folder), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    wait_for(lambda: _running(folder), 120)
    os.killpg(worker.pid, signal.SIGKILL)
    worker.wait()
    trials = study_of(folder, name="moons").trials
    running = [t for t in trials if t.state.name == "RUNNING"]
    assert len(running) == 1, [(t.number, t.state.name, len(t.intermediate_values)) for t in trials]
    killed = running[0]
    time.sleep(2.5)  # its heartbeat goes stale
    result = run_sweep("run", path, "--out", folder)
    assert result.returncode == 0, result.stderr
    study = study_of(folder, name="moons")
    assert not [t for t in study.trials if t.state.name in ("RUNNING", "WAITING")]
    old = study.trials[killed.number]
    assert old.state.name == "FAIL" and "stopped (no heartbeat for" in old.user_attrs["reason"]
    new = next(t for t in study.trials if t.user_attrs.get("continues") == killed.number)
    assert new.state.name == "COMPLETE" and new.params == old.params
    assert f"continued as trial {new.number}" in old.user_attrs["reason"]
    assert len(_finished(study)) == 2 and all(t.state.name == "COMPLETE" for t in _finished(study))
    run = folder / "trials" / str(new.number)
    assert json.loads((run / "summary.json").read_text())["epochs_run"] == 800
    # resumed from its checkpoint: the same weights as an uninterrupted run of its config
    again = invoke_cli(train_cli, "--config", str(run / "config.yaml"), "--out", str(tmp_path / "again"), "-q")
    assert again.exit_code == 0
    with np.load(tmp_path / "again" / "model.npz") as a, np.load(run / "model.npz") as b:
        assert all(np.array_equal(a[k], b[k]) for k in a.files if k != "__spec__")


@pytest.mark.slow  # a kill loop
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_saves_the_trial_and_the_same_command_continues(tmp_path, signum):
    path = write_sweep(tmp_path, trials=2, config=SLOW, pruner="none")
    folder = tmp_path / "out"
    workers = subprocess.Popen(sweep_command("run", path, "--out", folder, "--workers", "2"),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(lambda: _running(folder), 120)
    workers.send_signal(signum)
    out, err = workers.communicate(timeout=120)
    assert workers.returncode == 128 + signum, err
    said = "Interrupted" if signum == signal.SIGINT else "Interrupted by SIGTERM"
    assert f"{said}: the running trials are saved in" in err and "Traceback" not in err
    study = study_of(folder, name="moons")
    assert [t.state.name for t in study.trials].count("WAITING") >= 1
    reasons = [t.user_attrs.get("reason", "") for t in study.trials if t.state.name == "FAIL"]
    assert reasons and all(r.startswith(("interrupted by SIGTERM", "interrupted by Ctrl-C")) for r in reasons)
    result = run_sweep("run", path, "--out", folder)
    assert result.returncode == 0, result.stderr
    study = study_of(folder, name="moons")
    assert len(_finished(study)) == 2 and all(t.state.name == "COMPLETE" for t in _finished(study))


def test_the_shipped_sweep_file_is_valid():
    sweep = load_sweep("configs/sweeps/spirals_lr.yaml")
    assert sweep.name == "spirals-lr" and [p.key for p in sweep.space] == ["optimizer.lr", "model.layers.0.units"]


def test_a_failing_machine_ends_the_sweep_in_one_line_and_the_trial_continues(tmp_path, monkeypatch):
    from mlp_manual.errors import MachineError
    from mlp_manual.sweep import worker

    monkeypatch.chdir(tmp_path)
    path = write_sweep(tmp_path, trials=2, pruner="none")

    def full_disk(*args, **kwargs):
        raise MachineError("cannot write out/trials/0/checkpoint.npz (No space left on device): free some space "
                           "on its disk")
    monkeypatch.setattr(worker, "train_run", full_disk)
    result = invoke_cli(sweep_cli, "run", str(path), "--out", "out")
    assert result.exit_code == 4
    assert result.output.strip().splitlines()[-1] == (
        "Error: cannot write out/trials/0/checkpoint.npz (No space left on device): free some space on its disk; "
        "the trial is saved: run the same command again once this is fixed")
    study = study_of(tmp_path / "out", name="moons")
    assert [t.state.name for t in study.trials] == ["FAIL", "WAITING"]
    assert study.trials[0].user_attrs["reason"].startswith("the machine failed: cannot write")
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    again = invoke_cli(sweep_cli, "run", str(path), "--out", "out")
    assert again.exit_code == 0 and "2 of 2 trials finished (2 complete)" in again.output, again.output


def test_an_output_folder_that_cannot_be_made_is_one_line(tmp_path):
    (tmp_path / "file").write_text("")
    result = invoke_cli(sweep_cli, "run", str(write_sweep(tmp_path)), "--out", str(tmp_path / "file" / "out"))
    assert result.exit_code == 4 and result.output.startswith("Error: cannot create the folder")
    assert len(result.output.strip().splitlines()) == 1


# --- a damaged journal file -----------------------------------------------------------------

def _records(journal) -> list:
    return [json.loads(line) for line in journal.read_bytes().splitlines()]


@pytest.mark.slow  # a sweep run twice around a damaged journal
def test_a_journal_cut_short_is_set_aside_and_the_sweep_goes_on(tmp_path):
    path, folder = write_sweep(tmp_path, trials=3), tmp_path / "out"
    assert run_sweep("run", path, "--out", folder).returncode == 0
    journal = folder / "journal.log"
    whole = journal.read_bytes()
    assert _records(journal)[-1]["op_code"] == 6  # the last trial's end: cut short, it is lost from the study
    journal.write_bytes(whole[:-40])
    status = run_sweep("status", folder)
    assert status.returncode == 0 and " running " in status.stdout  # a reader leaves the partial line alone
    assert journal.read_bytes() == whole[:-40]
    again = run_sweep("run", path, "--out", folder)
    assert again.returncode == 0, again.stderr
    notes = [line for line in again.stderr.splitlines() if line.startswith("note: ")]
    kept = list(folder.glob("journal.log.damaged-*"))
    assert len(kept) == 1 and kept[0].read_bytes() == whole[:-40]
    assert notes == [f"note: {journal} ended in a record cut short (a crash or a full disk while it was written): a "
                     f"copy is kept in {kept[0]}, the record is set aside and the sweep goes on"]
    assert journal.read_bytes().endswith(b"\n") and len(_records(journal)) > whole.count(b"\n")
    study = study_of(folder, name="moons")
    # the trial whose end was cut off finished on disk, and its process has ended: at once, a
    # continuation records it from its run folder
    assert "3 of 3 trials finished" in again.stdout and "waiting for" not in again.stderr
    assert not [t for t in study.trials if t.state.name in ("RUNNING", "WAITING")]
    last = study.trials[2]
    assert last.state.name == "FAIL" and "stopped (its process" in last.user_attrs["reason"]
    continued = next(t for t in study.trials if t.user_attrs.get("continues") == 2)
    run = folder / "trials" / str(continued.number)
    summary = json.loads((run / "summary.json").read_text())
    assert continued.state.name in ("COMPLETE", "PRUNED") and summary["epochs_run"] == len(continued.intermediate_values)
    if continued.state.name == "COMPLETE":
        assert continued.value == summary["final"]["val_loss"]


@pytest.mark.parametrize("damage, why", [
    (lambda whole: whole + b'{"op_code":99,"worker_id":"w"}\n', "a record of unknown kind (op_code 99)"),
    (lambda whole: whole + b"\x93\x00\xffgarbage", "bytes that are not a record at its end"),
    (lambda whole: whole[:100] + b"\x00\x17junk" + whole[106:], "not a JSON record"),
    (lambda whole: whole + b'{"op_code":8,"worker_id":"w","trial_id":0}\n', "a record without a valid user_attr"),
])
def test_a_damaged_journal_is_one_line_naming_the_byte(moons_sweep, damage, why):
    folder, _ = moons_sweep
    journal = folder / "journal.log"
    whole = journal.read_bytes()
    damaged = damage(whole)
    journal.write_bytes(damaged)
    offset = whole.rfind(b"\n", 0, 101) + 1 if len(damaged) == len(whole) else len(whole)
    line = damaged[:offset].count(b"\n") + 1
    expected = (f"Error: {journal}: the study's journal is damaged at byte {offset} (line {line}: {why}); keep a copy, "
                f"then cut it there to go on with the trials recorded before: truncate -s {offset} {journal}")
    for args in (["status", str(folder)], ["best", str(folder)],
                 ["run", str(folder.parent / "moons.yaml"), "--out", str(folder), "--trials", "7"]):
        result = invoke_cli(sweep_cli, *args)
        assert result.exit_code == 1 and result.output.strip() == expected, result.output
    assert journal.read_bytes() == damaged  # nothing written after the damage
    if len(damaged) > len(whole):  # cut where the message says, the study is whole again
        journal.write_bytes(damaged[:offset])
        assert invoke_cli(sweep_cli, "status", str(folder)).output.startswith("study moons: 6 trials")



def test_a_record_naming_a_file_that_is_no_journal_says_so_and_never_advises_cutting_it(tmp_path):
    """A sweep.json edited (or sent) to name another file as the study's journal: the file is
    not a journal at all, so there is no byte to cut back to, and it is left as it is."""
    other = tmp_path / "passwd"
    other.write_text("root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1::/usr/sbin:/usr/sbin/nologin\n")
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "sweep.json").write_text(json.dumps({"study": "moons", "storage": str(other)}))
    for verb in ("status", "best"):
        result = invoke_cli(sweep_cli, verb, str(tmp_path / "s"))
        assert result.exit_code == 1, result.output
        assert result.output.strip() == (f"Error: {other}: is not a study's journal (line 1: not a JSON record); a "
                                         "journal file is one Optuna record per line, as mlp-sweep run writes it")
    assert other.read_text().startswith("root:x:0:0")


def test_a_sweep_folder_whose_journal_is_gone_is_not_started_afresh_over_its_trials(moons_sweep):
    """journal.log removed, the trials' run folders still there: a new study's trials would each
    fail on a folder in the way, and use up the budget. The run stops first and says why."""
    folder, _ = moons_sweep
    (folder / "journal.log").unlink()
    before = sorted(p.name for p in (folder / "trials").iterdir())
    result = invoke_cli(sweep_cli, "run", str(folder.parent / "moons.yaml"), "--out", str(folder))
    assert result.exit_code == 1
    assert result.output.strip() == (f"Error: {folder / 'trials'} holds the run folders of trials, but the study moons "
                                     f"is not in {folder / 'journal.log'} (was it removed?): restore it, or give the "
                                     "sweep another --out")
    assert sorted(p.name for p in (folder / "trials").iterdir()) == before

def test_a_journal_write_cut_short_by_a_full_disk_leaves_no_partial_line(tmp_path, monkeypatch):
    from mlp_manual.errors import MachineError
    from mlp_manual.sweep import journal_file as journal_module
    from mlp_manual.sweep.storage import StudyStorage

    notes = []
    store = StudyStorage(None, tmp_path, note=notes.append)
    storage = store.storage
    study_id = storage.create_new_study([__import__("optuna").study.StudyDirection.MINIMIZE], "s")
    path = tmp_path / "journal.log"
    before = path.read_bytes()
    real_write = os.write

    def full_disk(fd, data):
        real_write(fd, data[: len(data) // 2])
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(journal_module.os, "write", full_disk)
    with pytest.raises(MachineError) as e:
        storage.set_study_user_attr(study_id, "key", "value")
    assert str(e.value) == f"cannot write the study's journal {path} (No space left on device): free some space on its disk"
    assert path.read_bytes() == before  # the half-written record is cut back off
    monkeypatch.undo()
    storage.set_study_user_attr(study_id, "key", "value")
    # a writer that died mid-line: the next write sets the partial line aside, then appends
    with open(path, "ab") as f:
        f.write(b'{"op_code":2,"worker_id":"gone","stu')
    storage.set_study_user_attr(study_id, "other", 1)
    assert [r.get("user_attr") for r in _records(path)][-2:] == [{"key": "value"}, {"other": 1}]
    assert len(notes) == 1 and "ended in a record cut short" in notes[0]
    assert StudyStorage(None, tmp_path).storage.get_study_user_attrs(study_id) == {"key": "value", "other": 1}


# --- the processes of a sweep: killed, frozen, interrupted --------------------------------------

def _first_line(stream, seconds: float) -> str:
    """The first line of ``stream``, or "" after ``seconds``."""
    import threading

    found = []
    reader = threading.Thread(target=lambda: found.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(seconds)
    return found[0] if found else ""


@pytest.mark.slow  # a kill loop
def test_killing_the_parent_ends_its_workers_and_the_same_command_finishes(tmp_path):
    path, folder = write_sweep(tmp_path, trials=3, config=MEDIUM, pruner="none"), tmp_path / "out"
    parent = subprocess.Popen(sweep_command("run", path, "--out", folder, "--workers", "2"), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    wait_for(lambda: len(running_trials(folder)) == 2, 120)
    workers = [t.user_attrs["pid"] for t in running_trials(folder)]
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    wait_for(lambda: all(process_gone(pid) for pid in workers), 60)  # they do not train on
    study = study_of(folder, name="moons")
    saved = [t for t in study.trials if t.state.name == "FAIL"]
    assert len(saved) == 2 and all(t.user_attrs["reason"].startswith("interrupted by SIGTERM") for t in saved)
    assert [t.state.name for t in study.trials].count("WAITING") == 2
    again = run_sweep("run", path, "--out", folder)
    assert again.returncode == 0 and "3 of 3 trials finished (3 complete)" in again.stdout, again.stderr


@pytest.mark.slow  # a kill loop
def test_the_same_command_after_a_whole_sweep_was_killed_finishes_the_budget(tmp_path):
    path, folder = write_sweep(tmp_path, trials=3, config=MEDIUM, pruner="none"), tmp_path / "out"
    sweep = subprocess.Popen(sweep_command("run", path, "--out", folder, "--workers", "2"), stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
    wait_for(lambda: len(running_trials(folder)) == 2, 120)
    os.kill(sweep.pid, signal.SIGSTOP)  # then kill -9 to each process, as a lost machine or the OOM killer does
    for t in running_trials(folder):
        os.kill(t.user_attrs["pid"], signal.SIGKILL)
    os.kill(sweep.pid, signal.SIGKILL)
    sweep.wait()
    wait_for(lambda: all(process_gone(t.user_attrs["pid"]) for t in study_of(folder, name="moons").trials), 60)
    again = run_sweep("run", path, "--out", folder)
    assert again.returncode == 0 and "3 of 3 trials finished (3 complete)" in again.stdout, again.stdout + again.stderr
    study = study_of(folder, name="moons")
    taken = [t for t in study.trials if t.state.name == "FAIL"]
    assert len(taken) == 2 and all("stopped (its process" in t.user_attrs["reason"] for t in taken)
    assert all(t.state.name == "COMPLETE" for t in _finished(study))


@pytest.mark.slow  # a kill loop
def test_the_same_command_waits_for_a_frozen_worker_saying_how_long(tmp_path):
    path, folder = write_sweep(tmp_path, trials=1, config=MEDIUM, pruner="none", stale_after=8), tmp_path / "out"
    frozen = subprocess.Popen(sweep_command("run", path, "--out", folder), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_for(lambda: running_trials(folder), 120)
        os.killpg(frozen.pid, signal.SIGSTOP)  # alive, but its heartbeat stops
        again = subprocess.Popen(sweep_command("run", path, "--out", folder), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        line = _first_line(again.stderr, 120)
        assert re.fullmatch(r"waiting for trial 0, whose worker sent no heartbeat for \d+ s: it is taken over after "
                            r"8 s without one \(stale_after\), in at most \d+ s\n", line), line
    finally:
        os.killpg(frozen.pid, signal.SIGKILL)
        frozen.wait()
    out, err = again.communicate(timeout=120)
    assert again.returncode == 0 and "1 of 1 trials finished (1 complete)" in out, err
    old = study_of(folder, name="moons").trials[0]
    assert old.state.name == "FAIL" and "its worker on" in old.user_attrs["reason"]



@pytest.mark.parametrize("delay", [0.3, 0.6, 0.9, 1.2])
def test_ctrl_c_while_the_workers_still_load_is_one_line(tmp_path, delay):
    """A Ctrl-C in the first second reaches workers that are still importing numpy: each ends
    at once, and the terminal gets the one line, not a KeyboardInterrupt traceback per worker."""
    path, folder = write_sweep(tmp_path, trials=3, config=MEDIUM, pruner="none"), tmp_path / "out"
    sweep = subprocess.Popen(sweep_command("run", path, "--out", folder, "--workers", "2"), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
    time.sleep(delay)
    os.killpg(sweep.pid, signal.SIGINT)
    out, err = sweep.communicate(timeout=120)
    assert sweep.returncode == 130, err
    assert "Traceback" not in err and len(err.splitlines()) == 1, err

def test_a_worker_starts_with_the_stop_signals_held_until_its_handlers_are_in_place():
    """A Ctrl-C passed on while Python starts a worker waits for the worker's handlers (a
    KeyboardInterrupt inside Python's start-up would be a traceback), then ends it in one line."""
    from mlp_manual.cli.workers import _start_holding_signals
    before = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    held = _start_holding_signals([sys.executable, "-c", "import signal, sys; "
                                   "sys.stderr.write(repr(sorted(signal.pthread_sigmask(signal.SIG_BLOCK, []))))"],
                                  dict(os.environ))
    assert held.communicate(timeout=60)[1].decode() == repr(sorted({signal.SIGINT, signal.SIGTERM, signal.SIGHUP}))
    assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == before  # this process's own mask is as it was
    worker = _start_holding_signals(sweep_command("--help"), dict(os.environ))
    worker.send_signal(signal.SIGINT)  # still in Python's start-up
    assert (worker.wait(timeout=60), worker.stderr.read().decode()) == (130, "Interrupted.\n")


@pytest.mark.slow  # a kill loop
def test_ctrl_c_to_a_sweep_with_workers_is_said_once_and_status_shows_the_queued_trials(tmp_path):
    path, folder = write_sweep(tmp_path, trials=3, config=MEDIUM, pruner="none"), tmp_path / "out"
    sweep = subprocess.Popen(sweep_command("run", path, "--out", folder, "--workers", "2"), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
    wait_for(lambda: len(running_trials(folder)) == 2, 120)
    os.killpg(sweep.pid, signal.SIGINT)  # what a terminal sends its foreground process group
    out, err = sweep.communicate(timeout=120)
    assert sweep.returncode == 130
    assert err == (f"Interrupted: the running trials are saved in {folder / 'trials'}; run the same command again to "
                   "continue the sweep\n")
    rows = list(csv.DictReader(io.StringIO(run_sweep("status", folder, "--csv").stdout)))
    stopped = {r["number"]: r for r in rows if r["state"] == "failed"}
    queued = [r for r in rows if r["state"] == "waiting"]
    assert len(stopped) == 2 and len(queued) == 2
    for r in queued:  # each with the parameters of the trial it continues
        number = r["note"].removeprefix("queued to continue trial ")
        assert {k: r[k] for k in ("optimizer.lr", "model.layers.0.units")} == \
            {k: stopped[number][k] for k in ("optimizer.lr", "model.layers.0.units")} and r["optimizer.lr"]
    # the interrupted trials record the seconds they ran; their continuations only their own
    assert all(float(r["seconds"]) > 0 for r in stopped.values())
    again = run_sweep("run", path, "--out", folder)
    assert again.returncode == 0 and "3 of 3 trials finished (3 complete)" in again.stdout, again.stderr


def test_a_sweep_whose_every_trial_failed_ends_with_exit_1_and_the_first_reason(tmp_path):
    path = write_sweep(tmp_path, trials=2, config={**MOONS, "data": {"name": "csv", "path": "gone.csv"}},
                       pruner="none")
    result = run_sweep("run", path, "--out", tmp_path / "out")
    assert result.returncode == 1, result.stderr
    assert "2 of 2 trials finished (2 failed)" in result.stdout
    assert result.stderr.startswith("Error: every trial failed; trial 0: ") and len(result.stderr.splitlines()) == 1

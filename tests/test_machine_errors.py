"""A failing machine (a full disk, a read-only or removed folder, ``ulimit -f``, a terminal gone,
too little memory, a broken matplotlib) ends a command in one line with exit code 4, naming the
file and what to do next; nothing written before is lost, and a resume ends with the files of an
uninterrupted run. The faults are injected at the operating-system call here; the slow battery
(test_machine_battery.py) makes them real with a small tmpfs, a read-only mount and kills."""

import errno
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from conftest import assert_same_run, invoke_cli

from mlp_manual.cli.common import MACHINE_EXIT, user_errors
from mlp_manual.cli.evaluate import main as evaluate
from mlp_manual.cli.plot import main as plot
from mlp_manual.cli.progress import StepBar
from mlp_manual.cli.train import main as train
from mlp_manual.config import load_config
from mlp_manual.config.memory import check_memory
from mlp_manual.errors import ConfigError
from mlp_manual.files import TEMPORARY, remove_temporary_files, write_text
from mlp_manual.runs.run_lock import claim_run_dir

MOONS = ["--config", "configs/moons.yaml", "--set", "training.epochs=6", "--set", "data.n_samples=200"]
FULL = "No space left on device"


def fail_writes(monkeypatch, name: str, code: int = errno.ENOSPC, times: int = 1) -> list:
    """Make the first ``times`` atomic writes of a file called ``name`` fail with ``code`` where a
    full disk would: when the written file is moved into place. Returns the list of failures."""
    real, failed = os.replace, []

    def replace(src, dst, *args, **kwargs):
        if Path(dst).name == name and len(failed) < times:
            failed.append(dst)
            raise OSError(code, os.strerror(code))
        return real(src, dst, *args, **kwargs)
    monkeypatch.setattr(os, "replace", replace)
    return failed


@pytest.fixture(scope="module")
def straight(tmp_path_factory):
    """The uninterrupted run every faulty one must end as."""
    out = tmp_path_factory.mktemp("straight") / "run"
    assert invoke_cli(train, *MOONS, "--out", str(out)).exit_code == 0
    return out


@pytest.mark.parametrize("name", ["checkpoint.npz", "model.npz", "metrics.csv", "summary.json"])
def test_a_full_disk_at_a_run_file_is_one_line_and_the_resume_ends_as_a_straight_run(tmp_path, monkeypatch,
                                                                                      straight, name):
    out = tmp_path / "run"
    failed = fail_writes(monkeypatch, name)
    result = invoke_cli(train, *MOONS, "--out", str(out))
    assert failed and result.exit_code == MACHINE_EXIT, result.output
    assert result.output.splitlines()[-1] == (f"Error: cannot write {out / name} ({FULL}): free some space on its "
                                              f"disk; then resume with: mlp-train --resume {out}")
    assert not (out / ".lock").exists() and not [p for p in out.iterdir() if TEMPORARY.fullmatch(p.name)]
    monkeypatch.undo()  # space freed
    assert invoke_cli(train, "--resume", str(out), "-q").exit_code == 0
    assert_same_run(straight, out)


def test_a_full_disk_before_the_config_is_saved_leaves_an_empty_folder_to_run_again(tmp_path, monkeypatch,
                                                                                   straight):
    out = tmp_path / "run"
    fail_writes(monkeypatch, "config.yaml")
    result = invoke_cli(train, *MOONS, "--out", str(out))
    assert result.exit_code == MACHINE_EXIT
    assert result.output.splitlines()[-1] == f"Error: cannot write {out / 'config.yaml'} ({FULL}): free some space on its disk"
    assert list(out.iterdir()) == []
    monkeypatch.undo()
    assert invoke_cli(train, *MOONS, "--out", str(out), "-q").exit_code == 0
    assert_same_run(straight, out)


def test_a_figure_that_cannot_be_written_leaves_model_metrics_and_summary_and_a_resume_draws_it(
        tmp_path, monkeypatch, straight):
    out = tmp_path / "run"
    fail_writes(monkeypatch, "loss.png")
    result = invoke_cli(train, *MOONS, "--out", str(out))
    assert result.exit_code == MACHINE_EXIT
    assert result.output.splitlines()[-2].startswith("best val_loss")  # the run's own last line comes first
    assert result.output.splitlines()[-1] == (
        f"Error: cannot write {out / 'loss.png'} ({FULL}): free some space on its disk (model.npz, metrics.csv and "
        f"summary.json are written); then resume with: mlp-train --resume {out}")
    assert {"model.npz", "metrics.csv", "summary.json", "accuracy.png", "confusion.png"} <= {p.name for p in out.iterdir()}
    assert not (out / "loss.png").exists()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "stopped_early" or summary["status"] == "completed"
    assert summary["unwritten"] == ["loss.png"]
    monkeypatch.undo()
    resumed = invoke_cli(train, "--resume", str(out))
    assert resumed.exit_code == 0 and "training is complete, writing its final files" in resumed.output
    assert (out / "loss.png").exists() and "unwritten" not in json.loads((out / "summary.json").read_text())
    assert_same_run(straight, out)
    assert invoke_cli(train, "--resume", str(out)).exit_code == 1  # now complete


def test_a_figure_matplotlib_fails_to_draw_is_named_and_the_others_are_drawn(tmp_path, monkeypatch):
    from mlp_manual.plots import curves

    def broken(*args, **kwargs):
        raise RuntimeError("no renderer")
    monkeypatch.setattr(curves, "plot_decision_boundary", broken)
    out = tmp_path / "run"
    result = invoke_cli(train, *MOONS, "--out", str(out))
    assert result.exit_code == MACHINE_EXIT
    assert result.output.splitlines()[-1] == (
        "Error: cannot draw decision_boundary.png (RuntimeError: no renderer) (model.npz, metrics.csv and "
        f"summary.json are written); then resume with: mlp-train --resume {out}")
    assert (out / "loss.png").exists() and (out / "confusion.png").exists()
    assert json.loads((out / "summary.json").read_text())["unwritten"] == ["decision_boundary.png"]


def test_a_run_folder_that_cannot_hold_a_lock_file_is_one_line(tmp_path, monkeypatch):
    real = os.open

    def read_only(path, *args, **kwargs):
        if str(path).endswith(".lock"):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS))
        return real(path, *args, **kwargs)
    monkeypatch.setattr(os, "open", read_only)
    out = tmp_path / "run"
    result = invoke_cli(train, *MOONS, "--out", str(out))
    assert result.exit_code == MACHINE_EXIT
    assert result.output.splitlines()[-1] == (f"Error: cannot create the lock file {out / '.lock'} (Read-only file "
                                              "system): the file system is mounted read-only: write somewhere else")


def test_releasing_the_lock_of_a_removed_folder_never_raises(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    with claim_run_dir(folder):
        (folder / ".lock").unlink()
        folder.rmdir()
    assert not folder.exists()


def test_resume_removes_the_temporary_files_a_killed_write_left(tmp_path, straight):
    out = tmp_path / "run"
    assert invoke_cli(train, *MOONS, "--out", str(out), "-q").exit_code == 0
    (out / "summary.json").unlink()  # as if killed before its last write
    left = [out / ".checkpoint.npz.k2j4h1.tmp.npz", out / ".model.npz.a8b7c6.tmp.npz", out / ".metrics.csv.x1.tmp.csv"]
    for p in left:
        p.write_bytes(b"half a file")
    (out / "notes.tmp").write_text("the user's")
    assert invoke_cli(train, "--resume", str(out), "-q").exit_code == 0
    assert not any(p.exists() for p in left) and (out / "notes.tmp").exists()
    assert_same_run(straight, out)


def test_remove_temporary_files_names_only_what_atomic_writes_leave(tmp_path):
    for name in (".loss.png.abc.tmp.png", ".config.yaml.q.tmp.yaml", "loss.png", ".hidden", "a.tmp.png"):
        (tmp_path / name).write_text("x")
    assert sorted(p.name for p in remove_temporary_files(tmp_path)) == [".config.yaml.q.tmp.yaml", ".loss.png.abc.tmp.png"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".hidden", "a.tmp.png", "loss.png"]
    assert remove_temporary_files(tmp_path / "gone") == []


def test_an_atomic_write_into_a_removed_folder_says_so(tmp_path):
    from mlp_manual.errors import MachineError

    with pytest.raises(MachineError, match=r"^cannot write .*/gone/a.txt \(No such file or directory\): its folder "
                                           r"was removed or renamed while the command ran$"):
        write_text(tmp_path / "gone" / "a.txt", "x")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
def test_standard_output_on_a_full_disk_is_dropped_and_the_run_writes_every_file(tmp_path, straight):
    out = tmp_path / "run"
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "mlp_manual.cli.train", *MOONS, "--out", str(out)],
                              stdout=full, stderr=subprocess.PIPE, text=True)
    assert proc.returncode == 0 and proc.stderr == ""
    assert_same_run(straight, out)


def test_the_progress_bar_on_a_terminal_that_has_gone_turns_itself_off():
    class Gone:
        def isatty(self):
            return True

        def write(self, text):
            raise OSError(errno.EIO, os.strerror(errno.EIO))

        def flush(self):
            pass
    clock = iter([0.0, 5.0, 10.0, 15.0])
    bar = StepBar(Gone(), clock=lambda: next(clock))
    bar(1, 1, 100, 0.5)
    bar(1, 50, 100, 0.5)  # would draw: the write fails
    assert not bar.enabled and bar.drawn == ""
    bar(1, 60, 100, 0.5)
    bar.clear()


def test_a_file_size_limit_is_one_line_and_the_run_resumes(tmp_path, straight):
    out = tmp_path / "run"

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (16_000, 16_000))
    proc = subprocess.run([sys.executable, "-m", "mlp_manual.cli.train", *MOONS, "--out", str(out), "-q"],
                          capture_output=True, text=True, preexec_fn=limit)
    assert proc.returncode == MACHINE_EXIT, proc.stderr
    assert proc.stderr.splitlines() == [f"Error: cannot write {out / 'checkpoint.npz'} (File too large): raise the "
                                        f"file-size limit (ulimit -f); then resume with: mlp-train --resume {out}"]
    assert invoke_cli(train, "--resume", str(out), "-q").exit_code == 0
    assert_same_run(straight, out)


def test_a_broken_matplotlib_fails_before_training(tmp_path):
    fake = tmp_path / "site" / "matplotlib"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('libpng16.so.16: cannot open shared object file')\n")
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "mlp_manual.cli.train", *MOONS, "--out", str(out)],
                          capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": f"{fake.parent}{os.pathsep}{os.getcwd()}"})
    assert proc.returncode == MACHINE_EXIT, proc.stderr
    assert proc.stderr.splitlines() == [
        "Error: cannot draw the run's plots: matplotlib does not load (ImportError: libpng16.so.16: cannot open "
        "shared object file); reinstall it (pip install --force-reinstall matplotlib); then resume with: "
        f"mlp-train --resume {out}"]
    assert "epoch" not in proc.stdout and not (out / "checkpoint.npz").exists()


def test_running_out_of_memory_while_loading_names_the_dataset(tmp_path, monkeypatch):
    from mlp_manual.datasets import load

    def exhausted(*args):
        raise MemoryError
    exhausted.options = load.LOADERS["moons"].options  # the options the config sets are moons'
    monkeypatch.setitem(load.LOADERS, "moons", exhausted)
    result = invoke_cli(train, *MOONS, "--out", str(tmp_path / "run"))
    assert result.exit_code == MACHINE_EXIT
    assert result.output.splitlines()[-1] == ("Error: out of memory loading moons: close other programs, raise the "
                                              "memory limit (ulimit -v), or use less data or a smaller model")


def test_the_memory_check_counts_the_loaded_data_and_the_evaluation_of_a_split():
    cfg = load_config("configs/moons.yaml")
    check_memory(cfg, None, 2, 2, 100, loaded=(10_000, 100))
    with pytest.raises(ConfigError, match=r"^data.name moons needs about 1 EB for its loaded rows, more than"):
        check_memory(cfg, None, 2, 2, 100, loaded=(10**18, 100))
    with pytest.raises(ConfigError, match=r"^data.name moons needs about 32 PB for evaluating its largest split"):
        check_memory(cfg, None, 2, 10**6, 100, loaded=(10_000, 10**9))


def test_mlp_eval_and_mlp_plot_check_the_run_folder_is_writable_before_any_work(tmp_path, monkeypatch, straight):
    real = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: real(path, mode) and not (
        mode == os.W_OK and Path(path) == straight))  # as a read-only mount would answer
    result = invoke_cli(evaluate, "--model", str(straight / "model.npz"))
    assert result.exit_code == MACHINE_EXIT
    assert result.output == (f"Error: cannot write in {straight} (a read-only folder or file system): name another "
                             "place with --out DIR\n")
    result = invoke_cli(plot, str(straight))
    assert result.exit_code == MACHINE_EXIT
    assert result.output == (f"Error: cannot write in {straight} (a read-only folder or file system): name another "
                             "place with -o FILE.png\n")


def test_mlp_data_fetch_into_a_read_only_place_is_one_line(tmp_path, monkeypatch):
    from mlp_manual.cli.data import main as data

    def read_only(self, *args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))
    monkeypatch.setattr(Path, "mkdir", read_only)
    result = invoke_cli(data, "fetch", "mnist", "--data-dir", str(tmp_path / "d"))
    assert result.exit_code == MACHINE_EXIT
    assert result.output.splitlines()[-1] == (f"Error: cannot create the data folder {tmp_path / 'd' / 'mnist'} "
                                              "(Read-only file system): the file system is mounted read-only: "
                                              "write somewhere else")


def test_any_file_error_the_library_did_not_name_is_still_one_line():
    @click.command()
    @user_errors
    def command():
        raise OSError(errno.EIO, os.strerror(errno.EIO), "/data/x.bin")
    result = CliRunner().invoke(command, [])
    assert result.exit_code == MACHINE_EXIT and result.output == "Error: Input/output error (/data/x.bin)\n"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
def test_predictions_to_a_full_standard_output_are_one_line_and_exit_4(tmp_path, straight):
    rows = tmp_path / "rows.csv"
    rows.write_text("x0,x1\n" + "".join(f"{i / 10},{-i / 10}\n" for i in range(50)))
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "mlp_manual.cli.predict", "--model", str(straight / "model.npz"),
                               "--input", str(rows)], stdout=full, stderr=subprocess.PIPE, text=True)
    assert proc.returncode == MACHINE_EXIT
    assert proc.stderr == "Error: cannot write standard output (No space left on device): free some space on its disk\n"


def test_a_signal_while_a_figure_is_drawn_ends_the_run_after_it_and_is_not_a_failed_figure(sigint_raises):
    """A library that swallows the KeyboardInterrupt and then fails some other way: the signal
    waits until the figure's block ends, then ends the run; the figure is not marked unwritten."""
    import signal
    import time

    from mlp_manual.runs.finish import PlotFailures

    failures = PlotFailures()
    with pytest.raises(KeyboardInterrupt):
        with failures.attempt("grad_norms.png"):
            try:
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.05)  # where the signal's handler runs
            except KeyboardInterrupt:
                pass  # swallowed, as a library might
            raise RuntimeError("the figure failed")
    assert failures.failed == []
    with failures.attempt("loss.png"):  # a real failure is still recorded
        raise RuntimeError("no font")
    assert failures.failed == [("loss.png", "cannot draw loss.png (RuntimeError: no font)")]

"""mlp-sweep on a real PostgreSQL server that the test starts itself: several machines' worth of
workers, each with its own run folders, sharing one study."""

import csv
import io
import json
import os
import subprocess

import pytest

pytest.importorskip("optuna")
pytest.importorskip("psycopg")

from sweeps import (  # noqa: E402
    MEDIUM,
    postgres_cluster,
    postgres_server,
    run_sweep,
    running_trials,
    study_of,
    sweep_command,
    wait_for,
    write_sweep,
)


@pytest.mark.slow  # workers on a real server
def test_workers_with_separate_folders_share_one_study_on_a_fresh_database(tmp_path):
    path = write_sweep(tmp_path, trials=10)
    with postgres_server() as url:
        # three "machines" started at the same instant on a database without tables
        workers = [subprocess.Popen(sweep_command("run", path, "--storage", url, "--out", tmp_path / f"m{i}"),
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(3)]
        results = [w.communicate(timeout=600) for w in workers]
        for w, (out, err) in zip(workers, results):
            assert w.returncode == 0, err
            assert "Traceback" not in err
        study = study_of(tmp_path / "m0", storage=url, name="moons")
        assert sorted(t.number for t in study.trials) == list(range(10))  # the budget, exactly
        assert all(t.state.name in ("COMPLETE", "PRUNED") for t in study.trials)
        folders = {t.user_attrs["run_dir"] for t in study.trials}
        machines = {str((tmp_path / f"m{i}").resolve()) for i in range(3)}
        used = {f.split("/trials/")[0] for f in folders}
        assert len(folders) == 10 and used <= machines and len(used) >= 2  # more than one machine took trials
        for t in study.trials:
            assert (tmp_path / t.user_attrs["run_dir"] / "summary.json").is_file()
            assert t.user_attrs["run_dir"].endswith(f"/trials/{t.number}")
        # status from any folder, or from the URL alone; the password never lands in a file
        table = run_sweep("status", "--storage", url, "--study", "moons", "--csv")
        assert table.returncode == 0, table.stderr
        rows = list(csv.DictReader(io.StringIO(table.stdout)))
        assert len(rows) == 10 and {r["host"] for r in rows} != {""}
        best = run_sweep("best", tmp_path / "m1")
        assert best.returncode == 0, best.stderr
        assert (tmp_path / "m1" / "best.yaml").is_file()


def test_an_unreachable_database_is_one_line(tmp_path):
    path = write_sweep(tmp_path)
    result = run_sweep("run", path, "--storage", "postgresql://nobody@127.0.0.1:1/none", "--out", tmp_path / "o")
    assert result.returncode == 4, result.stderr
    assert result.stderr.startswith("Error: cannot use the study's database postgresql://nobody@127.0.0.1:1/none: ")
    assert len(result.stderr.strip().splitlines()) == 1


def test_the_password_is_not_written_to_the_sweep_folder(tmp_path):
    from mlp_manual.sweep.urls import without_password

    assert without_password("postgresql://me:secret@db:5432/s") == "postgresql://me@db:5432/s"
    assert without_password("postgresql://me@db/s") == "postgresql://me@db/s"


@pytest.mark.slow  # a sweep on a real server
def test_a_postgres_url_as_hosting_providers_write_it_is_postgresql(tmp_path):
    import json

    path = write_sweep(tmp_path, trials=2)
    with postgres_server() as url:
        alias = url.replace("postgresql://", "postgres://", 1)
        result = run_sweep("run", path, "--storage", alias, "--out", tmp_path / "o")
        assert result.returncode == 0, result.stderr
        assert f"study in {url};" in result.stdout
        assert json.loads((tmp_path / "o" / "sweep.json").read_text())["storage"] == url
        with_driver = url.replace("postgresql://", "postgres+psycopg://", 1)
        table = run_sweep("status", "--storage", with_driver, "--study", "moons", "--csv")
        assert table.returncode == 0, table.stderr
        assert len(list(csv.DictReader(io.StringIO(table.stdout)))) == 2


def _arguments_of_the_sweep(parent: int) -> list[str]:
    """The command lines (/proc/PID/cmdline, readable by every local user) of ``parent`` and of
    every process whose parent it is."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = open(f"/proc/{entry}/status").read()
            arguments = open(f"/proc/{entry}/cmdline", "rb").read().replace(b"\0", b" ").decode()
        except OSError:
            continue
        ppid = int(next(line.split()[1] for line in status.splitlines() if line.startswith("PPid:")))
        if int(entry) == parent or ppid == parent:
            found.append(arguments)
    return found


@pytest.mark.slow  # workers on a real server
def test_the_password_is_in_no_process_arguments(tmp_path):
    password = "pw-a1b2c3-secret"
    with postgres_cluster(password=password) as server:
        assert password in server.url
        path = write_sweep(tmp_path, trials=3, config=MEDIUM, pruner="none", storage=server.url)
        sweep = subprocess.Popen(sweep_command("run", path, "--out", tmp_path / "out", "--workers", "2"),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_for(lambda: len(running_trials(tmp_path / "out", server.url)) == 2, 120)
        seen = _arguments_of_the_sweep(sweep.pid)
        out, err = sweep.communicate(timeout=300)
        assert sweep.returncode == 0 and "3 of 3 trials finished (3 complete)" in out, err
        assert len(seen) == 3 and sum(" --worker " in a for a in seen) == 2, seen
        assert not [a for a in seen if password in a]
        refused = run_sweep("status", "--storage", server.url.replace(f":{password}", ""), "--study", "moons")
        assert refused.returncode == 4 and "no password supplied" in refused.stderr  # the password is needed
        assert password not in (tmp_path / "out" / "sweep.json").read_text()


@pytest.mark.slow  # a lost database, as the machine battery's failures
def test_a_database_that_goes_away_mid_sweep_is_one_line_and_the_finished_trial_is_recorded(tmp_path):
    with postgres_cluster() as server:
        path = write_sweep(tmp_path, trials=2, config=MEDIUM, pruner="none", storage=server.url)
        folder = tmp_path / "out"
        sweep = subprocess.Popen(sweep_command("run", path, "--out", folder), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        wait_for(lambda: running_trials(folder, server.url), 120)
        server.stop("fast")  # the trial trains on without its database, and ends on disk
        out, err = sweep.communicate(timeout=300)
        assert sweep.returncode == 4, err
        assert len(err.splitlines()) == 1 and err.startswith(
            f"Error: cannot use the study's database {server.url}: "), err
        assert err.endswith("; the trials' run folders are kept: run the same command again once it is back, and the "
                            "trials that finished meanwhile are recorded\n")
        summary = json.loads((folder / "trials" / "0" / "summary.json").read_text())
        assert summary["status"] == "completed"
        status = run_sweep("status", folder)
        assert status.returncode == 4 and len(status.stderr.splitlines()) == 1, status.stderr
        server.start()
        again = run_sweep("run", path, "--out", folder)
        assert again.returncode == 0 and "2 of 2 trials finished (2 complete)" in again.stdout, again.stderr
        trials = study_of(folder, server.url, "moons").trials
        assert trials[0].state.name == "FAIL" and "stopped (its process" in trials[0].user_attrs["reason"]
        recorded = next(t for t in trials if t.user_attrs.get("continues") == 0)
        assert recorded.state.name == "COMPLETE" and recorded.value == summary["final"]["val_loss"]
        assert sorted(recorded.intermediate_values) == list(range(1, 121))  # every epoch, from metrics.csv if need be
        assert json.loads((folder / "trials" / str(recorded.number) / "summary.json").read_text()) == summary


@pytest.mark.slow  # a lost database, as the machine battery's failures
def test_a_database_restarted_mid_trial_is_survived(tmp_path):
    longer = {**MEDIUM, "training": {**MEDIUM["training"], "epochs": 400}}  # ample time for the restart
    with postgres_cluster() as server:
        path = write_sweep(tmp_path, trials=2, config=longer, pruner="none", storage=server.url)
        folder = tmp_path / "out"
        sweep = subprocess.Popen(sweep_command("run", path, "--out", folder), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        wait_for(lambda: running_trials(folder, server.url), 120)
        server.stop("fast")
        server.start()
        out, err = sweep.communicate(timeout=300)
        assert sweep.returncode == 0 and "2 of 2 trials finished (2 complete)" in out, err
        trials = study_of(folder, server.url, "moons").trials
        assert [t.state.name for t in trials] == ["COMPLETE", "COMPLETE"]
        assert sorted(trials[0].intermediate_values) == list(range(1, 401))


@pytest.mark.slow  # waits out the connection timeout
def test_a_server_that_never_answers_is_given_up_on_in_one_line(tmp_path):
    """A host that takes the connection and says nothing (a network that drops packets) would
    hold libpq for the operating system's TCP timeout; the sweep gives up after its own."""
    import socket
    import threading

    from mlp_manual.sweep.storage import CONNECT_SECONDS

    server, held = socket.socket(), []
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    threading.Thread(target=lambda: [held.append(server.accept()) for _ in range(16)], daemon=True).start()
    url = f"postgresql://nobody@127.0.0.1:{server.getsockname()[1]}/none"
    try:
        result = run_sweep("status", "--storage", url, "--study", "moons", timeout=20 * CONNECT_SECONDS)
    finally:
        server.close()
    assert result.returncode == 4, result.stderr
    assert result.stderr == f"Error: cannot use the study's database {url}: connection timeout expired\n"

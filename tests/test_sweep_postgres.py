"""mlp-sweep on a real PostgreSQL server that the test starts itself: several machines' worth of
workers, each with its own run folders, sharing one study."""

import csv
import io
import subprocess

import pytest

pytest.importorskip("optuna")
pytest.importorskip("psycopg")

from sweeps import postgres_server, run_sweep, study_of, sweep_command, write_sweep  # noqa: E402


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
    from mlp_manual.sweep.storage import without_password

    assert without_password("postgresql://me:secret@db:5432/s") == "postgresql://me@db:5432/s"
    assert without_password("postgresql://me@db/s") == "postgresql://me@db/s"


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

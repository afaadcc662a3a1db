"""Helpers of the sweep tests: small sweep files, the command run as a program, and a real
PostgreSQL server started for the tests (Debian's postgresql package)."""

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml

# moons in 30 epochs of about 3 ms: a trial takes about 0.3 s with its figures
MOONS = {"data": {"name": "moons", "n_samples": 200, "noise": 0.2},
         "model": {"layers": [{"type": "linear", "units": 16}, "relu", {"type": "linear"}]},
         "optimizer": {"name": "sgd", "lr": 0.1, "momentum": 0.9},
         "training": {"epochs": 30, "batch_size": 32}}


# about 4 s of training on a loaded machine, a checkpoint every 10 of its 120 epochs
MEDIUM = {**MOONS, "data": {**MOONS["data"], "n_samples": 2000}, "training": {"epochs": 120, "batch_size": 16,
                                                                            "checkpoint_every": 10}}


def write_sweep(folder: Path, name: str = "moons", config=None, **keys) -> Path:
    """A sweep file in ``folder`` with an inline moons config; ``keys`` replace its defaults."""
    doc = {"name": name, "config": config or MOONS, "trials": 6, "sampler": {"name": "tpe", "seed": 0},
           "pruner": {"name": "median", "warmup_epochs": 3, "startup_trials": 2},
           "space": {"optimizer.lr": {"low": 0.001, "high": 0.5, "log": True},
                     "model.layers.0.units": {"choices": [4, 16, 32]}}}
    doc.update(keys)
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def sweep_command(*args) -> list[str]:
    """``mlp-sweep ARGS`` as the console script runs it (signals while it loads end it at once)."""
    return [sys.executable, "-m", "mlp_manual.cli.process", "sweep", *map(str, args)]


def run_sweep(*args, cwd=None, timeout=300, env=None) -> subprocess.CompletedProcess:
    """``mlp-sweep ARGS`` as its own process."""
    return subprocess.run(sweep_command(*args), capture_output=True, text=True, cwd=cwd, timeout=timeout,
                          env={**os.environ, **(env or {})})


def study_of(folder: Path, storage: str | None = None, name: str | None = None):
    from mlp_manual.sweep.storage import StudyStorage
    from mlp_manual.sweep.study import load_study

    return load_study(StudyStorage(storage, folder), name or folder.name)


def postgres_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    """A PostgreSQL server of the tests: ``url`` (its password in it when it has one), and
    ``stop()`` / ``start()`` to take it away and bring it back mid-test."""

    def __init__(self, bindir: Path, folder: Path, port: int, run: dict, password: str | None):
        self.bindir, self.folder, self.port, self.run = bindir, folder, port, run
        self.data = folder / "data"
        secret = f":{password}" if password else ""
        self.url = f"postgresql://sweep{secret}@127.0.0.1:{port}/postgres"

    def start(self) -> None:
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100"
        started = subprocess.run([self.bindir / "pg_ctl", "-D", self.data, "-o", options, "-l", self.folder / "log",
                                  "-w", "start"], **self.run)
        assert started.returncode == 0, started.stderr + (self.folder / "log").read_text()

    def stop(self, mode: str = "fast") -> None:
        subprocess.run([self.bindir / "pg_ctl", "-D", self.data, "-m", mode, "-w", "stop"], **self.run)


@contextlib.contextmanager
def postgres_cluster(password: str | None = None):
    """A PostgreSQL server for the test: initdb into a temporary folder, started on 127.0.0.1 on
    a free port as an unprivileged user (``nobody`` when the tests run as root), stopped at the
    end. Yields its PostgresServer (user ``sweep``, database ``postgres``; with ``password``, a
    connection over TCP must give it: scram-sha-256 in pg_hba.conf). Skips, saying why, where
    PostgreSQL is not installed."""
    bindir = postgres_bin()
    if bindir is None:
        pytest.skip("PostgreSQL is not installed (Debian's postgresql package; .ci/run installs it when run as root)")
    folder = Path(tempfile.mkdtemp(prefix="mlp-sweep-pg-"))
    as_user = {}
    if os.geteuid() == 0:
        nobody = pwd.getpwnam("nobody")
        os.chown(folder, nobody.pw_uid, nobody.pw_gid)
        as_user = {"user": nobody.pw_uid, "group": nobody.pw_gid, "extra_groups": []}
    os.chmod(folder, 0o755)
    env = {**os.environ, "LC_ALL": "C", "HOME": str(folder)}
    run = dict(capture_output=True, text=True, env=env, cwd=folder, timeout=120, **as_user)
    auth = ["-A", "trust"]
    if password:
        (folder / "pw").write_text(password + "\n")
        os.chmod(folder / "pw", 0o644)
        auth = ["--auth-local=trust", "--auth-host=scram-sha-256", f"--pwfile={folder / 'pw'}"]
    made = subprocess.run([bindir / "initdb", "-D", folder / "data", "-U", "sweep", *auth, "--no-sync", "-E", "UTF8",
                           "--no-locale"], **run)
    assert made.returncode == 0, made.stderr
    server = PostgresServer(bindir, folder, free_port(), run, password)
    server.start()
    try:
        yield server
    finally:
        server.stop("immediate")
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def postgres_server():
    """The URL of a PostgreSQL server for the test (``postgres_cluster``), without a password."""
    with postgres_cluster() as server:
        yield server.url


def running_trials(folder: Path, storage: str | None = None, name: str = "moons") -> list:
    """The running trials of the study that have written their first checkpoint ([] while the
    study is not created yet)."""
    try:
        trials = study_of(folder, storage, name).trials
    except Exception:
        return []
    return [t for t in trials if t.state.name == "RUNNING" and "run_dir" in t.user_attrs
            and os.path.exists(os.path.join(t.user_attrs["run_dir"], "checkpoint.npz"))]


def process_gone(pid: int) -> bool:
    """Whether process ``pid`` has ended (a zombie counts as ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0] == b"Z"
    except FileNotFoundError:
        return True


def wait_for(predicate, seconds: float = 60, every: float = 0.05) -> None:
    end = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < end, "timed out"
        time.sleep(every)

"""The bad-input corpus: every case in bad_inputs/cases.yaml runs through its command with
CliRunner and must end in its exact one-line message, its exit code, no traceback, and no
temporary file left behind. bad_inputs/README.md describes the format."""

import fcntl
import os
import shlex
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from mlp_manual.cli import (
    data,
    evaluate,
    explain,
    export,
    gradcheck,
    plot,
    predict,
    train,
)
from mlp_manual.datasets.load import LOADERS
from mlp_manual.layers import LAYERS
from mlp_manual.losses import LOSSES
from mlp_manual.optimizers import OPTIMIZERS
from mlp_manual.schedules import SCHEDULES

HERE = Path(__file__).parent / "bad_inputs"
CASES = yaml.safe_load((HERE / "cases.yaml").read_text(encoding="utf-8"))
COMMANDS = {"mlp-train": train.main, "mlp-gradcheck": gradcheck.main, "mlp-plot": plot.main,
            "mlp-eval": evaluate.main, "mlp-data": data.main, "mlp-explain": explain.main, "mlp-export": export.main,
            "mlp-predict": predict.main}


def make_files(folder: Path, files: dict, held: list) -> None:
    """Write a case's inputs: a string is the file's text, ``{from: NAME}`` copies bad_inputs/files/NAME,
    ``{folder: true}`` makes an empty folder, ``{locked: TEXT}`` writes TEXT and holds an exclusive
    flock on the file (its descriptor is appended to ``held``), as a live run holds its folder's .lock."""
    for name, content in (files or {}).items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            path.write_text(content, encoding="utf-8")
        elif "from" in content:
            shutil.copy(HERE / "files" / content["from"], path)
        elif "hex" in content:
            path.write_bytes(bytes.fromhex(content["hex"]))
        elif "locked" in content:
            path.write_text(content["locked"], encoding="utf-8")
            held.append(os.open(path, os.O_RDWR))
            fcntl.flock(held[-1], fcntl.LOCK_EX | fcntl.LOCK_NB)
        else:
            path.mkdir()


def test_the_corpus_is_large_and_names_are_unique():
    names = [c["name"] for c in CASES]
    assert len(names) >= 40 and len(set(names)) == len(names)
    assert {c["name"].split("/")[0] for c in CASES} >= {"config", "set", "csv", "checkpoint", "out"}


TABLES = {"<layer types>": LAYERS, "<datasets>": LOADERS, "<optimizers>": OPTIMIZERS, "<schedules>": SCHEDULES,
          "<losses>": LOSSES}


def expected_message(error: str) -> str:
    """A case's message, with ``<layer types>``, ``<datasets>``, ``<optimizers>``, ``<schedules>``
    and ``<losses>`` standing for the tables' lists, which every new thing of a kind lengthens."""
    for placeholder, table in TABLES.items():
        error = error.replace(placeholder, ", ".join(table))
    return error


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_bad_input_gives_its_message(case, tmp_path, monkeypatch):
    held = []
    make_files(tmp_path, case.get("files"), held)
    monkeypatch.chdir(tmp_path)
    command, *args = shlex.split(case["run"])
    try:
        result = CliRunner().invoke(COMMANDS[command], args)
    finally:
        for fd in held:
            os.close(fd)
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    last = result.output.strip().splitlines()[-1] if result.output.strip() else ""
    assert last == f"Error: {expected_message(case['error'])}", result.output
    assert result.exit_code == case.get("exit", 1)
    leftovers = [p.name for p in tmp_path.rglob("*") if ".tmp" in p.name]
    assert not leftovers, f"temporary files left behind: {leftovers}"

"""The docs' pages on writing your own layer (docs/learn/your-layer.md, and docs/learn/gradcheck.md
up to "A config's model") run exactly as written: its code blocks become
my_layers.py and scaled.yaml in an empty folder, and every mlp-* command it shows there runs
and prints what the README shows under it. The gradient checker's errors of a correct layer are
float64 rounding (about 1e-11), whose digits depend on the CPU's kernels: any error of 1e-8 or
less stands for any other, and so does the index where it is largest."""

import re
import shlex
import sys
from pathlib import Path

import pytest
from conftest import invoke_cli

from mlp_manual.cli import evaluate, explain, export, gradcheck, train
from mlp_manual.config import config_from_dict
from mlp_manual.errors import ConfigError
from mlp_manual.layers.registry import LAYERS, unregister

DOCS = Path(__file__).parent.parent / "docs" / "learn"
GRADCHECK = (DOCS / "gradcheck.md").read_text(encoding="utf-8")
SECTION = (DOCS / "your-layer.md").read_text(encoding="utf-8") + GRADCHECK[:GRADCHECK.index("## A config's model")]
COMMANDS = {"mlp-train": train.main, "mlp-gradcheck": gradcheck.main, "mlp-eval": evaluate.main,
            "mlp-explain": explain.main, "mlp-export": export.main}


def blocks(lang: str) -> list[str]:
    """The text of each fenced block of the section whose fence names ``lang`` ("" for none)."""
    found, inside, body = [], None, []
    for line in SECTION.splitlines(keepends=True):
        if not line.startswith("```"):
            body.append(line)
        elif inside is None:
            inside, body = line[3:].strip(), []
        else:
            if inside == lang:
                found.append("".join(body))
            inside = None
    return found


def shown_commands() -> list[tuple[list[str], list[str]]]:
    """(argv, the output lines shown under it) of each ``$ mlp-...`` line in the section."""
    shown = []
    for block in blocks(""):
        for chunk in re.split(r"^\$ ", block, flags=re.M)[1:]:
            command, *output = chunk.rstrip("\n").split("\n")
            if command.split()[0] in COMMANDS:
                shown.append((shlex.split(command), output))
    return shown


ROUNDING = re.compile(r"\b\d\.\de-(?:09|[1-9]\d)\b")  # 9.9e-09 and below, as the table writes errors


def rounding_as_any(lines: list[str]) -> list[str]:
    """The lines with every number of 1e-8 or less (rounding) replaced by the same mark, and so is
    the index where rounding is largest; runs of spaces (column widths follow the entries) as one."""
    out = []
    for line in lines:
        line = ROUNDING.sub("<rounding>", line)
        line = re.sub(r"(<rounding>\s+)\([\d, ]*\)", r"\1<where>", line)
        out.append("---" if line and set(line) == {"-"} else " ".join(line.split()))
    return out


def test_rounding_stands_for_any_rounding_but_not_for_an_error():
    shown = ["dx      (8, 5)      1.4e-11      3.3e-12  (7, 4)  PASS"]
    assert rounding_as_any(shown) == rounding_as_any(["dx  (8, 5)  2.7e-12  9.1e-09  (0, 3)  PASS"])
    assert rounding_as_any(shown) != rounding_as_any(["dx      (8, 5)      1.4e-11      3.3e-06  (7, 4)  PASS"])
    assert rounding_as_any(["max 1.0e-08"]) != rounding_as_any(["max 1.0e-09"])


@pytest.fixture
def readme_folder(tmp_path, monkeypatch):
    """An empty current folder holding the section's my_layers.py and scaled.yaml."""
    module = next(b for b in blocks("python") if b.startswith("# my_layers.py\n"))
    continued = next(b for b in blocks("python") if b.startswith("# my_layers.py, continued"))
    (tmp_path / "my_layers.py").write_text(module + "\n\n" + continued)
    (tmp_path / "scaled.yaml").write_text(next(b for b in blocks("yaml") if b.startswith("# scaled.yaml\n")))
    monkeypatch.chdir(tmp_path)
    sys.modules.pop("my_layers", None)
    yield tmp_path
    sys.modules.pop("my_layers", None)


def test_the_section_shows_training_evaluating_and_the_missing_import():
    names = [argv[0] for argv, _ in shown_commands()]
    assert names[:4] == ["mlp-gradcheck", "mlp-train", "mlp-eval", "mlp-export"] and "mlp-gradcheck" in names[4:]
    assert "--import" in shown_commands()[1][0]


def test_every_command_of_the_section_prints_what_it_shows(readme_folder):
    before = dict(LAYERS)
    for argv, output in shown_commands():
        result = invoke_cli(COMMANDS[argv[0]], *argv[1:])
        expected_exit = 1 if output and output[-1].startswith("Error: ") else 0
        assert result.exit_code == expected_exit, (argv, result.output)
        if output:
            assert rounding_as_any(result.output.splitlines()) == rounding_as_any(output), argv
    assert (readme_folder / "runs" / "scaled" / "model.npz").is_file()
    assert dict(LAYERS) == before  # --import registers the module's types for one command only


def test_the_registration_by_hand_runs_as_written(readme_folder):
    sys.path.insert(0, str(readme_folder))
    try:
        from my_layers import Scale
    finally:
        sys.path.remove(str(readme_folder))
    code = next(b for b in blocks("python") if "register(LayerType(" in b)
    exec(code, {"Scale": Scale})
    try:
        cfg = config_from_dict({"model": {"layers": [{"type": "scale", "start": 2.0}, {"type": "linear"}]}})
        assert cfg.model.layers[0] == {"type": "scale", "start": 2.0}
        with pytest.raises(ConfigError, match=r"model.layers\[0\].start must be > 0, got -1"):
            config_from_dict({"model": {"layers": [{"type": "scale", "start": -1}]}})
    finally:
        unregister("scale")

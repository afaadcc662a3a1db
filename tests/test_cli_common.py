"""What every command shares: --version, and the options that behave alike in every command."""

import importlib
import re
from pathlib import Path

import pytest
from conftest import invoke_cli

import mlp_manual

PYPROJECT = (Path(__file__).parent.parent / "pyproject.toml").read_text(encoding="utf-8")
SCRIPTS = dict(re.findall(r'^(mlp-[\w-]+) = "([\w.]+:\w+)"$', PYPROJECT.split("[project.scripts]")[1].split("\n[")[0],
                          flags=re.MULTILINE))


def command(target: str):
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def test_the_package_version_is_the_one_pyproject_declares():
    assert re.search(r'^version = "([^"]+)"$', PYPROJECT, flags=re.MULTILINE)[1] == mlp_manual.__version__


def test_every_console_script_is_found():
    assert {"mlp-train", "mlp-gradcheck", "mlp-eval", "mlp-plot", "mlp-data", "mlp-explain", "mlp-export"} <= set(SCRIPTS)


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_every_command_prints_the_package_version(script):
    result = invoke_cli(command(SCRIPTS[script]), "--version")
    assert result.exit_code == 0
    assert result.output == f"mlp-manual {mlp_manual.__version__}\n"
    assert "--version" in invoke_cli(command(SCRIPTS[script]), "--help").output


@pytest.mark.parametrize("module", ["mlp_manual.cli.gradcheck", "mlp_manual.cli.explain"])
def test_a_positional_config_works_like_the_option(module):
    main = importlib.import_module(module).main
    positional = invoke_cli(main, "configs/xor.yaml")
    assert positional.exit_code == 0
    assert positional.output == invoke_cli(main, "--config", "configs/xor.yaml").output
    twice = invoke_cli(main, "configs/xor.yaml", "--config", "configs/moons.yaml")
    assert twice.exit_code == 2 and "the config is given twice" in twice.output

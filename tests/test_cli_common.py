"""What every command shares: --version, and the options that behave alike in every command."""

import importlib
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import click
import pytest
from conftest import invoke_cli

import mlp_manual

PYPROJECT = (Path(__file__).parent.parent / "pyproject.toml").read_text(encoding="utf-8")
SCRIPTS = dict(re.findall(r'^(mlp-[\w-]+) = "([\w.]+:\w+)"$', PYPROJECT.split("[project.scripts]")[1].split("\n[")[0],
                          flags=re.MULTILINE))


def program(target: str):
    """The function a console script calls: "mlp_manual.cli.process:mlp_train"."""
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def command(target: str):
    """The click command a console script runs."""
    return importlib.import_module(program(target).module).main


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


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_every_console_script_runs_its_command_as_a_program(script):
    module, _, attr = SCRIPTS[script].partition(":")
    code = f"import sys; sys.argv = [{script!r}, '--version']; from {module} import {attr}; {attr}()"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stdout, result.stderr) == (0, f"mlp-manual {mlp_manual.__version__}\n", "")
    assert program(SCRIPTS[script]).module == "mlp_manual.cli." + script.removeprefix("mlp-").replace("eval", "evaluate")


EXIT_PROBE = textwrap.dedent("""
    import sys
    import click
    from mlp_manual.process import run_as_program

    class Cycle:  # garbage only the collector finds; it says so when collected
        def __del__(self):
            sys.stdout.write("collected\\n")

    @click.command()
    @click.argument("how")
    def command(how):
        cycle = Cycle()
        cycle.me = cycle
        click.echo("ran")

    run_as_program(command) if sys.argv[1] == "program" else command()
""")


@pytest.mark.parametrize("how, output", [("program", "ran\n"), ("plain", "ran\ncollected\n")])
def test_a_program_ends_without_the_collectors_final_pass(how, output):
    """The unreachable cycle is left to the operating system by a program; the plain control run
    shows that Python's exit would otherwise have collected it."""
    result = subprocess.run([sys.executable, "-c", EXIT_PROBE, how], capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stdout, result.stderr) == (0, output, "")


@pytest.mark.parametrize("module", ["mlp_manual.cli.gradcheck", "mlp_manual.cli.explain"])
def test_a_positional_config_works_like_the_option(module):
    main = importlib.import_module(module).main
    positional = invoke_cli(main, "configs/xor.yaml")
    assert positional.exit_code == 0
    assert positional.output == invoke_cli(main, "--config", "configs/xor.yaml").output
    twice = invoke_cli(main, "configs/xor.yaml", "--config", "configs/moons.yaml")
    assert twice.exit_code == 2 and "the config is given twice" in twice.output


def test_ctrl_c_while_a_console_script_loads_its_command_exits_130():
    """A signal while the command's modules load ends the process at once, in one line (an
    interrupted extension module would otherwise raise ImportError)."""
    probe = ("import os, signal, time, importlib\n"
             "from mlp_manual.cli.process import mlp_eval\n"
             "def slow_import(name):\n"
             "    os.kill(os.getpid(), signal.SIGINT)\n"
             "    time.sleep(5)\n"
             "    raise ImportError('initialization failed')\n"
             "importlib.import_module = slow_import\n"
             "mlp_eval()\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stderr) == (130, "Interrupted.\n")


BAD_INPUT_FILES = Path(__file__).parent / "bad_inputs" / "files"


@pytest.mark.parametrize("command, args, written", [
    ("evaluate", ["--model", "run/model.npz", "--split", "train"], "run/confusion_train.png"),
    ("predict", ["--model", "run/model.npz", "--input", "rows.csv"], None),
    ("gradcheck", ["--config", "run/config.yaml"], None),
    ("explain", ["--config", "run/config.yaml", "--graph", "graph.png"], "graph.png"),
    ("export", ["--model", "run/model.npz"], "run/model.onnx"),
])
def test_a_command_whose_reader_has_gone_finishes_its_work_and_exits_0(tmp_path, command, args, written):
    """Standard output is a pipe already closed at its other end (``| head -1`` after the first
    line): no error, no traceback, and every file still written."""
    if command == "export":
        pytest.importorskip("onnx")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "model.npz").write_bytes((BAD_INPUT_FILES / "xor-model.npz").read_bytes())
    (tmp_path / "run" / "config.yaml").write_text((BAD_INPUT_FILES / "xor.yaml").read_text())
    (tmp_path / "rows.csv").write_text("0,1\n1,1\n" * 1000)
    read, write = os.pipe()
    os.close(read)
    try:
        result = subprocess.run([sys.executable, "-m", f"mlp_manual.cli.{command}", *args], cwd=tmp_path,
                                stdout=write, stderr=subprocess.PIPE, text=True, timeout=120,
                                env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})  # this checkout's
    finally:
        os.close(write)
    assert result.returncode == 0 and "Traceback" not in result.stderr and "Error" not in result.stderr
    assert written is None or (tmp_path / written).is_file()


def test_ctrl_c_in_any_command_ends_in_one_line_and_130(monkeypatch):
    from mlp_manual.cli import evaluate

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(evaluate, "evaluate_saved_model", interrupted)
    result = invoke_cli(evaluate.main, "--model", str(BAD_INPUT_FILES / "xor-model.npz"))
    assert (result.exit_code, result.output) == (130, "Interrupted.\n")


def test_an_output_file_in_a_folder_that_cannot_be_written_is_refused_before_any_work(tmp_path, monkeypatch):
    from mlp_manual.cli.common import output_file

    monkeypatch.setattr(os, "access", lambda path, mode: False)  # as a user without write permission
    with pytest.raises(click.BadParameter, match="^folder .* is not writable$"):
        output_file(tmp_path / "graph.png", "--graph", ".png")


def test_ctrl_c_before_click_starts_its_own_handling_exits_130():
    """click's ``main`` reads the shell-completion variable before its own KeyboardInterrupt
    handling starts; a Ctrl-C there ends in one line too, not in a traceback."""
    probe = ("import os, signal, sys, time\n"
             "import click\n"
             "from mlp_manual.process import run_as_program\n"
             "def slow_completion(self, *args, **kwargs):\n"
             "    os.kill(os.getpid(), signal.SIGINT)\n"
             "    time.sleep(5)\n"
             "click.Command._main_shell_completion = slow_completion\n"
             "sys.argv = ['probe']\n"
             "run_as_program(click.Command('probe', callback=lambda: print('ran')))\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stdout, result.stderr) == (130, "", "Interrupted.\n")

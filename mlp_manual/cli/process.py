"""A command run as the main program of its process: the console scripts of pyproject.toml and
``python -m mlp_manual.cli.<command>`` both start here.

The only thing this adds to the click command is how the process ends. When Python exits it
runs its garbage collector over every object the process still holds, matplotlib's many among
them, to find reference cycles; a short run such as the XOR example spent about 0.1 s of its
0.8 s there. By then every file the command writes has been written and closed, and the
operating system takes the memory back, so the process freezes the collector (``gc.freeze``)
in an exit handler and skips that pass. What that pass would have done besides freeing memory
is run the ``__del__`` of objects caught in reference cycles; Python promises no finalizer at
exit anyway, and a layer of the user's (``--import``) should not count on one. Nothing changes
for a command called in-process, as the tests call it through click's CliRunner.

Ctrl-C while a console script is still loading its command's modules (numpy, the package)
prints ``Interrupted.`` and exits with 130, as Ctrl-C before a run starts does.
"""

import atexit
import gc
import importlib
import sys

INTERRUPTED_EXIT = 130


def interrupted() -> None:
    """End the process after Ctrl-C outside a run's training steps: one line, exit code 130."""
    try:
        sys.stderr.write("Interrupted.\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # standard error closed too: the exit code says it
        pass
    sys.exit(INTERRUPTED_EXIT)


def run_as_program(command) -> None:
    """Run the click ``command`` on ``sys.argv`` as this process's main program."""
    atexit.register(gc.freeze)
    command()


def _program(module: str):
    def program() -> None:
        try:
            command = importlib.import_module(program.module).main
        except KeyboardInterrupt:  # Ctrl-C while the command's modules load: nothing has started
            interrupted()
        run_as_program(command)
    program.module = f"{__package__}.{module}"  # whose click command ``main`` it runs
    program.__doc__ = f"The console script of {program.module}."
    return program


# the console scripts, [project.scripts] in pyproject.toml
mlp_train = _program("train")
mlp_data = _program("data")
mlp_plot = _program("plot")
mlp_eval = _program("evaluate")
mlp_gradcheck = _program("gradcheck")
mlp_export = _program("export")
mlp_explain = _program("explain")
mlp_predict = _program("predict")
mlp_sample = _program("sample")

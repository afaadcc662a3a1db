"""The console scripts, [project.scripts] in pyproject.toml: each runs its command's click
``main`` as a program (mlp_manual/process.py, where the process is set up)."""

import sys

from ..process import program

mlp_train = program(f"{__package__}.train")
mlp_data = program(f"{__package__}.data")
mlp_plot = program(f"{__package__}.plot")
mlp_eval = program(f"{__package__}.evaluate")
mlp_gradcheck = program(f"{__package__}.gradcheck")
mlp_export = program(f"{__package__}.export")
mlp_explain = program(f"{__package__}.explain")
mlp_predict = program(f"{__package__}.predict")
mlp_sample = program(f"{__package__}.sample")
mlp_sweep = program(f"{__package__}.sweep")
mlp_runs = program(f"{__package__}.runs")
mlp_exercise = program(f"{__package__}.exercise")


if __name__ == "__main__":  # python -m mlp_manual.cli.process COMMAND ARGS...: what the console script runs
    # (mlp-sweep starts its workers so: a signal while they load ends them at once, in one line)
    program(f"mlp_manual.cli.{sys.argv.pop(1)}")()

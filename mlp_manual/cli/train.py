"""mlp-train: train a model from a YAML config and write a run folder."""

import signal
import sys
from pathlib import Path

import click

from ..config import config_from_dict, load_config
from ..config.yaml_file import config_to_dict
from ..errors import ConfigError, MachineError, TrainingDiverged, TrainingInterrupted
from ..process import interrupted, interrupted_by, last_words
from ..results.compare import compact
from ..runs.folder import make_run_dir
from ..runs.run import resume_run, train_run
from ..training.diagnosis import diagnose
from ..training.experiment import prepare
from ..training.learning_check import run_evidence
from ..training.sanity import find_lr as sweep_lr
from ..training.sanity import overfit_batch as run_overfit
from .common import (
    config_argument,
    config_option,
    import_option,
    machine_failure,
    say,
    set_option,
    user_errors,
    version_option,
    warnings_on_stderr,
)
from .progress import StepBar, clear_progress

DIVERGED_EXIT = 3


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@version_option
@config_argument
@config_option("YAML config file.")
@set_option
@click.option("--out", metavar="DIR", help="Run folder (default runs/<config name>-<timestamp>).")
@click.option("--overwrite", is_flag=True, help="Allow --out to name a folder that holds an earlier run.")
@click.option("--seed", type=int, help="Random seed (same as --set seed=N).")
@click.option("--data-dir", metavar="DIR", help="Folder holding downloaded datasets (same as --set data.data_dir=DIR).")
@click.option("--diagnostics", is_flag=True, help="Record gradient flow per layer (same as --set diagnostics.enabled=true).")
@click.option("--resume", "resume_dir", metavar="RUN_DIR",
              help="Continue an interrupted run from its checkpoint (or a finished one, with --epochs).")
@click.option("--epochs", type=click.IntRange(min=1), metavar="N",
              help="Epochs in total: with --resume, extend the run to N epochs; else the same as "
                   "--set training.epochs=N.")
@click.option("--init-from", metavar="MODEL", help="Start from the weights of a trained model.npz whose layers "
                                                    "match the config's (same as --set model.init_from=MODEL).")
@click.option("--overfit-batch", type=click.IntRange(min=1), metavar="N",
              help="Only check that the model can memorise one batch of N examples.")
@click.option("--max-steps", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Step budget of --overfit-batch.")
@click.option("--find-lr", is_flag=True, help="Only sweep the learning rate and write lr_find.png.")
@click.option("--quiet", "-q", is_flag=True, help="Print only the final line (and warnings).")
@click.option("--log-every", type=click.IntRange(min=1), default=None, metavar="N",
              help="Print every N-th epoch line (the first and the last always); default: about 20 evenly "
                   "spaced lines (every line up to 39 epochs).")
@user_errors
@warnings_on_stderr
@import_option
def main(config_path, overrides, out, overwrite, seed, data_dir, diagnostics, resume_dir, epochs, init_from,
         overfit_batch, max_steps, find_lr, quiet, log_every):
    """Train the model a config describes and write a run folder with metrics, plots and the model.

    Examples:

    \b
        mlp-train configs/xor.yaml
        mlp-train --config configs/moons.yaml --set optimizer.lr=0.05 --out runs/moons-lr05
        mlp-train --config configs/spirals.yaml --diagnostics
        mlp-train --resume runs/spirals-20261121-170102
        mlp-train --resume runs/spirals-20261121-170102 --epochs 400
        mlp-train --config configs/spirals.yaml --init-from runs/spirals-20261121-170102/model.npz
        mlp-train --config configs/digits.yaml --overfit-batch 20
        mlp-train --config configs/moons.yaml --find-lr
        mlp-train scaled.yaml --import my_layers --log-every 10

    Exit codes: 0 done, 1 a mistake in the input, 2 a usage error, 3 training diverged
    (non-finite loss or gradient), 4 the machine failed (a full disk, a read-only or removed
    folder, memory; resume with --resume once fixed), 130 interrupted with Ctrl-C, 143 with SIGTERM, 129 with SIGHUP
    (resume with --resume).
    """
    if resume_dir and (config_path or overrides or seed is not None or data_dir or diagnostics or init_from):
        raise click.UsageError("--resume continues a run with its saved config; it takes no --config, --set, "
                               "--seed, --data-dir, --diagnostics or --init-from (only --epochs)")
    last = []  # the last line printed or held back, for --quiet (one line: a long run holds no more)
    bar = None if quiet else StepBar(sys.stdout)

    def echo(line):
        last[:] = [line]
        if not quiet:
            clear_progress()
            say(line)

    try:
        if resume_dir:
            resume_run(resume_dir, echo, epochs=epochs, log_every=log_every, on_step=bar)
        else:
            shortcuts = {"seed": seed, "data.data_dir": data_dir, "diagnostics.enabled": "true" if diagnostics else None,
                         "training.epochs": epochs, "model.init_from": init_from}  # each the same as --set KEY=VALUE
            cfg = _load(config_path, [*overrides, *(f"{k}={v}" for k, v in shortcuts.items() if v is not None)], quiet)
            if overfit_batch:
                if not run_overfit(prepare(cfg), overfit_batch, max_steps, echo):
                    sys.exit(1)
                return
            if find_lr:
                return run_find_lr(cfg, out, overwrite, echo)
            train_run(cfg, out, overwrite, echo, log_every=log_every, on_step=bar)
    except TrainingDiverged as e:
        _diverged(e)
    except MachineError as e:  # a full disk, the run folder made read-only or removed
        machine_failure(f"{e}{resume_hint(e.run_dir)}")
    except TrainingInterrupted as e:
        _interrupted(e)
    if quiet and last:
        say(last[0])


def _load(config_path, overrides: list[str], quiet: bool):
    """The config of ``config_path`` with ``overrides``, or without one the documented defaults,
    said first: a forgotten config would otherwise train unnoticed."""
    if config_path:
        return load_config(config_path, overrides)
    cfg = config_from_dict({"name": "defaults"}, "the defaults (no config given)", overrides)
    say(defaults_line(cfg), err=quiet)
    return cfg


def _diverged(e: TrainingDiverged) -> None:
    clear_progress()
    say(f"Error: {e}. The last finite weights are saved in {e.run_dir / 'model.npz'} and "
        f"{e.run_dir / 'summary.json'} says why it stopped. Try a lower learning rate "
        "(optimizer.lr) or gradient clipping (optimizer.clip_norm).", err=True)
    sys.exit(DIVERGED_EXIT)


def _interrupted(e: TrainingInterrupted) -> None:
    last_words()  # a signal from here on ends the process at once: the run is saved
    clear_progress()
    interrupted(e.signum, interrupted_line(e.run_dir, e.signum))


def defaults_line(cfg) -> str:
    """What trains when no config is given, and how to give one."""
    layers = compact(config_to_dict(cfg)["model"]["layers"])
    return (f"No config given: training the defaults ({cfg.data.name} data, layers {layers}, "
            f"{cfg.training.epochs} epochs of {cfg.optimizer.name} at lr {cfg.optimizer.lr:g}). To train your own, "
            "give a config: mlp-train CONFIG (e.g. mlp-train configs/xor.yaml); --set KEY=VALUE changes one default.")


def resume_hint(run_dir: Path | None) -> str:
    """``; then resume with: mlp-train --resume RUN`` when the run folder can be resumed."""
    if run_dir is not None and (run_dir / "config.yaml").is_file():
        return f"; then resume with: mlp-train --resume {run_dir}"
    return ""


def interrupted_line(run_dir: Path, signum: int = signal.SIGINT) -> str:
    """What to do after Ctrl-C (or SIGTERM, SIGHUP): resume the run from its checkpoint; start it
    again from its config when no step was saved; or, before its config was saved, from scratch."""
    how = interrupted_by(signum)
    if (run_dir / "checkpoint.npz").is_file():
        return f"{how}: {run_dir} is saved. Resume with: mlp-train --resume {run_dir}"
    if (run_dir / "config.yaml").is_file():
        return (f"{how} before the first checkpoint: nothing trained is saved in {run_dir}. Start it again "
                f"from its config with: mlp-train --resume {run_dir}")
    return f"{how} before the run started; nothing was saved in {run_dir}"


def run_find_lr(cfg, out, overwrite, echo):
    from ..plots import diagnostics as plots_diagnostics

    exp = prepare(cfg)
    fresh = diagnose(run_evidence(exp, exp.data.X_train, exp.data.y_train))  # before the sweep trains it
    with make_run_dir(out, f"{cfg.name}-lr-find", overwrite) as run_dir:
        lrs, losses, suggested = sweep_lr(exp)
        if not lrs:
            raise ConfigError("the learning-rate sweep diverged at its first step")
        plots_diagnostics.plot_lr_find(lrs, losses, suggested, run_dir / "lr_find.png", cfg.name)
    swept = f"swept the learning rate from {lrs[0]:.1e} to {lrs[-1]:.1e} over {len(lrs)} steps"
    if suggested is None:
        echo(f"{swept}: no clear descent between {lrs[0]:.1e} and {lrs[-1]:.1e} (the loss never fell by a tenth), "
             f"so no rate to suggest; plot: {run_dir / 'lr_find.png'}")
    else:
        edge = " (at the top of the sweep: the loss was still falling, a higher rate may do better)" \
            if suggested >= lrs[-3] and losses[-1] == min(losses) else ""
        echo(f"{swept}; suggested optimizer.lr {suggested:.2g}{edge}; plot: {run_dir / 'lr_find.png'}")
    if fresh.structural:
        echo(f"The fresh network: {fresh.sentence()}")


if __name__ == "__main__":
    from ..process import run_as_program

    run_as_program(main)

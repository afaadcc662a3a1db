"""mlp-train: train a model from a YAML config and write a run folder."""

import click

from ..config import load_config
from ..runs import train_run
from .common import user_errors


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--config", "config_path", required=True, metavar="PATH", help="YAML config file.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Override a config key, e.g. --set optimizer.lr=0.05 (repeatable; VALUE is YAML).")
@click.option("--out", metavar="DIR", help="Run folder (default runs/<config name>-<timestamp>).")
@click.option("--overwrite", is_flag=True, help="Allow --out to name a folder that holds an earlier run.")
@click.option("--seed", type=int, help="Random seed (same as --set seed=N).")
@click.option("--data-dir", metavar="DIR", help="Folder holding downloaded datasets (same as --set data.data_dir=DIR).")
@click.option("--quiet", "-q", is_flag=True, help="Print only the final line.")
@user_errors
def main(config_path, overrides, out, overwrite, seed, data_dir, quiet):
    """Train the model a config describes and write a run folder with metrics, plots and the model.

    \b
    Examples:
      mlp-train --config configs/xor.yaml
      mlp-train --config configs/moons.yaml --set optimizer.lr=0.05 --out runs/moons-lr05
    """
    overrides = list(overrides)
    if seed is not None:
        overrides.append(f"seed={seed}")
    if data_dir is not None:
        overrides.append(f"data.data_dir={data_dir}")
    cfg = load_config(config_path, overrides)
    lines = []

    def echo(line):
        lines.append(line)
        if not quiet:
            click.echo(line)

    train_run(cfg, out, overwrite, echo)
    if quiet:
        click.echo(lines[-1])


if __name__ == "__main__":
    main()

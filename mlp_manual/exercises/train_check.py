"""``mlp-exercise check --train``: the student's own layers (the exercises that declare the
core layer type they replace) train ``configs/moons.yaml`` through ``mlp-train``, in a child
process, and pass at TARGET test accuracy.

The config is the one the project ships (a copy of configs/moons.yaml lives beside this module,
for an installed package); its layer types are swapped for the student's (``linear`` for
``linear:Linear``, imported from DIR/linear.py with ``--import``).
"""

import json
import subprocess
import sys
import tempfile
from importlib import resources
from pathlib import Path

import yaml

from ..errors import ExerciseError
from ..files import write_text
from .catalog import EXERCISES
from .check import check
from .exercise import Exercise

TARGET = 0.95


def student_layers() -> dict[str, Exercise]:
    """The layer types of the moons config that a layer exercise replaces -> that exercise."""
    used = {_type(layer) for layer in _moons()["model"]["layers"]}
    return {ex.layer: ex for ex in EXERCISES if ex.layer in used}


def _moons() -> dict:
    return yaml.safe_load(resources.files(__package__).joinpath("moons.yaml").read_text(encoding="utf-8"))


def _type(layer) -> str:
    """A config's layer entry is its type's name, or a dict with its type."""
    return layer if isinstance(layer, str) else layer["type"]


def config_with(layers: dict[str, Exercise], folder: Path) -> dict:
    """The moons config with each layer type the student wrote replaced by theirs (from
    ``folder``), ``module:Class`` as ``--import`` names it."""
    config = _moons()
    swapped = []
    for layer in config["model"]["layers"]:
        ex = layers.get(_type(layer))
        if ex:
            mine = f"{(folder / ex.file).stem}:{ex.entry}"
            layer = mine if isinstance(layer, str) else {**layer, "type": mine}
        swapped.append(layer)
    config["model"]["layers"] = swapped
    return config


def train_with_student_layers(folder: Path, say) -> bool:
    """Check the student's layer exercises, then train the moons config with them; whether the
    test accuracy reaches TARGET. ``say`` prints a line."""
    layers = student_layers()
    missing = [ex.name for ex in layers.values() if not (folder / ex.file).is_file()]
    if missing:
        raise ExerciseError(f"check --train trains with your own layers: start {' and '.join(missing)} first "
                            f"(mlp-exercise start {missing[0]})")
    for ex in layers.values():
        report = check(ex, folder / ex.file)
        if not report.passed:
            say(str(report))
            say(f"FAIL train: {ex.name} does not pass its check yet; it would not train")
            return False
    with tempfile.TemporaryDirectory(prefix="mlp-exercise-") as tmp:
        config = Path(tmp) / "moons.yaml"
        write_text(config, yaml.safe_dump(config_with(layers, folder), sort_keys=False))
        command = [sys.executable, "-m", "mlp_manual.cli.process", "train", str(config), "--out", f"{tmp}/run", "-q"]
        for ex in layers.values():
            command += ["--import", str(folder / ex.file)]
        done = subprocess.run(command, capture_output=True, text=True)
        say((done.stdout + done.stderr).strip().replace(f"run folder: {tmp}/run", "run folder: none (a temporary one, "
                                                                                   "removed)").replace(tmp, "<tmp>"))
        if done.returncode != 0:
            say(f"FAIL train: mlp-train ended with exit code {done.returncode}")
            return False
        acc = json.loads((Path(tmp) / "run" / "summary.json").read_text(encoding="utf-8"))["test"]["acc"]
    passed = acc >= TARGET
    say(f"{'PASS' if passed else 'FAIL'} train: your {' and '.join(layers)} layers "
        f"reach {acc:.1%} test accuracy on moons (pass at {TARGET:.0%})")
    return passed

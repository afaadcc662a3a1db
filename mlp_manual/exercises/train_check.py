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

TARGET = 0.95


def student_layers(folder: Path) -> dict[str, Path]:
    """The layer types of the moons config that a layer exercise replaces -> the student's file."""
    used = {layer if isinstance(layer, str) else layer["type"] for layer in _moons()["model"]["layers"]}
    return {ex.layer: folder / ex.file for ex in EXERCISES if ex.layer in used}


def _moons() -> dict:
    return yaml.safe_load(resources.files(__package__).joinpath("moons.yaml").read_text(encoding="utf-8"))


def config_with(layers: dict[str, Path]) -> dict:
    """The moons config with each layer type the student wrote replaced by theirs."""
    config = _moons()
    swapped = []
    for layer in config["model"]["layers"]:
        kind = layer if isinstance(layer, str) else layer["type"]
        if kind in layers:
            mine = f"{layers[kind].stem}:{_entry_of(kind)}"
            layer = mine if isinstance(layer, str) else {**layer, "type": mine}
        swapped.append(layer)
    config["model"]["layers"] = swapped
    return config


def _entry_of(layer_type: str) -> str:
    return next(ex.entry for ex in EXERCISES if ex.layer == layer_type)


def train_with_student_layers(folder: Path, say) -> bool:
    """Check the student's layer exercises, then train the moons config with them; whether the
    test accuracy reaches TARGET. ``say`` prints a line."""
    layers = student_layers(folder)
    missing = [p for p in layers.values() if not p.is_file()]
    if missing:
        names = " and ".join(p.stem for p in missing)
        raise ExerciseError(f"check --train trains with your own layers: start {names} first "
                            f"(mlp-exercise start {missing[0].stem})")
    for kind, path in layers.items():
        report = check(next(ex for ex in EXERCISES if ex.layer == kind), path)
        if not report.passed:
            say(str(report))
            say(f"FAIL train: {path.stem} does not pass its check yet; it would not train")
            return False
    with tempfile.TemporaryDirectory(prefix="mlp-exercise-") as tmp:
        config = Path(tmp) / "moons.yaml"
        write_text(config, yaml.safe_dump(config_with(layers), sort_keys=False))
        command = [sys.executable, "-m", "mlp_manual.cli.process", "train", str(config), "--out", f"{tmp}/run", "-q"]
        for path in layers.values():
            command += ["--import", str(path)]
        done = subprocess.run(command, capture_output=True, text=True)
        say((done.stdout + done.stderr).strip().replace(f"run folder: {tmp}/run", "run folder: none (a temporary one, "
                                                                                   "removed)").replace(tmp, "<tmp>"))
        if done.returncode != 0:
            say(f"FAIL train: mlp-train ended with exit code {done.returncode}")
            return False
        acc = json.loads((Path(tmp) / "run" / "summary.json").read_text(encoding="utf-8"))["test"]["acc"]
    passed = acc >= TARGET
    say(f"{'PASS' if passed else 'FAIL'} train: your {' and '.join(p.stem for p in layers.values())} layers "
        f"reach {acc:.1%} test accuracy on moons (pass at {TARGET:.0%})")
    return passed

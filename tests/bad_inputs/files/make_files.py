"""Regenerate the binary inputs of the bad-input corpus: python tests/bad_inputs/files/make_files.py

Every file is small and deterministic; the cases in ../cases.yaml copy them into a fresh
folder before running a command.
"""

import json
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from mlp_manual.config import load_config  # noqa: E402
from mlp_manual.runs.run import train_run  # noqa: E402


def train(overrides: list[str], into: Path) -> Path:
    run = into / "run"
    train_run(load_config(HERE / "xor.yaml", overrides), str(run), echo=lambda line: None)
    return run


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        xor = train([], tmp / "xor")
        shutil.copy(xor / "model.npz", HERE / "xor-model.npz")
        shutil.copy(xor / "checkpoint.npz", HERE / "xor-checkpoint.npz")
        data = (xor / "checkpoint.npz").read_bytes()
        (HERE / "truncated-checkpoint.npz").write_bytes(data[:len(data) // 2])
        wide = train(["model.layers.0.units=16"], tmp / "wide")
        shutil.copy(wide / "checkpoint.npz", HERE / "wide-checkpoint.npz")
        shutil.copy(wide / "model.npz", HERE / "wide-model.npz")
    np.savez(HERE / "foreign.npz", weights=np.ones((2, 3)), bias=np.zeros(3))
    np.savez(HERE / "pickled.npz", __spec__=np.array([{"format": "mlp-manual-model/1"}], dtype=object))
    with np.load(HERE / "xor-model.npz") as f:
        arrays = {k: f[k] for k in f.files}
    arrays["layers.0.W"] = np.full_like(arrays["layers.0.W"], np.nan)
    np.savez(HERE / "nan-model.npz", **arrays)
    user_layer_model()


def user_layer_model() -> None:
    """xor-model.npz whose tanh layer is named as a layer of the user's module my_layers."""
    with np.load(HERE / "xor-model.npz") as f:
        arrays = {k: f[k] for k in f.files}
    spec = json.loads(str(arrays["__spec__"]))
    spec["layers"][1]["type"] = "my_layers:Tanh"
    arrays["__spec__"] = np.array(json.dumps(spec))
    np.savez(HERE / "user-layer-model.npz", **arrays)


if __name__ == "__main__":
    main()

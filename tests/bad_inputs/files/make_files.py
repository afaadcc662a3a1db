"""Regenerate the binary inputs of the bad-input corpus: python tests/bad_inputs/files/make_files.py

Every file is small and deterministic; the cases in ../cases.yaml copy them into a fresh
folder before running a command. The xor and wide models are written as a model saved without
a description of its data (``save_model`` without ``info``: no task, loss, preprocessing or
names), so that the corpus keeps such a file; flowers-model.npz (text labels, named columns,
standardised) and sine-model.npz (regression) are described, as a run writes them.
"""

import json
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
sys.path.insert(0, str(HERE.parents[1]))

from datafiles import flowers_csv  # noqa: E402

from mlp_manual.config import load_config  # noqa: E402
from mlp_manual.runs.run import train_run  # noqa: E402

UNDESCRIBED_KEYS = ("format", "layers", "dtype", "config_name")


def train(overrides: list[str], into: Path) -> Path:
    run = into / "run"
    train_run(load_config(HERE / "xor.yaml", overrides), str(run), echo=lambda line: None)
    return run


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        xor = train([], tmp / "xor")
        write_undescribed_model(xor / "model.npz", HERE / "xor-model.npz")
        shutil.copy(xor / "checkpoint.npz", HERE / "xor-checkpoint.npz")
        data = (xor / "checkpoint.npz").read_bytes()
        (HERE / "truncated-checkpoint.npz").write_bytes(data[:len(data) // 2])
        wide = train(["model.layers.0.units=16"], tmp / "wide")
        shutil.copy(wide / "checkpoint.npz", HERE / "wide-checkpoint.npz")
        write_undescribed_model(wide / "model.npz", HERE / "wide-model.npz")
        flowers_csv(tmp / "flowers.csv", 60, seed=0)
        flowers = train(["data.name=csv", f"data.path={tmp / 'flowers.csv'}", "data.target=species",
                         "data.preprocess=standardize", "model.layers.0.units=4", "training.epochs=5",
                         "training.batch_size=8"], tmp / "flowers")
        shutil.copy(flowers / "model.npz", HERE / "flowers-model.npz")
        sine = train(["data.name=sine", "data.n_samples=40", "loss=mse", "training.epochs=2"], tmp / "sine")
        shutil.copy(sine / "model.npz", HERE / "sine-model.npz")
    with np.load(HERE / "flowers-model.npz") as f:
        arrays = {k: f[k] for k in f.files}
    spec = json.loads(str(arrays["__spec__"]))
    damaged = {"classes": ["daisy", "iris"], "preprocess": dict(spec["preprocess"], scale=[1.0, 0.0, 1.0, 1.0])}
    for key, value in damaged.items():
        np.savez(HERE / f"bad-{key}-model.npz", **dict(arrays, __spec__=np.array(json.dumps(dict(spec, **{key: value})))))
    np.savez(HERE / "foreign.npz", weights=np.ones((2, 3)), bias=np.zeros(3))
    np.savez(HERE / "pickled.npz", __spec__=np.array([{"format": "mlp-manual-model/1"}], dtype=object))
    with np.load(HERE / "xor-model.npz") as f:
        arrays = {k: f[k] for k in f.files}
    arrays["layers.0.W"] = np.full_like(arrays["layers.0.W"], np.nan)
    np.savez(HERE / "nan-model.npz", **arrays)
    user_layer_model()
    damaged_files()


def user_layer_model() -> None:
    """xor-model.npz whose tanh layer is named as a layer of the user's module my_layers."""
    with np.load(HERE / "xor-model.npz") as f:
        arrays = {k: f[k] for k in f.files}
    spec = json.loads(str(arrays["__spec__"]))
    spec["layers"][1]["type"] = "my_layers:Tanh"
    arrays["__spec__"] = np.array(json.dumps(spec))
    np.savez(HERE / "user-layer-model.npz", **arrays)


def write_undescribed_model(source: Path, target: Path) -> None:
    """``source`` rewritten without the description of its data: only UNDESCRIBED_KEYS of its spec."""
    with np.load(source) as f:
        arrays = {k: f[k] for k in f.files}
    spec = json.loads(str(arrays["__spec__"]))
    arrays["__spec__"] = np.array(json.dumps({k: spec[k] for k in UNDESCRIBED_KEYS}))
    np.savez(target, **arrays)


def damaged_files() -> None:
    """Checkpoints and a model with one field damaged, made from xor-checkpoint.npz and xor-model.npz."""
    with np.load(HERE / "xor-checkpoint.npz") as f:
        arrays = {k: f[k] for k in f.files}
    meta = json.loads(str(arrays["__meta__"]))
    history = meta["history"]

    def save(name, changes=None, **fields):
        np.savez(HERE / name, **{**arrays, **(changes or {}), "__meta__": np.array(json.dumps({**meta, **fields}))})

    save("ragged-history-checkpoint.npz", history={**history, "train_loss": history["train_loss"][:1]})
    save("position-beyond-checkpoint.npz", {"epoch_order": np.arange(4), "optim/t": np.array(7)}, step=7,
         epoch_state={"next_batch": 5, "loss_sum": 2.5, "correct": 2, "seconds": 0.1})
    without_moment = {k: v for k, v in arrays.items() if k != "optim/v/layers.2.b"}
    np.savez(HERE / "moment-missing-checkpoint.npz", **without_moment)
    with np.load(HERE / "xor-model.npz") as f:
        model = {k: f[k] for k in f.files}
    np.savez(HERE / "void-model.npz", **{**model, "layers.0.W": np.zeros((2, 8), "V4")})


if __name__ == "__main__":
    main()

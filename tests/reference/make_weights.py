"""Write ``weights.npz``: the trained weights of every case in ``cases.py``.

Run only when a change is meant to alter training (or the cases change); the reference test
exists to show that refactors leave the trained weights what they were, to float64 rounding.
    python tests/reference/make_weights.py
"""

import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from cases import CASES  # noqa: E402

from mlp_manual import load_model  # noqa: E402
from mlp_manual.config import config_from_dict  # noqa: E402
from mlp_manual.runs.run import train_run  # noqa: E402


def trained_state(name: str, raw: dict, folder: Path) -> dict:
    cfg = config_from_dict({"name": name, **raw}, f"case {name}")
    train_run(cfg, str(folder / name), echo=lambda line: None)
    return load_model(folder / name / "model.npz").state()


if __name__ == "__main__":
    arrays = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, raw in CASES.items():
            arrays.update({f"{name}/{k}": v for k, v in trained_state(name, raw, Path(tmp)).items()})
    np.savez_compressed(Path(__file__).parent / "weights.npz", **arrays)
    print(f"wrote {len(arrays)} arrays for {len(CASES)} cases")

"""Atomic writes: a process killed at any moment leaves every earlier file whole, and files get
the permissions a plain open() would give them. Reading an .npz: every member checked in bytes
before anything is allocated."""

import csv
import io
import json
import os
import re
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from mlp_manual import files
from mlp_manual.errors import ModelFileError
from mlp_manual.predict.model_file import load_model

WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    import numpy as np
    from mlp_manual import files
    from mlp_manual.layers import Linear
    from mlp_manual.model import Model
    from mlp_manual.predict.model_file import save_model
    from mlp_manual.runs.metrics import write_metrics
    out = Path(sys.argv[1])
    model = Model([Linear(400, 1000, rng=np.random.default_rng(0))])
    history = {"epoch": list(range(1, 20001)), "lr": [0.1] * 20000, "train_loss": [0.5] * 20000}
    i = 0
    while True:
        i += 1
        save_model(model, out / "model.npz", extra={"i": i})
        write_metrics(out, history)
        files.write_text(out / "summary.json", '{"i": %d}' % i)
        print(i, flush=True)
""")


def test_kill_9_mid_write_leaves_model_metrics_and_summary_whole(tmp_path):
    rng = np.random.default_rng(0)
    for attempt in range(2):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path)], stdout=subprocess.PIPE, text=True,
                                env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
        assert proc.stdout.readline()  # one complete round of writes
        time.sleep(rng.uniform(0.0, 0.2))
        proc.kill()
        proc.wait()
        assert load_model(tmp_path / "model.npz").layers[0].params["W"].shape == (400, 1000)
        with open(tmp_path / "metrics.csv", newline="") as f:
            assert len(list(csv.reader(f))) == 20001
        assert json.loads((tmp_path / "summary.json").read_text())["i"] >= 1
    finals = {"model.npz", "metrics.csv", "summary.json"}
    assert all(p.name in finals or ".tmp" in p.name for p in tmp_path.iterdir())


def test_a_failed_write_keeps_the_old_file_and_removes_the_temporary(tmp_path):
    path = tmp_path / "summary.json"
    files.write_json(path, {"a": 1})
    with pytest.raises(ZeroDivisionError):
        with files.atomic_path(path) as tmp:
            tmp.write_text("half")
            1 / 0
    assert path.read_text() == '{\n  "a": 1\n}\n' and [p.name for p in tmp_path.iterdir()] == ["summary.json"]


def test_new_files_get_the_umask_permissions_and_replaced_files_keep_theirs(tmp_path):
    old = os.umask(0o027)
    try:
        files.write_text(tmp_path / "new.txt", "x")
    finally:
        os.umask(old)
    assert (tmp_path / "new.txt").stat().st_mode & 0o777 == 0o640
    (tmp_path / "kept.txt").write_text("x")
    os.chmod(tmp_path / "kept.txt", 0o604)
    files.write_text(tmp_path / "kept.txt", "y")
    assert (tmp_path / "kept.txt").stat().st_mode & 0o777 == 0o604


WRITES = re.compile(r"""open\([^)]*["']([wax][bt]?\+?|r[bt]?\+|r\+[bt]?)["']|(?<!files)\.write_(text|bytes)\(|np\.save|(savefig|imsave)\((?!tmp)""")


# Writes that land in a temporary path handed out by files.atomic_path.
INTO_ATOMIC_TEMPORARY = {("fetch.py", 'open(dest, "wb")')}


def test_every_file_written_by_the_package_goes_through_files_py():
    """No module but files.py opens a file for writing, or saves arrays or figures, by itself."""
    package = Path(files.__file__).parent
    offenders = [f"{path.name}: {line.strip()}" for path in package.rglob("*.py") if path.name != "files.py"
                 for line in path.read_text(encoding="utf-8").splitlines() if WRITES.search(line)
                 and not any(path.name == f and snippet in line for f, snippet in INTO_ATOMIC_TEMPORARY)]
    assert offenders == []


def npz_with_member(name: str, header: dict, body: bytes) -> bytes:
    """A stored .npz whose member ``name`` has the .npy ``header`` and then ``body``."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, header)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr(f"{name}.npy", buf.getvalue() + body)
    return out.getvalue()


@pytest.mark.parametrize("descr, shape, body, problem", [
    ("<f4", (2, 3), bytes(24), None),
    ("<f4", (2, 3), bytes(20), "damaged model file (W.npy should hold 152 bytes, holds 148)"),
    ("<f4", (1 << 62,), bytes(8), "damaged model file (W.npy should hold 18446744073709551744 bytes, holds 136)"),
    ("<U0", (1 << 60,), b"", "damaged model file (W.npy holds items of zero size (<U0))"),
    ("|V8", (2,), bytes(16), "not a model file (W.npy holds |V8 items, not numbers or text)"),
    ([("a", "<f4")], (2,), bytes(8), "not a model file (W.npy holds [('a', '<f4')] items, not numbers or text)"),
    ("<M8[s]", (2,), bytes(16), "not a model file (W.npy holds datetime64[s] items, not numbers or text)"),
    ("|O", (1,), bytes(8), "not a model file (W.npy holds Python objects, which are never loaded)"),
])
def test_npz_members_are_checked_in_bytes_before_allocation(tmp_path, descr, shape, body, problem):
    path = tmp_path / "m.npz"
    path.write_bytes(npz_with_member("W", {"descr": descr, "fortran_order": False, "shape": shape}, body))
    if problem is None:
        assert files.read_npz(path)["W"].shape == shape
        return
    with pytest.raises(ModelFileError) as e:
        files.read_npz(path)
    assert str(e.value) == f"{path}: {problem}"


def test_a_deflated_member_cannot_claim_more_than_the_archive_can_hold(tmp_path):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("W.npy", npy_of(np.zeros(4)))
    data = bytearray(out.getvalue())
    central = data.index(b"PK\x01\x02")
    data[central + 24:central + 28] = (1 << 31).to_bytes(4, "little")  # the directory's uncompressed size
    path = tmp_path / "m.npz"
    path.write_bytes(bytes(data))
    with pytest.raises(ModelFileError) as e:
        files.read_npz(path, "checkpoint")
    assert str(e.value) == (f"{path}: damaged checkpoint file (W.npy claims {1 << 31} bytes, more than the "
                            f"{len(data)}-byte file can hold)")


def npy_of(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, array)
    return buf.getvalue()

"""The damaged-file battery: well over 140 broken inputs of every kind a user can hand to
mlp-manual, each with the command that reads it.

``cases(folder)`` writes every case into its own sub-folder of ``folder`` and returns them;
``tests/test_battery.py`` runs each command as a subprocess with a time and memory limit and
checks that it ends in one ``Error:`` line naming the damaged file (or succeeds, where the
input is unusual but valid). Run as a script to write the battery into a folder for a look:

    python tests/battery/make_battery.py /tmp/battery
"""

import gzip
import io
import json
import sys
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

FILES = Path(__file__).resolve().parents[1] / "bad_inputs" / "files"
XOR_CONFIG = (FILES / "xor.yaml").read_text().replace("epochs: 2", "epochs: 4")


@dataclass
class Case:
    name: str
    folder: Path
    argv: list[str]  # the command, run inside ``folder``
    names: str | None  # the file the error line must name; None: the command must succeed


def npy_bytes(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, array, allow_pickle=True)
    return buf.getvalue()


def npy_header_only(shape, descr: str, body: bytes = b"") -> bytes:
    """A .npy member whose header announces ``shape`` of ``descr`` but holds only ``body``."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": shape})
    return buf.getvalue() + body


def zip_members(members: dict[str, bytes], deflate: bool = False, zeros: tuple[str, bytes, int] | None = None) -> bytes:
    """A zip of ``members``; ``zeros`` = (name, head, n) adds a member of ``head`` then n zero
    bytes, written chunk by chunk so that the generator never holds it."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        if zeros:
            name, head, n = zeros
            with zf.open(name, "w", force_zip64=True) as f:
                f.write(head)
                for _ in range(n >> 20):
                    f.write(bytes(1 << 20))
    return buf.getvalue()


def npz_arrays(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as f:
        return {k: f[k] for k in f.files}


def with_arrays(arrays: dict[str, np.ndarray], **changes) -> bytes:
    """An npz of ``arrays`` with members replaced (a value), removed (None) or raw (bytes)."""
    members = {}
    for k, v in {**arrays, **changes}.items():
        if v is None:
            continue
        members[f"{k}.npy"] = v if isinstance(v, bytes) else npy_bytes(np.asarray(v))
    return zip_members(members)


def damaged_bytes(data: bytes, rng: np.random.Generator, n: int):
    """Truncations and bit flips of ``data``: (label, bytes)."""
    for cut in sorted(set(int(c) for c in np.linspace(1, len(data) - 1, n))):
        yield f"truncated-{cut}", data[:cut]
    for i in range(n):
        raw = bytearray(data)
        for pos in rng.integers(0, len(raw), size=1 + i % 3):
            raw[pos] ^= 1 << int(rng.integers(8))
        yield f"bitflip-{i}", bytes(raw)


def model_damage(rng):
    model = (FILES / "xor-model.npz").read_bytes()
    arrays = npz_arrays(FILES / "xor-model.npz")
    spec = json.loads(str(arrays["__spec__"]))
    yield from damaged_bytes(model, rng, 8)
    W = "layers.0.W"
    yield "member-wrong-shape", with_arrays(arrays, **{W: np.zeros((3, 8), np.float32)})
    yield "member-int-dtype", with_arrays(arrays, **{W: np.zeros((2, 8), np.int32)})
    yield "member-void-dtype", with_arrays(arrays, **{W: np.zeros((2, 8), "V4")})
    yield "member-zero-itemsize", with_arrays(arrays, **{W: npy_header_only((2, 8), "|V0")})
    yield "member-structured", with_arrays(arrays, **{W: np.zeros((2, 8), [("a", "<f4")])})
    yield "member-pickled", with_arrays(arrays, **{W: npy_bytes(np.array([{"x": 1}], dtype=object))})
    yield "member-zero-size-text", with_arrays(arrays, **{W: npy_header_only((1 << 60,), "<U0")})
    yield "member-zero-size-bytes", with_arrays(arrays, **{W: npy_header_only((2, 8), "|S0")})
    yield "member-datetime", with_arrays(arrays, **{W: np.zeros((2, 8), "M8[s]")})
    yield "member-text", with_arrays(arrays, **{W: np.full((2, 8), "0.5")})
    yield "member-object-in-record", with_arrays(arrays, **{W: npy_bytes(np.zeros(2, [("a", "O")]))})
    yield "member-short-body", with_arrays(arrays, **{W: npy_header_only((2, 8), "<f4", bytes(60))})
    yield "member-long-body", with_arrays(arrays, **{W: npy_header_only((2, 8), "<f4", bytes(68))})
    yield "member-nan", with_arrays(arrays, **{W: np.full((2, 8), np.nan, np.float32)})
    yield "member-huge-header", with_arrays(arrays, **{W: npy_header_only((1 << 40, 8), "<f4")})
    yield "member-huge-1d", with_arrays(arrays, **{W: npy_header_only((1 << 62,), "<f8", bytes(64))})
    yield "member-missing", with_arrays(arrays, **{W: None})
    yield "member-extra", with_arrays(arrays, **{"layers.9.W": np.zeros(3, np.float32)})
    yield "member-not-npy", zip_members({**{f"{k}.npy": npy_bytes(v) for k, v in arrays.items()}, "notes.txt": b"hi"})
    yield "member-bomb", zip_members({f"{k}.npy": npy_bytes(v) for k, v in arrays.items() if k != W}, deflate=True,
                                     zeros=(f"{W}.npy", npy_header_only((1 << 26,), "<f4"), 256 << 20))
    yield "spec-not-json", with_arrays(arrays, __spec__=np.array("{layers: ["))
    yield "spec-deep-json", with_arrays(arrays, __spec__=np.array("[" * 100000 + "]" * 100000))
    yield "spec-not-text", with_arrays(arrays, __spec__=np.zeros(3))
    yield "spec-format", with_arrays(arrays, __spec__=np.array(json.dumps({**spec, "format": "other/9"})))
    for label, layer in [("unknown-type", {"type": "conv"}), ("huge-width", {**spec["layers"][0], "out_features": 1 << 40}),
                         ("bad-option", {**spec["layers"][0], "bias": "yes"}), ("not-a-dict", 7),
                         ("negative-width", {**spec["layers"][0], "in_features": -2}),
                         ("float-width", {**spec["layers"][0], "in_features": 2.5})]:
        layers = [layer] + spec["layers"][1:]
        yield f"spec-layer-{label}", with_arrays(arrays, __spec__=np.array(json.dumps({**spec, "layers": layers})))
    yield "spec-dtype", with_arrays(arrays, __spec__=np.array(json.dumps({**spec, "dtype": "complex128"})))
    yield "spec-layers-not-list", with_arrays(arrays, __spec__=np.array(json.dumps({**spec, "layers": {"a": 1}})))
    yield "a-checkpoint", (FILES / "xor-checkpoint.npz").read_bytes()
    yield "empty", b""
    yield "text", b"this is not a model\n"
    yield "gzip", gzip.compress(model)


def checkpoint_damage(rng):
    ckpt = (FILES / "xor-checkpoint.npz").read_bytes()
    arrays = npz_arrays(FILES / "xor-checkpoint.npz")
    meta = json.loads(str(arrays["__meta__"]))
    yield from damaged_bytes(ckpt, rng, 8)

    def with_meta(**changes):
        m = {**meta, **changes}
        return with_arrays(arrays, __meta__=np.array(json.dumps({k: v for k, v in m.items() if v is not DROP})))

    h = meta["history"]
    yield "history-ragged", with_meta(history={**h, "train_loss": h["train_loss"][:1]})
    yield "history-text", with_meta(history={**h, "train_loss": ["low", "high"]})
    yield "history-nested", with_meta(history={**h, "lr": [[1], [2]]})
    yield "history-too-long", with_meta(history={k: v * 4 for k, v in h.items()})
    yield "history-null", with_meta(history={**h, "train_acc": [None, None]})
    yield "history-not-dict", with_meta(history=[1, 2])
    yield "history-missing-column", with_meta(history={k: v for k, v in h.items() if k != "train_loss"})
    yield "epoch-beyond-config", with_meta(epoch=99)
    yield "epoch-negative", with_meta(epoch=-1)
    yield "epoch-text", with_meta(epoch="2")
    yield "step-huge", with_meta(step=10**30)
    yield "best-epoch-beyond", with_meta(best={**meta["best"], "epoch": 50})
    yield "best-metrics-text", with_meta(best={"epoch": 1, "metrics": "good"})
    yield "best-value-text", with_meta(best_value="low")
    yield "bad-epochs-negative", with_meta(bad_epochs=-3)
    yield "stopped-early-text", with_meta(stopped_early="no")
    yield "rng-damaged", with_meta(rng={"shuffle": {"bit_generator": "PCG64", "state": {"state": -1}}})
    yield "rng-unknown-generator", with_meta(rng={"shuffle": {"bit_generator": "Nope", "state": {}}})
    yield "rng-missing", with_meta(rng={})
    pos = {"next_batch": 99, "loss_sum": 0.5, "correct": 1, "seconds": 0.1}
    yield "position-beyond-epoch", with_arrays(arrays, epoch_order=np.arange(4),
                                               __meta__=np.array(json.dumps({**meta, "epoch": 1, "epoch_state": pos})))
    yield "position-without-order", with_meta(epoch=1, epoch_state={**pos, "next_batch": 0})
    yield "position-order-duplicates", with_arrays(arrays, epoch_order=np.zeros(4, np.int64), __meta__=np.array(
        json.dumps({**meta, "epoch": 1, "epoch_state": {**pos, "next_batch": 0}})))
    yield "position-correct-negative", with_meta(epoch=1, epoch_state={**pos, "correct": -1})
    yield "meta-missing", with_arrays(arrays, __meta__=None)
    yield "meta-key-missing", with_meta(bad_epochs=DROP)
    yield "meta-format", with_meta(format="mlp-manual-checkpoint/9")
    yield "meta-deep-json", with_arrays(arrays, __meta__=np.array("{" + '"a":{' * 50000 + "}" * 50001))
    yield "optim-moment-missing", with_arrays(arrays, **{"optim/m/layers.0.W": None})
    yield "optim-second-moment-missing", with_arrays(arrays, **{"optim/v/layers.2.b": None})
    yield "optim-t-negative", with_arrays(arrays, **{"optim/t": np.array(-5)})
    yield "optim-t-float", with_arrays(arrays, **{"optim/t": np.array(2.5)})
    yield "optim-moment-negative", with_arrays(arrays, **{"optim/v/layers.0.W": -np.ones((2, 8), np.float32)})
    yield "optim-foreign-slot", with_arrays(arrays, **{"optim/velocity/layers.0.W": np.zeros((2, 8), np.float32)})
    yield "model-weight-nan", with_arrays(arrays, **{"model/layers.0.W": np.full((2, 8), np.nan, np.float32)})
    yield "model-weight-missing", with_arrays(arrays, **{"model/layers.2.b": None})
    yield "best-weight-wrong-shape", with_arrays(arrays, **{"best/layers.0.W": np.zeros((8, 2), np.float32)})
    yield "a-model-file", (FILES / "xor-model.npz").read_bytes()
    yield from consistent_checkpoint_damage(arrays, meta)


def consistent_checkpoint_damage(arrays, meta):
    """Damage to one field of a checkpoint whose other fields agree with each other, so that
    only the check of that field can refuse it (xor: 4 rows, one batch per epoch)."""
    def ckpt(changes=None, **fields):
        m = {**meta, **fields}
        return with_arrays(arrays, **{"optim/t": np.array(m["step"]), **(changes or {}),
                                      "__meta__": np.array(json.dumps(m))})

    h, best = meta["history"], meta["best"]
    pos = {"next_batch": 1, "loss_sum": 2.5, "correct": 2, "seconds": 0.1}
    order = {"epoch_order": np.arange(4)}
    yield "position-next-batch-beyond", ckpt(order, step=7, epoch_state={**pos, "next_batch": 5})
    yield "position-correct-beyond-rows", ckpt(order, step=3, epoch_state={**pos, "correct": 9})
    yield "position-order-between-epochs", ckpt(order)
    yield "position-order-wrong-length", ckpt({"epoch_order": np.arange(5)}, step=3, epoch_state=pos)
    yield "position-in-last-epoch", ckpt(order, epoch=4, step=5, epoch_state=pos,
                                         history={k: v * 2 for k, v in h.items()} | {"epoch": [1, 2, 3, 4]})
    yield "history-epochs-out-of-order", ckpt(history={**h, "epoch": [2, 1]})
    yield "history-columns-reordered", ckpt(history=dict(reversed(h.items())))
    yield "history-val-columns-without-validation", ckpt(history={**h, "val_loss": [0.5, 0.5]})
    yield "best-metrics-of-another-epoch", ckpt(best={**best, "metrics": {k: v[0] for k, v in h.items()}})
    yield "best-value-not-the-metric", ckpt(best_value=0.01)
    yield "bad-epochs-not-since-best", ckpt(bad_epochs=1)
    yield "no-best-but-weights", ckpt(best=None, best_value=None, bad_epochs=2)
    yield "step-off-by-one", ckpt(step=3)
    yield "optim-t-not-the-step", with_arrays(arrays, **{"optim/t": np.array(5)})
    yield "optim-moment-float64", ckpt({"optim/m/layers.0.W": np.zeros((2, 8))})
    yield "model-weight-float64", ckpt({"model/layers.0.W": np.zeros((2, 8))})
    yield "rng-extra-generator", ckpt(rng={**meta["rng"], "layers.1": meta["rng"]["shuffle"]})
    yield "unexpected-array", ckpt({"notes": np.zeros(3)})
    yield "moments-at-step-zero", ckpt(epoch=0, step=0, history={}, best=None, best_value=None, bad_epochs=0)


def checkpoint_valid():
    """Checkpoints that are unusual but whole: each resumes to the end."""
    arrays = npz_arrays(FILES / "xor-checkpoint.npz")
    meta = json.loads(str(arrays["__meta__"]))
    h = meta["history"]
    one = {k: v[:1] for k, v in h.items()}
    yield "after-epoch-1", with_arrays(arrays, **{"optim/t": np.array(1), "__meta__": np.array(json.dumps(
        {**meta, "epoch": 1, "step": 1, "history": one, "best": {"epoch": 1, "metrics": {k: v[0] for k, v in one.items()}},
         "best_value": one["train_loss"][0]}))})
    position = {"next_batch": 1, "loss_sum": 2.5, "correct": 2, "seconds": 0.1}  # the third epoch's batch done
    yield "inside-epoch-3", with_arrays(arrays, epoch_order=np.arange(4), **{"optim/t": np.array(3), "__meta__": np.array(
        json.dumps({**meta, "step": 3, "epoch_state": position}))})


DROP = object()


def gz_of_zeros(header: bytes, zero_bytes: int) -> bytes:
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = bytes(1 << 20)
    return z.compress(header) + b"".join(z.compress(chunk) for _ in range(zero_bytes >> 20)) + z.flush()


def idx_damage():
    def hdr(code, *dims):
        return bytes([0, 0, code, len(dims)]) + b"".join(d.to_bytes(4, "big") for d in dims)
    yield "zero-images", hdr(8, 0, 28, 28)
    yield "zero-size-images", hdr(8, 5, 0, 28)
    yield "terabyte-header", hdr(8, 1 << 16, 1 << 16, 256)
    yield "gzip-bomb", gz_of_zeros(hdr(8, 10, 28, 28), 512 << 20)
    yield "gzip-bomb-huge-header", gz_of_zeros(hdr(8, 60000, 28, 28), 64 << 20)
    yield "gzip-truncated", gzip.compress(hdr(8, 2, 2, 2) + bytes(8))[:-9]
    yield "gzip-garbage", b"\x1f\x8b" + bytes(range(200))
    yield "wrong-magic", b"\x01\x02" + hdr(8, 2, 2, 2)[2:] + bytes(8)
    yield "unknown-code", hdr(7, 2, 2, 2) + bytes(8)
    yield "zero-dims", bytes([0, 0, 8, 0])
    yield "short-header", hdr(8, 2, 2, 2)[:9]
    yield "truncated-body", hdr(8, 2, 2, 2) + bytes(5)
    yield "trailing-bytes", hdr(8, 2, 2, 2) + bytes(12)
    yield "floats-not-bytes", hdr(0x0D, 2, 2, 2) + bytes(32)
    yield "labels-as-images", hdr(8, 2) + bytes(2)
    yield "empty", b""


def yaml_damage():
    laughs = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
    yield "billion-laughs-top", laughs
    yield "billion-laughs-under-name", laughs + "name: *i\n"
    yield "billion-laughs-under-layers", laughs + "model: {layers: *i}\n"
    yield "billion-laughs-under-set", laughs.replace("a: &a", "training: {epochs: 1}\nz: &a") + "optimizer: {lr: *i}\n"
    yield "billion-laughs-hidden-key", laughs.replace("\n", "\n", 1) + "seed: *h\n"
    yield "deep-brackets", "model: {layers: " + "[" * 20000 + "]" * 20000 + "}\n"
    yield "deep-braces", "data: " + "{a: " * 20000 + "1" + "}" * 20000 + "\n"
    yield "deep-block-nesting", "".join("  " * i + f"k{i}:\n" for i in range(3000)) + "  " * 3000 + "v\n"
    yield "billion-laughs-inside-layers", ("model:\n  layers:\n    - &l0 [x, x, x, x, x, x, x, x, x]\n"
                                           + "".join(f"    - &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 9)))
    yield "laughs-under-the-limit", ("model:\n  layers:\n    - &l0 [x, x, x, x, x, x, x, x, x]\n"
                                     + "".join(f"    - &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 5)))
    yield "recursive-alias", "model: {layers: &a [relu, *a]}\n"
    yield "alias-chain-deep", "model:\n  layers:\n    - &a0 [relu]\n" + "".join(
        f"    - &a{i} [*a{i - 1}]\n" for i in range(1, 80))
    yield "deep-mixed-nesting", "model: {layers: " + "[{a: " * 3000 + "1" + "}]" * 3000 + "}\n"
    yield "deep-under-alias", "x: &x " + "[" * 48 + "]" * 48 + "\nmodel: {layers: [[*x, [*x]]]}\n"
    yield "duplicate-in-flow", "{seed: 1, seed: 2}\n"
    yield "duplicate-equal-numbers", "optimizer: {lr: 0.1}\nschedule: {gamma: 0.5, gamma: 0.5}\n"
    yield "name-too-long", "name: " + "n" * 256 + "\n"
    yield "huge-units-float64", "dtype: float64\nmodel: {layers: [{type: linear, units: 20000000}, relu, {type: linear}]}\n"
    yield "huge-units-deep", "model: {layers: [" + ", ".join(["{type: linear, units: 60000}"] * 3) + ", {type: linear}]}\n"
    yield "huge-spirals", "data: {name: spirals, n_samples: 5000000000}\n"
    yield "huge-batch-of-wide-layers", ("data: {name: blobs, n_samples: 60000}\ntraining: {batch_size: 60000}\n"
                                         "model: {layers: [{type: linear, units: 50000}, relu, {type: linear}]}\n")
    yield "huge-int-value", "model: {layers: [{type: linear, units: 1" + "0" * 500 + "}, {type: linear}]}\n"
    yield "duplicate-section", "training: {epochs: 3}\nseed: 1\ntraining: {batch_size: 2}\n"
    yield "duplicate-nested-key", "optimizer:\n  lr: 0.1\n  lr: 0.2\n"
    yield "duplicate-in-layer", "model: {layers: [{type: linear, units: 4, units: 8}, {type: linear}]}\n"
    yield "huge-n-samples", "data: {name: moons, n_samples: 100000000000}\n"
    yield "huge-units", "model: {layers: [{type: linear, units: 100000000000}, relu, {type: linear}]}\n"
    yield "huge-units-pair", "model: {layers: [{type: linear, units: 3000000}, relu, {type: linear, units: 3000000}, {type: linear}]}\n"
    yield "huge-batch", "data: {name: moons, n_samples: 300000000}\ntraining: {batch_size: 300000000}\n"
    yield "huge-copies", "data: {name: xor, copies: 10000000000}\n"
    yield "huge-name", "name: " + "n" * 200_000 + "\ntraining: {epochs: 1}\n"
    yield "huge-string-value", "optimizer: {name: " + "x" * 1_000_000 + "}\n"
    yield "huge-unknown-key", "k" * 1_000_000 + ": 1\n"
    yield "huge-list-value", "optimizer: {lr: [" + ", ".join(["1"] * 20000) + "]}\n"
    yield "huge-file", "# padding\n" * 200_000 + "seed: 1\n"
    yield "binary", bytes(range(256)).decode("latin-1")
    yield "tabs", "training:\n\tepochs: 3\n"


def csv_damage():
    yield "trailing-delimiter", "a,b,label,\n1,2,0,\n3,4,1,\n5,6,0,\n"
    yield "single-class", "a,b,label\n1,2,0\n3,4,0\n5,6,0\n"
    yield "header-newline", 'a,"b\nc",label\n1,2,0\n3,4,1\n'
    yield "too-few-rows", "a,b,label\n1,2,0\n3,4,1\n"
    yield "ragged", "a,b,label\n1,2,0\n3,4\n"
    yield "text-feature", "a,b,label\n1,x,0\n3,4,1\n"
    yield "nan-feature", "a,b,label\n1,nan,0\n3,4,1\n"
    yield "huge-number", "a,b,label\n1,1e400,0\n3,4,1\n"
    yield "binary", "\x00\x01\x02,\x03\n"
    yield "huge-field", "a,b,label\n" + "9" * 2_000_000 + ",2,0\n3,4,1\n"
    yield "empty", ""
    yield "only-header", "a,b,label\n"
    yield "gap-in-labels", "a,b,label\n1,2,0\n3,4,2\n"
    yield "not-utf8", "a,b,label\n1,2,\xff\n"


def metrics_damage():
    good = "epoch,lr,train_loss,train_acc,val_loss,val_acc,seconds\n1,0.1,0.7,0.5,,,0.01\n2,0.1,0.6,0.75,,,0.01\n"
    yield "ragged", good + "3,0.1\n"
    yield "text", good.replace("0.6", "low")
    yield "no-epoch", good.replace("epoch,", "epoch_,")
    yield "empty", ""
    yield "binary", "\x00\xff\x00\n"
    yield "huge-cell", good + "3,0.1," + "9" * 1_000_000 + ",0.5,,,0.1\n"


def cases(root: Path) -> list[Case]:
    """Write every case into a sub-folder of ``root``; return them."""
    rng = np.random.default_rng(0)
    out = []

    def folder(kind, label):
        f = root / f"{kind}-{label}"
        f.mkdir(parents=True)
        return f

    for label, data in model_damage(rng):
        f = folder("model", label)
        (f / "run").mkdir()
        (f / "run" / "config.yaml").write_text(XOR_CONFIG)
        (f / "run" / "model.npz").write_bytes(data)
        out.append(Case(f"model/{label}", f, ["mlp-eval", "--model", "run/model.npz"], "run/model.npz"))
    for label, data in checkpoint_damage(rng):
        f = folder("checkpoint", label)
        (f / "run").mkdir()
        (f / "run" / "config.yaml").write_text(XOR_CONFIG)
        (f / "run" / "checkpoint.npz").write_bytes(data)
        out.append(Case(f"checkpoint/{label}", f, ["mlp-train", "--resume", "run"], "run/checkpoint.npz"))
    for label, data in checkpoint_valid():
        f = folder("valid-checkpoint", label)
        (f / "run").mkdir()
        (f / "run" / "config.yaml").write_text(XOR_CONFIG)
        (f / "run" / "checkpoint.npz").write_bytes(data)
        out.append(Case(f"valid-checkpoint/{label}", f, ["mlp-train", "--resume", "run"], None))
    for label, value in set_damage():
        f = folder("set", label)
        (f / "c.yaml").write_text("training: {epochs: 1}\n")
        out.append(Case(f"set/{label}", f, ["mlp-train", "--config", "c.yaml", "--out", "run", "--set", value],
                        "--set"))
    for label, data in idx_damage():
        f = folder("idx", label)
        good = {"train-images-idx3-ubyte": bytes([0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2]) + bytes(8),
                "train-labels-idx1-ubyte": bytes([0, 0, 8, 1, 0, 0, 0, 2, 0, 1])}
        (f / "mnist").mkdir()
        for stem in ("train", "t10k"):
            (f / "mnist" / f"{stem}-images-idx3-ubyte").write_bytes(good["train-images-idx3-ubyte"])
            (f / "mnist" / f"{stem}-labels-idx1-ubyte").write_bytes(good["train-labels-idx1-ubyte"])
        (f / "mnist" / "train-images-idx3-ubyte").write_bytes(data)
        (f / "c.yaml").write_text("data: {name: mnist, val_fraction: 0, data_dir: .}\ntraining: {epochs: 1, batch_size: 2}\n")
        out.append(Case(f"idx/{label}", f, ["mlp-train", "--config", "c.yaml", "--out", "run"],
                        "mnist/train-images-idx3-ubyte"))
    for label, text in yaml_damage():
        f = folder("config", label)
        (f / "c.yaml").write_text(text, encoding="utf-8")
        out.append(Case(f"config/{label}", f, ["mlp-train", "--config", "c.yaml", "--out", "run"], "c.yaml"))
        if label.startswith(("billion", "deep", "duplicate")):
            f = folder("gradcheck-config", label)
            (f / "c.yaml").write_text(text, encoding="utf-8")
            out.append(Case(f"gradcheck-config/{label}", f, ["mlp-gradcheck", "--config", "c.yaml"], "c.yaml"))
    for label, text in csv_damage():
        f = folder("csv", label)
        (f / "d.csv").write_bytes(text.encode("latin-1" if label in ("binary", "not-utf8") else "utf-8"))
        (f / "c.yaml").write_text("data: {name: csv, path: d.csv, val_fraction: 0.5}\ntraining: {epochs: 1}\n")
        out.append(Case(f"csv/{label}", f, ["mlp-train", "--config", "c.yaml", "--out", "run"], "d.csv"))
    for label, text in metrics_damage():
        f = folder("metrics", label)
        for run in ("a", "b"):
            (f / run).mkdir()
            (f / run / "config.yaml").write_text(XOR_CONFIG)
        (f / "a" / "metrics.csv").write_text(text, encoding="latin-1")
        (f / "b" / "metrics.csv").write_text("epoch,lr,train_loss,seconds\n1,0.1,0.7,0.01\n")
        out.append(Case(f"metrics/{label}", f, ["mlp-plot", "a", "b", "--out", "cmp.png"], "a"))
    for label, text in [("empty", ""), ("comment-only", "# nothing here\n"), ("bom-csv", None),
                        ("merge-key", "optimizer: {<<: {lr: 0.1, name: sgd}, lr: 0.05}\ntraining: {epochs: 2}\n"),
                        ("alias-reuse", ("model: {layers: [&h {type: linear, units: 8}, relu, *h, relu, {type: linear}]}\n"
                                        "training: {epochs: 2}\n"))]:
        f = folder("valid", label)
        if text is None:
            (f / "d.csv").write_bytes("\ufeffx,y,label\n1,2,a\n3,4,b\n5,6,a\n7,8,b\n".encode())
            text = "data: {name: csv, path: d.csv, target: label, val_fraction: 0}\ntraining: {epochs: 2, batch_size: 2}\n"
        (f / "c.yaml").write_text(text)
        out.append(Case(f"valid/{label}", f, ["mlp-train", "--config", "c.yaml", "--out", "run"], None))
    f = folder("valid", "name-with-separators")  # no --out: the folder comes from the name
    (f / "c.yaml").write_text("name: ../../" + "x/" * 100 + "\ntraining: {epochs: 1}\n")
    out.append(Case("valid/name-with-separators", f, ["mlp-train", "--config", "c.yaml"], None))
    return out


def set_damage():
    laughs = "[&a [1, 1, 1, 1, 1, 1, 1, 1, 1], " + ", ".join(
        f"&{c} [{', '.join(['*' + p] * 9)}]" for p, c in zip("abcdefgh", "bcdefghi")) + "]"
    yield "billion-laughs", f"optimizer.lr={laughs}"
    yield "deep-brackets", "model.layers=" + "[" * 5000 + "]" * 5000
    yield "duplicate-key", "model.layers.0={type: linear, units: 4, units: 8}"
    yield "huge-value", "optimizer.name=" + "x" * 100_000
    yield "huge-units", "model.layers.0.units=100000000000"
    yield "huge-n-samples", "data.n_samples=100000000000"


if __name__ == "__main__":
    written = cases(Path(sys.argv[1]))
    print(f"wrote {len(written)} cases into {sys.argv[1]}")

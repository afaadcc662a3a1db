"""Property-based tests: any input to a reader gives a valid result or one of our own errors
(an MLPManualError), never another exception. Derandomized, so CI sees the same examples."""

import io
import json
import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mlp_manual import files
from mlp_manual.config import Config, config_from_dict, load_config, parse_override
from mlp_manual.config.bounded_yaml import MAX_DEPTH, MAX_VALUES, load_bounded
from mlp_manual.config.memory import check_memory
from mlp_manual.datasets.csvfile import CsvOptions, read_csv
from mlp_manual.errors import MLPManualError
from mlp_manual.model import Model
from mlp_manual.predict.model_file import load_model
from mlp_manual.runs.checkpoint import load_checkpoint, restore
from mlp_manual.runs.metrics import write_metrics
from mlp_manual.training.experiment import prepare, training_plan
from mlp_manual.training.state_checks import is_count
from mlp_manual.training.trainer import Trainer

FILES = Path(__file__).parent / "bad_inputs" / "files"
FUZZ = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# Names that occur in configs, so that generated documents reach past the first unknown key.
KEYS = sorted({"name", "seed", "dtype", "data", "model", "loss", "optimizer", "schedule", "training",
               "diagnostics", "layers", "init", "type", "units", "lr", "epochs", "batch_size", "p", "eps",
               "momentum", "early_stopping", "patience", "path", "target", "delimiter", "val_fraction",
               "clip_norm", "bias", "slope", "shuffle", "monitor", "gamma", "noise", "n_samples"})
WORDS = KEYS + ["linear", "relu", "adam", "sgd", "xor", "moons", "csv", "mse", "softmax_cross_entropy",
                "bce_with_logits", "batchnorm", "dropout", "layernorm", "he_uniform", "float64", "cosine"]
scalars = (st.none() | st.booleans() | st.integers(-5, 10**20) | st.floats(allow_nan=True)
           | st.sampled_from(WORDS) | st.text(max_size=8))
documents = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                         | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=5), inner, max_size=4),
                         max_leaves=20)


def only_our_errors(fn, *args, **kwargs):
    """Call ``fn``; an MLPManualError is a valid outcome, any other exception fails the test."""
    try:
        return fn(*args, **kwargs)
    except MLPManualError:
        return None


LAYER_NAMES = ["linear", "relu", "tanh", "dropout", "layernorm", "batchnorm", "leaky_relu", "softmax"]
layer_specs = st.lists(st.sampled_from(LAYER_NAMES) | documents | st.fixed_dictionaries(
    {"type": st.sampled_from(LAYER_NAMES) | documents},
    optional={k: scalars | documents for k in ["units", "p", "eps", "momentum", "slope", "init", "bias", "x"]}),
    max_size=4)
sections = st.fixed_dictionaries({"model": st.fixed_dictionaries({"layers": layer_specs})}, optional={
    "optimizer": st.dictionaries(st.sampled_from(KEYS), scalars, max_size=3),
    "training": st.dictionaries(st.sampled_from(KEYS), scalars | documents, max_size=3),
})


@FUZZ
@given(documents | sections)
def test_config_from_dict_gives_a_config_or_a_config_error(raw):
    cfg = only_our_errors(config_from_dict, raw, "fuzz.yaml")
    assert cfg is None or isinstance(cfg, Config)


yaml_fragments = st.sampled_from([
    "optimizer:", "  lr: ", "training: {", "}", "[", "]", "- ", ": ", "\n", "  ", "model:\n  layers: [",
    "relu, ", "{type: linear, units: ", "1e-3", ".inf", "-1", "0", "null", "yes", "'x'", '"', "&a ", "*a",
    "!!python/object:os.system ", "!!binary aGk=", "? ", "#", "%YAML 1.1\n", "---\n", "...\n", "\t", "2024-01-01",
]) | st.sampled_from(WORDS) | st.text(max_size=4)


@FUZZ
@given(st.lists(yaml_fragments, max_size=25).map("".join))
def test_load_config_of_any_text_gives_a_config_or_a_config_error(text):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.yaml"
        path.write_text(text, encoding="utf-8")
        cfg = only_our_errors(load_config, path)
    assert cfg is None or isinstance(cfg, Config)


def measure(value, seen=None) -> tuple[int, int]:
    """(values, depth) of a parsed document with every alias expanded, each shared list counted
    once per place it occurs."""
    seen = {} if seen is None else seen
    if id(value) in seen:
        return seen[id(value)]
    children = [*value.keys(), *value.values()] if isinstance(value, dict) else value if isinstance(value, list) else None
    if children is None:
        return 1, 0
    counts = [measure(c, seen) for c in children]
    seen[id(value)] = (1 + sum(n for n, _ in counts), 1 + max((d for _, d in counts), default=0))
    return seen[id(value)]


alias_documents = st.lists(st.tuples(st.integers(1, 12), st.integers(1, 5)), min_size=1, max_size=12).map(
    lambda levels: "".join(f"a{i}: &a{i} " + ("[" * depth) + (", ".join([f"*a{i - 1}"] * width) if i else "x")
                           + ("]" * depth) + "\n" for i, (width, depth) in enumerate(levels)))


@FUZZ
@given(alias_documents | st.lists(yaml_fragments | st.sampled_from(["&b ", "*b", "<<: ", "[*a, *a, *a]", "{a: *a}"]),
                                  max_size=25).map("".join))
def test_a_document_the_bounded_loader_returns_is_within_its_bounds(text):
    try:
        doc = load_bounded(text)
    except yaml.YAMLError:
        return
    values, depth = measure(doc)
    assert values <= MAX_VALUES and depth <= MAX_DEPTH


override_keys = st.lists(st.sampled_from(["model", "layers", "0", "1", "2", "7", "-1", "²", "units", "type",
                                          "optimizer", "lr", "training", "epochs", "x", ""])
                         | st.text(max_size=3), min_size=1, max_size=4).map(".".join)
override_values = st.sampled_from(["0.1", "-1", "[1", "[relu, {type: linear}]", "{a: 1}", "relu", "5", "", "~",
                                   ".nan", "[5]", "{type: [1]}", "true", "[[1]]"]) | st.text(max_size=6)


known_overrides = st.sampled_from(["model.layers=5", "model.layers=[5]", "model.layers=[relu, {type: linear}]",
                                   "model.layers.0=relu", "model.layers.0.units=3", "model.layers.1.p=0.5",
                                   "optimizer.lr=0.1", "training=3"])
generated_overrides = st.tuples(override_keys, st.sampled_from(["=", "", "=="]), override_values).map("".join)


@FUZZ
@given(st.lists(known_overrides, min_size=2, max_size=4) | st.lists(known_overrides | generated_overrides, max_size=4)
       | st.lists(st.text(max_size=12), max_size=2))
def test_set_overrides_give_a_config_or_a_config_error(overrides):
    for text in overrides:
        only_our_errors(parse_override, text)
    cfg = only_our_errors(config_from_dict, {}, "fuzz.yaml", overrides)
    assert cfg is None or isinstance(cfg, Config)


csv_text = st.lists(st.sampled_from(["1", "0", "2", "-1", "0.5", "nan", "inf", "1e400", "1e18", "a", "b", " ",
                                     ",", ";", "\n", "\r\n", '"', "\x00", "x,y,z\n", "1,2,0\n"])
                    | st.text(max_size=3), max_size=40).map("".join)


@FUZZ
@given(st.one_of(csv_text.map(lambda t: t.encode("utf-8", "surrogatepass")), st.binary(max_size=200)),
       st.sampled_from([-1, 0, 1, 5, -9, "b", "label"]), st.booleans(), st.sampled_from([",", ";", "", "ab", "\n"]),
       st.sampled_from(["classification", "regression"]))
def test_csv_reader_gives_arrays_or_a_data_error(content, target, header, delimiter, task):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.csv"
        path.write_bytes(content)
        out = only_our_errors(read_csv, path, CsvOptions(target=target, header=header, delimiter=delimiter, task=task))
    if out is not None:
        X, y, names, _, _ = out
        assert X.ndim == 2 and len(X) == len(y) and np.all(np.isfinite(X)) and np.all(np.isfinite(y))
        if task == "classification":
            assert y.min() >= 0 and len(np.unique(y)) == y.max() + 1


def load_bytes(data: bytes):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.npz"
        path.write_bytes(data)
        return only_our_errors(load_model, path)


@FUZZ
@given(st.binary(max_size=600))
def test_load_model_of_arbitrary_bytes(data):
    assert load_bytes(data) is None or isinstance(load_bytes(data), Model)


VALID_MODEL = (FILES / "xor-model.npz").read_bytes()


@FUZZ
@given(st.lists(st.tuples(st.integers(0, len(VALID_MODEL) - 1), st.integers(0, 255),
                          st.sampled_from(["set", "insert", "delete"])), min_size=1, max_size=4),
       st.integers(1, len(VALID_MODEL)))
def test_load_model_of_a_mutated_valid_file(edits, keep):
    data = bytearray(VALID_MODEL[:keep])
    for pos, byte, how in edits:
        pos = min(pos, len(data))
        if how == "set" and pos < len(data):
            data[pos] = byte
        elif how == "insert":
            data.insert(pos, byte)
        elif pos < len(data):
            del data[pos]
    model = load_bytes(bytes(data))
    assert model is None or isinstance(model, Model)


def npz_bytes(arrays: dict) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


with np.load(FILES / "xor-model.npz") as f:
    MODEL_ARRAYS = {k: f[k] for k in f.files}
MODEL_SPEC = json.loads(str(MODEL_ARRAYS["__spec__"]))
json_values = st.recursive(st.none() | st.booleans() | st.integers(-3, 10**12) | st.floats() | st.text(max_size=6)
                           | st.sampled_from(["linear", "relu", "he_uniform", "float64", "float16", "int8",
                                              "mlp-manual-model/1"]),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                               st.sampled_from(["type", "in_features", "out_features", "features", "init", "bias",
                                                "p", "eps", "x"]), inner, max_size=4),
                           max_leaves=12)


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(["format", "layers", "dtype", "layer", "option"]), json_values),
                min_size=1, max_size=3),
       st.sampled_from(["keep", "drop_W", "wrong_shape", "int_dtype", "extra"]))
def test_load_model_of_a_valid_archive_with_a_mutated_spec_or_arrays(changes, arrays_change):
    spec = json.loads(json.dumps(MODEL_SPEC))
    for where, value in changes:
        if where in ("format", "layers", "dtype"):
            spec[where] = value
        elif isinstance(spec["layers"], list) and spec["layers"]:
            i = len(json.dumps(value)) % len(spec["layers"])
            if where == "layer":
                spec["layers"][i] = value
            elif isinstance(spec["layers"][i], dict) and isinstance(value, dict):
                spec["layers"][i].update(value)
    arrays = dict(MODEL_ARRAYS, __spec__=np.array(json.dumps(spec)))
    if arrays_change == "drop_W":
        del arrays["layers.0.W"]
    elif arrays_change == "wrong_shape":
        arrays["layers.0.W"] = arrays["layers.0.W"].T
    elif arrays_change == "int_dtype":
        arrays["layers.2.b"] = arrays["layers.2.b"].astype(np.int32)
    elif arrays_change == "extra":
        arrays["layers.9.W"] = np.ones(3)
    model = load_bytes(npz_bytes(arrays))
    assert model is None or isinstance(model, Model)


with np.load(FILES / "flowers-model.npz") as f:
    DESCRIBED_ARRAYS = {k: f[k] for k in f.files}
DESCRIBED_SPEC = json.loads(str(DESCRIBED_ARRAYS["__spec__"]))
DESCRIPTION_KEYS = ["task", "loss", "n_features", "preprocess", "classes", "feature_names", "target_names",
                    "input_shape", "mlp_manual_version"]
description_values = json_values | st.sampled_from(
    ["classification", "regression", "mse", "standardize", "scale", "none", "daisy"]) | st.fixed_dictionaries(
    {"kind": st.sampled_from(["none", "scale", "standardize", "x"])},
    optional={"shift": json_values | st.lists(st.floats(), max_size=5), "scale": json_values | st.lists(st.floats(), max_size=5)})


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(DESCRIPTION_KEYS), description_values | st.just("drop")), min_size=1, max_size=3))
def test_reading_a_model_file_with_a_mutated_description_gives_a_predictor_or_our_error(changes):
    from mlp_manual.predict.model_file import read_model
    from mlp_manual.predict.predictor import Predictor

    spec = json.loads(json.dumps(DESCRIBED_SPEC))
    for key, value in changes:
        if value == "drop":
            spec.pop(key, None)
        else:
            spec[key] = value
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.npz"
        path.write_bytes(npz_bytes(dict(DESCRIBED_ARRAYS, __spec__=np.array(json.dumps(spec)))))
        loaded = only_our_errors(read_model, path)
    if loaded is not None:
        predictor = Predictor(*loaded)
        rows = predictor.csv_rows(np.ones((3, 4)), proba=predictor.classes is not None)
        assert len(rows) == 3 and len(rows[0]) == len(predictor.header(predictor.classes is not None))


with np.load(FILES / "xor-checkpoint.npz") as f:
    CHECKPOINT_ARRAYS = {k: f[k] for k in f.files}
CHECKPOINT_META = json.loads(str(CHECKPOINT_ARRAYS["__meta__"]))
XOR = load_config(FILES / "xor.yaml")


def rewound(meta: dict, epochs: int) -> dict:
    """The checkpoint's ``meta`` as it would be after ``epochs`` (1 or 2) of its 2 epochs: the
    history cut, the best epoch the best of those (the training loss fell every epoch)."""
    history = {k: v[:epochs] for k, v in meta["history"].items()}
    best = {"epoch": epochs, "metrics": {k: v[-1] for k, v in history.items()}}
    return {**meta, "epoch": epochs, "step": epochs, "history": history, "best": best,
            "best_value": history["train_loss"][-1], "bad_epochs": 0}


XOR_LONGER = load_config(FILES / "xor.yaml", ["training.epochs=4"])


@settings(FUZZ, max_examples=40)
@given(data=st.data())
def test_resuming_from_a_checkpoint_with_mutated_meta(data):
    epochs = data.draw(st.sampled_from([1, 2]))
    meta = rewound(CHECKPOINT_META, epochs)
    for key in data.draw(st.lists(st.sampled_from(sorted(meta)), max_size=3)):
        near = st.sampled_from([rewound(CHECKPOINT_META, 1)[key], rewound(CHECKPOINT_META, 2)[key]])
        meta[key] = data.draw(near | json_values | st.integers(0, 4) | st.fixed_dictionaries(
            {"next_batch": st.integers(-1, 2), "loss_sum": st.floats(0, 3), "correct": st.integers(-1, 5),
             "seconds": st.floats(0, 1)}))
    arrays = dict(CHECKPOINT_ARRAYS, __meta__=np.array(json.dumps(meta)), **{"optim/t": np.array(meta["step"]
                                                                                   if is_count(meta["step"]) else 0)})
    if data.draw(st.booleans()):
        arrays["epoch_order"] = np.array(data.draw(st.permutations(range(4)) | st.lists(st.integers(-2, 5), max_size=5)),
                                         dtype=np.int64)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "checkpoint.npz"
        path.write_bytes(npz_bytes(arrays))
        ckpt = only_our_errors(load_checkpoint, path)
        if ckpt is None:
            return
        exp = prepare(XOR_LONGER)
        trainer = Trainer(exp.model, exp.loss, training_plan(XOR_LONGER), np.random.default_rng(0))
        try:
            restore(trainer, ckpt, path, len(exp.data.X_train), validation=False)
        except MLPManualError:
            return
        # a checkpoint that is accepted trains to the end and writes its metrics
        history = trainer.fit(exp.data.X_train, exp.data.y_train)
        assert history["epoch"] == [1, 2, 3, 4] and {len(column) for column in history.columns.values()} == {4}
        write_metrics(Path(tmp), history.columns)
        assert len((Path(tmp) / "metrics.csv").read_text().splitlines()) == 5


def test_the_fuzzed_fixtures_are_valid():
    assert set(CHECKPOINT_META) >= {"epoch", "step", "history", "rng", "best", "epoch_state"}
    assert isinstance(load_model(FILES / "xor-model.npz"), Model)
    ckpt = load_checkpoint(FILES / "xor-checkpoint.npz")
    exp = prepare(XOR)
    restore(Trainer(exp.model, exp.loss, training_plan(XOR), np.random.default_rng(0)), ckpt, "ckpt", len(exp.data.X_train))


@FUZZ
@given(st.one_of(
    st.binary(max_size=64),
    st.tuples(st.sampled_from([0x08, 0x09, 0x0B, 0x0C, 0x0D, 0x0E, 0x07]), st.integers(0, 4),
              st.lists(st.integers(0, 2**32 - 1) | st.integers(0, 4), max_size=4), st.binary(max_size=48))
    .map(lambda t: bytes([0, 0, t[0], t[1]]) + b"".join(d.to_bytes(4, "big") for d in t[2]) + t[3])))
@example(bytes([0, 0, 8, 4]) + (2**16).to_bytes(4, "big") * 4)  # 2**64 elements: an int64 product wraps to 0
def test_idx_reader_gives_an_array_or_a_data_error(data):
    idx = pytest.importorskip("mlp_manual.datasets.idx")
    out = only_our_errors(idx.parse_idx, data, "fuzz.idx")
    assert out is None or isinstance(out, np.ndarray)


sizes = st.integers(1, 10**30) | st.sampled_from([1, 2, 300, 10**6, 10**9, 10**12])


@FUZZ
@given(st.sampled_from(["xor", "moons", "spirals", "sine", "csv", "digits"]), sizes, sizes, sizes, sizes,
       st.sampled_from(["float32", "float64"]))
def test_any_size_in_a_config_gives_a_config_whose_estimate_passes_or_a_config_error(data, n, copies, units, batch,
                                                                                      dtype):
    raw = {"dtype": dtype, "data": {"name": data, "n_samples": n, "copies": copies},
           "model": {"layers": [{"type": "linear", "units": units}, "relu", {"type": "linear"}]},
           "training": {"batch_size": batch}}
    cfg = only_our_errors(config_from_dict, raw, "fuzz.yaml")
    if cfg is not None:  # the run's estimate (made as it starts) passes or says which value asks too much
        only_our_errors(check_memory, cfg)


npy_descrs = st.sampled_from(["<f4", "<f8", "<i8", "|u1", "|b1", "<U3", "<U0", "|S0", "|V4", "|V0", "<M8[s]", "|O",
                              "<c16", "[('a', '<f4')]", "[('a', '|O')]"])


@FUZZ
@given(npy_descrs, st.lists(st.integers(0, 2**40) | st.integers(0, 5), max_size=3).map(tuple),
       st.integers(0, 300), st.booleans())
def test_an_npz_member_is_read_within_the_bytes_the_file_holds(descr, shape, body, deflate):
    header = io.BytesIO()
    descr = eval(descr) if descr.startswith("[") else descr
    np.lib.format.write_array_header_1_0(header, {"descr": descr, "fortran_order": False, "shape": shape})
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED) as zf:
        zf.writestr("W.npy", header.getvalue() + bytes(body))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.npz"
        path.write_bytes(archive.getvalue())
        arrays = only_our_errors(files.read_npz, path)
    if arrays is not None:
        assert arrays["W"].nbytes <= body and arrays["W"].dtype.kind in "biufcSU"


@FUZZ
@given(st.text(max_size=300))
def test_the_default_run_folder_of_any_name_is_one_new_entry_of_runs(name):
    from mlp_manual.runs.folder import make_run_dir

    with tempfile.TemporaryDirectory() as tmp:
        cwd = os.getcwd()
        os.chdir(tmp)
        try:
            with make_run_dir(None, name) as path:
                assert path.parent == Path("runs") and path.is_dir() and len(path.name.encode()) <= 100
            assert [p.name for p in (Path(tmp) / "runs").iterdir()] == [path.name]
        finally:
            os.chdir(cwd)

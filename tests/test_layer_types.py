"""The table of layer types (mlp_manual/layers/types.py): every built-in row names every part a
consumer needs, or says why it has none; each part is the real thing (the page op exists in the
page's script, the emitter and the scalar version run); and the formulas mlp-explain prints are
the `# fwd:` comments of the class, the one place they are written."""

import inspect
import re
from importlib import resources

import numpy as np
import pytest

from mlp_manual import core
from mlp_manual.gradcheck.suites import builtin_layer
from mlp_manual.layers.formulas import read_formulas
from mlp_manual.layers.types import BUILTINS, Check, Units, Without

PARTS = {"onnx": "an ONNX emitter (layers/onnx.py)", "scalar": "a scalar version (scalar.py) or Without(why)",
         "page": "the op explain.js recomputes it with, or Without(why)", "check": "a Check, the gradient checker's case"}


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_a_row_names_every_part(name):
    row = BUILTINS[name]
    missing = [f"{part} ({what})" for part, what in PARTS.items() if getattr(row, part) is None]
    assert not missing, f"layer type {name} lacks: {', '.join(missing)}"
    assert callable(row.onnx), f"layer type {name}: every built-in type is exported to ONNX"
    assert callable(row.scalar) or isinstance(row.scalar, Without)
    assert isinstance(row.page, (str, Without)) and isinstance(row.check, Check)
    assert row.units is None or isinstance(row.units, Units) and row.units.state in ("dead", "saturated")
    assert row.cls.__module__.startswith("mlp_manual.core."), f"{name}: its class lives in core/"


def test_a_row_that_lacks_a_part_is_named_with_the_part():
    from dataclasses import replace

    broken = replace(BUILTINS["tanh"], scalar=None)
    with pytest.raises(AssertionError, match=r"layer type tanh lacks: scalar"):
        missing = [part for part in PARTS if getattr(broken, part) is None]
        assert not missing, f"layer type tanh lacks: {', '.join(missing)}"


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_formulas_come_from_the_classes_fwd_comments_and_cover_every_gradient(name, rng):
    row = BUILTINS[name]
    formulas = row.formulas
    source = re.sub(r"\s+", " ", inspect.getsource(inspect.getmodule(row.cls)))
    assert formulas.forward and re.sub(r"\s+", " ", formulas.forward) in source, name
    layer = builtin_layer(name, 3, rng)
    inner = {f"{j}.{k}" for j, sub in enumerate(layer.sublayers()) for k in sub.params}
    own = set(layer.params) - inner  # a block's inner layers carry the formulas of theirs
    assert set(formulas.backward) == {"dx", *own}, name
    for key, formula in formulas.backward.items():
        assert formula.startswith("dx = " if key == "dx" else f"d{key} = ") and formula.split(" = ")[1] in source


def test_the_reader_takes_a_comment_onto_the_next_line_and_splits_gradients_by_parameter():
    assert read_formulas(core.Linear).backward == {"W": "dW = x.T @ dout", "b": "db = dout.sum(0)",
                                                   "dx": "dx = dout @ W.T"}
    layernorm = read_formulas(core.LayerNorm)
    assert layernorm.forward.startswith("out = gamma * xhat + beta, xhat = (x - mean(x)) * rstd")  # dx's line
    assert layernorm.backward["dx"].endswith("), dxhat = dout * gamma")  # what names no gradient stays with dx
    assert read_formulas(core.BatchNorm1d).backward["dx"].startswith("dx = rstd * (dxhat - mean_N(dxhat)")  # not eval's


def test_every_page_op_is_one_the_page_script_computes():
    script = (resources.files("mlp_manual.explain") / "page" / "explain.js").read_text(encoding="utf-8")
    ops = {row.page for row in BUILTINS.values() if isinstance(row.page, str)}
    for op in ops:
        assert re.search(rf'\b{op}: \[|op\.op === "{op}"', script), f"explain.js does not compute {op}"


@pytest.mark.parametrize("name", sorted(n for n, r in BUILTINS.items() if callable(r.scalar)))
def test_a_scalar_version_computes_the_layers_forward(name, rng):
    from mlp_manual.scalar import Value

    layer = builtin_layer(name, 3, rng)
    x = rng.normal(size=(2, 3))
    rows, _ = BUILTINS[name].scalar([[Value(v, f"x[{n},{i}]") for i, v in enumerate(r)] for n, r in enumerate(x)],
                                    layer, 0, [])
    assert np.allclose([[v.data for v in r] for r in rows], layer.forward(x), atol=1e-12)


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_option_defaults_are_the_constructors_defaults(name):
    row = BUILTINS[name]
    params = inspect.signature(row.cls).parameters
    for key, option in row.options.items():
        assert option.default == params[key].default or option.kind.holds_layers, (name, key)
    assert set(row.wants) == {"rng", "dtype"} & set(params), name


def test_every_loss_has_its_formulas_and_the_seed_is_the_one_its_docstring_states():
    import mlp_manual.core.losses as losses_module
    from mlp_manual.losses import LOSSES

    source = re.sub(r"\s+", " ", inspect.getsource(losses_module))
    for name, spec in LOSSES.items():
        grad, _, rhs = spec.seed_formula.partition(" = ")
        assert grad in ("dlogits", "dpred") and re.sub(r"\s+", " ", rhs) in source, (name, rhs)
        assert spec.formula.startswith("loss = mean(") and callable(spec.scalar) and spec.check_shapes

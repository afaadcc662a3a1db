"""Every built-in layer states its math as data, and that text is the `# fwd: ... => ...` comment
its code carries, so what mlp-explain prints is what the backward implements."""

import inspect
import re

import pytest

from mlp_manual.layers import LAYER_TYPES, Layer
from mlp_manual.layers.activations import Sigmoid


def comment_blocks(source: str) -> list[str]:
    """Consecutive comment lines joined into one line each, whitespace collapsed."""
    blocks, current = [], []
    for line in source.splitlines() + [""]:
        stripped = line.strip()
        if stripped.startswith("#"):
            current.append(stripped.lstrip("#").strip())
        elif current:
            blocks.append(re.sub(r"\s+", " ", " ".join(current)))
            current = []
    return blocks


def squash(text: str) -> str:
    return re.sub(r"\s+", " ", text)


@pytest.mark.parametrize("name", sorted(LAYER_TYPES))
def test_builtin_layer_formulas_are_its_code_comments(name):
    cls = LAYER_TYPES[name]
    assert cls.forward_formula, f"{cls.__name__} has no forward_formula"
    blocks = comment_blocks(inspect.getsource(inspect.getmodule(cls)))
    fwd = [b for b in blocks if b.startswith("fwd:")]
    assert any(b.startswith(f"fwd: {squash(cls.forward_formula)}") for b in fwd), \
        f"{cls.__name__}.forward_formula {cls.forward_formula!r} is not a `# fwd:` comment"
    for key, formula in cls.backward_formulas.items():
        grad = "dx" if key == "dx" else f"d{key}"
        assert formula.startswith(f"{grad} = "), formula
        assert any(squash(formula) in b.partition("=>")[2] for b in fwd), \
            f"{cls.__name__}.backward_formulas[{key!r}] {formula!r} is not after `=>` in a `# fwd:` comment"


@pytest.mark.parametrize("name", sorted(LAYER_TYPES))
def test_every_params_key_has_a_formula(name, rng):
    """One formula for dx and one per parameter of its own, no more; a block's inner layers
    (a residual's) carry the formulas of theirs."""
    from mlp_manual.gradcheck.suites import builtin_layer

    def check(layer):
        inner = {f"{j}.{k}" for j, sub in enumerate(layer.sublayers()) for k in sub.params}
        assert set(layer.backward_formulas) == {"dx", *(set(layer.params) - inner)}, layer
        for sub in layer.sublayers():
            check(sub)

    check(builtin_layer(name, 3, rng))


def test_the_comment_reader_finds_multiline_comments():
    blocks = comment_blocks("x = 1\n    # fwd: a = b\n    #  =>  da = 2\ny = 2\n# other\n")
    assert blocks == ["fwd: a = b => da = 2", "other"]


def test_a_layer_without_formulas_gets_empty_ones():
    assert Layer.forward_formula == "" and Layer.backward_formulas == {}
    assert Sigmoid().backward_formulas["dx"] == "dx = dout * s * (1 - s)"


def test_every_loss_has_its_formulas_and_the_seed_is_the_one_its_docstring_states():
    import mlp_manual.losses as losses_module
    from mlp_manual.losses import LOSSES

    source = squash(inspect.getsource(losses_module))
    for name, spec in LOSSES.items():
        grad, _, rhs = spec.seed_formula.partition(" = ")
        assert grad in ("dlogits", "dpred") and squash(rhs) in source.split("LOSSES = ")[0], (name, rhs)
        assert spec.formula.startswith("loss = mean(")

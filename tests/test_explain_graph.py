"""The computation graph of mlp-explain --graph, tested through the matplotlib objects it draws."""

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest
from conftest import invoke_cli

from mlp_manual.cli.explain import main
from mlp_manual.config import load_config
from mlp_manual.explain.graph import build_graph, wrap
from mlp_manual.explain.trace import trace
from mlp_manual.losses import LOSSES
from mlp_manual.model import build_model
from mlp_manual.plots.graph import draw_graph
from mlp_manual.training.experiment import prepare

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
EVERY_LAYER = ("model.layers=[{type: linear, units: 6}, layernorm, gelu, {type: linear, units: 5}, batchnorm, "
               "leaky_relu, rmsnorm, sigmoid, softmax, dropout, identity, tanh, relu, {type: linear}]")


def traced(config, *overrides, rows=4):
    cfg = load_config(CONFIGS / f"{config}.yaml", list(overrides))
    exp = prepare(cfg)
    return trace(exp.model, exp.loss, exp.data.X_train[:rows], exp.data.y_train[:rows], check=False)


def artists(fig, prefix):
    """gid (without prefix) -> artist, over the texts and patches whose gid starts with prefix."""
    ax = fig.axes[0]
    return {a.get_gid()[len(prefix):]: a for a in [*ax.texts, *ax.patches]
            if (a.get_gid() or "").startswith(prefix)}


@pytest.fixture
def xor_figure():
    t = traced("xor")
    fig = draw_graph(build_graph(t), "xor")
    yield t, fig
    plt.close(fig)


def test_nodes_are_the_data_every_output_every_parameter_and_the_loss(xor_figure):
    t, fig = xor_figure
    nodes = artists(fig, "node:")
    assert set(nodes) == {"X", "layers.0", "layers.0.W", "layers.0.b", "layers.1", "layers.2", "layers.2.W",
                          "layers.2.b", "y", "loss"}
    assert nodes["X"].get_text() == "X  (4, 2)\ndata"
    assert nodes["layers.0"].get_text() == "layers.0  linear\nout = x @ W + b"
    assert nodes["layers.1"].get_text() == "layers.1  tanh\nt = tanh(x)"
    assert nodes["loss"].get_text().endswith(f"= {t.loss.value:.4g}")


def test_forward_edges_are_solid_with_shapes_and_backward_edges_dashed_with_formula_and_norm(xor_figure):
    t, fig = xor_figure
    arrows = {k: a for k, a in artists(fig, "").items() if k.startswith(("forward:", "backward:"))}
    labels = artists(fig, "label:")
    forward = {k for k in arrows if k.startswith("forward:")}
    backward = {k for k in arrows if k.startswith("backward:")}
    assert forward == {"forward:X->layers.0", "forward:layers.0->layers.1", "forward:layers.1->layers.2",
                       "forward:layers.2->loss", "forward:y->loss", "forward:layers.0.W->layers.0",
                       "forward:layers.0.b->layers.0", "forward:layers.2.W->layers.2", "forward:layers.2.b->layers.2"}
    assert backward == {"backward:" + "->".join(k.split(":")[1].split("->")[::-1]) for k in forward
                        if not k.startswith("forward:y")}
    assert all(arrows[k].get_linestyle() == "-" for k in forward)
    assert all(arrows[k].get_linestyle() == "--" for k in backward)
    assert labels["forward:X->layers.0"].get_text() == "(4, 2)"
    assert labels["forward:layers.0.W->layers.0"].get_text() == "(2, 8)"
    assert labels["forward:layers.1->layers.2"].get_text() == "(4, 8)"
    dW = t.steps[2].grads["W"]
    assert labels["backward:layers.2->layers.2.W"].get_text() == f"dW = x.T @ dout\n|dW| = {np.linalg.norm(dW):.3g}"
    dx = t.steps[2].grads["dx"]
    assert labels["backward:layers.2->layers.1"].get_text() == f"dx = dout @ W.T\n|dx| = {np.linalg.norm(dx):.3g}"
    seed = labels["backward:loss->layers.2"].get_text()
    assert seed.startswith("dlogits = (softmax(logits) - onehot(y)) / N\n|dlogits| = ")
    assert labels["backward:layers.1->layers.0"].get_text().startswith("dx = dout * (1 - t**2)\n")


NESTED_RESIDUALS = ("model.layers=[{type: linear, units: 6}, {type: residual, layers: [layernorm, {type: linear, "
                    "units: 8}, gelu, {type: residual, layers: [{type: linear, units: 8}, tanh, batchnorm]}, dropout, "
                    "{type: linear}]}, {type: residual, layers: [rmsnorm]}, {type: linear}]")


def test_a_residual_is_its_inner_layers_then_an_add_node_fed_by_a_skip_connection():
    t = traced("moons", NESTED_RESIDUALS)
    graph = build_graph(t)
    fig = draw_graph(graph, "residual")
    nodes, labels = artists(fig, "node:"), artists(fig, "label:")
    arrows = {k: a for k, a in artists(fig, "").items() if k.startswith(("forward:", "backward:"))}
    plt.close(fig)
    assert nodes["layers.1"].get_text() == "layers.1  residual\nout = x + f(x)"
    assert graph.node("layers.1").kind == graph.node("layers.1.3").kind == "add"
    assert {"layers.1.0", "layers.1.3.2", "layers.1.3.2.gamma", "layers.2.0"} <= set(nodes)
    skips = {(e.source, e.target, e.direction): e.bend for e in graph.edges if e.bend is not None}
    assert set(skips) == {("layers.0", "layers.1", "forward"), ("layers.1", "layers.0", "backward"),
                          ("layers.1.2", "layers.1.3", "forward"), ("layers.1.3", "layers.1.2", "backward"),
                          ("layers.1", "layers.2", "forward"), ("layers.2", "layers.1", "backward")}
    # the inner block bends nearest the column; the next block of a depth bends further out than the one before
    assert skips["layers.1.2", "layers.1.3", "forward"] < skips["layers.0", "layers.1", "forward"] \
        < skips["layers.1", "layers.2", "forward"]
    assert arrows["forward:layers.0->layers.1"].get_linestyle() == "-"
    assert arrows["backward:layers.1->layers.0"].get_linestyle() == "--"
    assert labels["forward:layers.0->layers.1"].get_text() == "(4, 6) skip"
    outer = next(s.block for s in t.steps if s.name == "layers.1")
    assert labels["backward:layers.1->layers.0"].get_text() == (
        f"dout along the skip\n|dout| = {np.linalg.norm(outer.dout):.3g}\nat layers.0 it adds to df,\n"
        f"the gradient back through f:\ndx = dout + df(dout)\n|dx| = {np.linalg.norm(outer.grads['dx']):.3g}")
    assert labels["backward:layers.1->layers.1.5"].get_text() == f"dout into f(x)\n|dout| = {np.linalg.norm(outer.dout):.3g}"
    assert labels["forward:layers.1.5->layers.1"].get_text() == "(4, 6)"
    # the first inner layer's dx goes back to the block's input, where the skip's dout joins it
    assert labels["backward:layers.1.0->layers.0"].get_text().startswith("dx = rstd * (dxhat")


def extents(fig):
    """Window extents of every label, node box, title and the legend, after a draw."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    boxes = [(t.get_gid(), (t.get_bbox_patch() or t).get_window_extent(renderer)) for t in ax.texts]
    return boxes + [("legend", ax.get_legend().get_window_extent(renderer))]


@pytest.mark.parametrize("t", [
    pytest.param(lambda: traced("xor"), id="xor"),
    pytest.param(lambda: traced("moons", EVERY_LAYER), id="every-layer"),
    pytest.param(lambda: mnist_shaped(), id="mnist-shaped"),
    pytest.param(lambda: traced("moons", NESTED_RESIDUALS), id="nested-residuals"),
])
def test_no_two_labels_or_boxes_overlap(t):
    fig = draw_graph(build_graph(t()), "a title")
    found = extents(fig)
    clashes = [(a, b) for i, (a, ea) in enumerate(found) for b, eb in found[i + 1:] if ea.overlaps(eb)]
    plt.close(fig)
    assert clashes == []


def mnist_shaped():
    """configs/mnist.yaml's model (784-1024-1024-10 with dropout) on random pixels."""
    cfg = load_config(CONFIGS / "mnist.yaml")
    rng = np.random.default_rng(0)
    model = build_model(list(cfg.model.layers), 784, 10, rng)
    return trace(model, LOSSES[cfg.loss.name], rng.uniform(size=(2, 784)), np.array([3, 7]), check=False)


def test_long_formulas_wrap_at_top_level_commas():
    assert wrap("out = 0.5 x (1 + t), t = tanh(u), u = k (x + c x^3)") == \
        "out = 0.5 x (1 + t),\nt = tanh(u),\nu = k (x + c x^3)"
    assert wrap("dW = f(a, b)") == "dW = f(a, b)"


def test_cli_writes_the_graph(tmp_path):
    result = invoke_cli(main, "--config", str(CONFIGS / "xor.yaml"), "--rows", "2", "--graph", str(tmp_path / "g.png"))
    assert result.exit_code == 0 and result.output.endswith(f"wrote {tmp_path / 'g.png'}\n")
    assert (tmp_path / "g.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

"""mlp-explain --html as a newcomer reads it, in a real headless Chromium: the rows shown are ones
where something happens, and the page names them; matrices are grids; a legend names every
style of edge; a layer's output gradient reads dL/d(output of layers.N); the loss appears when
the forward pass reaches it; no node's name is cut; the page fits a 390 px phone; an elementwise
layer shows its diagonal Jacobian."""

import numpy as np
import pytest
from test_explain_html import RESIDUAL, XOR, browser, open_page, traced, write_page  # noqa: F401 (a fixture)

from mlp_manual.config import load_config
from mlp_manual.explain.html import GRID, pass_data
from mlp_manual.explain.text import preview_rows
from mlp_manual.explain.trace import pick_rows, trace
from mlp_manual.training.experiment import prepare

RELU = "model.layers=[{type: linear, units: 8}, relu, {type: linear}]"


def go(browser, step: int):
    """Show step ``step``, through the URL that keeps it."""
    from selenium.webdriver.support.wait import WebDriverWait

    browser.execute_script("location.hash = 'step=' + arguments[0]", step)
    WebDriverWait(browser, 5).until(lambda b: b.find_element("id", "counter").text.startswith(f"step {step} of "))


def grid_cells(browser, selector: str) -> list[list[float]]:
    """The numbers of a grid, row by row, at full precision (each cell's title)."""
    grid = browser.find_element("css selector", selector)
    return [[float(c.get_attribute("title")) for c in row.find_elements("css selector", "[role=cell]")]
            for row in grid.find_elements("css selector", "[role=row].body")]


def row_labels(browser, selector: str) -> list[str]:
    return [h.text for h in browser.find_elements("css selector", selector + " [role=rowheader]")]


def test_the_preview_rows_show_something_and_the_page_names_them(browser, tmp_path):
    path = write_page(tmp_path, "--config", str(XOR))
    result = traced()
    rows = preview_rows(result.X)
    assert rows == [1, 2]  # row 0 is XOR's [0, 0]: with zero biases every output of it is 0
    open_page(browser, path)
    note = browser.find_element("id", "rows-note").text
    assert note.startswith("Rows shown: rows 1 and 2 of the 4 in the batch (training rows 1 and 2 of 4; "
                           "x = [0, 1] and [1, 0]).")
    assert "Row 0 is passed over: its input is all zeros" in note
    for step, layer in [(1, result.steps[0]), (2, result.steps[1]), (3, result.steps[2])]:
        go(browser, step)
        shown = grid_cells(browser, f'#panel .grid[data-key="{layer.name}"]')
        assert row_labels(browser, f'#panel .grid[data-key="{layer.name}"]') == ["row 1", "row 2"]
        np.testing.assert_allclose(shown, layer.out[rows], rtol=1e-5, atol=1e-12)
        assert all(np.any(np.abs(row) > 0.01) for row in shown), (layer.name, shown)
        nums = browser.find_element("css selector", f'#graph .node[data-key="{layer.name}"] text.nums').text
        assert nums.startswith(f"({len(result.X)},{layer.out.shape[1]}) row 1: ") and nums.split(": ")[1][:2] != "0 "


def test_a_drawn_batch_names_the_training_rows_it_shows(browser, tmp_path):
    path = write_page(tmp_path, "--config", str(XOR.parent / "moons.yaml"), "--rows", "3", "--seed", "5")
    open_page(browser, path)
    n = len(prepare(load_config(XOR.parent / "moons.yaml")).data.X_train)
    picked = pick_rows(n, 3, 5)
    note = browser.find_element("id", "rows-note").text
    assert note.startswith(f"Rows shown: rows 0 and 1 of the 3 in the batch (training rows {picked[0]} and "
                           f"{picked[1]} of {n}; x = ")


def test_matrices_are_grids_of_their_rows_and_columns(browser, tmp_path):
    path = write_page(tmp_path, "--config", str(XOR))
    open_page(browser, path)
    go(browser, 1)  # forward through layers.0: out = x @ W + b
    expected = {"X": (2, 2), "layers.0.W": (2, 8), "layers.0.b": (1, 8), "layers.0": (2, 8)}  # X and out: rows 1, 2
    for key, (R, C) in expected.items():
        cells = grid_cells(browser, f'#panel .grid[data-key="{key}"]')
        assert (len(cells), {len(row) for row in cells}) == (R, {C}), key
    W = traced().steps[0].layer.params["W"]
    np.testing.assert_allclose(grid_cells(browser, '#panel .grid[data-key="layers.0.W"]'), W, rtol=1e-5)
    assert "…" not in browser.find_element("id", "panel").text  # no flattened list cut short


def test_a_large_pass_keeps_the_corner_of_each_tensor_the_grids_show():
    wide = "model.layers=[{type: linear, units: 64}, relu, {type: linear}]"  # over 200 inputs and weights
    exp = prepare(load_config(XOR.parent / "moons.yaml", [wide]))
    X, y = exp.data.X_train[:16].astype(np.float64), exp.data.y_train[:16]
    result = trace(exp.model, exp.loss, X, y, check=False)
    data = pass_data(result, "moons")
    assert data["editable"] == [] and data["rows"] == preview_rows(X) == [0, 1]
    out, W = data["values"]["layers.0"], data["values"]["layers.0.W"]
    assert out["data"] == [] and np.array_equal(out["corner"], result.steps[0].out[:2, :GRID])
    assert np.array_equal(W["corner"], result.steps[0].layer.params["W"][:GRID, :GRID])
    assert data["values"]["y"]["corner"] == [[float(y[0])], [float(y[1])]]  # a vector of the batch is a column
    assert data["values"]["loss"]["data"] == [pytest.approx(result.loss.value)]


@pytest.mark.parametrize("extra, styles", [([], {"forward", "backward", "current"}),
                                           (["--set", RESIDUAL], {"forward", "backward", "skip", "current"})],
                         ids=["xor", "residual"])
def test_the_legend_names_each_style_of_edge_drawn_in_that_style(browser, tmp_path, extra, styles):
    path = write_page(tmp_path, "--config", str(XOR), *extra)
    open_page(browser, path)
    go(browser, 1)
    drawn = set(browser.execute_script("return [...document.querySelectorAll('#graph .edge')]"
                                       ".flatMap(e => [...e.classList]).filter(c => c !== 'edge')"))
    assert drawn == styles
    legend = browser.find_elements("css selector", "#legend li[data-edge]")
    entries = {li.get_attribute("data-edge"): li.text for li in legend}
    assert set(entries) == styles
    words = {"forward": "forward", "backward": "backward", "skip": "skip connection", "current": "the step shown now"}
    for style in styles:
        assert entries[style].startswith(words[style])
        same = browser.execute_script("""
            const style = arguments[0], look = (e) => {
              const s = getComputedStyle(e);
              return JSON.stringify([s.stroke, s.strokeDasharray, s.strokeWidth, s.opacity]);
            };
            const edge = document.querySelector('#graph .edge.' + style
              + (style === 'current' ? '' : ':not(.current)'));
            return look(edge) === look(document.querySelector('#legend li[data-edge="' + style + '"] path'));
        """, style)
        assert same, style


def test_a_layers_output_gradient_reads_dl_d_output_of_the_layer(browser, tmp_path):
    path = write_page(tmp_path, "--config", str(XOR))
    open_page(browser, path)
    go(browser, 6)  # backward through the loss to the output of layers.2, then through layers.2 to its W
    panel = browser.find_element("id", "panel").text
    assert panel.startswith("Backward: loss (softmax_cross_entropy) to the output of layers.2\n")
    go(browser, 7)
    assert "upstream gradient\ndL/d(output of layers.2) = " in browser.find_element("id", "panel").text
    step = browser.find_element("id", "step")
    while step.is_enabled():
        step.click()
    names = {r.get_attribute("data-key"): r.find_element("tag name", "td").text
             for r in browser.find_elements("css selector", "#grads > tbody > tr")}
    assert names == {"loss": "dL/dL", "layers.2": "dL/d(output of layers.2)", "layers.1": "dL/d(output of layers.1)",
                     "layers.0": "dL/d(output of layers.0)",
                     "layers.2.W": "dL/dlayers.2.W", "layers.2.b": "dL/dlayers.2.b",
                     "layers.0.W": "dL/dlayers.0.W", "layers.0.b": "dL/dlayers.0.b", "X": "dL/dX"}
    text = browser.find_element("tag name", "body").text
    assert all(f"dL/dlayers.{i}\n" not in text and f"dL/dlayers.{i} " not in text for i in range(3))


def test_the_loss_is_shown_once_the_forward_pass_reaches_it(browser, tmp_path):
    path = write_page(tmp_path, "--config", str(XOR))
    open_page(browser, path)
    loss_step = browser.execute_script("return P.ops.length")  # the last op of the forward pass
    node = browser.find_element("css selector", '#graph .node[data-key="loss"] text.nums')
    for step in range(loss_step):
        go(browser, step)
        assert not browser.find_element("id", "loss-line").is_displayed() and node.text == "", step
        assert "0.7024" not in browser.find_element("tag name", "body").text
    go(browser, loss_step)
    assert browser.find_element("id", "loss-line").is_displayed()
    value = traced().loss.value
    assert float(browser.find_element("id", "loss").get_attribute("data-value")) == pytest.approx(value, rel=1e-12)
    assert node.text == f"{value:.6g}"
    go(browser, loss_step - 1)  # and hidden again on the way back
    assert not browser.find_element("id", "loss-line").is_displayed() and node.text == ""


@pytest.mark.parametrize("extra", [[], ["--set", RESIDUAL]], ids=["xor", "residual"])
def test_no_node_name_is_cut(browser, tmp_path, extra):
    path = write_page(tmp_path, "--config", str(XOR), *extra)
    open_page(browser, path)
    nodes = browser.execute_script("""return [...document.querySelectorAll('#graph .node')].map(g => {
        const name = g.querySelector('text.name'), rect = g.querySelector('rect');
        const right = name.getBBox().x + name.getComputedTextLength();
        return [g.dataset.key, name.textContent, right, rect.width.baseVal.value]; })""")
    labels = {n["key"]: n["label"] for n in browser.execute_script("return P.nodes")}
    assert labels["loss"] == "loss  softmax_cross_entropy"  # 27 characters: once cut to 21 and "…"
    for key, text, right, width in nodes:
        assert text == labels[key] and "…" not in text
        assert right <= width - 2, (key, text, right, width)


def test_a_390_px_wide_screen_has_no_sideways_scroll_and_keeps_the_controls_in_view(browser, tmp_path):
    (tmp_path / "xor").mkdir(), (tmp_path / "residual").mkdir()
    pages = [write_page(tmp_path / "xor", "--config", str(XOR)),
             write_page(tmp_path / "residual", "--config", str(XOR), "--set", RESIDUAL)]
    size = browser.get_window_size()
    try:
        browser.set_window_size(390, 844)
        for path in pages:
            open_page(browser, path)
            width = browser.execute_script("return document.documentElement.clientWidth")
            assert width <= 390
            last = browser.execute_script("return STEPS.length - 1")
            for step in [0, 1, 2, last]:
                go(browser, step)
                assert browser.execute_script("return document.documentElement.scrollWidth") <= width + 1, (path, step)
                for control in ("back", "step", "counter", "panel"):
                    element = browser.find_element("id", control)
                    box = browser.execute_script("return arguments[0].getBoundingClientRect().toJSON()", element)
                    assert element.is_displayed() and box["left"] >= 0 and box["right"] <= width, (control, box)
                node = browser.execute_script(  # the graph scrolls sideways, at full size, to the current node
                    "return document.querySelector('#graph .node.current rect').getBoundingClientRect().toJSON()")
                assert node["left"] >= 0 and node["right"] <= width, (path, step, node)
            scale = browser.execute_script(
                "const g = $('graph'); return g.getBoundingClientRect().width / g.viewBox.baseVal.width")
            assert scale >= 0.99  # names at the size they are written in, not shrunk to fit
    finally:
        browser.set_window_size(size["width"], size["height"])


def test_an_elementwise_layer_shows_its_diagonal_jacobian_zero_where_relu_is_off(browser, tmp_path):
    path = write_page(tmp_path, "--config", str(XOR), "--set", RELU)
    result = traced([RELU])
    row = preview_rows(result.X)[0]
    x = result.steps[0].out[row]  # (8,): the input of the relu, layers.1, on the first row shown
    assert 0 < np.sum(x > 0) < len(x)  # some units on, some off: the pattern means something
    open_page(browser, path)
    box = browser.find_element("id", "jacobian")
    go(browser, 1)
    assert not box.is_displayed()  # a linear layer's Jacobian is not diagonal
    for step in (2, browser.execute_script("return STEPS.findIndex(s => s.kind === 'backward' && s.o === 1)")):
        go(browser, step)
        assert box.is_displayed()
        grid = box.find_element("css selector", ".grid.jacobian")
        assert grid.get_attribute("data-row") == str(row)
        lines = grid.find_elements("css selector", "[role=row].body")
        cells = [r.find_elements("css selector", "[role=cell]") for r in lines]
        assert len(cells) == len(x) and all(len(r) == len(x) for r in cells)
        nonzero = np.array([["nonzero" in c.get_attribute("class") for c in r] for r in cells])
        assert np.array_equal(nonzero, np.diag(x > 0))
        assert all(cells[j][k].text == "" for j in range(len(x)) for k in range(len(x)) if j != k)
        assert [cells[j][j].text for j in range(len(x))] == ["1" if v > 0 else "0" for v in x]
        caption = box.find_element("css selector", ".caption").text
        off = ", ".join(str(j) for j in np.flatnonzero(x <= 0))
        assert "depends on x[j] alone" in caption
        assert f"zero diagonal entries are the units with x <= 0: {off}." in caption
    go(browser, 3)
    assert not box.is_displayed()

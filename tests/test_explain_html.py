"""mlp-explain --html: the page in a real headless Chromium. No request leaves it, nothing is
logged as an error; stepping through the whole pass shows every gradient mlp-manual computed;
an edited weight gives numpy's loss and gradients; the URL brings back the step and the edits;
the chain-rule example reads as the textbook table; the docs' pages are up to date."""

import json
import re
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
from conftest import invoke_cli

from mlp_manual.cli import train
from mlp_manual.cli.explain import main
from mlp_manual.config import load_config
from mlp_manual.explain.trace import BlockEnd, trace
from mlp_manual.training.experiment import prepare

ROOT = Path(__file__).resolve().parents[1]
XOR = ROOT / "configs" / "xor.yaml"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PAGE_DATA = re.compile(r'(<script type="application/json" id="pass">)(.*?)(</script>)', re.S)


def find(*names):
    return next((p for p in map(shutil.which, names) if p), None)


@pytest.fixture(scope="module")
def browser():
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install -e '.[test]')")
    chromium = find("chromium", "chromium-browser", "google-chrome")
    driver_path = find("chromedriver")
    if not chromium or not driver_path:
        pytest.skip("no Chromium and chromedriver on PATH (Debian: apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    profile = tempfile.mkdtemp(prefix="mlp-explain-chromium-")
    for flag in FLAGS + [f"--user-data-dir={profile}", "--window-size=1280,900"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=webdriver.ChromeService(driver_path), options=options)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def open_page(browser, path: Path, fragment: str = ""):
    browser.get(path.as_uri() + fragment)
    browser.get_log("performance")  # start counting from this page
    return browser


def assert_offline_and_clean(browser):
    """No request beyond the page itself, no console message above info."""
    requests = [json.loads(entry["message"])["message"] for entry in browser.get_log("performance")]
    sent = [m["params"]["request"]["url"] for m in requests if m["method"] == "Network.requestWillBeSent"]
    assert all(url.startswith("file://") for url in sent), sent
    assert browser.execute_script("return performance.getEntriesByType('resource').length") == 0
    errors = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
    assert errors == []


def write_page(tmp_path, *args) -> Path:
    path = tmp_path / "explain.html"
    result = invoke_cli(main, *args, "--html", str(path))
    assert result.exit_code == 0, result.output
    assert result.output == f"wrote {path}\n"  # the page is the walk-through: the text one is not printed
    return path


def step_to_end(browser) -> dict[str, list[float]]:
    """Press Step until it is disabled; the gradient table's rows, each as its full-precision values."""
    button = browser.find_element("id", "step")
    while button.is_enabled():
        button.click()
    rows = browser.find_elements("css selector", "#grads tbody tr")
    return {r.get_attribute("data-key"): json.loads(r.get_attribute("data-values")) for r in rows}


def steps_to(browser, text: str) -> int:
    """The first step whose panel shows ``text``, walking back from the end."""
    back = browser.find_element("id", "back")
    while text not in browser.find_element("id", "panel").text:
        assert back.is_enabled(), text
        back.click()
    return int(re.search(r"step=(\d+)", browser.current_url).group(1))


def traced(overrides=(), rows=4, edit=None):
    """The pass mlp-explain makes of the XOR config; ``edit`` (key, index, value) changes one
    input or weight first."""
    exp = prepare(load_config(XOR, list(overrides)))
    X, y = exp.data.X_train, exp.data.y_train
    picked = np.sort(np.random.default_rng(0).choice(len(X), min(rows, len(X)), replace=False))
    X = X[picked].astype(np.float64)
    if edit:
        key, index, value = edit
        if key == "X":
            X.flat[index] = value
        else:
            layer = exp.model.layers[int(key.split(".")[1])]
            layer.params[key.split(".")[2]].flat[index] = value
    return trace(exp.model, exp.loss, X, y[picked], check=False)


def gradients(result) -> dict[str, np.ndarray]:
    """Every gradient of the pass, keyed as the page keys them: the seed, each layer's output
    (its dout), its input (dx of the first layer or block) and its parameters."""
    grads = {"loss": np.float64(1.0), "X": result.steps[0].grads["dx"] if not isinstance(
        result.steps[0], BlockEnd) else result.steps[0].block.grads["dx"]}
    for step in result.steps:
        if isinstance(step, BlockEnd):
            if step.end == "join":
                grads[step.name] = step.block.dout
            continue
        grads[step.name] = step.dout
        grads.update({f"{step.name}.{k}": step.grads[k] for k in step.layer.params})
    return grads


RESIDUAL = ("model.layers=[{type: linear, units: 4}, {type: residual, layers: [{type: linear, units: 3}, tanh, "
            "{type: linear}]}, {type: linear}]")


@pytest.mark.parametrize("extra", [[], pytest.param(["--scalar", "--rows", "2"], marks=pytest.mark.slow),  # 18 s of clicks
                                   ["--set", RESIDUAL]], ids=["tensors", "scalar", "residual"])
def test_stepping_through_the_pass_shows_every_gradient(browser, tmp_path, extra):
    path = write_page(tmp_path, "--config", str(XOR), *extra)
    assert path.stat().st_size <= 500_000
    open_page(browser, path)
    if "--set" in extra:  # x feeds the block and its skip: the page adds the two contributions
        step_to_end(browser)
        browser.get(path.as_uri() + "#step=" + str(steps_to(browser, "sum of the 2 contributions")))
    shown = step_to_end(browser)
    expected = gradients(traced(extra[1:2] if "--set" in extra else (), rows=2 if "--scalar" in extra else 4))
    assert set(shown) == set(expected)
    for key, grad in expected.items():
        assert shown[key] == np.ravel(grad).tolist(), key  # the very numbers mlp-manual computed
    assert_offline_and_clean(browser)


def test_an_edited_weight_gives_numpys_loss_and_gradients_and_the_url_keeps_it(browser, tmp_path):
    path = write_page(tmp_path, "--config", str(XOR))
    open_page(browser, path)
    field = browser.find_element("css selector", '#edits input[data-key="layers.0.W"][data-index="3"]')
    browser.find_element("css selector", "#edit-box summary").click()
    field.clear()
    field.send_keys("0.75")
    edited = traced(edit=("layers.0.W", 3, 0.75))
    loss = browser.find_element("id", "loss")
    while not loss.is_displayed():  # the loss is shown once the forward pass reaches it
        browser.find_element("id", "step").click()
    assert float(loss.get_attribute("data-value")) == pytest.approx(edited.loss.value, rel=1e-9, abs=0)
    assert float(loss.get_attribute("data-value")) != pytest.approx(traced().loss.value, rel=1e-6)
    assert "moved by" in browser.find_element("id", "loss-moved").text
    shown = step_to_end(browser)
    for key, grad in gradients(edited).items():
        np.testing.assert_allclose(shown[key], np.ravel(grad), rtol=1e-9, atol=1e-15, err_msg=key)
    for _ in range(3):
        browser.find_element("id", "back").click()
    counter = browser.find_element("id", "counter").text
    assert "#step=" in browser.current_url and "edits=" in browser.current_url
    browser.refresh()
    assert browser.find_element("id", "counter").text == counter
    field = browser.find_element("css selector", '#edits input[data-key="layers.0.W"][data-index="3"]')
    assert float(field.get_attribute("value")) == 0.75
    assert float(browser.find_element("id", "loss").get_attribute("data-value")) == pytest.approx(
        edited.loss.value, rel=1e-9, abs=0)
    assert_offline_and_clean(browser)


def test_the_chain_example_reads_as_the_textbook_table(browser, tmp_path):
    path = tmp_path / "chain.html"
    assert invoke_cli(main, "--html", str(path), "--example", "chain").exit_code == 0
    open_page(browser, path)
    keys = pytest.importorskip("selenium.webdriver.common.keys").Keys
    body = browser.find_element("tag name", "body")
    body.send_keys(keys.ARROW_RIGHT, keys.ARROW_RIGHT, keys.ARROW_LEFT, keys.ARROW_RIGHT, keys.ARROW_RIGHT)
    assert browser.find_element("id", "counter").text == "step 3 of 9 · forward"
    assert browser.find_element("id", "panel").text.startswith("Forward: L (square)\nL = e^2")
    step_to_end(browser)
    rows = [r.text for r in browser.find_elements("css selector", "#grads tbody tr")]
    assert rows == ["dL/dL 1", "dL/de 8", "dL/dd 8", "dL/dc 8", "dL/da -24", "dL/db 16"]
    assert browser.find_element("id", "loss").text == "16"
    assert "running total" in browser.find_element("id", "panel").text
    browser.find_element("css selector", "#edit-box summary").click()
    field = browser.find_element("css selector", '#edits input[data-key="a"]')
    field.clear()
    field.send_keys("3")  # L = (3 * -3 + 10)^2 = 1, dL/de = 2, dL/da = 2 b = -6, dL/db = 2 a = 6
    rows = [r.text for r in browser.find_elements("css selector", "#grads tbody tr")]
    assert rows == ["dL/dL 1 Δ 0", "dL/de 2 Δ -6", "dL/dd 2 Δ -6", "dL/dc 2 Δ -6", "dL/da -6 Δ 18", "dL/db 6 Δ -10"]
    assert browser.find_element("id", "loss").text == "1"
    assert_offline_and_clean(browser)


@pytest.mark.parametrize("name, args", [("xor.html", ["--config", str(XOR)]),
                                        ("xor-scalar.html", ["--config", str(XOR), "--rows", "2", "--scalar"]),
                                        ("chain.html", ["--example", "chain"])])
def test_the_docs_pages_are_up_to_date(tmp_path, name, args):
    """The committed page is what the command writes now: the same text around the pass's JSON,
    and the same numbers within 1e-12 (the last bits of a matrix product differ across CPUs)."""
    committed = (ROOT / "docs" / "pages" / name).read_text(encoding="utf-8")
    fresh = write_page(tmp_path, *args).read_text(encoding="utf-8")
    command = " ".join(["mlp-explain", *(str(XOR.relative_to(ROOT)) if a == str(XOR) else a for a in args),
                        "--html", f"docs/pages/{name}"])
    stale = f"docs/pages/{name} is not what the command writes now (explain.js or the pass changed): {command}"
    assert PAGE_DATA.sub("", committed) == PAGE_DATA.sub("", fresh), stale
    old, new = (json.loads(PAGE_DATA.search(text).group(2)) for text in (committed, fresh))
    assert same(old, new), stale
    assert f"pages/{name}" in (ROOT / "docs" / "learn" / "explain-html.md").read_text(encoding="utf-8")


def same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == pytest.approx(b, rel=1e-12, abs=1e-15)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(same, a, b))
    return a == b


def test_html_errors_are_one_line_usage_errors(tmp_path):
    result = invoke_cli(main, "--html", str(tmp_path / "page.htm"), "--config", str(XOR))
    assert result.exit_code == 2 and "page.htm must end in .html" in result.output
    result = invoke_cli(main, "--example", "chain")
    assert result.exit_code == 2 and "--example writes a page: give --html too" in result.output
    result = invoke_cli(main, "--html", str(tmp_path / "c.html"), "--example", "chain", "--config", str(XOR))
    assert result.exit_code == 2 and "takes no --config" in result.output
    result = invoke_cli(main, "--config", str(ROOT / "configs" / "moons.yaml"), "--scalar", "--rows", "200",
                        "--set", "model.layers=[{type: linear, units: 2}, tanh, {type: linear}]",
                        "--html", str(tmp_path / "m.html"))
    assert result.exit_code == 1 and result.output == (
        "Error: --html --scalar makes a step of every += and is for small passes: this one has 412 inputs and "
        "weights, the limit is 200; take fewer --rows\n")
    assert not (tmp_path / "m.html").exists()
    result = invoke_cli(main, "--html", str(tmp_path / "c.html"), "--example", "chian")
    assert result.exit_code == 2 and "Invalid value for '--example': 'chian'" in result.output


def test_the_documented_command_writes_the_page(tmp_path, monkeypatch):
    readme = (ROOT / "docs" / "learn" / "backprop.md").read_text(encoding="utf-8")
    commands = [c.split(" | ")[0] for c in re.findall(r"^\$ (mlp-explain .*--html .*)$", readme, re.M)]
    assert commands
    monkeypatch.chdir(ROOT)
    for command in commands:
        args = command.split()[1:]
        out = args.index("--html") + 1
        args[out] = str(tmp_path / Path(args[out]).name)
        result = invoke_cli(main, *args)
        assert result.exit_code == 0, result.output
        assert Path(args[out]).stat().st_size > 10_000


def test_with_graph_and_scalar_only_the_files_written_are_printed(tmp_path):
    page, graph = tmp_path / "p.html", tmp_path / "g.png"
    result = invoke_cli(main, "--config", str(XOR), "--rows", "2", "--scalar", "--graph", str(graph),
                        "--html", str(page))
    assert result.exit_code == 0 and result.output == f"wrote {graph}\nwrote {page}\n"
    assert page.stat().st_size > 10_000 and graph.stat().st_size > 10_000


# Each would run a script if a page pasted it in as HTML, or filled a placeholder inside a text
HOSTILE = ("{{data}} <img src=x onerror=document.title='pwned'>", "{{script}}",
           "</script><script>document.title='pwned'; window.pwned = 1</script>")
SHOWN_LAYER = """
from mlp_manual import Layer


class Shown(Layer):
    forward_formula = {text!r}
    backward_formulas = {{"dx": {text!r}}}

    def forward(self, x):
        return x

    def backward(self, dout):
        return dout
"""


def assert_shown_never_run(browser, path: Path, title: str):
    """The page shows ``title`` as it is, runs its own script (the graph is drawn, Step works) and
    nothing else: no element, handler or script of the hostile text, and only hashes in its policy."""
    text = path.read_text(encoding="utf-8")
    assert "<img" not in text and text.count("<script") == 2 and "'unsafe-inline'" not in text
    open_page(browser, path)
    assert browser.execute_script("return [document.title, typeof window.pwned]") == [title, "undefined"]
    assert browser.find_element("tag name", "h1").text == title
    assert len(browser.find_elements("css selector", "#graph .node")) >= 5
    assert browser.execute_script("return getComputedStyle(document.querySelector('header')).position") == "sticky"
    browser.find_element("id", "step").click()
    assert browser.find_element("id", "counter").text.startswith("step 1 of ")
    assert browser.title == title
    assert_offline_and_clean(browser)


@pytest.mark.parametrize("hostile", HOSTILE, ids=["data-img", "script", "close-script"])
def test_a_hostile_name_given_with_set_is_shown_and_never_run(browser, tmp_path, module_in_cwd, hostile):
    """The config's name through --set, and the formulas of a user's layer (the texts of a layer a
    config can choose), each holding the hostile text."""
    module = module_in_cwd(SHOWN_LAYER.format(text=hostile))
    layers = f"[{{type: linear, units: 3}}, {{type: '{module}:Shown'}}, tanh, {{type: linear}}]"
    path = write_page(tmp_path, "--config", str(XOR), "--set", f"name={json.dumps(hostile)}",
                      "--set", f"model.layers={layers}", "--import", module)
    assert_shown_never_run(browser, path, f"{hostile}: one forward and backward pass (initial weights (seed 0))")
    browser.find_element("id", "step").click()  # step 2: forward through the user's layer
    panel = browser.find_element("id", "panel").text
    assert panel.startswith(f"Forward: layers.1 ({module}:Shown)\n{hostile}\n"), panel  # its formula, as text


def test_hostile_names_in_a_trained_run_are_shown_and_never_run(browser, tmp_path, monkeypatch):
    """A run someone sent: its config's name, its folder, its feature names and class labels all
    hold the hostile texts; trained, then explained from its model file."""
    monkeypatch.chdir(tmp_path)
    first, second, third = HOSTILE
    rng = np.random.default_rng(0)
    rows = [f'{a:.3f},{b:.3f},"{HOSTILE[i % 3]}","{HOSTILE[int(a + b > 0)]}"'
            for i, (a, b) in enumerate(rng.normal(size=(60, 2)))]
    header = f'"{first}","{second}","{third}","{third} y"'
    Path("hostile.csv").write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    name = " ".join(HOSTILE)
    config = {"name": name, "data": {"name": "csv", "path": "hostile.csv", "target": f"{third} y",
                                     "categorical": [third]},
              "model": {"layers": [{"type": "linear", "units": 3}, "tanh", {"type": "linear"}]},
              "training": {"epochs": 2}}
    Path("c.yaml").write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML
    folder = f"runs/{first}/{third}"  # a folder of three: the slashes of </script> part it
    trained = invoke_cli(train.main, "--config", "c.yaml", "--out", folder, "-q")
    assert trained.exit_code == 0, trained.output
    page = tmp_path / "page.html"
    written = invoke_cli(main, "--model", f"{folder}/model.npz", "--html", str(page))
    assert written.exit_code == 0 and written.output == f"wrote {page}\n", written.output
    assert_shown_never_run(browser, page, f"{name}: one forward and backward pass (trained weights from "
                                          f"{folder}/model.npz)")


def test_a_text_model_steps_back_to_its_embedding_table_and_no_further(browser, tmp_path):
    """The makemore model: its first layer looks up integer indices, which have no gradient, so
    the backward pass ends at the embedding table's dW."""
    path = write_page(tmp_path, "--config", str(XOR.parent / "names_mlp.yaml"), "--rows", "2")
    open_page(browser, path)
    shown = step_to_end(browser)
    assert "X" not in shown and "layers.0.W" in shown
    assert "layers.0 (embedding) to layers.0.W" in browser.find_element("id", "panel").text
    assert_offline_and_clean(browser)


def test_in_a_notebooks_sandboxed_frame_the_page_steps_through_the_pass_and_connects_nowhere(browser, tmp_path):
    """mlp_manual.notebook shows the page as an iframe srcdoc with sandbox="allow-scripts": an
    opaque origin whose URL cannot change. It steps all the same, and the page's own policy holds
    inside the frame: a request from it is refused."""
    from mlp_manual.notebook import show_explain

    path = tmp_path / "notebook.html"
    frame = show_explain(XOR)._repr_html_()
    path.write_text(f"<!DOCTYPE html><html><body>{frame}</body></html>", encoding="utf-8")
    open_page(browser, path)
    browser.switch_to.frame(browser.find_element("tag name", "iframe"))
    try:
        shown = step_to_end(browser)
        expected = gradients(traced())
        assert set(shown) == set(expected)
        assert all(shown[key] == np.ravel(grad).tolist() for key, grad in expected.items())
        browser.execute_script("window.refused = []; document.addEventListener('securitypolicyviolation', "
                               "e => refused.push(e.violatedDirective)); fetch('http://127.0.0.1:9/').catch(() => 0);")
        WebDriverWait = pytest.importorskip("selenium.webdriver.support.wait").WebDriverWait
        assert WebDriverWait(browser, 5).until(lambda b: b.execute_script("return refused")) == ["connect-src"]
    finally:
        browser.switch_to.default_content()
    assert_offline_and_clean(browser)

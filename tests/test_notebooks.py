"""The notebooks of docs/notebooks/, run top to bottom in a real kernel (nbclient and ipykernel,
the kernel importing this checkout, in an empty folder, with no network needed): no cell raises,
and each shows what its text promises. Then the notebooks as committed, whose stored outputs the
docs site shows: every code cell ran, none ended in an error, and no output holds a path of the
machine they were run on."""

import html
import json
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "docs" / "notebooks"
NAMES = ("backprop-by-hand.ipynb", "makemore-manual-backward.ipynb")
MACHINE_PATHS = ("/work/", "/tmp/", "/root/", "/home/", "/Users/", "\\\\Users\\\\")
SRCDOC = re.compile(r'<iframe srcdoc="([^"]*)" sandbox="allow-scripts"')
MAX_BYTES = 400_000  # the run's three figures and two pages are most of it


def execute(name: str, folder: Path, monkeypatch):
    """The notebook ``name``, executed in ``folder`` by a fresh kernel that imports this checkout."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(folder)}}).execute()
    return nb


def output_text(output: dict) -> str:
    """Everything an output shows, as text: a stream's text, a value's text and HTML, an error."""
    if output["output_type"] == "stream":
        return output["text"]
    if output["output_type"] == "error":
        return f"{output['ename']}: {output['evalue']}"
    data = output.get("data", {})
    return "\n".join(data.get(kind, "") for kind in ("text/plain", "text/html"))


def shown(nb, snippet: str) -> str:
    """What the first code cell whose source holds ``snippet`` showed."""
    cell = next(c for c in nb.cells if c.cell_type == "code" and snippet in c.source)
    return "\n".join(output_text(o) for o in cell.outputs)


def errors(nb) -> list[str]:
    return [output_text(o) for c in nb.cells if c.cell_type == "code" for o in c.outputs
            if o["output_type"] == "error"]


def page_of(text: str) -> str:
    """The stepping page an output frames, as the iframe's srcdoc holds it."""
    found = SRCDOC.search(text)
    assert found, "no sandboxed iframe in the output"
    return html.unescape(found.group(1))


def test_backprop_by_hand_runs_and_shows_each_step(tmp_path, monkeypatch):
    nb = execute("backprop-by-hand.ipynb", tmp_path, monkeypatch)
    assert errors(nb) == []
    assert "L = 16.0   dL/da = -24.0   dL/db = 16.0   dL/dc = 8.0" in shown(nb, "dL = 1.0")
    assert "dL/da: by hand -24.000000   central differences -24.000000" in shown(nb, "def f(a, b, c)")
    assert "Value(data=2, grad=-24)" in shown(nb, "vL.backward()")
    for snippet, title in (('show_example("chain"', "L = (a*b + c)^2"), ("show_explain(cfg", "xor: one forward")):
        page = page_of(shown(nb, snippet))
        assert title in page and "content=\"default-src 'none';" in page  # every connection refused
    assert "PASS linear: every tensor matches" in shown(nb, 'check("linear", Linear)')
    failed = shown(nb, 'check("linear", TransposedLinear)')
    assert "FAIL linear" in failed and "dW is transposed" in failed
    trained = shown(nb, "history = train(")
    losses = [float(v) for v in re.findall(r"loss (\d\.\d+)", trained)]
    assert losses == sorted(losses, reverse=True) and losses[-1] < 0.01
    assert "predicted classes: [0 1 1 0]" in trained and "total trainable parameters: <b>42</b>" in trained
    run = shown(nb, 'show_run("runs/xor")')
    assert "<b>xor</b>: completed: best train_loss" in run and "run folder: runs/xor" in run
    assert len(re.findall(r'<img alt="[a-z_]+\.png" style="max-width:100%" src="data:image/png;base64,', run)) == 3
    assert "<td>W (8, 2), b (2,)</td><td>(N, 2)</td><td>18</td>" in shown(nb, 'show_model("runs/xor/model.npz")')
    # the notebook writes out the project's configs/xor.yaml, to need no file beside it
    assert (tmp_path / "xor.yaml").read_text() == (ROOT / "configs" / "xor.yaml").read_text()


def test_makemores_manual_backward_agrees_with_every_reference(tmp_path, monkeypatch):
    monkeypatch.setenv("MLP_MANUAL_DATA", str(tmp_path / "no-downloads"))  # the names ship with the package
    nb = execute("makemore-manual-backward.ipynb", tmp_path, monkeypatch)
    assert errors(nb) == []
    assert "182,564 training examples, context 3, vocabulary 27" in shown(nb, "load_dataset(")
    table = shown(nb, "results = [cmp(")
    assert "26 of 26 gradients agree" in table
    assert len(re.findall(r" (core|numeric) +exact: \w+ +approx: True ", table)) == 26
    assert "PASS mlp_backward: every tensor matches" in shown(nb, 'check("mlp_backward", backward)')
    means = [float(v) for v in re.findall(r"mean batch loss (\d\.\d+)", shown(nb, "def step_params"))]
    assert len(means) == 8 and means[-1] < means[0] < 3.3


@pytest.mark.parametrize("name", NAMES)
def test_the_committed_notebooks_hold_their_outputs_and_no_machines_paths(name):
    path = NOTEBOOKS / name
    assert path.stat().st_size <= MAX_BYTES
    nb = json.loads(path.read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(c["execution_count"] is not None for c in code), "run it top to bottom and save it with outputs"
    counts = [c["execution_count"] for c in code]
    assert counts == list(range(1, len(code) + 1)), "the outputs come from one run, top to bottom"
    outputs = [o for c in code for o in c["outputs"]]
    assert not [o for o in outputs if o["output_type"] == "error"]
    text = json.dumps(outputs)
    assert [p for p in MACHINE_PATHS if p in text] == []
    assert "pip install" not in "".join("".join(c["source"]) for c in code)  # an instruction in the text, not a cell


def test_the_docs_site_lists_every_notebook():
    mkdocs = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) == sorted(NAMES)
    for name in NAMES:
        assert f"notebooks/{name}" in mkdocs
        assert f"notebooks/{name}" in (ROOT / "docs" / "learn" / "index.md").read_text(encoding="utf-8")

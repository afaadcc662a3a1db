"""mlp_manual.notebook without Jupyter: what each helper gives a notebook to show (its
``_repr_html_`` and ``_repr_png_``) and print() (its text), and that nothing imports IPython."""

import base64
import html
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mlp_manual.config import load_config
from mlp_manual.core import Linear, Model, Tanh
from mlp_manual.errors import ConfigError, DataError
from mlp_manual.notebook import Figure, show_example, show_explain, show_figure, show_model, show_run
from mlp_manual.runs.run import train_run

ROOT = Path(__file__).resolve().parents[1]
XOR = ROOT / "configs" / "xor.yaml"
SRCDOC = re.compile(r'<iframe srcdoc="([^"]*)" sandbox="allow-scripts"')


@pytest.fixture(scope="module")
def xor_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("runs") / "xor"
    train_run(load_config(XOR, ["training.epochs=20"]), out=str(folder), echo=lambda line: None)
    return folder


def test_a_run_shows_its_last_line_and_every_figure_embedded(xor_run, monkeypatch):
    monkeypatch.chdir(xor_run.parent)
    shown = show_run("xor")
    page = shown._repr_html_()
    assert "xor</b>: completed: best train_loss" in page
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', page)
    assert len(images) == 3  # loss, accuracy, decision boundary
    assert all(base64.b64decode(i).startswith(b"\x89PNG") for i in images)
    assert "run folder: xor" in page and str(xor_run.parent) not in page  # the folder as given, no more
    assert str(shown).splitlines() == [str(shown).splitlines()[0], "  loss.png", "  accuracy.png",
                                       "  decision_boundary.png"]


def test_a_run_without_its_summary_is_unfinished_and_a_folder_without_config_is_no_run(xor_run, tmp_path):
    partial = tmp_path / "partial"
    partial.mkdir()
    (partial / "config.yaml").write_bytes((xor_run / "config.yaml").read_bytes())
    assert "unfinished: no summary.json yet" in str(show_run(partial))
    with pytest.raises(DataError, match="not a run folder"):
        show_run(tmp_path)


def test_a_run_whose_config_this_version_would_refuse_is_shown_all_the_same(xor_run, tmp_path):
    """Its config.yaml is read as mlp-runs reads it, not validated: one written by another
    version (a key this one does not know) still shows its run."""
    other = tmp_path / "other"
    other.mkdir()
    (other / "config.yaml").write_text((xor_run / "config.yaml").read_text() + "a_later_key: 1\n")
    (other / "summary.json").write_bytes((xor_run / "summary.json").read_bytes())
    with pytest.raises(ConfigError):
        load_config(other / "config.yaml")
    assert str(show_run(other)).startswith("other: completed: best train_loss")


def test_a_figure_is_a_png_inline_and_anything_else_a_data_error(xor_run, tmp_path):
    figure = show_figure(xor_run / "loss.png")
    assert isinstance(figure, Figure) and figure._repr_png_() == (xor_run / "loss.png").read_bytes()
    assert figure._repr_html_().startswith('<img alt="loss.png"')
    (tmp_path / "fake.png").write_text("not a png")
    with pytest.raises(DataError, match="not a PNG"):
        show_figure(tmp_path / "fake.png")
    with pytest.raises(DataError, match="no such figure"):
        show_figure(tmp_path / "missing.png")


def test_a_model_file_and_a_model_show_the_same_layer_table(xor_run):
    from_file = show_model(xor_run / "model.npz")
    rng = np.random.default_rng(0)
    built = show_model(Model([Linear(2, 8, rng=rng), Tanh(), Linear(8, 2, rng=rng)]))
    for shown in (from_file, built):
        lines = str(shown).splitlines()
        assert lines[1].split()[:2] == ["0", "linear"] and "W (2, 8), b (8,)  (N, 8)  24" in lines[1]
        assert lines[2].split()[:3] == ["1", "tanh", "Tanh()"]
        assert lines[-1] == "total trainable parameters: 42"
        assert "<td>W (2, 8), b (8,)</td><td>(N, 8)</td><td>24</td>" in shown._repr_html_()


def test_the_stepping_page_is_a_sandboxed_srcdoc_that_allows_no_connection():
    shown = show_explain(XOR)
    page = html.unescape(SRCDOC.search(shown._repr_html_()).group(1))
    assert page.startswith("<!DOCTYPE html>")
    assert "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';" in page
    assert "xor: one forward and backward pass (initial weights (seed 0))" in page
    assert "allow-same-origin" not in shown._repr_html_()  # its script never reaches the notebook
    assert str(shown).startswith("xor: one forward and backward pass")


def test_the_page_is_the_one_mlp_explain_writes(tmp_path):
    from conftest import invoke_cli

    from mlp_manual.cli.explain import main

    for shown, args in ((show_explain(XOR, rows=2, scalar=True), ["--config", str(XOR), "--rows", "2", "--scalar"]),
                        (show_example("chain"), ["--example", "chain"])):
        result = invoke_cli(main, *args, "--html", str(tmp_path / "page.html"))
        assert result.exit_code == 0, result.output
        written = (tmp_path / "page.html").read_text(encoding="utf-8")
        assert html.unescape(SRCDOC.search(shown._repr_html_()).group(1)) == written


def test_the_helpers_import_no_ipython():
    code = ("import sys; from mlp_manual.notebook import show_explain; "
            f"show_explain({str(XOR)!r}); assert 'IPython' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_a_checks_report_shows_as_its_table_in_html_and_as_its_verdict_in_text():
    from mlp_manual.exercises import check
    from mlp_manual.exercises.solutions.linear import Linear as Answer

    report = check("linear", Answer)
    assert "<table>" in report._repr_html_() and "PASS linear" in report._repr_html_()
    assert repr(report) == str(report) and str(report).splitlines()[-1].startswith("PASS linear")

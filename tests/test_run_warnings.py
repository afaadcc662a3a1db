"""Training warnings: raised as TrainingWarning by the code that notices, recorded by the run (and
in summary.json), printed by mlp-train as the bare line on standard error (also with --quiet),
and ordinary Python warnings for a library caller."""

import inspect
import json
import re
import warnings
from collections import Counter

import numpy as np
import pytest
import yaml
from conftest import invoke_cli

from mlp_manual.cli.train import main as train_main
from mlp_manual.config import load_config
from mlp_manual.errors import TrainingWarning
from mlp_manual.runs import run as run_module
from mlp_manual.runs.run import train_run
from mlp_manual.runs.run_warnings import collect_warnings

LINE = {  # the line each kind prints, as mlp-train has always printed it
    "initial_loss": r"WARNING initial loss \d+\.\d{3} is far from ln\(2\) = 0\.693, the loss of uniform guesses: "
                    r"the inputs are not scaled \(feature \d has mean \d+\.\d{4} and spread \d+\.\d{4}\); set "
                    r"data\.preprocess: standardize \(or scale, for images\)",
    "dead": r"DEAD step \d+: layer 1 \(ReLU\(\)\) has \d+% of its units zero for the whole batch",
    "vanishing": r"VANISHING step \d+: layers\.[02]\.[Wb] gradient norm \d\.\d\de[+-]\d\d is \d\.\de[+-]\d\d "
                 r"of its weight norm \d\.\d\de[+-]\d\d",
    "exploding": r"EXPLODING step \d+: layers\.[02]\.[Wb] gradient norm \d\.\d\de[+-]\d\d is above the bound 1e-12",
    "not_learning": r"WARNING not learning: train_acc 0\.\d{4} is no better than chance \(0\.5750, always guessing "
                    r"the largest of 2 classes\)\. Measured with the final weights, epoch 2\. (Likely|Possibly) [^:]+: "
                    r"[^.]+(\.\d+[^.]*)*\. .+\.",
}


@pytest.fixture
def loud_config(tmp_path):
    """Unscaled positive inputs (initial loss far from ln 2, some ReLUs dead for the whole batch) and
    diagnostics bounds that every step crosses: every kind of warning, several times."""
    rng = np.random.default_rng(0)
    X = rng.uniform(100, 1000, size=(40, 2))
    rows = [f"{a:.1f},{b:.1f},{int(a > b)}" for a, b in X]
    (tmp_path / "big.csv").write_text("a,b,label\n" + "\n".join(rows) + "\n")
    cfg = {"name": "loud", "data": {"name": "csv", "path": str(tmp_path / "big.csv"), "val_fraction": 0},
           "training": {"epochs": 2, "batch_size": 40},
           "diagnostics": {"enabled": True, "vanishing": 1e10, "max_grad_norm": 1e-12, "dead_fraction": 1e-9}}
    path = tmp_path / "loud.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


@pytest.fixture
def recorded(monkeypatch):
    """The warnings each run hands to ``finish`` (where summary.json is written), one list per call."""
    calls = []
    finish = run_module.finish

    def spy(*args, **kwargs):
        calls.append(list(inspect.signature(finish).bind(*args, **kwargs).arguments["warned"]))
        return finish(*args, **kwargs)

    monkeypatch.setattr(run_module, "finish", spy)
    return calls


@pytest.mark.parametrize("quiet", [False, True])
def test_every_kind_reaches_stderr_as_its_line_and_is_recorded_by_the_run(loud_config, tmp_path, recorded, quiet):
    result = invoke_cli(train_main, "--config", str(loud_config), "--out", str(tmp_path / "run"),
                        *(["--quiet"] if quiet else []))
    assert result.exit_code == 0, result.output
    stderr = result.stderr.splitlines()
    [during] = recorded  # the warnings of the training, handed to finish, which adds its own
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert [w["message"] for w in summary["warnings"]] == stderr  # each occurrence, in order, nothing else
    assert [str(w) for w in during] == stderr[:-1]
    assert {w["kind"] for w in summary["warnings"]} == set(LINE)
    for w in summary["warnings"]:
        assert re.fullmatch(LINE[w["kind"]], w["message"]), w["message"]
    # two steps; the biases have no weight norm to vanish against at step 0; the run ends below chance
    assert Counter(w["kind"] for w in summary["warnings"]) == {"initial_loss": 1, "dead": 2, "vanishing": 2 + 4,
                                                                "exploding": 8, "not_learning": 1}
    assert not set(stderr) & set(result.stdout.splitlines())
    if quiet:
        assert result.stdout.splitlines() == [result.stdout.splitlines()[-1]]
        assert result.stdout.startswith("best train_loss")


def test_a_library_caller_sees_python_warnings(loud_config, tmp_path, recorded):
    cfg = load_config(loud_config, ["diagnostics.enabled=false"])
    with pytest.warns(TrainingWarning, match=r"^WARNING initial loss") as caught:
        train_run(cfg, str(tmp_path / "run"), echo=lambda line: None)
    assert [w.message.kind for w in caught] == ["initial_loss", "not_learning"]
    assert caught[0].filename.endswith("sanity.py") and caught[1].filename.endswith("learning_check.py")
    assert recorded == [[caught[0].message]]
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert [w["message"] for w in summary["warnings"]] == [str(w.message) for w in caught]


def test_collector_keeps_every_occurrence_and_passes_on_without_show():
    def warn_twice():
        for _ in range(2):
            warnings.warn(TrainingWarning("dead", "DEAD step 1: the same line twice"))

    shown = []
    with pytest.warns(RuntimeWarning, match="not ours"), collect_warnings(shown.append) as caught:
        warn_twice()
        warnings.warn("not ours", RuntimeWarning)  # not a TrainingWarning: left to Python
    assert [str(w) for w in shown] == ["DEAD step 1: the same line twice"] * 2 and caught == shown
    with pytest.warns(TrainingWarning) as passed_on, collect_warnings() as caught:
        warnings.warn(TrainingWarning("exploding", "EXPLODING step 2"))
    assert [str(w.message) for w in passed_on] == ["EXPLODING step 2"] and caught == [passed_on[0].message]

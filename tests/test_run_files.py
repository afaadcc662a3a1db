"""RUN_FILES (runs/folder.py) is the one list of the files a run writes: --overwrite removes
exactly these from an earlier run, so a file a run writes that is not listed would be left
behind, stale, by the next run in the folder. Runs of every kind write only listed files, and
every listed file is written by one of them."""

from mlp_manual.cli.train import main as train
from mlp_manual.runs.folder import RUN_FILES
from tests.conftest import invoke_cli

RUNS = {  # a run of each kind that writes files of its own
    "moons with diagnostics and a test split": ["configs/moons.yaml", "--set", "training.epochs=2",
                                                 "--set", "diagnostics.enabled=true",
                                                 "--set", "data.test_fraction=0.2"],
    "digits (images)": ["configs/digits.yaml", "--set", "training.epochs=1"],
    "sine (regression, one feature)": ["configs/sine.yaml", "--set", "training.epochs=2"],
    "names (text)": ["configs/names_mlp.yaml", "--set", "training.epochs=1", "--set", "training.batch_size=4096"],
    "the learning-rate sweep": ["configs/moons.yaml", "--find-lr"],
}


def test_runs_write_exactly_the_listed_files(tmp_path):
    written = set()
    for i, (kind, args) in enumerate(RUNS.items()):
        out = tmp_path / str(i)
        result = invoke_cli(train, *args, "--out", str(out), "-q")
        assert result.exit_code == 0, f"{kind}: {result.output}"
        names = {str(p.relative_to(out)) for p in out.rglob("*") if not p.is_dir()}  # kept/ holds a file too
        assert names <= set(RUN_FILES), f"{kind} wrote files RUN_FILES does not list: {sorted(names - set(RUN_FILES))}"
        written |= names
    assert written == set(RUN_FILES), f"listed but written by no run: {sorted(set(RUN_FILES) - written)}"

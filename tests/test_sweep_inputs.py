"""mlp-sweep against hostile or damaged inputs: files that are not sweep files, names that are
paths, run folders a study points at, damaged sweep.json records, malformed storage URLs, grids
too large to make and values of the wrong type. Each ends in one line and its exit code."""

import json
import os

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("optuna")

from conftest import invoke_cli  # noqa: E402
from sweeps import MOONS, run_sweep, study_of, write_sweep  # noqa: E402

from mlp_manual.cli.sweep import main as sweep_cli  # noqa: E402
from mlp_manual.errors import ConfigError  # noqa: E402
from mlp_manual.sweep.spec import load_sweep  # noqa: E402
from mlp_manual.sweep.urls import without_password  # noqa: E402

SECRET = "SECRETSALT"
SHADOW = (f"root:$6${SECRET}$Qx1bq0v3Jdr8cVb2:19000:0:99999:7:::\n"
          "daemon:*:19000:0:99999:7:::\nbin:*:19000:0:99999:7:::\n")


def one_line_error(result) -> str:
    """The one line of a command that failed on its input (a CompletedProcess or a CliRunner result)."""
    text = result.stderr if hasattr(result, "stderr") else result.output
    lines = text.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "Traceback" not in text, text
    return lines[0]


def _sweep_file(tmp_path, doc: dict, name: str = "s.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


SPACE = {"optimizer.lr": {"low": 0.001, "high": 0.5, "log": True}}


# --- files that are not what they should be -------------------------------------------------

def test_a_password_file_as_base_or_config_is_not_quoted(tmp_path):
    (tmp_path / "shadow").write_text(SHADOW)
    as_base = run_sweep("run", _sweep_file(tmp_path, {"base": "shadow", "space": SPACE}), "--out", tmp_path / "o")
    assert as_base.returncode == 1
    assert one_line_error(as_base) == f"Error: {tmp_path / 'shadow'}: unknown keys: 'root...', 'daemon...', 'bin...'"
    as_config = run_sweep("run", _sweep_file(tmp_path, {"config": yaml.safe_load(SHADOW), "space": SPACE}))
    assert as_config.returncode == 1 and SECRET not in as_config.stderr
    assert one_line_error(as_config).endswith("s.yaml: config: unknown keys: 'root...', 'daemon...', 'bin...'")
    # a file that YAML reads as one string (a key file, a token) is not shown either
    (tmp_path / "token").write_text(f"ghp_{SECRET}0123456789abcdef\n")
    scalar = run_sweep("run", _sweep_file(tmp_path, {"base": "token", "space": SPACE}))
    assert one_line_error(scalar) == f"Error: {tmp_path / 'token'}: the config must be a mapping of sections, got str"
    as_sweep = run_sweep("run", tmp_path / "shadow")
    assert as_sweep.returncode == 1 and SECRET not in as_sweep.stderr
    assert one_line_error(as_sweep).startswith(f"Error: {tmp_path / 'shadow'}: unknown keys: 'root...'")


def test_many_unknown_keys_are_counted_not_listed(tmp_path):
    keys = {f"extra{i}": 1 for i in range(9)}
    message = one_line_error(invoke_cli(sweep_cli, "run", str(_sweep_file(tmp_path, {"config": MOONS, "space": SPACE,
                                                                                     **keys}))))
    assert message.endswith("unknown keys: 'extra0', 'extra1', 'extra2', 'extra3', 'extra4' and 4 more")


# --- names that would be paths or break lines -------------------------------------------------

FOLDER_RULE = "name must be text without '/', line breaks or other control characters, and not empty, . or .."


@pytest.mark.parametrize("name", ["..", ".", " .. ", "a/b", "a\nb", "a\rb", "a\x00b", "a\u2028b", "a\u202eb", ""])
def test_a_sweep_name_that_is_a_path_or_breaks_a_line_is_refused(tmp_path, name):
    work = tmp_path / "work"
    work.mkdir()
    path = _sweep_file(work, {"name": name, "config": MOONS, "space": SPACE, "trials": 1})
    result = run_sweep("run", path.name, cwd=work)
    assert result.returncode == 1
    assert one_line_error(result).startswith(f"Error: s.yaml: {FOLDER_RULE}, got ")
    assert sorted(p.name for p in work.iterdir()) == ["s.yaml"]  # nothing written, here or above
    assert sorted(p.name for p in tmp_path.iterdir()) == ["work"]


def test_the_name_from_the_file_stem_is_checked_too(tmp_path):
    path = _sweep_file(tmp_path, {"config": MOONS, "space": SPACE}, name="..yaml")  # its stem is "."
    assert one_line_error(invoke_cli(sweep_cli, "run", str(path))).endswith(f"{FOLDER_RULE}, got '.'")


def test_a_config_name_with_a_line_break_is_refused_in_the_base(tmp_path):
    (tmp_path / "base.yaml").write_text(yaml.safe_dump({**MOONS, "name": "moons\n# injected"}))
    result = invoke_cli(sweep_cli, "run", str(_sweep_file(tmp_path, {"base": "base.yaml", "space": SPACE})))
    assert one_line_error(result) == (f"Error: {tmp_path / 'base.yaml'}: name must be text without line breaks or "
                                      "other control characters, and not . or .., got 'moons\\n# injected'")


@pytest.mark.parametrize("command", ["status", "best"])
def test_a_study_name_with_a_line_break_is_a_usage_error(tmp_path, command):
    result = run_sweep(command, tmp_path, "--study", "moons\n# injected", "--storage", tmp_path / "journal.log")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == (
        "Error: Invalid value for '--study': must be text without line breaks or other control characters, "
        "and not . or .., got 'moons\\n# injected'")
    assert not (tmp_path / "journal.log").exists()


# --- take-over moves only run folders of the same sweep ----------------------------------------

def test_a_run_folder_outside_the_sweep_is_not_taken_over(tmp_path):
    """A study written by hand: two failed trials whose run_dir names a folder that holds a
    config.yaml, one outside any sweep, one in the sweep folder of another study; each has a
    continuation queued. The sweep trains their values again and leaves both folders alone."""
    import optuna

    from mlp_manual.sweep.folder import write_record
    from mlp_manual.sweep.storage import StudyStorage
    from mlp_manual.sweep.study import open_study

    path = write_sweep(tmp_path, trials=2, pruner="none")
    folder = tmp_path / "out"
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "config.yaml").write_text(yaml.safe_dump(MOONS))
    (precious / "notes.txt").write_text("mine\n")
    other = tmp_path / "other" / "trials" / "1"
    other.mkdir(parents=True)
    (other / "config.yaml").write_text(yaml.safe_dump(MOONS))
    write_record(tmp_path / "other", "elsewhere", None, path)
    study = open_study(load_sweep(path), StudyStorage(None, folder))
    distributions = {"optimizer.lr": optuna.distributions.FloatDistribution(0.001, 0.5, log=True),
                     "model.layers.0.units": optuna.distributions.CategoricalDistribution([4, 16, 32])}
    params = {"optimizer.lr": 0.05, "model.layers.0.units": 16}
    for run_dir in (precious, other):  # trials 0 and 1, continued by 2 and 3
        study.add_trial(optuna.trial.create_trial(params=params, distributions=distributions,
                                                  state=optuna.trial.TrialState.FAIL, user_attrs={"run_dir": str(run_dir)}))
    for number in (0, 1):
        study.enqueue_trial(params=params, user_attrs={"continues": number})

    result = run_sweep("run", path, "--out", folder)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in precious.iterdir()) == ["config.yaml", "notes.txt"]
    assert (other / "config.yaml").is_file()
    trials = study_of(folder, name="moons").trials
    assert [t.state.name for t in trials] == ["FAIL", "FAIL", "COMPLETE", "COMPLETE"]
    assert trials[2].user_attrs["reason"].startswith(f"trained again: '{precious}' is not the folder trials/0 of a "
                                                     "sweep folder")
    assert trials[3].user_attrs["reason"].startswith(f"trained again: '{other}' is in the folder of another study")
    for t in trials[2:]:
        assert json.loads((folder / "trials" / str(t.number) / "summary.json").read_text())["epochs_run"] == 30



def test_text_a_study_holds_is_shown_on_one_line_by_status_and_best(tmp_path):
    """Whoever can write the study writes a trial's host, note and run folder: status shows
    each trial on one line (a line break or a terminal's escape sequence as its escape), and
    best.yaml's header keeps its two comment lines."""
    import optuna

    from mlp_manual.sweep.folder import write_record
    from mlp_manual.sweep.storage import StudyStorage
    from mlp_manual.sweep.study import open_study

    path = write_sweep(tmp_path, trials=2, pruner="none")
    folder = tmp_path / "out"
    study = open_study(load_sweep(path), StudyStorage(None, folder))
    write_record(folder, "moons", None, path)
    distributions = {"optimizer.lr": optuna.distributions.FloatDistribution(0.001, 0.5, log=True),
                     "model.layers.0.units": optuna.distributions.CategoricalDistribution([4, 16, 32])}
    hostile = "evil\nnumber  state\x1b[2J"
    study.add_trial(optuna.trial.create_trial(
        params={"optimizer.lr": 0.05, "model.layers.0.units": 16}, distributions=distributions, value=0.5,
        state=optuna.trial.TrialState.COMPLETE,
        user_attrs={"host": hostile, "reason": hostile, "run_dir": "/tmp/" + hostile, "config": "seed: 0\n"}))
    table = run_sweep("status", folder)
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert len(lines) == 3 and "\x1b" not in table.stdout, table.stdout  # the head, the columns, one trial
    assert lines[2].count("evil\\nnumber  state\\x1b[2J") == 3
    best = run_sweep("best", folder)
    assert best.returncode == 0, best.stderr
    header = (folder / "best.yaml").read_text().splitlines()[:3]
    assert header[0].startswith("# The best trial") and header[1].startswith("# (its run folder: ")
    assert header[2] == "seed: 0"

def test_a_run_folder_of_the_sweep_with_another_config_is_not_taken_over(tmp_path):
    from mlp_manual.sweep.folder import foreign_run, write_record
    from mlp_manual.sweep.storage import StudyStorage

    path = write_sweep(tmp_path)
    sweep, store = load_sweep(path), StudyStorage(None, tmp_path / "out")
    run_dir = (tmp_path / "out" / "trials" / "3").resolve()
    run_dir.mkdir(parents=True)
    write_record(tmp_path / "out", "moons", None, path)

    class Trial:
        number, params = 3, {"optimizer.lr": 0.05, "model.layers.0.units": 16}
        user_attrs = {"run_dir": str(run_dir)}
    from mlp_manual.config import dump_config, with_absolute_paths

    (run_dir / "config.yaml").write_text(dump_config(with_absolute_paths(sweep.trial_config(Trial.params, "moons-3"))))
    assert foreign_run(Trial, sweep, store) is None  # a run of the trial's own config is taken over
    Trial.params = {**Trial.params, "optimizer.lr": 0.5}
    assert foreign_run(Trial, sweep, store) == f"'{run_dir}' holds a run of another config"
    Trial.params, Trial.number = {**Trial.params, "optimizer.lr": 0.05}, 4
    assert foreign_run(Trial, sweep, store) == f"'{run_dir}' is not the folder trials/4 of a sweep folder"


# --- damaged sweep.json ---------------------------------------------------------------------

@pytest.mark.parametrize("content, expected", [
    ("[1, 2]", "sweep.json: is damaged: a sweep's record is an object with its study and storage, got list"),
    ('"moons"', "sweep.json: is damaged: a sweep's record is an object with its study and storage, got str"),
    ('{"study": 3}', "sweep.json: is damaged: study must be the study's name, got 3"),
    ('{"storage": null}', "sweep.json: is damaged: study must be the study's name, got None"),
    ('{"study": "a\\nb"}', "sweep.json: is damaged: study must be the study's name, got 'a\\nb'"),
    ('{"study": "moons", "storage": ["x"]}',
     "sweep.json: is damaged: storage must be a database URL, a journal file or null, got ['x']"),
    ('{"study": "moons", "storage": "/nonexistent/journal.log"}',
     "sweep.json: storage '/nonexistent/journal.log' is not a journal file"),
    ('{"study": "moons", "storage": "postgresql://me:pw@db:port/s"}',
     "storage postgresql://me@db:port/s: the port must be a number from 1 to 65535"),
    ('{"study": "moons"', "sweep.json: cannot be read (Expecting ',' delimiter: line 1 column 18 (char 17))"),
    (b"\xff\xfe\x00", "sweep.json: cannot be read ('utf-8' codec can't decode byte 0xff in position 0: invalid "
                      "start byte)"),
])
@pytest.mark.parametrize("command", ["status", "best"])
def test_a_damaged_sweep_record_is_one_line(tmp_path, content, expected, command):
    record = tmp_path / "sweep.json"
    record.write_bytes(content if isinstance(content, bytes) else content.encode())
    (tmp_path / "journal.log").write_text("")
    result = invoke_cli(sweep_cli, command, str(tmp_path))
    assert result.exit_code == 1
    assert one_line_error(result).endswith(expected)
    assert not os.path.exists("/nonexistent")


# --- storage URLs ----------------------------------------------------------------------------

MALFORMED = {
    "postgresql://me:pw@db:port/s": "the port must be a number from 1 to 65535",
    "postgresql://me:pw@db:1:2/s": "the port must be a number from 1 to 65535",
    "mysql://me:pw@db:99999/s": "the port must be a number from 1 to 65535",
    "postgresql://me:pw@[::1/s": "the host is not valid (an IPv6 address is written in brackets: [::1])",
    "postgresql://me:pw@db]/s": "the host is not valid (an IPv6 address is written in brackets: [::1])",
    "sqlite://s.db": "a SQLite URL is sqlite:///FILE (three slashes, then the file's path)",
    "mongodb://me:pw@db/s": "use a postgresql://, mysql:// or sqlite:/// URL, or the path of a journal file",
    "postgresql://me:pw@db/s\n# more": "a URL holds no line breaks or other control characters",
    "postgresql+nosuchdriver://me:pw@db/s": "not a database URL SQLAlchemy reads (Can't load plugin: "
                                            "sqlalchemy.dialects:postgresql.nosuchdriver)",
}


@pytest.mark.parametrize("url", list(MALFORMED))
def test_a_malformed_storage_url_is_one_line_for_every_command(tmp_path, url):
    shown = without_password(url)
    assert "pw" not in shown
    in_file = run_sweep("run", write_sweep(tmp_path, storage=url), "--out", tmp_path / "o")
    assert one_line_error(in_file).endswith(f": storage {shown}: {MALFORMED[url]}")
    assert not (tmp_path / "o").exists() or "driver" in url  # a driver is looked for when the storage is opened
    for args in (["run", str(write_sweep(tmp_path)), "--out", str(tmp_path / "o"), "--storage", url],
                 ["status", "--storage", url, "--study", "moons"], ["best", str(tmp_path), "--storage", url,
                                                                   "--study", "moons"]):
        result = invoke_cli(sweep_cli, *args)
        assert result.exit_code == 1
        assert one_line_error(result) == f"Error: storage {shown}: {MALFORMED[url]}"


@settings(max_examples=500, deadline=None)
@given(st.text())
def test_removing_a_password_takes_any_text(text):
    shown = without_password(text)
    assert isinstance(shown, str) and len(shown.splitlines()) <= 1


URL_PART = st.text(st.characters(blacklist_characters=":@/?#[]%&=~", blacklist_categories=("Cs", "Cc", "Zl", "Zp")),
                   min_size=1)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["postgresql", "postgres", "mysql", "postgresql+psycopg"]), URL_PART, URL_PART, URL_PART,
       st.one_of(st.none(), st.integers(0, 99999), URL_PART), URL_PART)
def test_no_password_survives_in_a_url_however_malformed(scheme, user, password, host, port, path):
    secret = f"{password}~"  # a character no other part holds
    port = "" if port is None else f":{port}"
    url = f"{scheme}://{user}:{secret}@{host}{port}/{path}"
    assert secret not in without_password(url)
    assert secret not in without_password(f"{scheme}://{host}{port}/{path}?sslmode=require&password={secret}")


def test_without_password_keeps_the_rest():
    assert without_password("postgresql://me:secret@db:5432/s") == "postgresql://me@db:5432/s"
    assert without_password("postgresql://me:p@ss/w0rd@db/s?sslmode=require") == "postgresql://me@db/s?sslmode=require"
    assert without_password("postgresql://me@db/s?password=x&sslmode=require") == "postgresql://me@db/s?sslmode=require"
    assert without_password("journal.log") == "journal.log"


# --- grids too large to make, values of the wrong type ----------------------------------------

def test_a_grid_too_large_is_refused_before_it_is_made(tmp_path):
    path = write_sweep(tmp_path, sampler="grid", trials=None,
                       space={"optimizer.lr": {"low": 0.001, "high": 0.1, "step": 1.0e-10},
                              "model.layers.0.units": {"choices": [4, 16, 32]}})
    result = run_sweep("run", path, "--out", tmp_path / "o", timeout=60)  # making the grid took minutes
    assert result.returncode == 1
    assert one_line_error(result) == (
        f"Error: {path}: the grid has 2,970,000,003 points (optimizer.lr: 990,000,001; model.layers.0.units: 3); "
        "the grid sampler takes at most 100,000: use a larger step or fewer choices, or the tpe or random sampler")
    tiny = write_sweep(tmp_path, sampler="grid", space={"optimizer.lr": {"low": 0.1, "high": 0.2, "step": 5.0e-324}})
    assert "the grid has more than 10^12 points (optimizer.lr: more than 10^12)" in one_line_error(
        invoke_cli(sweep_cli, "run", str(tiny)))
    at_limit = {"model.layers.0.units": {"low": 1, "high": 100_000, "step": 1}}
    assert load_sweep(write_sweep(tmp_path, sampler="grid", trials=None, space=at_limit)).trials == 100_000
    at_limit["model.layers.0.units"]["high"] = 100_001
    with pytest.raises(ConfigError, match="the grid has 100,001 points"):
        load_sweep(write_sweep(tmp_path, sampler="grid", trials=None, space=at_limit))


@pytest.mark.parametrize("keys, expected", [
    ({"objective": {"metric": ["val_loss"]}},
     "objective.metric must be one of val_loss, val_acc, train_loss, train_acc; got ['val_loss']"),
    ({"objective": {"direction": {"up": 1}}}, "objective.direction must be minimize or maximize, got {'up': 1}"),
    ({"sampler": {"name": ["tpe"]}}, "sampler.name must be one of tpe, random, grid; got ['tpe']"),
    ({"pruner": [{"name": "none"}]}, "pruner must be a mapping like {name: median}, got [{'name': 'none'}]"),
    ({"trials": [6]}, "trials must be an integer >= 1, got [6]"),
    ({"storage": {"url": "x"}}, "storage must be a database URL or null, got {'url': 'x'}"),
    ({"space": {"optimizer.lr": {"low": [0.1], "high": 1.0}}}, "space optimizer.lr: low must be a number, got [0.1]"),
    ({"space": {"optimizer.lr": {"choices": {"a": 1}}}}, "choices must be a non-empty list, got {'a': 1}"),
    ({"name": ["moons"]}, f"{FOLDER_RULE}, got ['moons']"),
])
def test_a_value_of_the_wrong_type_is_one_line(tmp_path, keys, expected):
    result = run_sweep("run", write_sweep(tmp_path, **keys), "--out", tmp_path / "o")
    assert result.returncode == 1
    assert one_line_error(result).endswith(expected)


WRONG = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8),
                  st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=4), st.integers(), max_size=2))
KEYS = [("name",), ("base",), ("config",), ("objective",), ("objective", "metric"), ("objective", "direction"),
        ("trials",), ("sampler",), ("sampler", "name"), ("sampler", "seed"), ("sampler", "startup_trials"),
        ("pruner",), ("pruner", "name"), ("pruner", "warmup_epochs"), ("space",), ("space", "optimizer.lr"),
        ("space", "optimizer.lr", "low"), ("space", "optimizer.lr", "log"), ("space", "optimizer.lr", "step"),
        ("space", "model.layers.0.units", "choices"), ("storage",), ("stale_after",)]


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(KEYS), WRONG)
def test_any_value_of_any_key_is_taken_or_refused_in_one_line(tmp_path_factory, key, value):
    doc = {"name": "moons", "config": MOONS, "objective": {"metric": "val_loss"}, "trials": 3,
           "sampler": {"name": "tpe", "seed": 0}, "pruner": {"name": "median", "warmup_epochs": 3},
           "space": {"optimizer.lr": {"low": 0.001, "high": 0.5, "log": True},
                     "model.layers.0.units": {"choices": [4, 16]}}, "stale_after": 60}
    node = doc
    for part in key[:-1]:
        node = node[part]
    node[key[-1]] = value
    path = _sweep_file(tmp_path_factory.mktemp("fuzz"), doc)
    try:
        load_sweep(path)
    except ConfigError as e:
        assert "\n" not in str(e) and str(e).startswith(str(path.parent))



def test_a_sweep_file_given_where_the_sweep_folder_goes_is_named_as_such(tmp_path):
    path = write_sweep(tmp_path)
    for verb in ("status", "best"):
        result = run_sweep(verb, path)
        assert result.returncode == 1 and result.stderr == (
            f"Error: {path}: not a sweep folder but a file; give the folder mlp-sweep run wrote (sweeps/<name>, or "
            "its --out)\n"), result.stderr

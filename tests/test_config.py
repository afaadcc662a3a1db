"""Config loading, validation messages, --set overrides, and the resolved round trip."""

import pytest
import yaml

from mlp_manual.config import (
    Config,
    ConfigError,
    config_from_dict,
    dump_config,
    load_config,
    with_absolute_paths,
)
from mlp_manual.config.schema import keys_that_apply
from mlp_manual.datasets.load import LOADERS
from mlp_manual.errors import closest
from mlp_manual.losses import LOSSES
from mlp_manual.optimizers import OPTIMIZERS
from mlp_manual.schedules import SCHEDULES


def test_defaults_and_name_from_file(tmp_path):
    path = tmp_path / "tiny.yaml"
    path.write_text("optimizer: {lr: 0.5}\n")
    cfg = load_config(path)
    assert cfg.name == "tiny" and cfg.optimizer.lr == 0.5 and cfg.optimizer.name == "adam"
    assert cfg.training == Config().training


def test_resolved_config_round_trips(tmp_path):
    cfg = load_config("configs/moons.yaml", ["optimizer.lr=0.05", "model.layers.0.units=7"])
    path = tmp_path / "resolved.yaml"
    path.write_text(dump_config(cfg))
    assert load_config(path) == cfg
    assert cfg.model.layers[0] == {"type": "linear", "units": 7}


def test_set_parses_yaml_scalars_and_lists():
    cfg = config_from_dict({}, "x", ["training.shuffle=false", "optimizer.clip_norm=1e0",
                                     "model.layers=[{type: linear, units: 3}, relu, {type: linear}]"])
    assert cfg.training.shuffle is False and cfg.optimizer.clip_norm == 1.0
    assert [s["type"] for s in cfg.model.layers] == ["linear", "relu", "linear"]


@pytest.mark.parametrize("raw, message", [
    ({"optimizer": {"lrr": 0.1}}, "x.yaml: unknown key 'optimizer.lrr' (did you mean 'optimizer.lr'?)"),
    ({"trainig": {}}, "x.yaml: unknown key 'trainig' (did you mean 'training'?)"),
    ({"optimizer": {"lr": -0.1}}, "x.yaml: optimizer.lr must be > 0, got -0.1"),
    ({"optimizer": {"lr": 0}}, "x.yaml: optimizer.lr must be > 0, got 0"),
    ({"optimizer": {"lr": "fast"}}, "x.yaml: optimizer.lr must be a number, got 'fast'"),
    ({"training": {"batch_size": 0}}, "x.yaml: training.batch_size must be > 0, got 0"),
    ({"training": {"epochs": 2.5}}, "x.yaml: training.epochs must be an integer, got 2.5"),
    ({"training": {"epochs": 0}}, "x.yaml: training.epochs must be between 1 and 1000000, got 0"),
    ({"training": {"epochs": 10**12}}, "x.yaml: training.epochs must be between 1 and 1000000, got 1000000000000"),
    ({"optimizer": {"name": "adma"}}, f"x.yaml: optimizer.name must be one of {', '.join(OPTIMIZERS)}; "
                                      "got 'adma' (did you mean 'adam'?)"),
    ({"loss": "cross_entropy"}, f"x.yaml: loss.name must be one of {', '.join(LOSSES)}; got "),
    ({"model": {"layers": ["rleu"]}}, "x.yaml: model.layers[0]: unknown layer type 'rleu' (did you mean 'relu'?)"),
    ({"model": {"layers": [{"type": "linear", "unit": 4}]}},
     "x.yaml: model.layers[0]: unknown option 'unit' for linear (did you mean 'units'?)"),
    ({"model": {"layers": [{"type": "dropout", "p": 1.5}]}}, "x.yaml: model.layers[0].p must be in [0, 1)"),
    ({"training": [1, 2]}, "x.yaml: training must be a mapping of keys to values"),
    ({"optimizer": {"learning_rate": 0.1}}, "x.yaml: unknown key 'optimizer.learning_rate' (did you mean 'optimizer.lr'?)"),
    ({"epochs": 5}, "x.yaml: unknown key 'epochs' (did you mean 'training.epochs'?)"),
    ({"data": {"patience": 5}}, "x.yaml: unknown key 'data.patience' (did you mean 'training.early_stopping.patience'?)"),
    ({"training": {"name": "a"}}, "x.yaml: unknown key 'training.name'\n"),  # data.name? optimizer.name? no guess
])
def test_validation_errors_name_the_key_and_the_file(raw, message):
    with pytest.raises(ConfigError) as e:
        config_from_dict(raw, "x.yaml")
    assert (str(e.value) + "\n").startswith(message)


@pytest.mark.parametrize("word, options, expected", [
    ("optimiser", ["optimizer", "data"], "optimizer"),
    ("learning_rate", ["lr", "momentum"], "lr"),
    ("wd", ["lr", "weight_decay"], "weight_decay"),
    ("Learning-Rate", ["lr"], "lr"),
    ("x", ["lr"], None),
    ("colour", ["lr", "name"], None),
])
def test_closest_spelling_or_initials(word, options, expected):
    assert closest(word, options) == expected


@pytest.mark.parametrize("override, message", [
    ("optimizer.lr", "--set 'optimizer.lr': expected KEY=VALUE"),
    ("optimiser.lr=1", "--set 'optimiser.lr=1': unknown key 'optimiser' (did you mean 'optimizer'?)"),
    ("optimizer.lr.x=1", "--set 'optimizer.lr.x=1': optimizer.lr is a value, not a section"),
    ("optimizer.lr=[1", "--set 'optimizer.lr=[1': the value is not valid YAML"),
    ("optimizer.lr=-1", "x.yaml with --set optimizer.lr=-1: optimizer.lr must be > 0"),
    ("optimizer.learning_rate=0.1",
     "--set 'optimizer.learning_rate=0.1': unknown key 'optimizer.learning_rate' (did you mean 'optimizer.lr'?)"),
    ("lr=0.1", "--set 'lr=0.1': unknown key 'lr' (did you mean 'optimizer.lr'?)"),
    ("early_stopping.patience=3",
     "--set 'early_stopping.patience=3': unknown key 'early_stopping' (did you mean 'training.early_stopping'?)"),
    ("model.layers.0.unit=8", "x.yaml with --set model.layers.0.unit=8: model.layers[0]: unknown option 'unit' for "
                              "linear (did you mean 'units'?)"),
])
def test_override_errors(override, message):
    with pytest.raises(ConfigError) as e:
        config_from_dict({}, "x.yaml", [override])
    assert str(e.value).startswith(message)


def test_one_walk_finds_the_unknown_keys_of_every_section_with_a_did_you_mean():
    from mlp_manual.options import find_unknown_keys

    tree = {"seed": None, "training": {"epochs": None, "stop": {"patience": None}}, "data": {"noise": None}}
    document = {"sed": 1, "training": {"epochs": 2, "stop": {"patiense": 3}, "noise": 0.1}, "epochs": 4, "data": 5}
    assert find_unknown_keys(document, tree) == [("", "sed", " (did you mean 'seed'?)"),
                                                 ("training.stop.", "patiense", " (did you mean 'training.stop.patience'?)"),
                                                 ("training.", "noise", ""), ("", "epochs", "")]
    assert [hint for _, _, hint in find_unknown_keys(document, tree, tree=tree)][2:] == [
        " (did you mean 'data.noise'?)", " (did you mean 'training.epochs'?)"]  # a key of another section


def test_a_set_value_that_is_a_section_has_its_keys_checked():
    with pytest.raises(ConfigError) as e:
        config_from_dict({}, "x.yaml", ["training={epochz: 1}"])
    assert str(e.value) == "--set 'training={epochz: 1}': unknown key 'training.epochz' (did you mean 'training.epochs'?)"


def test_yaml_errors_give_the_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("optimizer:\n  lr: [0.1\n")
    with pytest.raises(ConfigError, match=r"bad.yaml: invalid YAML at line 3"):
        load_config(path)


def test_every_shipped_config_is_valid_and_round_trips(tmp_path):
    import pathlib
    for path in pathlib.Path("configs").glob("*.yaml"):
        cfg = with_absolute_paths(load_config(path))  # as a run folder's config.yaml holds it
        (tmp_path / "resolved.yaml").write_text(dump_config(cfg))
        assert load_config(tmp_path / "resolved.yaml") == cfg, path


COMMON_KEYS = {"data": {"name", "val_fraction", "test_fraction", "preprocess", "target_preprocess", "data_dir"},
               "optimizer": {"name", "lr", "weight_decay", "clip_norm", "accumulate"}, "schedule": {"name"}}


@pytest.mark.parametrize("dataset", list(LOADERS))
def test_a_written_config_holds_the_keys_that_apply_to_its_choices_and_reads_back_the_same(dataset):
    """Every dataset with every optimizer and every schedule: the data, optimizer and schedule
    sections hold their common keys and the options of the chosen thing, no other's."""
    data = {"name": dataset, **({"path": "x.csv"} if "path" in LOADERS[dataset].options else {})}
    for optimizer in OPTIMIZERS:
        for schedule in SCHEDULES:
            cfg = config_from_dict({"data": data, "optimizer": {"name": optimizer}, "schedule": {"name": schedule}})
            written = yaml.safe_load(dump_config(cfg))
            chosen = {"data": LOADERS[dataset], "optimizer": OPTIMIZERS[optimizer], "schedule": SCHEDULES[schedule]}
            for section, thing in chosen.items():
                assert set(written[section]) == COMMON_KEYS[section] | set(thing.options), (section, written[section])
            assert config_from_dict(written) == cfg


def test_names_writes_no_noise_adam_no_momentum_constant_no_warmup():
    written = yaml.safe_load(dump_config(load_config("configs/names_mlp.yaml", ["optimizer.name=adam",
                                                                                "schedule.name=constant"])))
    assert written["data"] == {"name": "names", "context": 3, "val_fraction": 0.1, "test_fraction": 0.1,
                               "preprocess": "none", "target_preprocess": "none", "data_dir": None}
    assert written["optimizer"] == {"name": "adam", "lr": 0.1, "weight_decay": 0.0, "clip_norm": None,
                                    "accumulate": 1, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8}
    assert written["schedule"] == {"name": "constant"}


def test_a_file_with_every_key_as_earlier_versions_wrote_reads_the_same(tmp_path):
    from conftest import with_every_key

    cfg = load_config("configs/names_mlp.yaml")
    path = tmp_path / "config.yaml"
    path.write_text(dump_config(cfg))
    old = with_every_key(path)
    assert "noise" in old["data"] and "n_samples" in old["data"]
    assert load_config(path) == cfg
    assert keys_that_apply(old) == yaml.safe_load(dump_config(cfg))
    with pytest.raises(ConfigError, match=r"data.noise is an option of .*, not of names \(data.name\)"):
        load_config(path, ["data.noise=0.5"])  # an option of another dataset, set to a value of its own


def test_relative_data_paths_are_read_from_the_config_folder_and_set_ones_from_the_current(tmp_path, monkeypatch):
    (tmp_path / "project" / "configs").mkdir(parents=True)
    path = tmp_path / "project" / "configs" / "c.yaml"
    path.write_text(f"data: {{name: csv, path: d.csv, val_path: ../v.csv, test_path: {tmp_path / 't.csv'}, "
                    "data_dir: files}\n")
    monkeypatch.chdir(tmp_path)
    d = load_config("project/configs/c.yaml").data
    assert (d.path, d.val_path, d.data_dir) == ("project/configs/d.csv", "project/configs/../v.csv",
                                                "project/configs/files")
    assert d.test_path == str(tmp_path / "t.csv")  # absolute: as written
    d = load_config("project/configs/c.yaml", ["data.path=mine.csv"]).data
    assert (d.path, d.val_path) == ("mine.csv", "project/configs/../v.csv")
    monkeypatch.chdir(path.parent)
    assert load_config("c.yaml").data.path == "d.csv"

"""The memory a run asks for: estimated once per run, before its largest allocation (a generated
dataset before it is made, data read from files once read), against a limit tied to the
machine, with the value at fault in the message; a sweep's ranges before any trial."""

import sys

import pytest
from conftest import invoke_cli

from mlp_manual import machine
from mlp_manual.cli.train import main as train_cli
from mlp_manual.config import Config, ConfigError, config_from_dict, load_config
from mlp_manual.config.memory import check_memory
from mlp_manual.machine import memory_limit
from mlp_manual.readable import readable_bytes
from mlp_manual.sweep.spec import load_sweep
from mlp_manual.training.experiment import prepare


@pytest.fixture
def limit(monkeypatch):
    """A run may use 100 MB, for exact messages on any machine."""
    monkeypatch.setattr(machine, "memory_limit", lambda: (100_000_000, "a test limit"))


@pytest.mark.parametrize("raw, message", [
    ({"data": {"name": "moons", "n_samples": 10**7}},
     "data.n_samples 10000000 needs about 1.44 GB for its data, more than the 100 MB a run may use (a test limit)"),
    ({"data": {"name": "xor", "copies": 10**6}},
     "data.copies 1000000 needs about 576 MB for its data, more than the 100 MB a run may use (a test limit)"),
    ({"model": {"layers": [{"type": "linear", "units": 10**7}, {"type": "linear"}]}},
     ("model.layers[0].units 10000000 needs about 72 GB for the activations and gradients of a batch, "
     "more than the 100 MB a run may use (a test limit)")),
    ({"model": {"layers": [{"type": "linear", "units": 3000}, "relu", {"type": "linear", "units": 3000},
                           {"type": "linear"}]}},
     ("model.layers[2].units 3000 needs about 144 MB for its weights (the whole run about 187 MB), more than "
     "the 100 MB a run may use (a test limit)")),
    ({"model": {"layers": [{"type": "linear", "units": 100}, {"type": "residual", "layers": [
        {"type": "linear", "units": 40000}, "relu", {"type": "linear"}]}, {"type": "linear"}]}},  # inside a block
     ("model.layers[1].layers[0].units 40000 needs about 289 MB for the activations and gradients of a "
     "batch (the whole run about 418 MB), more than the 100 MB a run may use (a test limit)")),
    ({"data": {"name": "blobs", "n_samples": 200_000}, "training": {"batch_size": 200_000}},
     ("training.batch_size 200000 needs about 96 MB for the activations and gradients of a batch (the "
     "whole run about 144 MB), more than the 100 MB a run may use (a test limit)")),  # 3 outputs, one per center
    ({"data": {"name": "blobs", "n_samples": 10**5, "centers": 10**5}},  # an output per class for each row
     "data.centers 100000 needs about 320 GB for evaluating its rows, more than the 100 MB a run may use (a test limit)"),
])
def test_a_run_asking_for_too_much_memory_is_refused_naming_the_value(limit, raw, message):
    cfg = config_from_dict(raw, "x.yaml")  # reading a config estimates nothing: it is the same on any machine
    with pytest.raises(ConfigError) as e:
        prepare(cfg)
    assert str(e.value) == f"x.yaml: {message}"  # the config named as it was read


def test_mlp_train_refuses_a_set_too_large_before_making_the_run_folder(limit, tmp_path):
    (tmp_path / "c.yaml").write_text("seed: 1\n")
    result = invoke_cli(train_cli, str(tmp_path / "c.yaml"), "--set", "data.n_samples=10000000",
                        "--out", str(tmp_path / "run"))
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == (f"Error: {tmp_path / 'c.yaml'} with --set data.n_samples=10000000: "
                                              "data.n_samples 10000000 needs about 1.44 GB for its data, more "
                                              "than the 100 MB a run may use (a test limit)")
    assert not (tmp_path / "run").exists()


def test_sizes_of_any_magnitude_give_a_message():
    cfg = config_from_dict({"model": {"layers": [{"type": "linear", "units": 10**400}, {"type": "linear"}]}}, "x.yaml")
    with pytest.raises(ConfigError, match=r"units 1000000000000000000000000000\.\.\.0+ needs more than 1000 EB"):
        prepare(cfg)


def estimates_during(run) -> int:
    """How many times ``run()`` estimates the memory of a run (calls of ``check_memory``, however
    it is imported)."""
    calls = []
    code = check_memory.__code__
    sys.setprofile(lambda frame, event, arg: calls.append(1) if event == "call" and frame.f_code is code else None)
    try:
        run()
    finally:
        sys.setprofile(None)
    return len(calls)


@pytest.mark.parametrize("config", ["configs/moons.yaml", "configs/iris.yaml"])  # generated, and read from a file
def test_one_mlp_train_run_estimates_its_memory_once_and_so_does_its_resume(tmp_path, config):
    run = tmp_path / "run"
    assert estimates_during(lambda: invoke_cli(train_cli, config, "--epochs", "2", "--out", str(run), "-q")) == 1
    assert (run / "summary.json").is_file()
    assert estimates_during(lambda: invoke_cli(train_cli, "--resume", str(run), "--epochs", "3", "-q")) == 1


def test_a_sweep_whose_range_would_not_fit_is_refused_before_any_trial(limit, tmp_path):
    (tmp_path / "s.yaml").write_text("config: {}\nspace:\n  data.n_samples: {low: 100, high: 10000000}\n")
    with pytest.raises(ConfigError) as e:
        load_sweep(tmp_path / "s.yaml")
    assert str(e.value) == (f"{tmp_path / 's.yaml'}: space data.n_samples: data.n_samples 10000000 needs about "
                            "1.44 GB for its data, more than the 100 MB a run may use (a test limit)")


def test_the_loaded_data_is_checked_with_its_real_width(limit):
    """digits has 64 features and 1150 training rows, which the config alone does not say."""
    cfg = config_from_dict({"data": {"name": "digits"},
                            "model": {"layers": [{"type": "linear", "units": 20000}, "relu", {"type": "linear"}]}})
    with pytest.raises(ConfigError) as e:
        prepare(cfg)
    assert str(e.value).startswith("config: model.layers[0].units 20000 needs about 554 MB for the activations")


def test_the_defaults_and_the_shipped_configs_fit():
    check_memory(Config())
    for name in ("xor", "moons", "spirals", "sine", "digits", "mnist1d"):
        load_config(f"configs/{name}.yaml")


def test_the_limit_is_half_the_memory_and_half_an_address_space_limit(monkeypatch):
    import os
    import resource

    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    monkeypatch.setattr(resource, "getrlimit", lambda what: (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    assert memory_limit() == (physical // 2, "half this machine's memory")
    monkeypatch.setattr(resource, "getrlimit", lambda what: (2 << 30, resource.RLIM_INFINITY))
    assert memory_limit() == (min(1 << 30, physical // 2), "half the address-space limit, ulimit -v")
    monkeypatch.delattr(os, "sysconf")
    monkeypatch.setattr(resource, "getrlimit", lambda what: (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    assert memory_limit() == (machine.FALLBACK_LIMIT, "the limit where the memory size is unknown")


@pytest.mark.parametrize("n, text", [(0, "0 bytes"), (999, "999 bytes"), (1000, "about 1 kB"),
                                     (999_999, "about 1 MB"), (3_200_000_000_000, "about 3.2 TB"),
                                     (10**20, "about 100 EB"), (10**21, "more than 1000 EB")])
def test_readable_bytes(n, text):
    assert readable_bytes(n) == text


def test_a_config_keeps_the_name_it_was_read_under_through_its_copies():
    from mlp_manual.config import with_absolute_paths

    cfg = config_from_dict({"seed": 1}, "x.yaml", ["seed=2"])
    assert cfg.source == "x.yaml with --set seed=2" and with_absolute_paths(cfg).source == cfg.source
    assert Config().source == "the config"

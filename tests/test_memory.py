"""The memory a config asks for: checked when the config is read and again once the data is
loaded, against a limit tied to the machine, with the value at fault in the message."""

import pytest

from mlp_manual import machine
from mlp_manual.config import Config, ConfigError, config_from_dict, load_config
from mlp_manual.config.memory import check_memory
from mlp_manual.machine import memory_limit
from mlp_manual.readable import readable_bytes
from mlp_manual.training.experiment import prepare


@pytest.fixture
def limit(monkeypatch):
    """A run may use 100 MB, for exact messages on any machine."""
    monkeypatch.setattr(machine, "memory_limit", lambda: (100_000_000, "a test limit"))


@pytest.mark.parametrize("raw, message", [
    ({"data": {"name": "moons", "n_samples": 10**7}},
     ("x.yaml: data.n_samples 10000000 needs about 1.44 GB for its data, more than the 100 MB a run may use "
     "(a test limit)")),
    ({"data": {"name": "xor", "copies": 10**6}},
     "x.yaml: data.copies 1000000 needs about 576 MB for its data, more than the 100 MB a run may use (a test limit)"),
    ({"model": {"layers": [{"type": "linear", "units": 10**7}, {"type": "linear"}]}},
     ("x.yaml: model.layers[0].units 10000000 needs about 72 GB for the activations and gradients of a batch, "
     "more than the 100 MB a run may use (a test limit)")),
    ({"model": {"layers": [{"type": "linear", "units": 3000}, "relu", {"type": "linear", "units": 3000},
                           {"type": "linear"}]}},
     ("x.yaml: model.layers[2].units 3000 needs about 144 MB for its weights (the whole run about 187 MB), more than "
     "the 100 MB a run may use (a test limit)")),
    ({"model": {"layers": [{"type": "linear", "units": 100}, {"type": "residual", "layers": [
        {"type": "linear", "units": 40000}, "relu", {"type": "linear"}]}, {"type": "linear"}]}},  # inside a block
     ("x.yaml: model.layers[1].layers[0].units 40000 needs about 289 MB for the activations and gradients of a "
     "batch (the whole run about 418 MB), more than the 100 MB a run may use (a test limit)")),
    ({"data": {"name": "blobs", "n_samples": 200_000}, "training": {"batch_size": 200_000}},
     ("x.yaml: training.batch_size 200000 needs about 86.4 MB for the activations and gradients of a batch (the "
     "whole run about 115 MB), more than the 100 MB a run may use (a test limit)")),
])
def test_a_config_asking_for_too_much_memory_names_the_value(limit, raw, message):
    with pytest.raises(ConfigError) as e:
        config_from_dict(raw, "x.yaml")
    assert str(e.value) == message


def test_set_overrides_are_checked_and_named(limit, tmp_path):
    (tmp_path / "c.yaml").write_text("seed: 1\n")
    with pytest.raises(ConfigError, match=r"c\.yaml with --set data\.n_samples=10000000: data\.n_samples 10000000 needs"):
        load_config(tmp_path / "c.yaml", ["data.n_samples=10000000"])


def test_sizes_of_any_magnitude_give_a_message():
    with pytest.raises(ConfigError, match=r"units 1000000000000000000000000000\.\.\.0+ needs more than 1000 EB"):
        config_from_dict({"model": {"layers": [{"type": "linear", "units": 10**400}, {"type": "linear"}]}}, "x.yaml")


def test_the_loaded_data_is_checked_with_its_real_width(limit):
    """digits has 64 features and 1150 training rows, which the config alone does not say."""
    cfg = config_from_dict({"data": {"name": "digits"},
                            "model": {"layers": [{"type": "linear", "units": 20000}, "relu", {"type": "linear"}]}})
    with pytest.raises(ConfigError) as e:
        prepare(cfg)
    assert str(e.value).startswith("model.layers[0].units 20000 needs about 554 MB for the activations")


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

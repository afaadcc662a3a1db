import os

# One BLAS thread in each test process and in every command a test starts: the tests run on every
# core at once (pytest-xdist, see pyproject.toml), and there a second BLAS thread per process spins
# while it waits for a core (10 epochs of configs/digits.yaml on a busy 2-core machine: 20 s of CPU
# with two threads, 2 s with one). Set before numpy is first imported; a value already set stands.
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import json  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from click.testing import CliRunner  # noqa: E402

from mlp_manual.gradcheck.numgrad import numerical_gradient, relative_error  # noqa: E402


def pytest_addoption(parser, pluginmanager):
    """Without pytest-xdist (a pytest installed outside the test extras), the ``-n auto`` of
    pyproject.toml's addopts is taken and ignored: the tests run in this one process."""
    if not pluginmanager.has_plugin("xdist"):
        # a short lowercase option, as pytest-xdist declares it (parser.addoption refuses those)
        parser.getgroup("xdist")._addoption("-n", "--numprocesses", dest="numprocesses", default=None,
                                            help="ignored: pytest-xdist is not installed (pip install -e '.[test]')")


def pytest_report_header(config):
    if not config.pluginmanager.has_plugin("xdist"):
        return "pytest-xdist is not installed: the tests run in one process (pip install -e '.[test]')"


def invoke_cli(command, *args):
    """Run a click command with CliRunner; a traceback or any exception but SystemExit fails the test."""
    result = CliRunner().invoke(command, list(args))
    assert "Traceback" not in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result


def assert_same_run(a, b):
    """Two run folders hold the same run: model.npz arrays bit for bit, metrics.csv except the
    seconds column, summary.json except its times and its folder."""
    with np.load(a / "model.npz") as fa, np.load(b / "model.npz") as fb:
        assert fa.files == fb.files and all(np.array_equal(fa[k], fb[k]) for k in fa.files if k != "__spec__")
    rows_a, rows_b = ((run / "metrics.csv").read_text().splitlines() for run in (a, b))
    assert rows_a[0].endswith(",seconds")
    assert [r.rsplit(",", 1)[0] for r in rows_a] == [r.rsplit(",", 1)[0] for r in rows_b]
    times = ("wall_seconds", "run_dir")
    sa, sb = (json.loads((run / "summary.json").read_text()) for run in (a, b))
    assert {k: v for k, v in sa.items() if k not in times} == {k: v for k, v in sb.items() if k not in times}


@pytest.fixture
def figures(monkeypatch):
    """{file name: the figure that would have been written to it}, for every module of plots/."""
    import matplotlib.pyplot as plt

    from mlp_manual.plots import classes, curves, diagnostics

    drawn = {}
    for module in (curves, classes, diagnostics):
        monkeypatch.setattr(module, "save", lambda fig, path: drawn.__setitem__(path.name, fig))
    yield drawn
    for fig in drawn.values():
        plt.close(fig)


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


@pytest.fixture
def module_in_cwd(tmp_path, monkeypatch):
    """Makes the empty tmp folder the current directory; returns write(text) -> name, which writes
    a Python module there under a name no other test uses. The modules are forgotten afterwards."""
    monkeypatch.chdir(tmp_path)
    names = []

    def write(text: str) -> str:
        names.append(f"user_module_{len(names)}_" + re.sub(r"\W", "_", tmp_path.name))
        (tmp_path / f"{names[-1]}.py").write_text(text)
        return names[-1]

    yield write
    for name in names:
        sys.modules.pop(name, None)


@pytest.fixture
def clean_env(tmp_path, monkeypatch):
    """No data directory from the developer's machine: empty cwd, env var unset, cache in tmp."""
    from mlp_manual.datasets import datadir

    monkeypatch.delenv(datadir.ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def check_layer_gradients(layer, x, rng, tol=1e-7, indices=False):
    """Float64 central differences of sum(layer(x) * g) against layer.backward(g), for dx (unless
    x holds ``indices``, which have no gradient) and every parameter, with a random upstream
    gradient g. Restores random generators before each forward so that stochastic layers see one
    fixed mask. Returns each tensor's largest relative error."""
    rng_state = getattr(layer, "rng", None) and layer.rng.bit_generator.state

    def forward():
        if rng_state:
            layer.rng.bit_generator.state = rng_state
        return layer.forward(x)

    out = forward()
    g = rng.normal(size=out.shape)
    forward()
    dx = layer.backward(g.copy())
    grads = {k: v.copy() for k, v in layer.grads.items()}

    def f():
        return forward().copy()

    errors = {} if indices else {"dx": relative_error(dx, numerical_gradient(f, x, g)).max()}
    for k, p in layer.params.items():
        errors[k] = relative_error(grads[k], numerical_gradient(f, p, g)).max()
    for name, err in errors.items():
        assert err < tol, f"{layer!r}: {name} relative error {err:.2e}"
    return errors


@pytest.fixture
def sigint_raises():
    """Ctrl-C raises KeyboardInterrupt during the test, as in a terminal, even when the tests
    were started with SIGINT ignored (a background job of a shell without job control)."""
    import signal

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def with_every_key(path) -> dict:
    """Rewrite the config file ``path`` (a run's config.yaml) as earlier versions wrote it, with
    every dataset's options, those of the datasets it does not name at their defaults; returns
    the document written."""
    import yaml

    from mlp_manual.datasets.load import dataset_options

    raw = yaml.safe_load(path.read_text())
    raw["data"] = {"name": raw["data"]["name"], **{k: o.default for k, o in dataset_options().items()}, **raw["data"]}
    raw["data"] = {k: list(v) if isinstance(v, tuple) else v for k, v in raw["data"].items()}
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return raw


def interrupted_run(cfg, out) -> None:
    """train_run(cfg) into ``out``, interrupted as by Ctrl-C right after epoch 2 is reported: the
    run stops one step into epoch 3 with TrainingInterrupted, its checkpoint written."""
    import signal

    from mlp_manual.errors import TrainingInterrupted
    from mlp_manual.runs.run import train_run

    def echo(line):
        if line.startswith("epoch 2/"):
            os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(TrainingInterrupted):
        train_run(cfg, str(out), echo=echo)

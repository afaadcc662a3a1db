"""Gradient checks of what a user brings: a layer of their own, imported as ``module:attr`` from
the current directory (or ``path/to/module.py:attr``), or the whole model a config builds,
checked through its loss on a batch of its training data.

N = batch size, D = input features.
"""

import inspect

import numpy as np

from ..config import load_config
from ..core import Layer
from ..errors import ConfigError, GradcheckError, LayerError, UserCodeError
from ..layers.registry import Build, build_layer
from ..layers.user_modules import declared_type, import_module
from ..training.experiment import prepare
from .check import (
    check_layer,
    check_model,
    describe,
    modes_to_check,
    require_layer,
    what_was_raised,
)
from .report import SuiteReport

CONFIG_BATCH = 32  # at most this many training rows for a config's model


def split_spec(spec: str) -> tuple[str, str]:
    """``my_layers:Swish`` -> ("my_layers", "Swish"); GradcheckError for anything else."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise GradcheckError(f"{spec!r}: expected MODULE:ATTR, e.g. my_layers:make_layer")
    return module_name, attr


def load_layer(spec: str, source: str | None = None, width: int | None = None):
    """Import ``module:attr`` (the module by name from the current directory, or a .py file by
    path) and make a layer of it: a function is called without arguments, an object used as is,
    and a class constructed without arguments, or, when its constructor asks for a width
    (``features``, or ``in_features`` and ``out_features``) and ``width`` is given, built for
    ``width`` input features as a config would build it (``out_features`` = width + 1, so the
    weights are not square; ``rng`` and ``dtype`` given when asked for). ``source`` is how error
    messages name the spec (default: the spec itself)."""
    module_name, attr = split_spec(spec)
    source = source or spec
    try:
        module = import_module(module_name, source)
    except UserCodeError as e:
        raise GradcheckError(str(e)) from e
    if not hasattr(module, attr):
        raise GradcheckError(f"{source}: module {module_name!r} has no attribute {attr!r}")
    obj = getattr(module, attr)
    if width is not None and isinstance(obj, type) and issubclass(obj, Layer) and _needs_arguments(obj):
        return _build_for_width(obj, f"{module_name}:{attr}", module_name, width, source)
    if isinstance(obj, type) or (callable(obj) and not hasattr(obj, "forward")):
        try:
            obj = obj()
        except Exception as e:
            raise GradcheckError(f"{source}: {attr}() raised {what_was_raised(e)} "
                                 "(it must be callable without arguments)") from e
    require_layer(obj, f"{source} gave {describe(obj)}, which")
    return obj


def _needs_arguments(cls: type) -> bool:
    """Whether constructing ``cls`` needs an argument (one without a default)."""
    try:
        params = inspect.signature(cls).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params)


def _build_for_width(cls: type, name: str, module: str, width: int, source: str):
    """The layer of class ``cls`` a config would build for ``width`` input features."""
    try:
        layer_type = declared_type(name, cls, module)
        layer = build_layer(layer_type, {}, width, Build(np.random.default_rng(0), np.float64), width + 1, source)
    except (LayerError, ConfigError) as e:
        raise GradcheckError(f"{source}: {e}" if not str(e).startswith(source) else str(e)) from None
    except Exception as e:
        raise GradcheckError(f"{source}: {cls.__name__}(...) raised {what_was_raised(e)} when built for {width} "
                             "input features") from e
    require_layer(layer, f"{source} gave {describe(layer)}, which")
    return layer


def check_user_layer(spec: str, shape: tuple[int, ...], *, source: str | None = None, **settings) -> SuiteReport:
    """Check the layer ``load_layer(spec, source)`` makes on a standard-normal input of ``shape``
    (N, D), in each mode where it computes differently; settings as for ``check_layer``."""
    layer = load_layer(spec, source, width=shape[-1])
    x = user_layer_input(shape, settings["seed"])  # (N, D)
    reports = [check_layer(layer, x, mode=mode, label=f"{spec} x{shape}" + (f" {mode}" if mode else ""), **settings)
               for mode in modes_to_check(layer, x)]
    notes = [(f"input drawn from a standard normal (seed {settings['seed']}); entries whose perturbation "
              "crosses a kink are reported as KINK when the gradient is a valid subgradient there")]
    return SuiteReport(reports, notes)


def user_layer_input(shape: tuple[int, ...], seed: int) -> np.ndarray:
    """The input a user's layer is checked on: standard normal of ``shape``, drawn with ``seed``."""
    return np.random.default_rng(seed).normal(size=shape)


def check_config(path, overrides=(), **settings) -> SuiteReport:
    """Check the model the config at ``path`` (with ``--set`` style ``overrides``) builds, through
    its loss, on at most CONFIG_BATCH training rows drawn with ``settings["seed"]``."""
    exp, X, y, label = config_batch(path, overrides, settings["seed"])
    reports = [check_model(exp.model, exp.loss, X, y, mode=mode, label=label + (f" {mode}" if mode else ""), **settings)
               for mode in modes_to_check(exp.model, X)]
    notes = [f"{len(X)} training rows drawn with seed {settings['seed']}; the model is checked in float64"]
    return SuiteReport(reports, notes)


def config_batch(path, overrides, seed: int):
    """The experiment the config at ``path`` prepares, at most CONFIG_BATCH of its training rows
    X (N, D) and y drawn with ``seed``, and a label naming them."""
    cfg = load_config(path, list(overrides))
    exp = prepare(cfg)
    X, y = exp.data.X_train, exp.data.y_train
    n = min(len(X), max(cfg.training.batch_size, 2), CONFIG_BATCH)
    rows = np.sort(np.random.default_rng(seed).choice(len(X), n, replace=False))
    return exp, X[rows], y[rows], f"{cfg.name} ({cfg.loss.name}) X({n}, {X.shape[1]})"

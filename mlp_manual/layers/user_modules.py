"""Layer types from a user's own code.

``--import my_layers`` imports a module, by name from the current folder or as the path of a
``.py`` file, and registers every ``mlp_manual.Layer`` subclass it defines as the layer type
``my_layers:ClassName``, whose options and width rule its constructor declares
(``declared_type``). Configs then name it, and model files that hold it load again.
``check_user_layers`` tries a model's layers of such types once before a command uses them.
"""

import importlib
import inspect
import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

from ..core import Layer
from ..errors import LayerError, UserCodeError, what_was_raised
from ..options import option_like
from .options import FEATURES, KEEP, UNITS
from .registry import LAYERS, LayerType, register, type_of, unregister
from .types import Units
from .user_checks import probe


def import_module(text: str, source: str | None = None) -> ModuleType:
    """The module ``text`` names: ``my_layers`` (importable from the current folder, or from
    Python's path) or ``path/to/my_layers.py`` (imported as ``my_layers`` from its folder).
    UserCodeError, naming ``source`` (default ``text``), when it cannot be imported."""
    source = source or text
    if text.endswith(".py") or "/" in text or os.sep in text:
        path = Path(text)
        if not path.is_file():
            raise UserCodeError(f"{source}: no file {path}; name a .py file, or a module to import from the "
                                "current folder without .py")
        folder, name = str(path.resolve().parent), path.stem
    else:
        folder, name = os.getcwd(), text
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    try:
        return importlib.import_module(name)
    except Exception as e:
        raise UserCodeError(f"{source}: cannot import {name!r}: {what_was_raised(e)}") from e
    finally:
        if added:
            sys.path.remove(folder)


def layer_classes(module: ModuleType) -> list[type]:
    """The Layer subclasses ``module`` defines (not the ones it imports), in their order."""
    return [c for c in vars(module).values()
            if isinstance(c, type) and issubclass(c, Layer) and c.__module__ == module.__name__]


def register_module(module: ModuleType, source: str) -> list[LayerType]:
    """Register each layer class of ``module`` not registered yet as ``<module>:<class>``; return
    the new entries. UserCodeError when it defines none, or one a config cannot use."""
    classes = layer_classes(module)
    if not classes:
        raise UserCodeError(f"{source}: {module.__name__} defines no layer class (a subclass of mlp_manual.Layer)")
    registered = {t.cls for t in LAYERS.values()}  # by the module itself, or by an earlier --import
    added = []
    try:
        for cls in classes:
            if cls not in registered:
                added.append(register(declared_type(f"{module.__name__}:{cls.__name__}", cls, module.__name__)))
    except LayerError as e:
        for t in added:
            unregister(t.name)
        raise UserCodeError(f"{source}: {e}") from None
    return added


@contextmanager
def imported_layers(modules: Iterable[str]) -> Iterator[list[LayerType]]:
    """While inside, the layer types of each module in ``modules`` (see ``import_module``) are
    registered; they are removed again on leaving."""
    added: list[LayerType] = []
    try:
        for text in modules:
            added += register_module(import_module(text, f"--import {text}"), f"--import {text}")
        yield added
    finally:
        for t in added:
            unregister(t.name)

def declared_type(name: str, cls: type, module: str) -> LayerType:
    """The entry of a user's Layer subclass, read from its constructor: an argument ``features``
    gets the width flowing in (as normalisation layers), ``in_features`` and ``out_features``
    the width in and the option ``units`` (as linear); ``rng`` and ``dtype`` get the run's; every
    other argument is an option of the kind of its default (``option_like``). LayerError when
    an argument has no default or one a config cannot write."""
    params = {n: p for n, p in inspect.signature(cls).parameters.items()
              if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    widths = UNITS if {"in_features", "out_features"} <= set(params) else FEATURES if "features" in params else KEEP
    wants = tuple(n for n in ("rng", "dtype") if n in params)
    options = {}
    for n, p in params.items():
        if n in widths.names or n in wants:
            continue
        if p.default is p.empty:
            raise LayerError(f"{name}: the constructor argument {n!r} has no default; every argument but the widths "
                             "(features, or in_features and out_features), rng and dtype is an option a config may "
                             "leave out, so give it a default")
        options[n] = option_like(p.default)
        if options[n] is None:
            raise LayerError(f"{name}: the constructor argument {n!r} has the default {p.default!r}; an option's "
                             "default must be a number, a string, true or false, or None")
    state = getattr(cls, "unit_state", None)  # "dead" or "saturated", with a stuck(out) of its own
    units = Units(state, lambda layer, out: layer.stuck(out)) if state else None
    return LayerType(name, cls, options, widths, wants, module, units=units,
                     modes_differ=getattr(cls, "modes_differ", False), min_train_rows=getattr(cls, "min_train_rows", 1))


def check_user_layers(model, x) -> None:
    """Try the model's layers of a user's types once on the first rows of ``x`` (N, D), before a
    command does its work (``user_checks.probe``); UserCodeError names the layer and its type."""
    rows = max([t.min_train_rows for _, layer in model.named_layers() if (t := type_of(layer))] + [1])
    probe(model, x, users_type, rows)


def users_type(layer) -> str | None:
    """The type name of a layer of a user's type (``my_layers:Scale``), or of no registered type
    (a layer a script built by hand: its class name); None for a built-in layer."""
    t = type_of(layer)
    return type(layer).__name__ if t is None else t.name if t.module is not None else None


def blame_user_layer(e: BaseException) -> UserCodeError | None:
    """For an exception raised while a user's layer ran (a method of a layer of a user's type is
    on its traceback), a UserCodeError naming that type, the method and its line; else None."""
    found = None
    tb = e.__traceback__
    while tb is not None:  # outermost to innermost: the last such frame is the closest to the raise
        t = type_of(tb.tb_frame.f_locals.get("self"))
        if t is not None and t.module is not None:
            found = (t.name, tb.tb_frame.f_code, tb.tb_lineno)
        tb = tb.tb_next
    if found is None:
        return None
    name, code, line = found
    return UserCodeError(f"{name}.{code.co_name} raised {what_was_raised(e)} ({Path(code.co_filename).name}, "
                         f"line {line})")

"""The package's size limits, read from its source: no module over MAX_MODULE_LINES (300) lines,
no function over MAX_FUNCTION_LINES (60) lines (from its ``def`` line to its last line,
decorators left out), and no function with more than MAX_PARAMETERS (8) parameters (every
positional, keyword-only, ``*args`` and ``**kwargs`` parameter; a method's ``self`` or
``cls`` is not counted).

Two kinds of function keep their long parameter lists, because a library's API takes one
argument per option; both are told by their structure, not by name:

- a click command's callback: a function decorated by ``click.command`` or ``click.group``, or
  by ``.command`` or ``.group`` of such a group in its module (``@main.command()``): click
  passes it one keyword per option;
- a scikit-learn estimator's ``__init__``: the ``__init__`` of a class deriving, through the
  package's own classes, from scikit-learn's ``BaseEstimator`` (imported from ``sklearn.base``):
  scikit-learn requires every hyperparameter as an explicit ``__init__`` argument.

They still keep to the line limits. A failure names each module or function and its size.
"""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "mlp_manual"
MAX_MODULE_LINES = 300
MAX_FUNCTION_LINES = 60
MAX_PARAMETERS = 8
CLICK_DECORATORS = ("command", "group")


def parameter_count(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    a = fn.args
    count = len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs) + bool(a.vararg) + bool(a.kwarg)
    receiver = (a.posonlyargs + a.args)[:1]
    return count - bool(receiver and receiver[0].arg in ("self", "cls"))


def _decorator_target(decorator: ast.expr) -> tuple[str, str] | None:
    """``("click", "command")`` for ``@click.command(...)``, ``("main", "command")`` for
    ``@main.command()``; None for any other decorator."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.attr in CLICK_DECORATORS:
        return target.value.id, target.attr
    return None


def click_callbacks(tree: ast.Module) -> set[ast.AST]:
    """The functions of a module that click calls with one keyword per option."""
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    groups = {fn.name for fn in functions
              if any(_decorator_target(d) == ("click", "group") for d in fn.decorator_list)}
    return {fn for fn in functions
            if any((t := _decorator_target(d)) is not None and (t[0] == "click" or t[0] in groups)
                   for d in fn.decorator_list)}


def _base_name(base: ast.expr) -> str | None:
    return base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else None


def estimator_classes(trees: dict[Path, ast.Module]) -> set[str]:
    """The names of the package's classes that derive from scikit-learn's BaseEstimator, through
    any chain of the package's own classes."""
    roots, bases = set(), {}
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "sklearn.base":
                roots.update(a.asname or a.name for a in node.names if a.name == "BaseEstimator")
            elif isinstance(node, ast.ClassDef):
                bases.setdefault(node.name, set()).update(filter(None, map(_base_name, node.bases)))
    found = set()
    while True:
        more = {name for name, of in bases.items() if name not in found and of & (roots | found)}
        if not more:
            return found
        found |= more


def exempt_inits(tree: ast.Module, estimators: set[str]) -> set[ast.AST]:
    """The ``__init__`` methods of the estimator classes defined in ``tree``."""
    return {item for node in ast.walk(tree) if isinstance(node, ast.ClassDef) and node.name in estimators
            for item in node.body if isinstance(item, ast.FunctionDef) and item.name == "__init__"}


def oversized(package: Path) -> list[str]:
    """Every module, function and parameter list of ``package`` beyond the limits, as
    ``path: what (size, the limit)``."""
    trees = {path: ast.parse(path.read_text(encoding="utf-8")) for path in sorted(package.rglob("*.py"))}
    estimators = estimator_classes(trees)
    found = []
    for path, tree in trees.items():
        name = path.relative_to(package.parent)
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_MODULE_LINES:
            found.append(f"{name}: module of {lines} lines (at most {MAX_MODULE_LINES})")
        exempt = click_callbacks(tree) | exempt_inits(tree, estimators)
        functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        for fn in sorted(functions, key=lambda n: n.lineno):
            length = fn.end_lineno - fn.lineno + 1
            if length > MAX_FUNCTION_LINES:
                found.append(f"{name}:{fn.lineno} {fn.name}: {length} lines (at most {MAX_FUNCTION_LINES})")
            count = parameter_count(fn)
            if count > MAX_PARAMETERS and fn not in exempt:
                found.append(f"{name}:{fn.lineno} {fn.name}: {count} parameters (at most {MAX_PARAMETERS})")
    return found


def test_no_module_function_or_parameter_list_of_the_package_is_over_its_limit():
    found = oversized(PACKAGE)
    assert not found, f"{len(found)} over the limits:\n" + "\n".join(found)


EXEMPT = '''
import click
from sklearn.base import BaseEstimator as Estimator


@click.group()
def main():
    pass


@main.command()
@click.option("--a")
def sub(a, b, c, d, e, f, g, h, i):
    pass


@click.command
def plain(a, b, c, d, e, f, g, h, i):
    pass


class Base(Estimator):
    def __init__(self, a, b, c, d, e, f, g, h, i):
        pass


class Classifier(Base):
    def __init__(self, a, b, c, d, e, f, g, h, i):
        pass

    def fit(self, a, b, c, d, e, f, g, h):
        pass
'''

OVER = '''
import click


@click.option("--a")
def not_a_command(a, b, c, d, e, f, g, h, i):
    pass


@other.command()
def of_another_group(a, b, c, d, e, f, g, h, i):
    pass


class Plain:
    def __init__(self, a, b, c, d, e, f, g, h, i):
        pass

    def method(self, *args, a, b, c, d, e, f, g, **kwargs):
        pass


def long():
''' + "    x = 1\n" * 60


def test_the_limits_name_what_is_over_and_exempt_only_click_callbacks_and_estimator_inits(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "exempt.py").write_text(EXEMPT)
    assert oversized(package) == []
    (package / "over.py").write_text(OVER + "\n" * (MAX_MODULE_LINES + 1 - len(OVER.splitlines())))
    assert oversized(package) == [
        f"pkg/over.py: module of {MAX_MODULE_LINES + 1} lines (at most {MAX_MODULE_LINES})",
        f"pkg/over.py:6 not_a_command: 9 parameters (at most {MAX_PARAMETERS})",
        f"pkg/over.py:11 of_another_group: 9 parameters (at most {MAX_PARAMETERS})",
        f"pkg/over.py:16 __init__: 9 parameters (at most {MAX_PARAMETERS})",
        f"pkg/over.py:19 method: 9 parameters (at most {MAX_PARAMETERS})",
        f"pkg/over.py:23 long: 61 lines (at most {MAX_FUNCTION_LINES})",
    ]

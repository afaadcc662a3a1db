"""No import cycle in the package: read every module's import statements and check that the
modules import each other in one direction only, whatever module a program imports first."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "mlp_manual"


def module_names(package: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every module of ``package`` (a package is its __init__)."""
    names = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(package.parent).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def _is_type_checking(test: ast.expr) -> bool:
    return "TYPE_CHECKING" in ast.unparse(test)


def imports_at_load(name: str, path: Path, modules) -> set[str]:
    """The modules of the package that importing ``name`` runs: its module-level imports, not
    those inside functions (they run later) or under ``if TYPE_CHECKING:``. Importing a.b.c
    also runs the packages a.b and a, unless ``name`` lies inside them (they have started)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets = set()

    def visit(body):
        for node in body:
            if isinstance(node, ast.If):
                visit(node.orelse if _is_type_checking(node.test) else node.body + node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body + node.orelse + node.finalbody + [s for h in node.handlers for s in h.body])
            elif isinstance(node, ast.Import):
                targets.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join(anchor + ([node.module] if node.module else []))
                for alias in node.names:
                    targets.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)

    visit(ast.parse(path.read_text(encoding="utf-8")).body)
    runs = set()
    for target in targets:
        parts = target.split(".")
        for i in range(1, len(parts) + 1):
            prefix = ".".join(parts[:i])
            if prefix in modules and prefix != name and not (name + ".").startswith(prefix + "."):
                runs.add(prefix)
    return runs


def import_graph(package: Path) -> dict[str, set[str]]:
    modules = module_names(package)
    return {name: imports_at_load(name, path, modules) for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A list of modules that import each other in a ring (first == last), or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (ring := visit(nxt)):
                return ring
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state and (ring := visit(node)):
            return ring
    return None


def test_the_package_has_no_import_cycle():
    graph = import_graph(PACKAGE)
    assert len(graph) > 50 and "mlp_manual.optimizers" in graph["mlp_manual.config.schema"]
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


def test_the_checker_finds_a_cycle_and_ignores_type_checking_imports(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from .a import A\n")
    (pkg / "sub" / "a.py").write_text("from ..b import B\nA = 1\n")
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .sub.a import A\n"
                              "def f():\n    from .sub import a\nB = 2\n")
    assert find_cycle(import_graph(pkg)) is None
    (pkg / "b.py").write_text("from .sub import a\nB = 2\n")
    assert find_cycle(import_graph(pkg)) == ["pkg.b", "pkg.sub", "pkg.sub.a", "pkg.b"]



CORE_LIMIT = 1200  # lines: the "about 1,200", read in an hour


def every_import(path: Path) -> set[str]:
    """Every module ``path`` imports, at load or inside a function, relative ones as written."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.add("." * node.level + (node.module or ""))
    return found


def test_the_core_imports_only_numpy_the_array_api_helpers_the_standard_library_and_itself():
    import sys

    core = sorted((PACKAGE / "core").glob("*.py"))
    assert core
    for path in core:
        for name in every_import(path):
            if name.startswith("."):
                assert not name.startswith(".."), f"core/{path.name} imports {name}, outside the core"
                continue
            top = name.split(".")[0]
            assert top in ("numpy", "array_api_compat", "array_api_extra") or top in sys.stdlib_module_names, \
                f"core/{path.name} imports {name}: the core is numpy, the array-API helpers and the standard library"
    lines = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in core)
    assert lines <= CORE_LIMIT, f"core/ is {lines} lines, more than {CORE_LIMIT}"

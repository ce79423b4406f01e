"""The import contracts that keep the layers apart, read from the source (no imports run).

- The model (``transforms``, ``brushes``) and the Qt-free parts of the app (the session, the
  pointer tools) import neither Qt, wgpu nor rendercanvas, directly or through anything they import;
  ``transforms`` and ``brushes`` import nothing of ``app`` or ``gpu``.
- ``gpu`` imports nothing of ``app``; ``transforms`` nothing of ``brushes``.
- No cycle between modules, counting imports inside functions (only ``if TYPE_CHECKING:`` blocks,
  which never run, are left out).
"""

from __future__ import annotations

import ast
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DIRS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
    "package-dir"
]
GUI_LIBRARIES = ("PySide6", "wgpu", "rendercanvas")


def modules() -> dict[str, Path]:
    """Every module of the package by dotted name."""
    found = {}
    for package, folder in PACKAGE_DIRS.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            if any(part in ("entry",) for part in parts[:-1]) and package != "spectropaint":
                continue  # the root package's folder is listed on its own
            name = ".".join((package, *parts))
            found[name.removesuffix(".__init__")] = path
    return found


MODULES = modules()


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_of(name: str) -> set[str]:
    """Dotted names ``name`` imports anywhere but under ``if TYPE_CHECKING:``."""
    tree = ast.parse(MODULES[name].read_text())
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            base = node.module
            if node.level:
                package = name if MODULES[name].name == "__init__.py" else name.rsplit(".", 1)[0]
                for _ in range(node.level - 1):
                    package = package.rsplit(".", 1)[0]
                base = f"{package}.{node.module}"
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def internal_edges(name: str) -> set[str]:
    """The package's own modules that ``name`` imports (``from a import b`` counts ``a.b`` when it
    is a module, else ``a``)."""
    edges = set()
    for imported in imports_of(name):
        while imported and imported not in MODULES:
            imported = imported.rpartition(".")[0]
        if imported and imported != name and imported != "spectropaint":
            edges.add(imported)
    return edges


GRAPH = {name: internal_edges(name) for name in MODULES}


def reachable(name: str) -> set[str]:
    seen, todo = set(), [name]
    while todo:
        for nxt in GRAPH[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def external(name: str) -> set[str]:
    return {imported.split(".")[0] for imported in imports_of(name)} - {"spectropaint"}


def under(prefix: str) -> list[str]:
    return [name for name in MODULES if name == prefix or name.startswith(prefix + ".")]


QT_FREE = (
    *under("spectropaint.transforms"),
    *under("spectropaint.brushes"),
    "spectropaint.app.session",
    *under("spectropaint.app.tools"),
)


def test_the_modules_are_found():
    assert "spectropaint.app.session" in MODULES and "spectropaint.brushes.kernels.blur" in MODULES
    assert len(MODULES) > 60


def test_the_model_session_and_tools_never_reach_qt_wgpu_or_rendercanvas():
    offenders = {}
    for name in QT_FREE:
        for module in (name, *reachable(name)):
            bad = external(module) & set(GUI_LIBRARIES)
            if bad:
                offenders[name] = (module, sorted(bad))
    assert offenders == {}


def test_the_model_imports_neither_app_nor_gpu():
    for name in (*under("spectropaint.transforms"), *under("spectropaint.brushes")):
        bad = {m for m in GRAPH[name] if m.startswith(("spectropaint.app", "spectropaint.gpu"))}
        assert not bad, f"{name} imports {sorted(bad)}"


def test_transforms_import_nothing_of_brushes_and_gpu_nothing_of_app():
    for name in under("spectropaint.transforms"):
        bad = {m for m in GRAPH[name] if m.startswith("spectropaint.brushes")}
        assert not bad, f"{name} imports {sorted(bad)}"
    for name in under("spectropaint.gpu"):
        bad = {m for m in GRAPH[name] if m.startswith("spectropaint.app")}
        assert not bad, f"{name} imports {sorted(bad)}"


def test_no_module_imports_itself_through_others():
    cycles = sorted(name for name in MODULES if name in reachable(name))
    assert cycles == []


def test_the_contract_test_would_see_a_violation(tmp_path):
    """The reader finds imports inside functions and relative ones, and skips TYPE_CHECKING."""
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    import PySide6\n"
        "def f():\n    import wgpu\n"
        "from .errors import SettingsError\n"
    )
    path = tmp_path / "probe.py"
    path.write_text(source)
    MODULES["spectropaint.transforms.probe"] = path
    try:
        assert external("spectropaint.transforms.probe") == {"typing", "wgpu"}
        assert "spectropaint.transforms.errors" in imports_of("spectropaint.transforms.probe")
    finally:
        del MODULES["spectropaint.transforms.probe"]
    assert "PySide6" in external("spectropaint.app.window.main_window")
    back = "spectropaint.transforms.regions"
    GRAPH[back].add("spectropaint.brushes.history")  # history imports regions: a cycle
    try:
        assert back in reachable(back)
    finally:
        GRAPH[back].discard("spectropaint.brushes.history")

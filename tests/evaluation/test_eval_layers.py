"""The evaluation package's modules import each other in one direction (its docstring's order)."""

from __future__ import annotations

import ast
from pathlib import Path

import bm25desk.evaluation

# Lowest first: a module may import only modules before it (and the engine).
ORDER = [
    "data",
    "textio",
    "detect",
    "glasgow",
    "queries",
    "qrels",
    "runs",
    "interfaces",
    "configs",
    "jsonsafe",
    "metrics",
    "results",
    "checks",
    "experiments",
    "significance",
    "sweeps",
    "export",
    "cli_inputs",
    "cli_output",
    "cli",
]
REEXPORTS = {"evaluate", "topics"}  # the old paths: above everything, imported by nothing here


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[:2] == ["bm25desk", "evaluation"] and len(parts) > 2:
                found.add(parts[2])
    return found


def test_every_module_is_placed():
    package = Path(bm25desk.evaluation.__file__).parent
    modules = {p.stem for p in package.glob("*.py")} - {"__init__"}
    assert modules == set(ORDER) | REEXPORTS


def test_imports_go_one_way():
    package = Path(bm25desk.evaluation.__file__).parent
    wrong = []
    for i, module in enumerate(ORDER):
        allowed = set(ORDER[:i])
        for target in _imports(package / f"{module}.py") - {module}:
            if target not in allowed:
                wrong.append(f"{module} imports {target}")
    assert wrong == []

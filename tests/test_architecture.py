"""Import rules: the engine, the CLI and paths never load Qt or the UI (pyproject's contracts).

Each module is imported in a fresh interpreter (this test process may already hold PySide6 from
pytest-qt), and ``sys.modules`` is checked afterwards.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = ("PySide6", "shiboken6", "pyqtgraph", "bm25desk.ui")

_PROBE = """
import importlib, json, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
print(json.dumps(sorted(sys.modules)))
"""


def _loaded_after_import(*modules: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSTARTUP"}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, *modules],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("module", ["bm25desk.engine", "bm25desk.cli", "bm25desk.paths"])
def test_qt_free(module: str) -> None:
    if (
        not (ROOT / (module.replace(".", "/") + ".py")).exists()
        and not (ROOT / module.replace(".", "/") / "__init__.py").exists()
    ):
        pytest.fail(f"{module} does not exist")
    loaded = _loaded_after_import(module)
    bad = [m for m in loaded if m.split(".")[0] in FORBIDDEN or m.startswith(FORBIDDEN)]
    assert bad == [], f"importing {module} loads {bad}"


def test_every_engine_module_is_qt_free() -> None:
    """Also the engine modules that ``bm25desk.engine`` itself does not import."""
    names = sorted(
        f"bm25desk.engine.{p.stem}"
        for p in (ROOT / "bm25desk" / "engine").glob("*.py")
        if p.stem != "__init__"
    )
    loaded = _loaded_after_import(*names)
    bad = [m for m in loaded if m.split(".")[0] in FORBIDDEN or m.startswith(FORBIDDEN)]
    assert bad == [], bad


@pytest.mark.slow
def test_the_engine_exercised_end_to_end_stays_qt_free(tmp_path: Path) -> None:
    """Build, open, search and explain in a fresh process: still no Qt afterwards."""
    script = f"""
import json, sys
from pathlib import Path
from bm25desk.engine import IndexStore, Searcher, build_index, get_variant
p = Path({str(tmp_path)!r}) / "docs"
p.mkdir()
(p / "a.txt").write_text("hello world\\n")
store = IndexStore(Path({str(tmp_path)!r}) / "idx")
build_index(p, name="t", store=store)
s = Searcher(store.open("t"))
s.explain("hello", s.search("hello", get_variant("bm25adpt")).hits[0].docid).as_text()
print(json.dumps(sorted(sys.modules)))
"""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    loaded = json.loads(proc.stdout.strip().splitlines()[-1])
    assert not [m for m in loaded if m.split(".")[0] in FORBIDDEN or m.startswith(FORBIDDEN)]

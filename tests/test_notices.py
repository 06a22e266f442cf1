"""The licence notices cover everything bm25desk ships, at the versions constraints.txt pins."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
NOTICES = (ROOT / "THIRD_PARTY_NOTICES.md").read_text(encoding="utf-8")


def _licenses_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bundle_licenses", ROOT / "packaging/licenses.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        name, eq, version = line.partition("==")
        if eq and not line.startswith("#"):
            pins[_key(name)] = version.strip()
    return pins


def _rows() -> dict[str, str]:
    """Package → version, from the notices' tables (``| name (...) | version | licence |``)."""
    rows = {}
    for match in re.finditer(r"^\| ([\w.-]+)[^|]* \| ([\w.]+) \| ", NOTICES, re.M):
        rows[_key(match.group(1))] = match.group(2)
    return rows


def test_every_runtime_dependency_has_a_notice_at_the_pinned_version() -> None:
    shipped = _licenses_module().runtime_distributions()
    assert "pyside6-essentials" in shipped
    assert "numpy" in shipped
    rows, pins = _rows(), _pins()
    missing = sorted(set(shipped) - set(rows))
    assert missing == [], f"THIRD_PARTY_NOTICES.md lacks {missing}"
    for name in shipped:
        assert rows[name] == pins[name], f"{name}: notices say {rows[name]}, pinned {pins[name]}"


def test_referenced_licence_texts_exist() -> None:
    for name in re.findall(r"`licenses/([^`]+)`", NOTICES):
        assert (ROOT / "licenses" / name).is_file(), name
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    lgpl = (ROOT / "licenses" / "LGPL-3.0.txt").read_text(encoding="utf-8")
    assert "GNU LESSER GENERAL PUBLIC LICENSE" in lgpl
    assert "Version 3" in lgpl


def test_bundle_texts_are_collected(tmp_path: Path) -> None:
    copied = _licenses_module().copy_texts(tmp_path)
    names = {p.relative_to(tmp_path).as_posix() for p in copied}
    assert {"LICENSE", "THIRD_PARTY_NOTICES.md", "LGPL-3.0.txt", "GPL-3.0.txt"} <= names
    assert any(n.startswith("numpy/") for n in names)
    assert any(n.startswith("pyqtgraph/") for n in names)

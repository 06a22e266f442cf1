"""The installed Qt binding keeps the interpreter's singletons alive (no work-around needed).

PySide6 6.12.0 returned ``None`` from every wrapped ``void`` method and ``True`` from
``Signal.emit()`` without taking a reference, so a long session freed the singletons and the
interpreter aborted ("none_dealloc: deallocating None"). pyproject.toml excludes that release; this
test fails on any other release with the same bug, before a user meets it.
"""

from __future__ import annotations

import sys

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import QObject, Signal


class _Probe(QObject):
    probed = Signal()


def test_void_calls_and_emit_keep_their_references() -> None:
    probe = _Probe()
    none_before, true_before = sys.getrefcount(None), sys.getrefcount(True)
    for i in range(1000):
        probe.setObjectName(f"probe{i}")  # a wrapped void C++ method: returns None
        probe.probed.emit()  # returns True
    assert sys.getrefcount(None) >= none_before, f"PySide6 {pyside_version} leaks None"
    assert sys.getrefcount(True) >= true_before, f"PySide6 {pyside_version} leaks True"

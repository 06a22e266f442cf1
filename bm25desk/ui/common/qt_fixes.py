"""Work-arounds for bugs of the pinned Qt binding, applied once when ``bm25desk.ui`` is imported.

PySide6 6.12.0 (Shiboken 6.12.0) under-counts references to the interpreter's singletons:

- every call of a wrapped C++ method returning ``void`` (``QLabel.setText``,
  ``QTableView.selectRow`` ...) returns ``None`` without taking a reference;
- ``SignalInstance.emit()`` returns ``True`` without taking a reference.

Each call lowers ``None``'s (or ``True``'s) reference count by one, so a long session or a test
run eventually frees the singleton and the interpreter aborts ("none_dealloc: deallocating None",
"bool_dealloc: deallocating True or False"), usually at exit, sometimes mid-session.

Python 3.12 made these singletons immortal, for this reason among others. On older Pythons we do
the same by hand: their reference counts are raised by 2⁴⁰, which no session can use up, and
which changes nothing else (the singletons are never freed anyway). The fix is applied only when a
probe shows the bug, so a fixed binding leaves the interpreter untouched.
"""

from __future__ import annotations

import ctypes
import sys

from PySide6.QtCore import QObject, Signal

HEADROOM = 1 << 40
_applied = False


class _Probe(QObject):
    probed = Signal()


def binding_leaks_references() -> bool:
    """Return whether void calls or ``emit`` under-count ``None`` / ``True`` references."""
    probe = _Probe()
    none_before, true_before = sys.getrefcount(None), sys.getrefcount(True)
    for i in range(16):
        probe.setObjectName(f"probe{i}")  # a void C++ method
        probe.probed.emit()
    return sys.getrefcount(None) < none_before or sys.getrefcount(True) < true_before


def immortalise(*objects: object) -> None:
    """Raise the reference counts of ``objects`` by :data:`HEADROOM` (CPython < 3.12 only)."""
    if sys.implementation.name != "cpython" or sys.version_info >= (3, 12):
        return  # immortal already (PEP 683), or not CPython's object layout
    for obj in objects:
        # ob_refcnt is the first field of every CPython object.
        cell = ctypes.c_ssize_t.from_address(id(obj))
        cell.value += HEADROOM


def apply() -> bool:
    """Install the work-around if this binding needs it; return whether it is installed."""
    global _applied
    if not _applied and binding_leaks_references():
        immortalise(None, True, False)
        _applied = True
    return _applied

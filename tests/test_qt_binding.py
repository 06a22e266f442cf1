"""The installed Qt binding keeps the interpreter's singletons alive (no work-around needed).

PySide6 6.12.0 returned ``None`` from every wrapped ``void`` method and ``True`` from
``Signal.emit()`` without taking a reference, so a long session freed the singletons and the
interpreter aborted ("none_dealloc: deallocating None"). pyproject.toml excludes that release; this
test fails on any other release with the same bug, before a user meets it.
"""

from __future__ import annotations

import subprocess
import sys

from PySide6 import __version__ as pyside_version

# Run in a fresh interpreter: in the test session, other threads (a Spark gateway, Dask's event
# loop, Qt's pools) take and drop references to None and True while the loop runs.
PROBE = """
import sys
from PySide6.QtCore import QObject, Signal

class Probe(QObject):
    probed = Signal()

probe = Probe()
none_before, true_before = sys.getrefcount(None), sys.getrefcount(True)
for i in range(1000):
    probe.setObjectName(f"probe{i}")  # a wrapped void C++ method: returns None
    probe.probed.emit()  # returns True
print(sys.getrefcount(None) - none_before, sys.getrefcount(True) - true_before)
"""


def test_void_calls_and_emit_keep_their_references() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, check=True
    )
    none_change, true_change = (int(x) for x in done.stdout.split())
    # The bug loses one reference per call (-1000 here); the interpreter itself may drop a
    # stray one meanwhile (-1 was seen once in CI), which is not the bug.
    assert none_change > -100, f"PySide6 {pyside_version} leaks None ({none_change})"
    assert true_change > -100, f"PySide6 {pyside_version} leaks True ({true_change})"

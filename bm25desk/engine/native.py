"""The optional compiled extensions: load one if it was built, unless switched off.

``BM25DESK_NO_EXTENSIONS=1`` in the environment makes every loader return None, so the same
installation runs its pure-Python and numpy paths (CI runs the engine tests both ways).
"""

from __future__ import annotations

import importlib
import os
from typing import Any

SWITCH = "BM25DESK_NO_EXTENSIONS"


def switched_off() -> bool:
    """Return whether the environment asks for the pure-Python paths."""
    return os.environ.get(SWITCH, "") not in ("", "0")


def load(module: str) -> Any:
    """Return the compiled ``module``, or None when it is switched off or was not built."""
    if switched_off():
        return None
    try:
        return importlib.import_module(module)
    except ImportError:  # no compiler when the package was installed
        return None

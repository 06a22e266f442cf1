"""Where bm25desk keeps its data: platformdirs locations, overridable for tests and by the user.

Order of precedence: an explicit override (``--data-dir``), then ``BM25DESK_DATA_DIR``, then the
platform's user data directory (``~/.local/share/bm25desk`` on Linux).
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "bm25desk"
_override: Path | None = None


def set_data_dir(path: str | os.PathLike[str] | None) -> None:
    """Override the data directory for this process (the CLI's ``--data-dir``)."""
    global _override
    _override = Path(path).expanduser().resolve() if path is not None else None


def data_dir() -> Path:
    """Return the root data directory (created on demand by the callers that write)."""
    if _override is not None:
        return _override
    env = os.environ.get("BM25DESK_DATA_DIR")
    if env:
        return Path(env).expanduser().resolve()
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def indexes_dir() -> Path:
    """Return the directory holding one sub-directory per index."""
    return data_dir() / "indexes"


def config_dir() -> Path:
    """Return the directory for settings (inside the data dir when that is overridden)."""
    if _override is not None or os.environ.get("BM25DESK_DATA_DIR"):
        return data_dir() / "config"
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))

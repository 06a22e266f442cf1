"""What the app remembers between runs: last index, variant, parameters, window layout.

Stored with :class:`QSettings` in an INI file under :func:`bm25desk.paths.config_dir` (inside the
data dir when ``BM25DESK_DATA_DIR`` or ``--data-dir`` overrides it, so tests never touch the real
user's configuration). Values are plain strings, numbers and byte arrays; parameters are JSON.
"""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import QByteArray, QSettings

from bm25desk import paths


class Settings:
    """Typed access to the app's :class:`QSettings`."""

    def __init__(self, qsettings: QSettings | None = None) -> None:
        if qsettings is None:
            directory = paths.config_dir()
            directory.mkdir(parents=True, exist_ok=True)
            qsettings = QSettings(str(directory / "bm25desk.ini"), QSettings.Format.IniFormat)
        self.q = qsettings

    @property
    def file_name(self) -> str:
        """Return where the settings are stored."""
        return self.q.fileName()

    def sync(self) -> None:
        """Write pending changes to disk."""
        self.q.sync()

    # -- plain values ----------------------------------------------------------------------------

    def _str(self, key: str, default: str = "") -> str:
        value = self.q.value(key, default)
        return value if isinstance(value, str) else default

    def _bytes(self, key: str) -> QByteArray | None:
        value = self.q.value(key)
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    @property
    def last_index(self) -> str:
        """Return the name of the index open when the app was last closed."""
        return self._str("session/index")

    @last_index.setter
    def last_index(self, name: str) -> None:
        self.q.setValue("session/index", name)

    @property
    def last_query(self) -> str:
        """Return the last query."""
        return self._str("session/query")

    @last_query.setter
    def last_query(self, text: str) -> None:
        self.q.setValue("session/query", text)

    @property
    def variant(self) -> str:
        """Return the key of the last variant ("lucene" by default)."""
        return self._str("search/variant", "lucene")

    @variant.setter
    def variant(self, key: str) -> None:
        self.q.setValue("search/variant", key)

    def params(self, key: str) -> dict[str, float]:
        """Return the last parameters used with variant ``key`` (empty: defaults)."""
        try:
            data = json.loads(self._str(f"params/{key}", "{}"))
        except ValueError:
            return {}
        if not isinstance(data, dict):
            return {}
        return {k: float(v) for k, v in data.items() if isinstance(v, int | float)}

    def set_params(self, key: str, values: dict[str, float]) -> None:
        """Remember the parameters of variant ``key``."""
        self.q.setValue(f"params/{key}", json.dumps(values))

    @property
    def sample_offered(self) -> bool:
        """Return whether the bundled sample was already offered (first start is over)."""
        return self.q.value("session/sample_offered", "false") in (True, "true")

    @sample_offered.setter
    def sample_offered(self, value: bool) -> None:
        self.q.setValue("session/sample_offered", "true" if value else "false")

    @property
    def auto_update_folders(self) -> bool:
        """Return whether folder indexes are updated as soon as their folder changes."""
        return self.q.value("index/auto_update_folders", "false") in (True, "true")

    @auto_update_folders.setter
    def auto_update_folders(self, value: bool) -> None:
        self.q.setValue("index/auto_update_folders", "true" if value else "false")

    def layout(self, key: str) -> QByteArray | None:
        """Return a saved geometry or state (window, splitters, header) by name."""
        return self._bytes(f"layout/{key}")

    def set_layout(self, key: str, data: QByteArray) -> None:
        """Remember a geometry or state."""
        self.q.setValue(f"layout/{key}", data)

    def value(self, key: str, default: Any = None) -> Any:
        """Return any other value."""
        return self.q.value(key, default)

    def set_value(self, key: str, value: Any) -> None:
        """Set any other value."""
        self.q.setValue(key, value)

"""The list of the user's indexes: name, documents, size, built, whether the source changed."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QPalette
from PySide6.QtWidgets import QApplication

from bm25desk.engine import IndexInfo
from bm25desk.engine.index.source import source_changed
from bm25desk.engine.readers.corpus import FORMATS
from bm25desk.ui.common.colors import status_colors
from bm25desk.ui.common.formatting import human_size, human_time
from bm25desk.ui.common.table_model import ROW_ROLE, SORT_ROLE, RowTableModel

NAME_ROLE = ROW_ROLE  # the index's name

__all__ = ["NAME_ROLE", "SORT_ROLE", "Column", "IndexListModel", "IndexRow", "source_status"]


class Column(IntEnum):
    """Columns of :class:`IndexListModel`."""

    NAME = 0
    DOCS = 1
    SIZE = 2
    BUILT = 3
    STATUS = 4
    SOURCE = 5


HEADERS = {
    Column.NAME: "Name",
    Column.DOCS: "Documents",
    Column.SIZE: "Size",
    Column.BUILT: "Built",
    Column.STATUS: "Status",
    Column.SOURCE: "Source",
}


@dataclass(frozen=True, slots=True)
class IndexRow:
    """One index as listed: its manifest info and whether its source changed since."""

    info: IndexInfo
    status: str  # ok | stale | missing | damaged
    detail: str


def source_status(info: IndexInfo) -> tuple[str, str]:
    """Return ``(status, detail)``: a cheap staleness check from the source's stat.

    A corpus file is stale when its size or modification time changed; a folder when its own
    modification time changed (files added or removed at the top level). *Update* checks every
    file of a folder precisely. A corpus laid out as a folder (BEIR, LISA: one corpus, rebuilt
    when it changes) is stale when a file in it was added, removed or rewritten (the engine's
    :func:`~bm25desk.engine.index.source.source_changed`, which ``update`` uses too).
    """
    if info.error:
        return "damaged", info.error
    src = info.source
    path = src.get("path")
    if not path:
        return "ok", "no source recorded"
    try:
        st = os.stat(path)
    except OSError:
        return "missing", f"the source is gone: {path}"
    if src.get("kind") == "folder":
        if st.st_mtime != src.get("mtime"):
            return "stale", "the folder changed since the index was built: Update to catch up"
        return "ok", "folder unchanged at the top level (Update checks every file)"
    try:
        changed = source_changed(src)
    except OSError:
        return "missing", f"the source cannot be read: {path}"
    if not changed:
        return "ok", "up to date"
    if stat.S_ISDIR(st.st_mode):  # a corpus laid out as a folder (BEIR, LISA): one corpus
        return "stale", _folder_change(Path(path), src.get("mtime"))
    return "stale", "the file changed since the index was built: Update or Rebuild"


def _folder_change(folder: Path, recorded: Any) -> str:
    """Say what changed in a corpus laid out as a folder: the newest rewritten file, if any."""
    try:
        with os.scandir(folder) as entries:
            newer = sorted(
                e.name
                for e in entries
                if e.is_file() and isinstance(recorded, float) and e.stat().st_mtime > recorded
            )
    except OSError:
        newer = []
    if newer:
        return f"{newer[0]} changed since the index was built: Update to rebuild"
    return "files were added to or removed from the folder: Update to rebuild"


_STATUS_TEXT = {
    "ok": "up to date",
    "stale": "changed",
    "missing": "source missing",
    "damaged": "damaged",
}


class IndexListModel(RowTableModel[IndexRow]):
    """The indexes of an :class:`~bm25desk.engine.IndexStore`, one row each."""

    headers = tuple(HEADERS[c] for c in Column)
    numeric = frozenset({Column.DOCS, Column.SIZE})

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._open = ""

    def set_open(self, name: str) -> None:
        """Mark index ``name`` as the one open in the window ("" when none)."""
        self._open = name
        self.emit_column_changed(Column.NAME)

    def row_of(self, name: str) -> int:
        """Return the row of index ``name`` (-1 when absent)."""
        return next((i for i, r in enumerate(self._rows) if r.info.name == name), -1)

    def index_row(self, row: int) -> IndexRow:
        """Return the :class:`IndexRow` at ``row``."""
        return self.row(row)

    def row_data(self, row: IndexRow) -> str:
        """Return the index's name (:data:`NAME_ROLE`)."""
        return row.info.name

    def display(self, row: IndexRow, column: int) -> str:
        """Return a cell's text."""
        return self._display(row, Column(column))

    def sort_key(self, row: IndexRow, column: int) -> Any:
        """Return a cell's raw value."""
        info = row.info
        return {
            Column.NAME: info.name.lower(),
            Column.DOCS: info.n_docs,
            Column.SIZE: info.size_bytes,
            Column.BUILT: info.updated or info.created,
            Column.STATUS: row.status,
            Column.SOURCE: str(info.source.get("path", "")),
        }[Column(column)]

    def tooltip(self, row: IndexRow, column: int) -> str:
        """Return the index's details."""
        return self._tooltip(row)

    def cell_data(self, row: IndexRow, column: int, role: int) -> Any:
        """Colour a status that needs attention; mute the source."""
        if role == Qt.ItemDataRole.FontRole and row.info.name == self._open:
            font = QFont(QApplication.font())
            font.setBold(True)
            return font
        if role != Qt.ItemDataRole.ForegroundRole:
            return None
        if column == Column.STATUS and row.status != "ok":
            colors = status_colors(QApplication.palette())
            return colors["bad"] if row.status in ("damaged", "missing") else colors["warn"]
        if column == Column.SOURCE:
            return QApplication.palette().color(QPalette.ColorRole.PlaceholderText)
        return None

    def _display(self, row: IndexRow, col: Column) -> str:
        info = row.info
        if col == Column.NAME:
            return f"● {info.name}" if info.name == self._open else info.name
        if col == Column.DOCS:
            return f"{info.n_docs:,}" if not info.error else "—"
        if col == Column.SIZE:
            return human_size(info.size_bytes)
        if col == Column.BUILT:
            return human_time(info.updated or info.created)
        if col == Column.STATUS:
            return _STATUS_TEXT.get(row.status, row.status)
        path = str(info.source.get("path", ""))
        return Path(path).name if path else ""

    def _tooltip(self, row: IndexRow) -> str:
        info = row.info
        src = info.source
        fmt = FORMATS.get(str(src.get("format", "")), str(src.get("format", "")))
        lines = [
            info.name + ("  (open)" if info.name == self._open else ""),
            f"Source: {src.get('path', '—')}",
            f"Format: {fmt or '—'}",
            f"{info.n_docs:,} documents, {info.n_terms:,} terms, average length {info.avgdl:.1f}",
            f"Created {human_time(info.created)}, updated {human_time(info.updated)}",
            f"Status: {row.detail}",
        ]
        return "\n".join(lines)

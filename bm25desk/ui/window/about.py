"""The Help menu's dialogs: the keyboard shortcuts and About."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox, QWidget

import bm25desk
from bm25desk.ui.window.menus import SHORTCUTS


def show_shortcuts(parent: QWidget) -> None:
    """List the keyboard shortcuts."""
    rows = "".join(f"<tr><td><b>{k}</b>&nbsp;&nbsp;</td><td>{v}</td></tr>" for k, v in SHORTCUTS)
    QMessageBox.information(parent, "Keyboard shortcuts", f"<table>{rows}</table>")


def show_about(parent: QWidget, settings_file: str) -> None:
    """Say what this is, and where its settings are."""
    QMessageBox.about(
        parent,
        "About bm25desk",
        f"<b>bm25desk {bm25desk.__version__}</b><br>Explore document collections with the "
        "BM25 family of ranking functions, and see why each document ranked where it did."
        f"<br><br>Settings: {settings_file}",
    )

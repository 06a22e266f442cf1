"""The right-click menu of a result.

Open it or its folder, copy its id, path or title, explain it in Compare, and mark it relevant.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import QMenu

from bm25desk.engine import Hit
from bm25desk.ui.search.preview import openable


def open_target(hit: Hit) -> str:
    """Return what Open opens for ``hit`` (its file or URL; "" when it has neither)."""
    return openable(hit.location)


def folder_of(hit: Hit) -> str:
    """Return the folder holding ``hit``'s file ("" for a record of a corpus file)."""
    target = open_target(hit)
    return os.path.dirname(target) if target and "://" not in target else ""


def open_location(target: str) -> None:
    """Open a file, folder or URL with the system's default application."""
    url = QUrl(target) if "://" in target else QUrl.fromLocalFile(target)
    QDesktopServices.openUrl(url)


def copy_text(text: str) -> None:
    """Put ``text`` on the clipboard."""
    QGuiApplication.clipboard().setText(text)


def add_document_actions(menu: QMenu, hit: Hit, explain: object) -> None:
    """Add Open, Open folder, Copy id / path / title and Explain in Compare for ``hit``."""
    target, folder = open_target(hit), folder_of(hit)
    action = menu.addAction("Open", lambda: open_location(target))
    action.setEnabled(bool(target))
    action = menu.addAction("Open folder", lambda: open_location(folder))
    action.setEnabled(bool(folder))
    menu.addSeparator()
    menu.addAction("Copy id", lambda: copy_text(hit.docid))
    if hit.location:
        menu.addAction(
            "Copy path" if "://" not in hit.location else "Copy URL",
            lambda: copy_text(hit.location),
        )
    menu.addAction("Copy title", lambda: copy_text(hit.title or hit.docid))
    menu.addSeparator()
    menu.addAction("Explain in Compare", lambda: explain(hit))  # type: ignore[operator]

"""Readable error messages, and the message bar that shows them without a dialog.

Engine errors carry one-line messages written for users; anything else is logged with its
traceback and shown as a short sentence. A traceback is never shown in the window.
"""

from __future__ import annotations

import logging
import traceback

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QStyle, QToolButton, QWidget

from bm25desk import logfile
from bm25desk.engine import (
    AnalysisError,
    IndexCorruptError,
    QueryError,
    StoreError,
    VariantError,
)
from bm25desk.engine.readers.corpus import CorpusError
from bm25desk.ui.common.colors import is_dark

log = logging.getLogger(__name__)

_USER_ERRORS = (AnalysisError, CorpusError, IndexCorruptError, QueryError, StoreError, VariantError)


def readable(exc: BaseException) -> str:
    """Return a message for users: the engine's own words, or a short description."""
    if isinstance(exc, _USER_ERRORS):
        text = str(exc)
        return text[:1].upper() + text[1:]
    if isinstance(exc, MemoryError):
        return "Not enough memory for this operation."
    if isinstance(exc, OSError):
        where = f": {exc.filename}" if exc.filename else ""
        return f"{exc.strerror or 'Input/output error'}{where}"
    detail = getattr(exc, "__traceback_text__", None) or "".join(traceback.format_exception(exc))
    path = logfile.record(f"unexpected error:\n{detail}", source=__name__)
    text = str(exc) or type(exc).__name__
    return f"Something went wrong ({type(exc).__name__}: {text}). Details are in {path}."


class MessageBar(QWidget):
    """A dismissable line above the work area for errors and notices (never a modal dialog).

    Signals
    -------
    action_requested(str)
        The action link was clicked; carries the action's id.
    """

    action_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAutoFillBackground(True)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 6, 6)
        self.icon = QLabel()
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.LinksAccessibleByMouse
        )
        self.text.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.text.linkActivated.connect(self._on_text_link_activated)
        close = QToolButton()
        close.setText("✕")
        close.setAutoRaise(True)
        close.setToolTip("Dismiss (Esc)")
        close.clicked.connect(self.hide)
        layout.addWidget(self.icon)
        layout.addWidget(self.text, 1)
        layout.addWidget(close)
        self.owner = ""  # the index the message is about ("" for none in particular)
        self._timer = QTimer(self, singleShot=True)
        self._timer.timeout.connect(self.hide)
        self.hide()

    def show_message(
        self,
        text: str,
        kind: str = "error",
        *,
        action: tuple[str, str] | None = None,
        timeout_ms: int = 0,
        owner: str = "",
    ) -> None:
        """Show ``text`` (``kind``: error, warning or info), with an optional (id, label) link.

        ``owner`` names the index the message is about: switching to another index hides it.
        """
        self.owner = owner
        from html import escape

        body = escape(text, quote=False)
        if action is not None:
            body += f' &nbsp; <a href="{escape(action[0])}">{escape(action[1])}</a>'
        self.text.setText(body)
        icon = {
            "error": QStyle.StandardPixmap.SP_MessageBoxCritical,
            "warning": QStyle.StandardPixmap.SP_MessageBoxWarning,
        }.get(kind, QStyle.StandardPixmap.SP_MessageBoxInformation)
        size = self.fontMetrics().height()
        self.icon.setPixmap(self.style().standardIcon(icon).pixmap(size, size))
        self._paint(kind)
        self.setProperty("kind", kind)
        self.show()
        if timeout_ms:
            self._timer.start(timeout_ms)
        else:
            self._timer.stop()

    def _paint(self, kind: str) -> None:
        from PySide6.QtGui import QColor, QPalette

        from bm25desk.ui.common.colors import mix

        parent = self.parentWidget()
        pal = parent.palette() if parent is not None else self.palette()
        tint = {"error": "#e15759", "warning": "#edc948", "info": "#4e79a7"}.get(kind, "#4e79a7")
        base = pal.color(QPalette.ColorRole.Window)
        strength = 0.35 if is_dark(pal) else 0.22
        own = QPalette(pal)
        own.setColor(QPalette.ColorRole.Window, mix(base, QColor(tint), strength))
        self.setPalette(own)

    @Slot(str)
    def _on_text_link_activated(self, link: str) -> None:
        self.action_requested.emit(link)

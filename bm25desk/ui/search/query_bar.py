"""The top of the Search tab: query box, ranking function, chips, formula and counts.

The analysed query shows as chips; typing waits a moment before it searches.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from bm25desk.engine import SearchResult, Variant
from bm25desk.ui.common.colors import muted_text
from bm25desk.ui.common.elided_label import ElidedLabel
from bm25desk.ui.common.variant_picker import VariantPicker, variant_html
from bm25desk.ui.search.query_chips import QueryChips

DEBOUNCE_MS = 200

RSJ_TIP = (
    "Relevance feedback: each term's idf is replaced by the Robertson/Sparck Jones weight "
    "ln[(r + 0.5)(N − R − df + r + 0.5) / ((df − r + 0.5)(R − r + 0.5))], R documents marked "
    "relevant, r of them containing the term"
)


class QueryBar(QWidget):
    """Query box, variant combo and parameters (from ``picker``), chips, formula and status.

    Signals
    -------
    search_requested()
        Search now: the typing delay ran out, or Enter was pressed.
    down_requested()
        Down was pressed in the query box (move to the results).
    """

    search_requested = Signal()
    down_requested = Signal()

    def __init__(self, picker: VariantPicker, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.query_edit = QLineEdit()
        self.query_edit.setPlaceholderText(
            'Search… words; +must  -not  "a phrase"  title:word   (Ctrl+L)'
        )
        self.query_edit.setClearButtonEnabled(True)
        self.query_edit.setMinimumWidth(280)
        font = self.query_edit.font()
        font.setPointSizeF(font.pointSizeF() * 1.15)
        self.query_edit.setFont(font)
        self.query_edit.textChanged.connect(self._on_query_edit_text_changed)
        self.query_edit.returnPressed.connect(self.search_requested)
        self.query_edit.installEventFilter(self)
        self.chips = QueryChips()
        self.variant_name = QLabel()
        self.variant_name.setTextFormat(Qt.TextFormat.RichText)
        font = self.variant_name.font()
        font.setBold(True)
        self.variant_name.setFont(font)
        self.formula = ElidedLabel()
        self.status = QLabel()
        self.status.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.debounce = QTimer(self)
        self.debounce.setSingleShot(True)
        self.debounce.setInterval(DEBOUNCE_MS)
        self.debounce.timeout.connect(self.search_requested)

        top = QHBoxLayout()
        top.addWidget(self.query_edit, 1)
        top.addWidget(picker.combo, 0)
        top.addWidget(picker.params, 0)
        under = QHBoxLayout()
        under.addWidget(self.variant_name, 0)
        under.addWidget(self.formula, 1)
        under.addWidget(self.status, 0)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(top)
        layout.addWidget(self.chips)
        layout.addLayout(under)

    def text(self) -> str:
        """Return the query text."""
        return self.query_edit.text()

    def show_formula(self, variant: Variant, feedback_r: int | None = None) -> None:
        """Show ``variant``'s formula line (with feedback: the RSJ weight from R documents)."""
        cls = type(variant)
        idf = f"idf = {cls.idf_formula}"
        tip = ""
        if feedback_r is not None:
            idf = f"idf → RSJ weight, R = {feedback_r} marked relevant"
            tip = RSJ_TIP
        self.variant_name.setText(f"{variant_html(variant)}:")
        text = f"{idf} · tf part = {cls.tf_formula}"
        self.formula.set_full_text(text, f"{text}\n\n{tip}" if tip else text)

    def show_counts(self, result: SearchResult | None, shown: int = 0) -> None:
        """Show how many documents match, how many are listed, and how long it took."""
        if result is None:
            self.status.setText("")
            return
        self.status.setText(
            f"<span style='color:{muted_text(self.palette()).name()}'>"
            f"{result.n_matches:,} of {result.n_docs:,} documents match"
            + (f" · top {shown}" if result.n_matches > shown else "")
            + f" · {result.seconds * 1000:.0f} ms</span>"
        )

    @Slot(str)
    def _on_query_edit_text_changed(self, _text: str) -> None:
        self.debounce.start()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Down moves from the query box to the results; Esc clears it (QObject.eventFilter)."""
        if watched is self.query_edit and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            key = event.key()
            if key == Qt.Key.Key_Down:
                self.down_requested.emit()
                return True
            if key == Qt.Key.Key_Escape and self.query_edit.text():
                self.query_edit.clear()
                return True
        return super().eventFilter(watched, event)

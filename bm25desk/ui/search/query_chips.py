"""The analysed query as chips: each word as typed → as indexed, in its term colour.

Stop-listed words are greyed and struck through, unknown terms are marked with "did you mean"
links from the index vocabulary, and the roles from the query syntax (+required, -prohibited,
"phrase", title:) are shown. The chips double as the legend of the term colours.
"""

from __future__ import annotations

from html import escape
from urllib.parse import quote, unquote

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from bm25desk.engine import QueryAnalysis
from bm25desk.ui.common.colors import TermColors, highlight_background, muted_text, status_colors

_ROLE_MARK = {"required": "+", "prohibited": "−", "phrase": "“”", "title": "title:"}


class QueryChips(QLabel):
    """Shows a :class:`QueryAnalysis` as coloured chips.

    Signals
    -------
    suggestion_chosen(str, str)
        ``(term as typed, suggested term)``: the user clicked a "did you mean" link.
    """

    suggestion_chosen = Signal(str, str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.LinksAccessibleByMouse)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.linkActivated.connect(self._on_link_activated)
        self.show_hint()

    def show_hint(self, text: str = "") -> None:
        """Show a quiet hint instead of chips."""
        muted = muted_text(self.palette()).name()
        self.setText(f"<span style='color:{muted}'>{escape(text)}</span>" if text else "")

    def show_error(self, text: str) -> None:
        """Show why the query cannot be searched."""
        bad = status_colors(self.palette())["bad"].name()
        self.setText(f"<span style='color:{bad}'>{escape(text)}</span>")

    def show_analysis(
        self,
        analysis: QueryAnalysis,
        colors: TermColors,
        suggestions: tuple[tuple[str, tuple[str, ...]], ...] = (),
    ) -> None:
        """Show each query word with its fate."""
        pal = self.palette()
        muted = muted_text(pal).name()
        bad = status_colors(pal)["bad"].name()
        warn = status_colors(pal)["warn"].name()
        surface_of = {t.term: t.surface for t in analysis.tokens if t.term}
        chips = []
        for tok in analysis.tokens:
            mark = _ROLE_MARK.get(tok.role, "")
            label = escape(tok.surface)
            if tok.term and tok.term != tok.surface.lower():
                label += f" → {escape(tok.term)}"
            if mark == "“”":
                label = f"“{label}”"
            elif mark:
                label = f"{mark}{label}"
            if tok.status == "stop":
                chips.append(
                    f"<span style='color:{muted}' title='stop word: not scored'>"
                    f"<s>{label}</s></span>"
                )
            elif tok.status == "short":
                chips.append(f"<span style='color:{muted}'><s>{label}</s></span>")
            elif tok.status == "unknown":
                chips.append(f"<span style='color:{bad}'>&nbsp;{label}&nbsp;?</span>")
            elif tok.role == "prohibited":
                chips.append(f"<span style='color:{bad}'>&nbsp;{label}&nbsp;</span>")
            else:
                color = colors.color(tok.term)
                bg = highlight_background(color, pal, 0.45).name()
                chips.append(
                    f"<span style='background-color:{bg}'>&nbsp;<span style='color:{color.name()}'>"
                    f"■</span>&nbsp;{label}&nbsp;</span>"
                )
        html = " &nbsp;".join(chips)
        hints = []
        for term, options in suggestions:
            who = escape(surface_of.get(term, term))
            if options:
                links = ", ".join(
                    f"<a href='{quote(surface_of.get(term, term))}|{quote(o)}'>{escape(o)}</a>"
                    for o in options
                )
                hints.append(f"“{who}” is in no document — did you mean {links}?")
            else:
                hints.append(f"“{who}” is in no document.")
        if analysis.parsed.warnings:
            hints.extend(escape(w) for w in analysis.parsed.warnings)
        if hints:
            html += f"<br><span style='color:{warn}'>" + "<br>".join(hints) + "</span>"
        self.setText(html)

    @Slot(str)
    def _on_link_activated(self, link: str) -> None:
        surface, _, suggestion = link.partition("|")
        self.suggestion_chosen.emit(unquote(surface), unquote(suggestion))

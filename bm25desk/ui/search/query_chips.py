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

from bm25desk.engine import Constraint, QueryAnalysis
from bm25desk.engine.scoring.query import QueryToken
from bm25desk.ui.common.colors import TermColors, highlight_background, muted_text, status_colors

_ROLE_MARK = {"required": "+", "prohibited": "−", "phrase": "“”", "title": "title:"}
PHRASE_KINDS = ("phrase", "prohibited-phrase")


def _phrase_at(
    tokens: tuple[QueryToken, ...], i: int, phrases: list[Constraint]
) -> Constraint | None:
    """Return the phrase whose words start at ``tokens[i]`` (None when none does)."""
    for phrase in phrases:
        n = len(phrase.words)
        typed = [t.surface.lower() for t in tokens[i : i + n]]
        if n > 1 and typed == [w.lower() for w in phrase.words]:
            return phrase
    return None


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
        warn = status_colors(self.palette())["warn"].name()
        surface_of = {t.term: t.surface for t in analysis.tokens if t.term}
        phrases = [c for c in analysis.parsed.constraints if c.kind in PHRASE_KINDS]
        tokens = analysis.tokens
        chips, i = [], 0
        while i < len(tokens):
            phrase = _phrase_at(tokens, i, phrases)
            if phrase is not None:  # a phrase is one chip, its words' terms inside
                chips.append(self._phrase_chip(phrase, colors))
                phrases.remove(phrase)
                i += len(phrase.words)
            else:
                chips.append(self._token_chip(tokens[i], colors))
                i += 1
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

    def _token_chip(self, tok: QueryToken, colors: TermColors) -> str:
        """Return one word's chip: as typed → as indexed, in its colour or struck out."""
        pal = self.palette()
        muted = muted_text(pal).name()
        bad = status_colors(pal)["bad"].name()
        mark = _ROLE_MARK.get(tok.role, "")
        label = escape(tok.surface)
        if tok.term and tok.term != tok.surface.lower():
            label += f" → {escape(tok.term)}"
        if mark == "“”":
            label = f"“{label}”"
        elif mark:
            label = f"{mark}{label}"
        if tok.status == "stop":
            return (
                f"<span style='color:{muted}' title='stop word: not scored'><s>{label}</s></span>"
            )
        if tok.status == "short":
            return f"<span style='color:{muted}'><s>{label}</s></span>"
        if tok.status == "unknown":
            return f"<span style='color:{bad}'>&nbsp;{label}&nbsp;?</span>"
        if tok.role == "prohibited":
            return f"<span style='color:{bad}'>&nbsp;{label}&nbsp;</span>"
        color = colors.color(tok.term)
        bg = highlight_background(color, pal, 0.45).name()
        return (
            f"<span style='background-color:{bg}'>&nbsp;<span style='color:{color.name()}'>"
            f"■</span>&nbsp;{label}&nbsp;</span>"
        )

    def _phrase_chip(self, phrase: Constraint, colors: TermColors) -> str:
        """Return a phrase's chip: the words in quotes, then each one's term in its colour."""
        pal = self.palette()
        words = escape(" ".join(phrase.words))
        stems = " ".join(
            f"<span style='color:{colors.color(t).name()}'>■</span>{escape(t)}"
            if t is not None
            else f"<s>{escape(w)}</s>"
            for w, t in zip(phrase.words, phrase.analysed, strict=True)
        )
        if phrase.prohibits:
            bad = status_colors(pal)["bad"].name()
            return (
                f"<span style='color:{bad}'>&nbsp;−“{words}” <small>({stems})</small>&nbsp;</span>"
            )
        bg = highlight_background(status_colors(pal)["good"], pal, 0.25).name()
        return (
            f"<span style='background-color:{bg}' title='a phrase: these words together, in "
            f"this order'>&nbsp;“{words}” <small>{stems}</small>&nbsp;</span>"
        )

    @Slot(str)
    def _on_link_activated(self, link: str) -> None:
        surface, _, suggestion = link.partition("|")
        self.suggestion_chosen.emit(unquote(surface), unquote(suggestion))

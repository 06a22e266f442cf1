"""One colour per query term, the same in bars, snippets, preview, ledger, plots and heatmaps.

Colours are assigned by the term's position among the query's scored terms, from a qualitative
palette (Tableau 10) whose hues stay distinguishable on light and dark backgrounds. Text drawn over
a term colour uses :func:`highlight_background`, a blend of the colour into the window's base
colour, so the palette's own text colour stays readable in both light and dark themes.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtGui import QColor, QPalette

PALETTE: tuple[str, ...] = (
    "#4e79a7",  # blue
    "#f28e2b",  # orange
    "#59a14f",  # green
    "#e15759",  # red
    "#b07aa1",  # purple
    "#76b7b2",  # teal
    "#edc948",  # yellow
    "#ff9da7",  # pink
    "#9c755f",  # brown
    "#bab0ac",  # grey
)


class TermColors:
    """Term → colour for one query (immutable; build a new one per query).

    Parameters
    ----------
    terms
        The query's scored terms, in query order.
    """

    __slots__ = ("_colors", "terms")

    def __init__(self, terms: Iterable[str] = ()) -> None:
        self.terms: tuple[str, ...] = tuple(dict.fromkeys(terms))
        self._colors = {t: QColor(PALETTE[i % len(PALETTE)]) for i, t in enumerate(self.terms)}

    def __contains__(self, term: object) -> bool:
        """Return whether ``term`` has a colour."""
        return term in self._colors

    def __eq__(self, other: object) -> bool:
        """Return whether both assign colours to the same terms in the same order."""
        return isinstance(other, TermColors) and other.terms == self.terms

    def __hash__(self) -> int:
        """Hash by terms."""
        return hash(self.terms)

    def color(self, term: str | None) -> QColor:
        """Return the colour of ``term`` (grey for a term outside the query)."""
        if term is None:
            return QColor("#9a9a9a")
        return QColor(self._colors.get(term, QColor("#9a9a9a")))


def mix(a: QColor, b: QColor, t: float) -> QColor:
    """Return ``a`` blended towards ``b`` by ``t`` (0 → a, 1 → b)."""
    return QColor.fromRgbF(
        a.redF() + (b.redF() - a.redF()) * t,
        a.greenF() + (b.greenF() - a.greenF()) * t,
        a.blueF() + (b.blueF() - a.blueF()) * t,
        1.0,
    )


def highlight_background(color: QColor, palette: QPalette, strength: float = 0.45) -> QColor:
    """Return a background for highlighted text: ``color`` blended into the base colour."""
    return mix(palette.color(QPalette.ColorRole.Base), color, strength)


def is_dark(palette: QPalette) -> bool:
    """Return whether the palette is a dark theme (window darker than its text)."""
    return (
        palette.color(QPalette.ColorRole.Window).lightnessF()
        < palette.color(QPalette.ColorRole.WindowText).lightnessF()
    )


def muted_text(palette: QPalette) -> QColor:
    """Return a colour for secondary text (placeholder role, or text blended into the base)."""
    return mix(palette.color(QPalette.ColorRole.Text), palette.color(QPalette.ColorRole.Base), 0.45)


def status_colors(palette: QPalette) -> dict[str, QColor]:
    """Return colours for good / warning / bad states, adjusted to light or dark themes."""
    if is_dark(palette):
        return {"good": QColor("#7fd17f"), "warn": QColor("#f0c05a"), "bad": QColor("#ff8a80")}
    return {"good": QColor("#1e7b34"), "warn": QColor("#9a6700"), "bad": QColor("#c62828")}

"""Painted cells: contribution bar, snippet with highlighted terms, and the relevance mark."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRectF, QSize, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QPainter, QPalette
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

from bm25desk.ui.common.colors import TermColors, highlight_background, is_dark, mix, status_colors
from bm25desk.ui.search.results_model import MARK_ROLE, PARTS_ROLE, SCALE_ROLE, SNIPPET_ROLE
from bm25desk.ui.search.work import Snippet

_Index = QModelIndex | QPersistentModelIndex


def _paint_background(
    delegate: QStyledItemDelegate, painter: QPainter, option: QStyleOptionViewItem, index: _Index
) -> QStyleOptionViewItem:
    """Let the style draw the cell's background and selection, without text."""
    opt = QStyleOptionViewItem(option)
    delegate.initStyleOption(opt, index)
    opt.text = ""
    style = opt.widget.style() if opt.widget else None
    if style is not None:
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)
    return opt


def paint_stacked_bar(
    painter: QPainter,
    rect: QRectF,
    parts: tuple[tuple[str, QColor, float], ...],
    scale: float,
    separator: QColor,
) -> None:
    """Paint one segment per term, of length |weight|/scale × width; negative ones hatched."""
    x = rect.left()
    width = rect.width()
    for _term, color, weight in parts:
        w = abs(weight) / scale * width if scale > 0 else 0.0
        if w <= 0:
            continue
        seg = QRectF(x, rect.top(), min(w, rect.right() - x), rect.height())
        if weight < 0:
            painter.fillRect(seg, QBrush(color, Qt.BrushStyle.BDiagPattern))
            painter.setPen(color)
            painter.drawRect(seg.adjusted(0, 0, -1, -1))
        else:
            painter.fillRect(seg, color)
        x += w
        if x >= rect.right():
            break
        painter.fillRect(QRectF(x - 0.5, rect.top(), 1.0, rect.height()), separator)


class ContributionBarDelegate(QStyledItemDelegate):
    """Paints a hit's score as a stacked bar: one coloured segment per query term."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        """Paint the bar (QStyledItemDelegate.paint)."""
        opt = _paint_background(self, painter, option, index)
        parts = index.data(PARTS_ROLE) or ()
        scale = float(index.data(SCALE_ROLE) or 1.0)
        rect = QRectF(opt.rect).adjusted(4, 6, -4, -6)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        paint_stacked_bar(painter, rect, parts, scale, opt.palette.color(QPalette.ColorRole.Base))
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:
        """Return a comfortable bar size (QStyledItemDelegate.sizeHint)."""
        return QSize(170, max(22, option.fontMetrics.height() + 8))


def star_color(palette: QPalette) -> QColor:
    """Return the colour of a filled (marked) star, readable on light and dark themes."""
    return QColor("#f0c05a") if is_dark(palette) else QColor("#d49a00")


def judged_color(palette: QPalette) -> QColor:
    """Return the muted colour of the "judged relevant" tick."""
    return mix(status_colors(palette)["good"], palette.color(QPalette.ColorRole.Base), 0.35)


class MarkDelegate(QStyledItemDelegate):
    """Paints the relevance mark: the user's star and the judgements' muted tick.

    A filled star when the user marked the document relevant, a faint outline one otherwise (so
    there is something to click), and a tick in a muted green when it is judged relevant.
    """

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        """Paint the star and tick (QStyledItemDelegate.paint)."""
        opt = _paint_background(self, painter, option, index)
        marked, judged = index.data(MARK_ROLE) or (False, False)
        palette = opt.palette
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        painter.save()
        font = QFont(opt.font)
        font.setPointSizeF(font.pointSizeF() * 1.2)
        painter.setFont(font)
        rect = QRectF(opt.rect)
        star_rect = rect.adjusted(0, 0, -rect.width() * 0.4, 0) if judged else rect
        if marked:
            painter.setPen(star_color(palette))
            painter.drawText(star_rect, Qt.AlignmentFlag.AlignCenter, "★")
        else:
            if selected:
                faint = mix(
                    palette.color(QPalette.ColorRole.HighlightedText),
                    palette.color(QPalette.ColorRole.Highlight),
                    0.35,
                )
            else:
                faint = mix(
                    palette.color(QPalette.ColorRole.Text),
                    palette.color(QPalette.ColorRole.Base),
                    0.6,
                )
            painter.setPen(faint)
            painter.drawText(star_rect, Qt.AlignmentFlag.AlignCenter, "☆")
        if judged:
            painter.setFont(opt.font)
            tick = judged_color(palette)
            if selected:
                tick = palette.color(QPalette.ColorRole.HighlightedText)
            painter.setPen(tick)
            painter.drawText(
                rect.adjusted(rect.width() * 0.55, 0, 0, 0), Qt.AlignmentFlag.AlignVCenter, "✓"
            )
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:
        """Return room for a star and a tick (QStyledItemDelegate.sizeHint)."""
        return QSize(option.fontMetrics.height() * 2 + 4, option.fontMetrics.height() + 8)


class SnippetDelegate(QStyledItemDelegate):
    """Paints a snippet with each query term on its colour, elided at the cell's end."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        """Paint the snippet (QStyledItemDelegate.paint)."""
        opt = _paint_background(self, painter, option, index)
        data = index.data(SNIPPET_ROLE)
        if not data:
            return
        snippet, colors = data
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        text_role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        paint_highlighted_line(
            painter,
            QRectF(opt.rect).adjusted(4, 0, -4, 0),
            snippet,
            colors,
            opt.palette,
            opt.palette.color(text_role),
        )


def paint_highlighted_line(
    painter: QPainter,
    rect: QRectF,
    snippet: Snippet,
    colors: TermColors,
    palette: QPalette,
    text_color: QColor,
) -> None:
    """Paint ``snippet`` on one line, term spans on their colours, ending in "…" if cut."""
    painter.save()
    fm = painter.fontMetrics()
    text = snippet.text
    runs: list[tuple[str, str | None]] = []
    pos = 0
    for s, e, term in snippet.spans:
        if s < pos:
            continue
        if s > pos:
            runs.append((text[pos:s], None))
        runs.append((text[s:e], term))
        pos = e
    if pos < len(text):
        runs.append((text[pos:], None))
    x = rect.left()
    baseline = rect.top() + (rect.height() + fm.ascent() - fm.descent()) / 2
    ellipsis = "…"
    limit = rect.right() - fm.horizontalAdvance(ellipsis)
    painter.setClipRect(rect)
    for chunk, run_term in runs:
        width = fm.horizontalAdvance(chunk)
        cut = x + width > limit
        if cut:
            chunk = fm.elidedText(chunk, Qt.TextElideMode.ElideRight, int(rect.right() - x))
            width = fm.horizontalAdvance(chunk)
        if run_term is not None and chunk:
            bg = highlight_background(colors.color(run_term), palette)
            h = fm.height()
            painter.fillRect(QRectF(x - 1, baseline - fm.ascent() - 1, width + 2, h + 2), bg)
            painter.setPen(palette.color(QPalette.ColorRole.Text))
        else:
            painter.setPen(text_color)
        painter.drawText(int(x), int(baseline), chunk)
        x += width
        if cut:
            break
    painter.restore()


class MiddleElideDelegate(QStyledItemDelegate):
    """Text cut in the middle when too long: a path keeps its file name ("/home/…/notes/a.txt")."""

    def initStyleOption(self, option: QStyleOptionViewItem, index: _Index) -> None:
        """Elide in the middle (QStyledItemDelegate.initStyleOption)."""
        super().initStyleOption(option, index)
        option.textElideMode = Qt.TextElideMode.ElideMiddle

"""How every plot of the app looks: the window's colours, small titles, labelled axes."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtGui import QPalette

from bm25desk.ui.common.colors import mix


def style_plot(plot: pg.PlotWidget, palette: QPalette) -> None:
    """Use the window's colours for a plot's background, axes and title."""
    base = palette.color(QPalette.ColorRole.Base)
    text = palette.color(QPalette.ColorRole.Text)
    plot.setBackground(base)
    item = plot.getPlotItem()
    for name in ("left", "bottom"):
        axis = item.getAxis(name)
        axis.setPen(pg.mkPen(mix(text, base, 0.35)))
        axis.setTextPen(pg.mkPen(text))
    item.titleLabel.setAttr("color", text.name())
    if item.titleLabel.text:
        item.setTitle(item.titleLabel.text, color=text.name(), size="9pt")


def make_plot(
    title: str,
    x_label: str,
    y_label: str,
    palette: QPalette,
    *,
    axes: dict[str, type[pg.AxisItem]] | None = None,
) -> pg.PlotWidget:
    """Return a small, non-interactive-by-default plot with labelled axes.

    ``axes`` gives axis classes by side (``{"bottom": DecadeAxis}``) where the default's tick
    labels do not fit.
    """
    items = {side: cls(orientation=side) for side, cls in (axes or {}).items()}
    plot = pg.PlotWidget(axisItems=items)
    plot.setMinimumSize(200, 110)
    item = plot.getPlotItem()
    item.setTitle(title, size="9pt")
    item.setLabel("bottom", x_label)
    item.setLabel("left", y_label)
    item.showGrid(x=True, y=True, alpha=0.15)
    item.setMenuEnabled(False)
    item.hideButtons()
    item.getViewBox().setDefaultPadding(0.08)
    # Room around the axes, so that their titles (and descenders) are never cut at the edge.
    item.layout.setContentsMargins(4, 4, 8, 6)
    plot.setMouseEnabled(x=False, y=False)
    style_plot(plot, palette)
    return plot

"""The Statistics tab: collection numbers, document-length histogram, top terms, term look-up."""

from __future__ import annotations

from html import escape

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QModelIndex, Qt, QTimer, Slot
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from bm25desk.engine import Searcher
from bm25desk.engine.index.parts import describe_build
from bm25desk.engine.readers.corpus import FORMATS
from bm25desk.ui.common.colors import PALETTE, muted_text, status_colors
from bm25desk.ui.common.formatting import human_size, human_time
from bm25desk.ui.common.hidden_tab import LoadsWhenShown
from bm25desk.ui.common.jobs import JobRunner
from bm25desk.ui.common.latest_only import LatestOnly
from bm25desk.ui.common.placeholder import PlaceholderStack
from bm25desk.ui.common.plot_style import make_plot, style_plot
from bm25desk.ui.common.table_view import make_table
from bm25desk.ui.common.widgets import splitter, text_label
from bm25desk.ui.statistics.models import TERM_ROLE, IdfModel, TopTermsModel
from bm25desk.ui.statistics.work import IndexStats, TermLookup, index_stats, term_lookup

FIELDS = (
    ("docs", "Documents"),
    ("terms", "Vocabulary"),
    ("avgdl", "Average length"),
    ("lengths", "Lengths"),
    ("tokens", "Tokens indexed"),
    ("source", "Source"),
    ("format", "Format"),
    ("analyzer", "Analysis"),
    ("built", "Built"),
    ("size", "Size on disk"),
)
"""The collection's numbers: (key, label)."""


class StatsPanel(LoadsWhenShown, QWidget):
    """Shows an index's statistics; loads them in the background when the tab is shown."""

    def __init__(self, runner: JobRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self.searcher: Searcher | None = None
        self._stats: IndexStats | None = None
        self._lookup: TermLookup | None = None
        self.stats_jobs = LatestOnly(runner, "stats", self)
        self.stats_jobs.succeeded.connect(self._on_stats_jobs_succeeded)
        self.lookup_jobs = LatestOnly(runner, "term lookup", self)
        self.lookup_jobs.succeeded.connect(self._on_lookup_jobs_succeeded)

        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self._make_summary())
        self.histogram = make_plot(
            "Document lengths", "length in analysed tokens", "documents", self.palette()
        )
        self.histogram.setMinimumHeight(200)
        self.histogram_stack = PlaceholderStack(self.histogram)
        self.histogram_stack.show_content()
        left_layout.addWidget(self.histogram_stack, 1)
        right = splitter(
            Qt.Orientation.Vertical, self._make_lookup(), self._make_terms(), stretch=(1, 1)
        )
        self.splitter = splitter(
            Qt.Orientation.Horizontal, left, right, stretch=(1, 1), sizes=(700, 700)
        )
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 0)
        layout.addWidget(self.splitter)

    def _make_summary(self) -> QGroupBox:
        self.fields: dict[str, QLabel] = {}
        form = QFormLayout()
        for key, label in FIELDS:
            value = text_label(selectable=True)
            self.fields[key] = value
            form.addRow(label, value)
        summary_box = QGroupBox("Collection")
        summary_box.setLayout(form)
        return summary_box

    def _make_terms(self) -> QGroupBox:
        self.terms_model = TopTermsModel(self)
        self.terms_view, _ = make_table(self.terms_model)
        header = self.terms_view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.terms_view.activated.connect(self._on_terms_view_activated)
        self.terms_view.clicked.connect(self._on_terms_view_activated)
        terms_box = QGroupBox("Most frequent terms (click one to look it up)")
        QVBoxLayout(terms_box).addWidget(self.terms_view)
        return terms_box

    def _make_lookup(self) -> QGroupBox:
        self.lookup_edit = QLineEdit()
        self.lookup_edit.setPlaceholderText("Look up a word: df, cf and idf under every variant")
        self.lookup_edit.setClearButtonEnabled(True)
        self.lookup_edit.textChanged.connect(self._on_lookup_edit_text_changed)
        self.lookup_timer = QTimer(self, singleShot=True, interval=150)
        self.lookup_timer.timeout.connect(self.look_up)
        self.lookup_result = text_label(rich=True)
        self.idf_model = IdfModel(self)
        self.idf_view, _ = make_table(self.idf_model)
        header = self.idf_view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        lookup_box = QGroupBox("Term look-up")
        lookup_layout = QVBoxLayout(lookup_box)
        lookup_layout.addWidget(self.lookup_edit)
        lookup_layout.addWidget(self.lookup_result)
        lookup_layout.addWidget(self.idf_view, 1)
        return lookup_box

    # -- inputs ----------------------------------------------------------------------------------

    def set_searcher(self, searcher: Searcher | None) -> None:
        """Show statistics of ``searcher``'s index (loaded when the tab is visible)."""
        self.searcher = searcher
        self._stats = None
        self._lookup = None
        self.stats_jobs.invalidate()
        self.lookup_jobs.invalidate()
        self.terms_model.set_terms((), 1)
        self.idf_model.set_rows(())
        self.histogram.getPlotItem().clear()
        for label in self.fields.values():
            label.setText("")
        self.lookup_result.setText("")
        self.refresh()

    def refresh(self) -> None:
        """Reload the statistics (deferred while the tab is hidden)."""
        if self.deferred():
            return
        searcher = self.searcher
        if searcher is None:
            return
        self._fill_manifest(searcher)
        self.stats_jobs.request(lambda: index_stats(searcher))
        if self.lookup_edit.text().strip():
            self.look_up()

    def stats(self) -> IndexStats | None:
        """Return the statistics shown."""
        return self._stats

    def lookup(self) -> TermLookup | None:
        """Return the look-up shown."""
        return self._lookup

    @Slot()
    def look_up(self) -> None:
        """Look up the word in the look-up box."""
        searcher = self.searcher
        if searcher is None:
            return
        text = self.lookup_edit.text()
        self.lookup_jobs.request(lambda: term_lookup(searcher, text))

    # -- outputs ---------------------------------------------------------------------------------

    def _fill_manifest(self, searcher: Searcher) -> None:
        index = searcher.index
        src = index.source
        m = index.manifest
        self.fields["source"].setText(str(src.get("path", "—")))
        self.fields["format"].setText(
            FORMATS.get(str(src.get("format")), str(src.get("format", "—")))
        )
        self.fields["analyzer"].setText(index.analyzer.describe())
        created = human_time(str(m.get("created", "")))
        updated = human_time(str(m.get("updated", "")))
        how = describe_build(m.get("build") or {})
        self.fields["built"].setText(
            f"{created} (updated {updated})" + (f"\nby {how}" if how else "")
        )
        try:
            from bm25desk.engine.index.store import dir_size

            self.fields["size"].setText(human_size(dir_size(index.path)))
        except OSError:
            self.fields["size"].setText("—")

    @Slot(object)
    def _on_stats_jobs_succeeded(self, stats: IndexStats) -> None:
        self._stats = stats
        self.fields["docs"].setText(f"{stats.n_docs:,}")
        self.fields["terms"].setText(f"{stats.n_terms:,} distinct terms")
        self.fields["avgdl"].setText(f"{stats.avgdl:.2f} analysed tokens")
        self.fields["lengths"].setText(
            f"min {stats.min_length:,} · median {stats.median_length:,.0f} · "
            f"max {stats.max_length:,}"
        )
        self.fields["tokens"].setText(f"{stats.total_tokens:,}")
        self.terms_model.set_terms(stats.top_terms, stats.n_docs)
        self._draw_histogram(stats)

    def _draw_histogram(self, stats: IndexStats) -> None:
        item = self.histogram.getPlotItem()
        item.clear()
        edges = np.asarray(stats.edges)
        counts = np.asarray(stats.counts, dtype=np.float64)
        if stats.n_docs == 0 or counts.size == 0:
            self.histogram_stack.show_placeholder(
                "This index has no documents: no lengths to show."
            )
            return
        self.histogram_stack.show_content()
        widths = np.diff(edges)
        bars = pg.BarGraphItem(
            x0=edges[:-1],
            width=widths * 0.92,
            height=counts,
            brush=QColor(PALETTE[0]),
            pen=pg.mkPen(None),
        )
        item.addItem(bars)
        muted = muted_text(self.palette())
        line = pg.InfiniteLine(
            pos=stats.avgdl,
            angle=90,
            pen=pg.mkPen(QColor(PALETTE[1]), width=2),
            label=f"Lavg = {stats.avgdl:.1f}",
            labelOpts={"position": 0.9, "color": muted},
        )
        item.addItem(line)
        title = "Document lengths"
        if stats.clipped:
            title += f" ({stats.clipped:,} longer than {edges[-1]:,.0f} in the last bar)"
        item.setTitle(title, size="9pt")
        style_plot(self.histogram, self.palette())

    @Slot(str)
    def _on_lookup_edit_text_changed(self, _text: str) -> None:
        self.lookup_timer.start()

    @Slot(QModelIndex)
    def _on_terms_view_activated(self, index: QModelIndex) -> None:
        term = index.data(TERM_ROLE)
        if term:
            self.lookup_edit.setText(str(term))
            self.look_up()

    @Slot(object)
    def _on_lookup_jobs_succeeded(self, lookup: TermLookup) -> None:
        self._lookup = lookup
        self.idf_model.set_rows(lookup.rows)
        pal = self.palette()
        muted = muted_text(pal).name()
        bad = status_colors(pal)["bad"].name()
        text = escape(lookup.text)
        if lookup.status == "empty":
            self.lookup_result.setText("")
        elif lookup.status == "stop":
            self.lookup_result.setText(
                f"<span style='color:{muted}'>“{text}” is a stop word: it is not indexed.</span>"
            )
        elif lookup.status == "short":
            self.lookup_result.setText(
                f"<span style='color:{muted}'>“{text}” is shorter than the "
                "minimum length: it is not indexed.</span>"
            )
        elif lookup.status == "unknown":
            hint = ", ".join(escape(s) for s in lookup.suggestions)
            self.lookup_result.setText(
                f"<span style='color:{bad}'>“{text}” → {escape(lookup.term or '')} is in no "
                f"document.</span>" + (f" Close terms: {hint}." if hint else "")
            )
        else:
            negative = [r.label for r in lookup.rows if r.idf < 0]
            zero = [r.label for r in lookup.rows if r.idf == 0]
            flags = ""
            if negative:
                flags += (
                    f"<br><span style='color:{bad}'>⚠ negative idf under {len(negative)} "
                    "variant(s): containing this term lowers a document's score there.</span>"
                )
            if zero:
                flags += (
                    f"<br><span style='color:{status_colors(pal)['warn'].name()}'>⚠ zero "
                    f"idf under {len(zero)} variant(s).</span>"
                )
            self.lookup_result.setText(
                f"“{text}” → <b>{escape(lookup.term or '')}</b>: df = {lookup.df:,} of "
                f"N = {lookup.n_docs:,} documents ({lookup.df / max(1, lookup.n_docs):.1%}), "
                f"cf = {lookup.cf:,} occurrences{flags}"
            )

"""Render the main states of the app to PNG files, so anyone can look at them.

Usage::

    QT_QPA_PLATFORM=offscreen .venv/bin/python tools/screenshots.py OUTDIR [--dark]

States: the empty start page, a build in progress, results with the ledger and plots, the
Compare tab, the Statistics tab, the New-index dialog on a TSV file, and results re-ranked with
relevance feedback (two documents marked relevant, the ledger showing the RSJ weight).
Everything happens in a temporary data dir (the real user's indexes and settings are never
touched). The time from creating the window to the first results on the bundled sample is
printed.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    """Render the screenshots into the folder given on the command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--dark", action="store_true", help="render with a dark palette")
    parser.add_argument("--width", type=int, default=1440)
    parser.add_argument("--height", type=int, default=920)
    opts = parser.parse_args()
    opts.outdir.mkdir(parents=True, exist_ok=True)
    data = tempfile.TemporaryDirectory(prefix="bm25desk-shots-")
    os.environ["BM25DESK_DATA_DIR"] = data.name

    started = time.perf_counter()
    from PySide6.QtCore import QCoreApplication
    from PySide6.QtGui import QColor, QPalette
    from PySide6.QtWidgets import QApplication

    QCoreApplication.setOrganizationName("bm25desk")
    QCoreApplication.setApplicationName("bm25desk")
    app = QApplication(sys.argv[:1])
    if opts.dark:
        app.setStyle("Fusion")
        app.setPalette(dark_palette(QPalette, QColor))

    from bm25desk.engine import get_variant
    from bm25desk.ui.main_window import MainWindow

    def wait(cond: Callable[[], bool], timeout: float = 120.0, what: str = "") -> None:
        end = time.perf_counter() + timeout
        while not cond():
            if time.perf_counter() > end:
                raise SystemExit(f"timed out waiting for {what}")
            app.processEvents()
            time.sleep(0.005)

    def settle(seconds: float = 0.3) -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            app.processEvents()
            time.sleep(0.01)

    def shot(widget: object, name: str) -> None:
        settle()
        path = opts.outdir / f"{name}.png"
        widget.grab().save(str(path))  # type: ignore[attr-defined]
        print(f"wrote {path}")  # noqa: T201

    window = MainWindow()
    window.resize(opts.width, opts.height)
    window.show()
    window_ready = time.perf_counter()
    shot(window, "01-empty-start")

    first_results: list[float] = []
    window.search_panel.results_shown.connect(
        lambda _o: first_results.append(time.perf_counter()) if not first_results else None
    )
    progressed: list[int] = []
    clicked = time.perf_counter()
    window.build_sample()
    job = window.build_job
    assert job is not None
    job.signals.progressed.connect(lambda done, total: progressed.append(done))
    wait(lambda: len(progressed) >= 4 or window.build_job is None, what="build progress")
    shot(window, "02-building")
    wait(lambda: bool(first_results), what="first results")
    total = time.perf_counter() - started
    print(  # noqa: T201
        f"sample: {total:.1f} s from launch to first results "
        f"(window {window_ready - started:.1f} s; "
        f"click → results {first_results[0] - clicked:.1f} s)"
    )
    panel = window.search_panel
    wait(lambda: panel.detail.outcome() is not None, what="detail")
    panel.select_row(1)
    wait(
        lambda: (
            panel.detail.outcome() is not None
            and panel.detail.outcome().explanation.docno == panel.selected_docno()
        ),
        what="detail of row 2",
    )
    panel.detail.preview.next_match()
    shot(window, "03-results-ledger-plots")

    panel.set_variant(get_variant("bm25adpt"))
    wait(lambda: panel.detail.outcome().explanation.variant.key == "bm25adpt", what="bm25adpt")
    shot(window, "04-results-bm25adpt")

    panel.set_variant(get_variant("lucene"))
    b_config = get_variant("lucene", b=0.2)
    window.compare_panel.set_configs(get_variant("lucene"), b_config)
    window.show_tab(1)
    wait(
        lambda: (
            window.compare_panel.outcome() is not None
            and window.compare_panel.outcome().variant_b == b_config
        ),
        what="compare",
    )
    wait(lambda: window.compare_panel.delta_model.rowCount() > 0, what="compare delta")
    shot(window, "05-compare")

    window.show_tab(2)
    wait(lambda: window.stats_panel.stats() is not None, what="statistics")
    window.stats_panel.lookup_edit.setText("information")
    window.stats_panel.look_up()
    wait(lambda: window.stats_panel.lookup() is not None, what="term look-up")
    shot(window, "06-statistics")

    from bm25desk.ui.indexes.new_index_dialog import NewIndexDialog

    tsv = Path(data.name) / "passages.tsv"
    tsv.write_text(
        "pid\ttitle\ttext\n"
        "p1\tApple orchards\tApple trees grow in orchards; the harvest is in autumn.\n"
        "p2\tCider\tCider is made from apple juice, fermented for weeks.\n"
        "p3\tPears\tThe pear is a fruit; pear trees need pollination by bees.\n",
        encoding="utf-8",
    )
    dialog = NewIndexDialog(window.store, window)
    dialog.set_source(tsv)
    dialog.show()
    shot(dialog, "07-new-index-dialog")
    dialog.close()

    window.show_tab(0)
    shown: list[object] = []
    panel.results_shown.connect(shown.append)
    panel.set_query("computer indexing of scientific literature")
    wait(lambda: bool(shown) and panel.model.rowCount() > 5, what="feedback query")
    for row in (2, 4):
        panel.toggle_mark(panel.model.hit(row).docid)
    shown.clear()
    panel.set_feedback(True)
    wait(lambda: bool(shown) and panel.model.has_feedback, what="feedback ranking")
    sizes = panel.splitter.sizes()
    panel.splitter.setSizes([360, sum(sizes) - 360])  # room for a dozen rows
    marked = panel.current_marks().marked
    risers = [
        (m.shift, i)
        for i in range(min(7, panel.model.rowCount()))
        if (m := panel.model.movement(i)) is not None
        and m.kind == "up"
        and panel.model.hit(i).docid not in marked
    ]
    moved = max(risers)[1] if risers else 0
    view_row = panel.proxy.mapFromSource(panel.model.index(moved, 0)).row()
    panel.select_row(view_row)
    wait(
        lambda: (
            panel.detail.outcome() is not None
            and panel.detail.outcome().explanation.docno == panel.selected_docno()
            and panel.detail.outcome().feedback is not None
        ),
        what="feedback ledger",
    )
    shot(window, "08-feedback")
    panel.set_feedback(False)
    panel.splitter.setSizes(sizes)
    window.close()
    data.cleanup()
    return 0


def dark_palette(qpalette: type, qcolor: type) -> object:
    """Return a dark palette (to check that nothing is hard-coded for light themes)."""
    p = qpalette()
    role = qpalette.ColorRole
    for r, c in (
        (role.Window, "#2b2b2b"),
        (role.WindowText, "#e6e6e6"),
        (role.Base, "#1e1e1e"),
        (role.AlternateBase, "#262626"),
        (role.Text, "#e6e6e6"),
        (role.Button, "#353535"),
        (role.ButtonText, "#e6e6e6"),
        (role.Highlight, "#3d6fa5"),
        (role.HighlightedText, "#ffffff"),
        (role.PlaceholderText, "#8c8c8c"),
        (role.ToolTipBase, "#2b2b2b"),
        (role.ToolTipText, "#e6e6e6"),
        (role.Link, "#7fb0e6"),
    ):
        p.setColor(r, qcolor(c))
    return p


if __name__ == "__main__":
    raise SystemExit(main())

r"""Render every state of the app to PNG files, at laptop and desktop sizes, light and dark.

Usage::

    QT_QPA_PLATFORM=offscreen .venv/bin/python tools/screenshots.py OUTDIR \
        [--sizes 1280x720,1920x1080] [--themes light,dark]

Each (size, theme) gets a fresh temporary data dir (the real user's indexes and settings are never
touched), builds the bundled sample, and walks the states listed in :data:`STATES`: the start
page, a build, results with the ledger and each plot, the variants whose plots look different
(BM25Adpt, TF₁∘δ∘p×IDF, BIM, BM25L, BM25+), relevance feedback, Compare, Statistics, an
evaluation (results, per query, sweep), the Terms tab with a term's postings and a document's
terms, the New-index dialog, the index manager, an empty index and an error. ``--only`` visits
some states only (the start and build always come first). Files are named
``{size}-{theme}-{nn}-{state}.png``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SIZES = ((1280, 720), (1920, 1080))
QUERY = "information retrieval evaluation"


class Session:
    """One window at one size and theme, with helpers to wait for work and take pictures."""

    def __init__(self, app: Any, outdir: Path, size: tuple[int, int], theme: str) -> None:
        from bm25desk.ui.main_window import MainWindow

        self.app = app
        self.outdir = outdir
        self.prefix = f"{size[0]}x{size[1]}-{theme}"
        self.count = 0
        self.window = MainWindow()
        self.window.confirm = lambda _title, _text: True
        self.window.resize(*size)
        self.window.show()

    def wait(self, cond: Callable[[], object], what: str, timeout: float = 120.0) -> None:
        """Process events until ``cond()`` holds (exit with a message after ``timeout``)."""
        end = time.perf_counter() + timeout
        while not cond():
            if time.perf_counter() > end:
                raise SystemExit(f"{self.prefix}: timed out waiting for {what}")
            self.app.processEvents()
            time.sleep(0.005)

    def settle(self, seconds: float = 0.3) -> None:
        """Let queued work and repaints happen."""
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            self.app.processEvents()
            time.sleep(0.01)

    def shot(self, name: str, widget: Any = None) -> None:
        """Save a picture of ``widget`` (default: the window)."""
        self.settle()
        self.count += 1
        path = self.outdir / f"{self.prefix}-{self.count:02d}-{name}.png"
        (widget or self.window).grab().save(str(path))
        print(f"wrote {path}")  # noqa: T201

    def detail_of_row(self, row: int) -> None:
        """Select result ``row`` and wait for its explanation."""
        panel = self.window.search_panel
        panel.select_row(row)
        self.wait(
            lambda: (
                panel.detail.outcome() is not None
                and panel.detail.outcome().explanation.docno == panel.selected_docno()
            ),
            f"detail of row {row}",
        )


def start_and_build(s: Session) -> None:
    """Show the start page, then the sample's build in progress and its first results."""
    s.shot("start-page")
    w = s.window
    progressed: list[int] = []
    w.build_sample()
    w.builds.jobs.progressed.connect(lambda done, _total: progressed.append(done))
    s.wait(lambda: len(progressed) >= 3 or w.build_job is None, "build progress")
    s.shot("building")
    s.wait(lambda: w.search_panel.model.rowCount() > 0, "first results")


def search_states(s: Session) -> None:
    """Results with the ledger and each of the three plots, then Home/End of the list."""
    panel = s.window.search_panel
    panel.set_query(QUERY)
    s.wait(lambda: panel.outcome() is not None and panel.outcome().result.query == QUERY, "query")
    s.detail_of_row(1)
    panel.detail.preview.next_match()
    for i, name in enumerate(("plot-tf", "plot-length", "plot-idf")):
        panel.detail.plots.tabs.setCurrentIndex(i)
        s.shot(f"results-{name}")
    panel.detail.plots.tabs.setCurrentIndex(0)


def variant_states(s: Session) -> None:
    """Show the variants whose explanation and plots look different from Lucene's."""
    from bm25desk.engine import get_variant

    panel = s.window.search_panel
    for key, tab in (("bm25adpt", 0), ("tfldp", 0), ("bim", 2), ("bm25l", 1), ("bm25plus", 0)):
        panel.set_variant(get_variant(key))
        s.wait(
            lambda key=key: (
                panel.detail.outcome() is not None
                and panel.detail.outcome().explanation.variant.key == key
            ),
            key,
        )
        panel.detail.plots.tabs.setCurrentIndex(tab)
        s.shot(f"variant-{key}")
    panel.detail.plots.tabs.setCurrentIndex(0)
    panel.set_variant(get_variant("lucene"))


def feedback_state(s: Session) -> None:
    """Two results marked relevant and the ranking re-ranked with feedback."""
    panel = s.window.search_panel
    for row in (2, 4):
        panel.toggle_mark(panel.model.hit(row).docid)
    panel.set_feedback(True)
    s.wait(lambda: panel.model.has_feedback, "feedback ranking")
    s.detail_of_row(3)
    s.shot("feedback")
    panel.clear_marks()
    s.wait(lambda: not panel.model.has_feedback, "plain ranking")


def compare_and_statistics(s: Session) -> None:
    """Show the Compare tab (Lucene against b = 0.2) and the Statistics tab with a look-up."""
    from bm25desk.engine import get_variant

    w = s.window
    b_config = get_variant("lucene", b=0.2)
    w.compare_panel.set_configs(get_variant("lucene"), b_config)
    w.show_tab(1)
    s.wait(
        lambda: (
            w.compare_panel.outcome() is not None
            and w.compare_panel.outcome().variant_b == b_config
        ),
        "compare",
    )
    s.wait(lambda: w.compare_panel.delta_model.rowCount() > 0, "compare delta")
    s.shot("compare")
    w.show_tab(2)
    s.wait(lambda: w.stats_panel.stats() is not None, "statistics")
    w.stats_panel.lookup_edit.setText("information")
    w.stats_panel.look_up()
    s.wait(lambda: w.stats_panel.lookup() is not None, "term look-up")
    s.shot("statistics")


def evaluation_states(s: Session) -> None:
    """Show the Evaluation view: set up, results, per-query drill-down and a sweep."""
    w = s.window
    panel = w.eval_panel
    w.show_tab(3)
    s.shot("evaluation-setup")
    loaded: list[object] = []
    panel.inputs_loaded.connect(loaded.append)
    panel.setup.inputs_box.sample_button.click()
    s.wait(lambda: bool(loaded), "evaluation files")
    panel.setup.options_box.k_spin.setValue(100)
    finished: list[object] = []
    panel.experiment_finished.connect(finished.append)
    panel.run()
    s.wait(lambda: bool(finished), "evaluation")
    s.wait(lambda: panel.results.tests_model.rowCount() > 0, "paired tests")
    s.shot("evaluation-results")
    panel.tabs.setCurrentIndex(1)
    panel.per_query.select_query("3")
    s.wait(lambda: panel.per_query.why() is not None, "why not")
    s.shot("evaluation-per-query")
    panel.tabs.setCurrentIndex(2)
    panel.sweep.set_ranges("lucene", k1=(0.6, 1.8, 0.3), b=(0.2, 1.0, 0.2))
    swept: list[object] = []
    panel.sweep_finished.connect(swept.append)
    panel.run_sweep()
    s.wait(lambda: bool(swept), "sweep", timeout=300)
    s.shot("evaluation-sweep")
    panel.tabs.setCurrentIndex(0)
    w.show_tab(0)


def terms_states(s: Session) -> None:
    """Show the Terms tab (terms starting with "retriev", a term's postings), a document's terms."""
    w = s.window
    panel = w.terms_panel
    w.show_tab(4)
    s.wait(lambda: panel.terms_model.rowCount() > 0, "terms")
    s.wait(lambda: panel.postings_model.rowCount() > 0, "postings of the top term")
    s.shot("terms")
    panel.filter_edit.setText("retriev")
    s.wait(lambda: panel.term().startswith("retriev"), "postings of a filtered term")
    s.wait(lambda: panel.postings_model.rowCount() > 0, "its postings")
    s.shot("terms-filtered")
    docno = panel.selected_docno()
    assert docno is not None
    w.look_inside.show_doc_terms(docno)
    dialog = w.look_inside.doc_terms
    s.wait(lambda: dialog.document() is not None, "a document's terms")
    s.shot("document-terms", dialog)
    dialog.close()
    panel.filter_edit.setText("")
    w.show_tab(0)


def back_to_the_sample(s: Session) -> None:
    """Show the Search tab of the sample with the usual query (where the next state starts)."""
    w = s.window
    w.show_tab(0)
    w.open_index("cisi-sample", query=QUERY)
    s.wait(lambda: w.searcher is not None and w.searcher.index.name == "cisi-sample", "reopen")


def cjk_states(s: Session) -> None:
    """Show the New-index dialog with the CJK tokenizer, then a Chinese and a Japanese search.

    The collections are the tests' (``tests/data/cjk``): classical and modern Chinese, Japanese
    novels' openings, Korean sentences, indexed with the ``cjk`` tokenizer.
    """
    from bm25desk.engine import IndexStore, build_index
    from bm25desk.engine.analysis.analyzer import Analyzer
    from bm25desk.ui.indexes.new_index_dialog import NewIndexDialog

    w = s.window
    data = Path(__file__).resolve().parents[1] / "tests" / "data" / "cjk"
    dialog = NewIndexDialog(w.store, w, w.runner)
    dialog.set_source(data / "ja.jsonl")
    options = dialog.analysis
    options.tokenizer.setCurrentIndex(options.tokenizer.findData("cjk"))
    dialog.show()
    s.shot("new-index-cjk", dialog)
    dialog.close()
    merged = Path(os.environ["BM25DESK_DATA_DIR"]) / "cjk.jsonl"
    merged.write_text(
        "".join(
            (data / f"{lang}.jsonl").read_text(encoding="utf-8") for lang in ("zh", "ja", "ko")
        ),
        encoding="utf-8",
    )
    analyzer = Analyzer.create(tokenizer="cjk", stopwords="en", stemmer="porter")
    build_index(merged, name="cjk", analyzer=analyzer, store=IndexStore())
    w.refresh_indexes()
    for query, name in (("學而時習", "cjk-search-chinese"), ("吾輩は猫", "cjk-search-japanese")):
        w.open_index("cjk", query=query, force=True)
        s.wait(
            lambda q=query: (
                w.searcher is not None
                and w.searcher.index.name == "cjk"
                and w.search_panel.outcome() is not None
                and w.search_panel.outcome().result.query == q
            ),
            f"the CJK search {query}",
        )
        s.detail_of_row(0)
        s.shot(name)
    w.show_tab(2)
    s.wait(lambda: w.stats_panel.stats() is not None, "statistics of the CJK index")
    s.shot("cjk-statistics")
    back_to_the_sample(s)


def edit_states(s: Session) -> None:
    """Show the Remove-documents dialog, then Statistics after documents were added by id."""
    from bm25desk.engine import IndexStore, build_index
    from bm25desk.engine.readers.corpus import ColumnMap
    from bm25desk.ui.indexes.edit_dialogs import RemoveDialog

    w = s.window
    data = Path(os.environ["BM25DESK_DATA_DIR"])
    tsv = data / "orchard.tsv"
    rows = [
        ("o1", "Apple orchards", "Apple trees grow in orchards; the harvest is in autumn."),
        ("o2", "Cider", "Cider is made from apple juice, fermented for weeks."),
        ("o3", "Pears", "Pear trees like sun and need pollination by bees."),
    ]
    tsv.write_text(
        "id\ttitle\ttext\n" + "".join(f"{a}\t{b}\t{c}\n" for a, b, c in rows), encoding="utf-8"
    )
    columns = ColumnMap("id", ("text",), "title")
    build_index(tsv, name="orchard", fmt="tsv-header", columns=columns, store=IndexStore())
    w.refresh_indexes()
    w.open_index("orchard", query="apple")
    s.wait(lambda: w.searcher is not None and w.searcher.index.name == "orchard", "orchard")
    dialog = RemoveDialog("orchard", w)
    dialog.edit.setPlainText("o2\no9")
    dialog.show()
    s.shot("remove-documents-dialog", dialog)
    dialog.close()
    more = data / "more.tsv"
    more.write_text(
        "id\ttitle\ttext\n"
        "o4\tQuince\tQuince trees bear hard yellow fruit, cooked before eating.\n"
        "o1\tApple orchards\tApple trees grow in orchards; apples keep all winter.\n",
        encoding="utf-8",
    )
    w.index_actions.ask_corpus_file = lambda _parent, _name: more
    w.show_tab(2)
    w.index_actions.add_documents("orchard")
    s.wait(lambda: w.searcher is not None and w.searcher.index.n_docs == 4, "the added documents")
    s.wait(lambda: w.stats_panel.stats() is not None and w.stats_panel.stats().n_docs == 4, "N")
    s.shot("documents-added")
    back_to_the_sample(s)


def facet_states(s: Session) -> None:
    """Show the facet panel of a folder index, a file type ticked."""
    from PySide6.QtCore import Qt

    from bm25desk.engine import IndexStore, build_index

    w = s.window
    folder = Path(os.environ["BM25DESK_DATA_DIR"]) / "garden"
    (folder / "fruit").mkdir(parents=True, exist_ok=True)
    texts = {
        "fruit/apples.txt": "Apple trees and apple cider; apples keep all winter.",
        "fruit/pears.md": "# Pears\n\nPear trees and apple grafts in spring.",
        "cider.md": "Cider is made from apple juice, fermented for weeks.",
        "orchard.html": "<h1>Orchard</h1><p>An apple orchard in autumn.</p>",
        "bees.txt": "Bees pollinate the trees.",
    }
    for name, text in texts.items():
        (folder / name).write_text(text, encoding="utf-8")
    build_index(folder, name="garden", store=IndexStore())
    w.refresh_indexes()
    w.open_index("garden", query="apple")
    s.wait(lambda: w.searcher is not None and w.searcher.index.name == "garden", "garden")
    panel = w.facets.panel
    s.wait(lambda: len(panel.items()) > 0, "facets")
    s.settle(0.5)
    md = next(i for i in panel.items() if i.data(0, Qt.ItemDataRole.UserRole + 1) == ("type", "md"))
    md.setCheckState(0, Qt.CheckState.Checked)
    s.wait(lambda: w.search_panel.outcome().result.n_matches == 2, "filtered results")
    s.detail_of_row(0)
    s.shot("facets")
    if w.facets.dock.isFloating():  # a narrow window: the panel floats beside it
        s.shot("facets-floating", w.facets.dock)
    back_to_the_sample(s)


def dialogs_and_edges(s: Session) -> None:
    """Show the New-index dialog on a TSV file, the index manager, an empty index, an error."""
    from bm25desk.engine import IndexStore, build_index
    from bm25desk.ui.indexes.new_index_dialog import NewIndexDialog

    w = s.window
    data = Path(os.environ["BM25DESK_DATA_DIR"])
    tsv = data / "passages.tsv"
    tsv.write_text(
        "pid\ttitle\ttext\n"
        "p1\tApple orchards\tApple trees grow in orchards; the harvest is in autumn.\n"
        "p2\tCider\tCider is made from apple juice, fermented for weeks.\n",
        encoding="utf-8",
    )
    dialog = NewIndexDialog(w.store, w)
    dialog.set_source(tsv)
    dialog.show()
    s.shot("new-index-dialog", dialog)
    notes = data / "notes"
    notes.mkdir(exist_ok=True)
    for name in ("orchards.txt", "cider.txt", "pears.md", "harvest.html"):
        (notes / name).write_text("Apple trees grow in orchards.", encoding="utf-8")
    (notes / "photo.jpg").write_bytes(b"\xff\xd8\xff")
    dialog.set_source(notes)
    s.shot("new-index-folder", dialog)
    dialog.close()
    empty = data / "scans"
    empty.mkdir(exist_ok=True)
    (empty / "scan.txt").write_bytes(b"\x00\x01binary\x00")
    build_index(empty, name="scans", store=IndexStore(), allow_empty=True)
    w.show_index_manager()
    s.shot("index-manager", w.index_manager)
    w.index_manager.hide()
    w.open_index("scans")
    s.wait(lambda: w.searcher is not None and w.searcher.index.name == "scans", "empty index")
    s.shot("empty-index")
    w.open_index("cisi-sample", query=QUERY)
    s.wait(lambda: w.searcher is not None and w.searcher.index.name == "cisi-sample", "reopen")
    s.wait(lambda: w.search_panel.outcome() is not None, "the reopened index's results")
    w.show_error(RuntimeError("an example of an unexpected error"))
    s.shot("error-message")


STATES: tuple[Callable[[Session], None], ...] = (
    start_and_build,
    search_states,
    variant_states,
    feedback_state,
    compare_and_statistics,
    evaluation_states,
    terms_states,
    cjk_states,
    edit_states,
    facet_states,
    dialogs_and_edges,
)
"""The states, in the order they are visited (each starts where the previous one ended)."""


def main() -> int:
    """Render the screenshots into the folder given on the command line."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--sizes", default=",".join(f"{w}x{h}" for w, h in SIZES))
    parser.add_argument("--themes", default="light,dark")
    parser.add_argument("--only", default="", help="comma-separated state names (e.g. terms)")
    opts = parser.parse_args()
    if opts.only:
        wanted = {f"{name.strip()}_states" for name in opts.only.split(",")} | {
            name.strip() for name in opts.only.split(",")
        }
        global STATES
        STATES = (start_and_build, *(f for f in STATES[1:] if f.__name__ in wanted))
    opts.outdir.mkdir(parents=True, exist_ok=True)
    from PySide6.QtCore import QCoreApplication
    from PySide6.QtWidgets import QApplication

    QCoreApplication.setOrganizationName("bm25desk")
    QCoreApplication.setApplicationName("bm25desk")
    app = QApplication(sys.argv[:1])
    app.setStyle("Fusion")  # the same look offscreen, under Xvfb and on a desktop
    light = app.palette()
    for theme in opts.themes.split(","):
        app.setPalette(dark_palette() if theme == "dark" else light)
        for size in opts.sizes.split(","):
            width, height = (int(v) for v in size.split("x"))
            run(app, opts.outdir, (width, height), theme)
    return 0


def run(app: Any, outdir: Path, size: tuple[int, int], theme: str) -> None:
    """Visit every state at one size and theme, in a fresh data dir."""
    from bm25desk import paths

    with tempfile.TemporaryDirectory(prefix="bm25desk-shots-") as data:
        os.environ["BM25DESK_DATA_DIR"] = data
        paths._override = None  # re-read the environment
        session = Session(app, outdir, size, theme)
        try:
            for state in STATES:
                state(session)
        finally:
            session.window.close()
            session.settle(0.2)


def dark_palette() -> Any:
    """Return a dark palette (to check that nothing is hard-coded for light themes)."""
    from PySide6.QtGui import QColor, QPalette

    p = QPalette()
    role = QPalette.ColorRole
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
        p.setColor(r, QColor(c))
    disabled = QPalette.ColorGroup.Disabled
    for r in (role.WindowText, role.Text, role.ButtonText):
        p.setColor(disabled, r, QColor("#7a7a7a"))
    p.setColor(disabled, role.Button, QColor("#2f2f2f"))
    return p


if __name__ == "__main__":
    raise SystemExit(main())

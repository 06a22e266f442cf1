"""Relevance feedback in the Search tab: marks, re-ranking with the RSJ weight, before → after."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMenu

from bm25desk.engine import IndexStore, Searcher, build_index, get_variant
from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.readers.corpus import ColumnMap
from bm25desk.ui.common.colors import TermColors
from bm25desk.ui.common.ledger_model import Column as LedgerColumn
from bm25desk.ui.search.feedback import Marks, MarksMemory, query_key
from bm25desk.ui.search.panel import SearchPanel
from bm25desk.ui.search.results_model import (
    MARK_ROLE,
    MOVE_ROLE,
    Column,
    Movement,
    ResultsModel,
)
from bm25desk.ui.search.work import run_detail, run_search

# A CISI-like collection (library and information science abstracts). "citation" is rare: only
# c03 and c10 contain it. c10 is long and has no other query term, so without feedback four
# documents outrank it; once c03 is marked relevant, the RSJ weight of "citation" (r = 1 of R = 1)
# rises and that of the terms c03 lacks falls, pulling c10 up to second place.
CISI_LIKE: tuple[tuple[str, str, str], ...] = (
    (
        "c01",
        "Evaluation of retrieval systems",
        "Retrieval systems are evaluated by recall and precision; retrieval tests compare "
        "indexing languages.",
    ),
    (
        "c02",
        "Library catalogues",
        "The library catalogue supports retrieval of books by author, title and subject.",
    ),
    (
        "c03",
        "Citation indexing",
        "A citation index links papers through their references; citation indexing "
        "complements subject indexing.",
    ),
    (
        "c04",
        "Automatic indexing",
        "Automatic indexing assigns terms to documents by statistical analysis of the text "
        "for retrieval.",
    ),
    (
        "c05",
        "Subject headings",
        "Subject headings in library catalogues guide retrieval; indexing by headings is "
        "manual work.",
    ),
    (
        "c06",
        "Bibliographic coupling",
        "Papers that share references are coupled; coupling reveals related work in the "
        "literature of science, which grows quickly and needs new tools for scientists and "
        "librarians.",
    ),
    (
        "c07",
        "Relevance judgements",
        "Relevance judgements of retrieval output vary between judges and over time.",
    ),
    (
        "c08",
        "Thesaurus construction",
        "A thesaurus controls the indexing vocabulary and improves retrieval of documents.",
    ),
    (
        "c09",
        "User studies",
        "Studies of library users show how scientists search for information.",
    ),
    (
        "c10",
        "Science citation index",
        "The Science Citation Index lists the papers that cite a given paper, across the "
        "journals of science, year after year, for scientists and historians.",
    ),
    (
        "c11",
        "Classification schemes",
        "Library classification schemes order books on the shelves by subject.",
    ),
    (
        "c12",
        "Indexing languages",
        "Indexing languages differ in specificity and exhaustivity; both affect retrieval "
        "performance.",
    ),
    (
        "c13",
        "Indexing and retrieval",
        "Indexing for retrieval: good indexing makes retrieval easy.",
    ),
    (
        "c14",
        "Retrieval by indexing",
        "Retrieval depends on indexing; indexing quality limits retrieval.",
    ),
)
QUERY = "subject indexing retrieval library catalogues citation"


@pytest.fixture(autouse=True)
def _collect_garbage_in_the_gui_thread() -> Iterator[None]:
    """Collect the Qt objects the plots leave in reference cycles here, on the GUI thread.

    Left alone, a later allocation on a pool thread (a search job) can trigger the collection
    there, and destroying Qt objects off the GUI thread may crash the process.
    """
    yield
    gc.collect()


@pytest.fixture(scope="module")
def cisi_like(tmp_path_factory: pytest.TempPathFactory) -> Searcher:
    root = tmp_path_factory.mktemp("cisi-like")
    tsv = root / "cisi-like.tsv"
    lines = ["id\ttitle\ttext", *(f"{d}\t{t}\t{b}" for d, t, b in CISI_LIKE)]
    tsv.write_text("\n".join(lines) + "\n", encoding="utf-8")
    store = IndexStore(Path(root) / "indexes")
    build_index(
        tsv,
        name="cisi-like",
        fmt="tsv-header",
        columns=ColumnMap("id", ("text",), "title"),
        analyzer=Analyzer.create(stopwords="en", stemmer="porter"),
        store=store,
    )
    return Searcher(store.open("cisi-like"))


@pytest.fixture
def panel(qtbot, runner, cisi_like):
    p = SearchPanel(runner)
    qtbot.addWidget(p)
    p.resize(1300, 800)
    p.show()
    p.set_variant(get_variant("lucene"))
    p.set_searcher(cisi_like)
    yield p
    p.set_searcher(None)


def order(panel: SearchPanel) -> list[str]:
    return [h.docid for h in panel.model.hits()]


def search(qtbot, panel: SearchPanel, text: str, **kwargs) -> object:
    with qtbot.waitSignal(panel.results_shown, timeout=5000) as blocker:
        panel.set_query(text, **kwargs)
    return blocker.args[0]


def click_star(qtbot, panel: SearchPanel, docid: str) -> None:
    row = panel.model.row_of_docid(docid)
    index = panel.proxy.mapFromSource(panel.model.index(row, Column.MARK))
    panel.view.scrollTo(index)
    rect = panel.view.visualRect(index)
    qtbot.mouseClick(panel.view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def wait_detail(qtbot, panel: SearchPanel, docid: str, *, feedback: bool) -> object:
    def ready() -> bool:
        d = panel.detail.outcome()
        return (
            d is not None and d.explanation.docid == docid and (d.feedback is not None) == feedback
        )

    qtbot.waitUntil(ready, timeout=5000)
    return panel.detail.outcome()


def test_marking_then_reranking_pulls_up_documents_sharing_the_rare_term(qtbot, panel) -> None:
    search(qtbot, panel, QUERY)
    plain = order(panel)
    assert plain.index("c10") == 3  # fourth without feedback
    assert panel.model.data(panel.model.index(0, Column.MARK)) == "☆"
    assert panel.view.isColumnHidden(Column.BEFORE)

    # Marking alone does not re-rank: the star shows, the ranking stays.
    with qtbot.assertNotEmitted(panel.results_shown, wait=200):
        click_star(qtbot, panel, "c03")
    assert panel.current_marks().marked == {"c03"}
    row = panel.model.row_of_docid("c03")
    assert panel.model.data(panel.model.index(row, Column.MARK)) == "★"
    assert panel.model.data(panel.model.index(row, Column.MARK), MARK_ROLE) == (True, False)
    assert order(panel) == plain
    assert "1</b> marked relevant" in panel.feedback_bar.count_label.text()

    with qtbot.waitSignal(panel.results_shown, timeout=5000) as blocker:
        panel.feedback_bar.rerank_button.click()
    outcome = blocker.args[0]
    assert outcome.feedback is not None
    assert outcome.feedback.relevant == {cisi_docno(panel, "c03")}
    after = order(panel)
    assert after[:2] == ["c03", "c10"]  # the other "citation" document rose from 4th to 2nd
    assert after.index("c10") < plain.index("c10")

    # Before → after on every row, the stars where they were.
    row = panel.model.row_of_docid("c10")
    move = panel.model.movement(row)
    assert move == Movement("up", 4, 2)
    assert panel.model.data(panel.model.index(row, Column.MOVE)) == "▲2"
    assert panel.model.data(panel.model.index(row, Column.BEFORE)) == "4"
    assert panel.model.data(panel.model.index(row, Column.MOVE), MOVE_ROLE) == move
    c02 = panel.model.row_of_docid("c02")  # lacks "citation": falls
    assert panel.model.movement(c02).kind == "down"
    assert panel.model.data(panel.model.index(0, Column.MARK)) == "★"
    assert not panel.view.isColumnHidden(Column.BEFORE)
    assert not panel.view.isColumnHidden(Column.MOVE)
    assert "RSJ weight, R = 1" in panel.feedback_bar.summary_label.text()
    assert panel.feedback_bar.rerank_button.isChecked()
    assert "idf → RSJ weight, R = 1 marked relevant" in panel.bar.formula.full_text()
    assert "Robertson/Sparck Jones" in panel.bar.formula.toolTip()


def cisi_docno(panel: SearchPanel, docid: str) -> int:
    docno = panel.searcher.index.docno(docid)
    assert docno is not None
    return docno


def test_the_ledger_shows_the_rsj_weight_and_off_restores_the_plain_ranking(qtbot, panel) -> None:
    search(qtbot, panel, QUERY)
    plain = [(h.docid, h.score) for h in panel.model.hits()]
    panel.toggle_mark("c03")
    with qtbot.waitSignal(panel.results_shown, timeout=5000):
        panel.set_feedback(True)

    panel.select_row(panel.proxy.mapFromSource(panel.model.index(1, 0)).row())
    detail = wait_detail(qtbot, panel, "c10", feedback=True)
    e = detail.explanation
    assert e.rank == 2  # the rank under feedback
    cite = next(t for t in e.terms if t.term == "citat")
    assert cite.idf_text.startswith("RSJ (R = 1 marked relevant, r = 1 contain it): ln[(1 + 0.5)")
    library = next(t for t in e.terms if t.surface == "library")  # not in c03
    assert "r = 0 contain it" in library.idf_text
    ledger = panel.detail.ledger
    formulas = [
        ledger.model.data(ledger.model.index(r, LedgerColumn.IDF_FORMULA))
        for r in range(ledger.model.rowCount())
    ]
    assert any(f.startswith("RSJ (R = 1") for f in formulas)
    assert "RSJ" in ledger.formulas.text()
    assert "Robertson/Sparck Jones" in ledger.heading.text()
    assert "✓" in ledger.check.text()  # the parts still add up to the (feedback) score
    assert abs(e.score - panel.model.hit(1).score) < 1e-9
    assert any("RSJ" in n for n in detail.plots.notes)

    # Off: the plain ranking again, to the last digit, and a plain ledger.
    with qtbot.waitSignal(panel.results_shown, timeout=5000) as blocker:
        panel.feedback_bar.rerank_button.click()
    assert blocker.args[0].feedback is None
    assert [(h.docid, h.score) for h in panel.model.hits()] == plain
    assert panel.view.isColumnHidden(Column.BEFORE)
    assert panel.model.movement(0) is None
    assert panel.current_marks().marked == {"c03"}  # the marks stay for the next time
    assert panel.model.data(panel.model.index(panel.model.row_of_docid("c03"), Column.MARK)) == "★"
    detail = wait_detail(qtbot, panel, "c10", feedback=False)
    assert not any("RSJ" in t.idf_text for t in detail.explanation.terms)
    assert "Robertson" not in ledger.heading.text()

    # Clear while on: marks gone, plain ranking.
    with qtbot.waitSignal(panel.results_shown, timeout=5000):
        panel.set_feedback(True)
    with qtbot.waitSignal(panel.results_shown, timeout=5000) as blocker:
        panel.feedback_bar.clear_button.click()
    assert blocker.args[0].feedback is None
    assert panel.current_marks() == Marks()
    assert [(h.docid, h.score) for h in panel.model.hits()] == plain


def test_space_and_the_context_menu_mark_results(qtbot, panel, monkeypatch) -> None:
    search(qtbot, panel, QUERY)
    panel.view.setFocus()
    panel.select_row(0)
    first = panel.model.hit(0).docid
    qtbot.keyClick(panel.view, Qt.Key.Key_Space)
    assert panel.current_marks().marked == {first}
    qtbot.keyClick(panel.view, Qt.Key.Key_Space)
    assert panel.current_marks().marked == frozenset()

    shown: list[list[str]] = []
    monkeypatch.setattr(
        QMenu, "popup", lambda menu, *_a: shown.append([a.text() for a in menu.actions()])
    )
    rect = panel.view.visualRect(panel.proxy.index(2, Column.TITLE))
    panel.view.customContextMenuRequested.emit(rect.center())
    assert shown[-1][0] == "Mark as relevant"
    assert "Re-rank with feedback" in shown[-1]
    assert "Clear relevance marks" in shown[-1]
    panel.mark_action.trigger()  # on the row the menu was opened on (sorted by rank)
    assert panel.current_marks().marked == {panel.model.hit(2).docid}
    panel.view.customContextMenuRequested.emit(rect.center())
    assert shown[-1][0] == "Unmark as relevant"


def test_marks_belong_to_the_query_text(qtbot, panel) -> None:
    search(qtbot, panel, QUERY)
    panel.toggle_mark("c03")
    with qtbot.waitSignal(panel.results_shown, timeout=5000):
        panel.set_feedback(True)
    search(qtbot, panel, "library catalogues")  # another query: no marks, plain ranking
    assert panel.current_marks() == Marks()
    assert panel.model.movement(0) is None
    assert all(
        panel.model.data(panel.model.index(r, Column.MARK)) == "☆"
        for r in range(panel.model.rowCount())
    )
    outcome = search(qtbot, panel, "  " + QUERY.replace(" ", "   ") + " ")  # the same, re-spaced
    assert panel.current_marks().marked == {"c03"}
    assert panel.current_marks().active
    assert outcome.feedback is not None
    assert order(panel)[:2] == ["c03", "c10"]


def test_marking_while_feedback_is_on_reranks_with_the_latest_marks(qtbot, panel) -> None:
    search(qtbot, panel, QUERY)
    panel.toggle_mark("c03")
    with qtbot.waitSignal(panel.results_shown, timeout=5000):
        panel.set_feedback(True)
    shown: list[object] = []
    panel.results_shown.connect(shown.append)
    panel.toggle_mark("c05")
    panel.toggle_mark("c11")
    qtbot.waitUntil(lambda: bool(shown) and len(shown[-1].feedback.relevant) == 3, timeout=5000)
    qtbot.wait(100)
    assert shown[-1].feedback.relevant == {cisi_docno(panel, d) for d in ("c03", "c05", "c11")}
    # Unmarking the last one turns feedback off: the plain ranking comes back.
    for d in ("c03", "c05", "c11"):
        panel.toggle_mark(d)
    qtbot.waitUntil(lambda: shown[-1].feedback is None, timeout=5000)
    assert not panel.feedback_bar.rerank_button.isEnabled()


def test_set_query_shows_judged_documents_apart_from_user_marks(qtbot, panel) -> None:
    outcome = search(qtbot, panel, QUERY, relevant_docids=frozenset({"c10", "c05", "gone"}))
    assert outcome.missing == {"gone"}
    marks = panel.current_marks()
    assert marks.judged == {"c10", "c05", "gone"}
    assert marks.marked == frozenset()
    assert outcome.feedback is None  # judgements alone do not re-rank
    row = panel.model.row_of_docid("c10")
    assert panel.model.data(panel.model.index(row, Column.MARK)) == "☆✓"
    assert panel.model.data(panel.model.index(row, Column.MARK), MARK_ROLE) == (False, True)
    tip = panel.model.data(panel.model.index(row, Column.MARK), Qt.ItemDataRole.ToolTipRole)
    assert "judged relevant" in tip
    bar = panel.feedback_bar
    assert bar.judged_label.isVisible()
    text = bar.judged_label.text()
    assert "3 judged relevant, 2 in the list, 1 not in this index" in text

    # One click uses the judgements as feedback.
    with qtbot.waitSignal(panel.results_shown, timeout=5000):
        bar.judged_button.click()
        panel.set_feedback(True)
    assert panel.current_marks().marked == {"c10", "c05"}
    assert panel.model.data(panel.model.index(panel.model.row_of_docid("c10"), Column.MARK)) == (
        "★✓"
    )
    assert not bar.judged_button.isEnabled()

    # Another set_query of the same text without judgements keeps them.
    search(qtbot, panel, QUERY)
    assert panel.current_marks().judged == {"c10", "c05", "gone"}


def test_set_query_before_an_index_is_open_keeps_the_judgements(qtbot, runner, cisi_like) -> None:
    p = SearchPanel(runner)
    qtbot.addWidget(p)
    p.set_query(QUERY, frozenset({"c10"}))
    with qtbot.waitSignal(p.results_shown, timeout=5000):
        p.set_searcher(cisi_like)
    assert p.current_marks().judged == {"c10"}
    row = p.model.row_of_docid("c10")
    assert p.model.data(p.model.index(row, Column.MARK), MARK_ROLE) == (False, True)
    p.set_searcher(None)


def test_results_model_with_feedback_and_marks(qtmodeltester, cisi_like) -> None:
    model = ResultsModel()
    qtmodeltester.check(model)
    c03 = cisi_like.index.docno("c03")
    outcome = run_search(cisi_like, QUERY, get_variant("lucene"), 5, relevant=frozenset({"c03"}))
    assert outcome.feedback is not None
    assert outcome.feedback.relevant == {c03}
    assert outcome.plain is not None
    assert all(r.before is not None for r in outcome.rows)
    model.set_rows(outcome.rows, TermColors(outcome.result.analysis.terms))
    model.set_marks(frozenset({"c03"}), frozenset({"c10", "c09"}))
    qtmodeltester.check(model)
    assert model.has_feedback
    assert model.headerData(Column.BEFORE, Qt.Orientation.Horizontal) == "Before"
    assert model.headerData(Column.MARK, Qt.Orientation.Horizontal) == "★"
    kinds = {m.kind for m in model.movements() if m is not None}
    assert "up" in kinds
    # Documents outside the plain top 5 are "new", with their real rank without feedback.
    news = [m for m in model.movements() if m is not None and m.kind == "new"]
    for m in news:
        assert m.before > 5
    assert {h.docid for h in outcome.dropped} == {h.docid for h in outcome.plain.hits} - {
        r.hit.docid for r in outcome.rows
    }
    model.set_marks(frozenset(), frozenset())
    qtmodeltester.check(model)

    plain = run_search(cisi_like, QUERY, get_variant("lucene"), 5)
    model.set_rows(plain.rows, TermColors(plain.result.analysis.terms))
    qtmodeltester.check(model)
    assert not model.has_feedback
    assert model.data(model.index(0, Column.MOVE)) == ""


def test_plain_ranks_match_the_full_ranking(cisi_like) -> None:
    from bm25desk.ui.search.work import plain_ranks

    v = get_variant("lucene")
    full = cisi_like.search(QUERY, v, 100)
    parsed = full.analysis.parsed
    ranks = plain_ranks(cisi_like, parsed, v, [h.docno for h in full.hits])
    assert ranks == {h.docno: h.rank for h in full.hits}


def test_run_detail_with_feedback_explains_with_rsj(cisi_like) -> None:
    from bm25desk.engine.scoring.search import Feedback

    v = get_variant("bm25l")
    parsed = cisi_like.parse(QUERY)
    fb = Feedback(frozenset({cisi_like.index.docno("c03")}))
    d = run_detail(cisi_like, parsed, cisi_like.index.docno("c10"), v, fb)
    assert d.feedback == fb
    assert all(t.idf_text.startswith("RSJ") for t in d.explanation.terms if t.status == "matched")
    cite = next(p for p in d.plots.idf_points if p.term == "citat")
    assert cite.y == cisi_like.weight("citat", v, fb).idf


def test_marks_memory() -> None:
    m = MarksMemory()
    assert query_key("  a   b ") == "a b"
    m.switch("apple pie")
    m.set_judged(frozenset({"j1"}))  # no index open yet
    m.set_index("orchard")  # joins the first index opened
    assert m.switch("apple  pie").judged == {"j1"}
    assert m.toggle("d1").marked == {"d1"}
    assert m.set_enabled(True).active
    assert m.switch("cider") == Marks()
    assert m.set_enabled(True) == Marks()  # nothing marked: stays off
    back = m.switch("apple pie")
    assert back.marked == {"d1"}
    assert back.active
    m.set_index(None)  # index closed: kept
    m.set_index("other")
    assert m.switch("apple pie") == Marks()
    m.set_index("orchard")
    assert m.switch("apple pie").marked == {"d1"}
    cleared = m.clear()
    assert cleared == Marks(judged=frozenset({"j1"}))
    for i in range(MarksMemory.LIMIT + 5):
        m.switch(f"q{i}")
        m.toggle("d")
    assert len(m._entries) == MarksMemory.LIMIT


def test_a_header_layout_saved_before_the_new_columns_still_fits(qtbot, panel) -> None:
    from PySide6.QtGui import QStandardItemModel
    from PySide6.QtWidgets import QTableView

    old_view = QTableView()
    qtbot.addWidget(old_view)
    old_view.setModel(QStandardItemModel(0, 6, old_view))  # the six columns of earlier versions
    old_view.horizontalHeader().resizeSection(Column.TITLE, 333)
    panel.view.horizontalHeader().restoreState(old_view.horizontalHeader().saveState())
    search(qtbot, panel, QUERY, relevant_docids=frozenset({"c10"}))
    header = panel.view.horizontalHeader()
    assert [header.logicalIndex(v) for v in range(header.count())][:2] == [
        Column.MARK,
        Column.RANK,
    ]
    assert header.sectionSize(Column.TITLE) == 333
    assert header.sectionSize(Column.MARK) < 60
    panel.toggle_mark("c03")
    with qtbot.waitSignal(panel.results_shown, timeout=5000):
        panel.set_feedback(True)
    panel.select_row(1)
    image = panel.grab().toImage()  # paints stars, ticks and moves (selected and not)
    assert not image.isNull()

"""Every model passes Qt's model tester, empty and filled, and shows what it should."""

from __future__ import annotations

from PySide6.QtCore import Qt

from bm25desk.engine import IndexStore, get_variant
from bm25desk.ui.common.colors import TermColors
from bm25desk.ui.common.ledger_model import Column as LedgerColumn
from bm25desk.ui.common.ledger_model import LedgerModel
from bm25desk.ui.common.rows_model import RowsModel
from bm25desk.ui.compare.models import CompareModel, HeatmapModel, TermDeltaModel, movement_text
from bm25desk.ui.compare.work import doc_delta, run_compare
from bm25desk.ui.indexes.list_model import Column as IndexColumn
from bm25desk.ui.indexes.list_model import IndexListModel, IndexRow, source_status
from bm25desk.ui.search.results_model import PARTS_ROLE, SORT_ROLE, Column, ResultsModel
from bm25desk.ui.search.work import run_search
from bm25desk.ui.statistics.models import IdfModel, TopTermsModel
from bm25desk.ui.statistics.work import index_stats, term_lookup


def test_results_model(qtmodeltester, searcher) -> None:
    model = ResultsModel()
    qtmodeltester.check(model)
    outcome = run_search(searcher, "apple fruit", get_variant("lucene"), 10)
    colors = TermColors(outcome.result.analysis.terms)
    model.set_rows(outcome.rows, colors)
    qtmodeltester.check(model)
    assert model.rowCount() == len(outcome.rows) > 0
    first = model.index(0, Column.SCORE)
    assert model.data(first, SORT_ROLE) == outcome.rows[0].hit.score
    assert model.data(first, Qt.ItemDataRole.TextAlignmentRole) & Qt.AlignmentFlag.AlignRight
    parts = model.data(model.index(0, Column.PARTS), PARTS_ROLE)
    assert sum(w for _, _, w in parts) == outcome.rows[0].hit.score
    assert {t for t, _, _ in parts} <= set(outcome.result.analysis.terms)
    assert model.data(model.index(0, Column.TITLE)) == outcome.rows[0].hit.title


def test_ledger_model(qtmodeltester, searcher) -> None:
    model = LedgerModel()
    qtmodeltester.check(model)
    result = searcher.search("the cider fruit xyzzy", get_variant("bm25l"), 5)
    e = searcher.explain_docno(result.analysis.parsed, result.hits[0].docno, get_variant("bm25l"))
    model.set_explanation(e, TermColors(result.analysis.terms))
    qtmodeltester.check(model)
    statuses = [model.data(model.index(r, LedgerColumn.STATUS)) for r in range(model.rowCount())]
    assert "stop word" in statuses
    assert "in no document" in statuses
    assert "matched" in statuses
    formulas = [
        model.data(model.index(r, LedgerColumn.IDF_FORMULA)) for r in range(model.rowCount())
    ]
    assert any("ln(" in f for f in formulas)


def test_index_list_model(qtmodeltester, ui_index) -> None:
    store = IndexStore()
    info = store.info("orchard")
    model = IndexListModel()
    qtmodeltester.check(model)
    model.set_rows((IndexRow(info, *source_status(info)),))
    qtmodeltester.check(model)
    assert model.data(model.index(0, IndexColumn.DOCS)) == "8"
    assert model.data(model.index(0, IndexColumn.STATUS)) == "up to date"


def test_rows_model_pads_ragged_rows(qtmodeltester) -> None:
    model = RowsModel()
    qtmodeltester.check(model)
    model.set_table(["a", "b"], [["1"], ["1", "2", "3"]])
    qtmodeltester.check(model)
    assert model.columnCount() == 3
    assert model.headerData(2, Qt.Orientation.Horizontal) == "column 3"


def test_compare_models(qtmodeltester, searcher) -> None:
    parsed = searcher.parse("apple fruit trees")
    outcome = run_compare(searcher, parsed, get_variant("lucene"), get_variant("bim"), 3)
    colors = TermColors(outcome.terms)
    compare = CompareModel()
    qtmodeltester.check(compare)
    compare.set_rows(outcome.rows)
    qtmodeltester.check(compare)
    assert compare.rowCount() == len(outcome.rows) >= 3
    texts = {movement_text(r) for r in outcome.rows}
    assert texts

    delta = TermDeltaModel()
    qtmodeltester.check(delta)
    delta.set_delta(
        doc_delta(searcher, parsed, outcome.rows[0], outcome.variant_a, outcome.variant_b), colors
    )
    qtmodeltester.check(delta)

    heat = HeatmapModel()
    qtmodeltester.check(heat)
    heat.set_heat(outcome.terms, outcome.heat_a, colors)
    qtmodeltester.check(heat)
    assert heat.rowCount() == len(outcome.terms)
    assert heat.columnCount() == len(outcome.heat_a)


def test_stats_models(qtmodeltester, searcher) -> None:
    stats = index_stats(searcher)
    terms = TopTermsModel()
    qtmodeltester.check(terms)
    terms.set_terms(stats.top_terms, stats.n_docs)
    qtmodeltester.check(terms)
    idf = IdfModel()
    qtmodeltester.check(idf)
    idf.set_rows(term_lookup(searcher, "fruit").rows)
    qtmodeltester.check(idf)
    assert idf.rowCount() > 5

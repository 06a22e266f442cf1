"""A result's right-click menu: the document's terms and the exports; File → Export."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from bm25desk.engine.scoring.browse import document_terms
from bm25desk.ui.search.results_model import Column


def _menu(panel, row: int):
    view = panel.view
    pos = view.visualRect(panel.proxy.index(row, Column.TITLE)).center()
    return view.context_menu(pos)


def _actions(menu) -> dict:
    return {a.text(): a for a in menu.actions() if a.text()}


def test_the_documents_terms_open_from_a_result(qtbot, window) -> None:
    panel = window.search_panel
    with qtbot.waitSignal(panel.results_shown):
        panel.set_query("apple cider")
    menu = _menu(panel, 0)
    hit = panel.model.hit(0)
    dialog = window.look_inside.doc_terms
    with qtbot.waitSignal(dialog.jobs.succeeded, timeout=10000):
        _actions(menu)["Show the document's terms…"].trigger()
    menu.close()
    expected = document_terms(window.searcher, hit.docid, panel.variant())
    assert dialog.document() == expected
    assert dialog.model.rowCount() == len(expected.rows)
    assert hit.docid in dialog.head.text()
    assert dialog.export_button.isEnabled()
    dialog.close()


def test_exporting_the_results_and_the_ledger_from_the_menu(qtbot, window, tmp_path) -> None:
    panel = window.search_panel
    with qtbot.waitSignal(panel.results_shown):
        panel.set_query("apple cider")
    qtbot.waitUntil(lambda: panel.detail.ledger.explanation() is not None, timeout=10000)
    exporter = window.look_inside.exporter
    results = tmp_path / "results.json"
    exporter.ask = lambda *_a: results
    menu = _menu(panel, 0)
    with qtbot.waitSignal(exporter.saved, timeout=10000):
        _actions(menu)["Export the results…"].trigger()
    menu.close()
    data = json.loads(results.read_text(encoding="utf-8"))
    outcome = panel.outcome()
    assert data["query"] == "apple cider"
    assert [h["docid"] for h in data["hits"]] == [h.docid for h in outcome.result.hits]
    assert data["variant"]["key"] == panel.variant().key
    ledger = tmp_path / "ledger.csv"
    exporter.ask = lambda *_a: ledger
    explanation = panel.detail.ledger.explanation()
    menu = _menu(panel, 0)
    with qtbot.waitSignal(exporter.saved, timeout=10000):
        _actions(menu)["Export its score ledger…"].trigger()
    menu.close()
    rows = list(csv.DictReader(ledger.read_text(encoding="utf-8").splitlines()))
    assert {r["docid"] for r in rows} == {explanation.docid}
    assert sum(float(r["weight"]) for r in rows) == sum(
        c["weight"] for c in explanation.as_dict()["contributions"]
    )


def test_the_ledgers_copy_menu_saves_it_too(qtbot, window, tmp_path) -> None:
    panel = window.search_panel
    with qtbot.waitSignal(panel.results_shown):
        panel.set_query("pear")
    qtbot.waitUntil(lambda: panel.detail.ledger.explanation() is not None, timeout=10000)
    menu = panel.detail.ledger.copy_button.menu()
    assert window.look_inside.save_ledger_action in menu.actions()
    target = tmp_path / "ledger.json"
    window.look_inside.exporter.ask = lambda *_a: target
    with qtbot.waitSignal(window.look_inside.exporter.saved, timeout=10000):
        window.look_inside.save_ledger_action.trigger()
    data = json.loads(target.read_text(encoding="utf-8"))
    assert data == json.loads(json.dumps(panel.detail.ledger.explanation().as_dict()))


def test_file_export_saves_what_the_tab_shows(qtbot, window, tmp_path) -> None:
    exporter = window.look_inside.exporter
    saved: list[str] = []
    exporter.saved.connect(saved.append)
    window.search_panel.set_query("")  # no results: File → Export says so, asks nothing
    exporter.ask = lambda *_a: (_ for _ in ()).throw(AssertionError("asked"))
    assert not window.look_inside.export_current()
    assert "no results to export" in window.message_bar.text.text()
    panel = window.terms_panel
    with qtbot.waitSignal(panel.term_jobs.succeeded, timeout=10000):
        window.show_tab(4)
    target = tmp_path / "terms.csv"
    exporter.ask = lambda *_a: target
    with qtbot.waitSignal(exporter.saved, timeout=10000):
        window.look_inside.export_current()
    rows = list(csv.reader(target.read_text(encoding="utf-8").splitlines()))
    assert rows[0] == ["term", "df", "cf"]
    assert len(rows) - 1 == panel.terms_model.total
    assert "Saved the term list" in saved[0]


def test_ctrl_5_shows_the_terms_tab(qtbot, window) -> None:
    view_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
    terms = next(a for a in view_menu.actions() if a.text() == "Te&rms")
    assert terms.shortcut().toString() == "Ctrl+5"
    terms.trigger()
    assert window.tabs.currentWidget() is window.terms_panel


def test_suggested_file_names_are_safe() -> None:
    from bm25desk.ui.common.export_files import format_of, safe_file_name

    assert safe_file_name("terms-of-notes/a b.txt.csv") == "terms-of-notes-a-b-txt.csv"
    assert safe_file_name('results-"apple" OR ../pear.csv') == "results-apple-OR-pear.csv"
    assert safe_file_name("results-學而.json") == "results-學而.json"
    assert safe_file_name("/.csv") == "export.csv"
    assert format_of(Path("x.JSON")) == "json"
    assert format_of(Path("x.txt")) == "csv"

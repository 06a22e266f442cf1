"""The Terms tab: terms by df/cf with a prefix filter, a term's postings, jumps and exports."""

from __future__ import annotations

import csv
import json

import pytest

from bm25desk.engine import IndexStore, Searcher
from bm25desk.engine.scoring.browse import list_terms, term_postings
from bm25desk.engine.scoring.variants import get_variant
from bm25desk.ui.terms.models import TermsModel
from bm25desk.ui.terms.panel import TermsPanel

TERMS_TAB = 4


def show_terms(qtbot, window) -> TermsPanel:
    panel = window.terms_panel
    with qtbot.waitSignal(panel.term_jobs.succeeded, timeout=10000):
        window.show_tab(TERMS_TAB)
    qtbot.waitUntil(lambda: panel.postings_model.rowCount() > 0, timeout=10000)
    return panel


def test_the_tab_lists_terms_by_cf_and_the_top_terms_postings(qtbot, window) -> None:
    panel = show_terms(qtbot, window)
    expected = list_terms(window.searcher.index, sort="cf", limit=5)
    shown = [panel.terms_model.row(i) for i in range(5)]
    assert shown == list(expected.rows)
    assert "terms in the index" in panel.terms_count.text()
    assert panel.term() == expected.rows[0].term
    # The contributions are the engine's, under the Search tab's variant and parameters.
    page = term_postings(window.searcher, panel.term(), window.search_panel.variant(), limit=None)
    got = [panel.postings_model.row(i).posting for i in range(panel.postings_model.rowCount())]
    assert got == list(page.rows)
    assert "df = " in panel.postings_head.text()


def test_a_prefix_filters_and_a_header_click_sorts_every_term(qtbot, window) -> None:
    panel = show_terms(qtbot, window)
    with qtbot.waitSignal(panel.term_jobs.succeeded, timeout=10000):
        panel.filter_edit.setText("p")
    rows = panel.terms_model.rows()
    assert rows
    assert all(r.term.startswith("p") for r in rows)
    assert "starting with “p”" in panel.terms_count.text()
    with qtbot.waitSignal(panel.term_jobs.succeeded, timeout=10000):
        panel.terms_view.horizontalHeader().sectionClicked.emit(0)  # Term: alphabetical
    terms = [r.term for r in panel.terms_model.rows()]
    assert terms == sorted(terms)


def test_a_prefix_matching_nothing_clears_the_postings_until_the_filter_changes(
    qtbot, window
) -> None:
    panel = show_terms(qtbot, window)
    first = panel.term()
    with qtbot.waitSignal(panel.term_jobs.succeeded, timeout=10000):
        panel.filter_edit.setText("zzqx")
    assert panel.terms_model.rowCount() == 0
    assert panel.term() == ""  # not the earlier term's documents under an empty list
    assert panel.postings_model.rowCount() == 0
    assert "No term starts with “zzqx”" in panel.postings_head.text()
    assert not panel.export_postings_button.isEnabled()
    with qtbot.waitSignal(panel.term_jobs.succeeded, timeout=10000):
        panel.filter_edit.setText("")
    qtbot.waitUntil(lambda: panel.postings_model.rowCount() > 0, timeout=10000)
    assert panel.term() == first


def test_a_new_variant_reweighs_the_postings(qtbot, window) -> None:
    panel = show_terms(qtbot, window)
    before = [r.posting.contribution for r in panel.postings_model.rows()]
    with qtbot.waitSignal(panel.posting_jobs.succeeded, timeout=10000):
        variant = window.search_panel.variant()
        window.search_panel.set_variant(get_variant(variant.key, k1=0.3))
    after = [r.posting.contribution for r in panel.postings_model.rows()]
    assert after != before
    assert "k1=0.3" in panel.postings_head.text().replace(" ", "")


def test_a_hidden_tab_reweighs_only_when_shown(qtbot, window) -> None:
    panel = show_terms(qtbot, window)
    window.show_tab(0)
    requested = panel.posting_jobs.generation
    variant = window.search_panel.variant()
    window.search_panel.set_variant(get_variant(variant.key, b=0.3))
    qtbot.wait(100)
    assert panel.posting_jobs.generation == requested  # nothing computed while hidden
    with qtbot.waitSignal(panel.posting_jobs.succeeded, timeout=10000):
        window.show_tab(TERMS_TAB)
    assert "b=0.3" in panel.postings_head.text().replace(" ", "")


def test_postings_sort_by_tf_then_toggle_to_ascending(qtbot, window) -> None:
    panel = show_terms(qtbot, window)
    header = panel.postings_view.horizontalHeader()
    with qtbot.waitSignal(panel.posting_jobs.succeeded, timeout=10000):
        header.sectionClicked.emit(2)  # tf, largest first
    tfs = [r.posting.tf for r in panel.postings_model.rows()]
    assert tfs == sorted(tfs, reverse=True)
    with qtbot.waitSignal(panel.posting_jobs.succeeded, timeout=10000):
        header.sectionClicked.emit(2)  # again: smallest first
    tfs = [r.posting.tf for r in panel.postings_model.rows()]
    assert tfs == sorted(tfs)


def test_activating_a_posting_explains_it_in_search(qtbot, window) -> None:
    panel = show_terms(qtbot, window)
    last = panel.postings_model.rowCount() - 1
    docno = panel.postings_model.row(last).posting.docno
    with qtbot.waitSignal(window.search_panel.details.succeeded, timeout=10000):
        panel.postings_view.activated.emit(panel.postings_model.index(last, 0))
    assert window.tabs.currentWidget() is window.search_panel
    assert window.search_panel.query() == panel.term()
    assert window.search_panel.selected_docno() == docno
    assert window.search_panel.detail.ledger.explanation().docno == docno


def test_enter_on_a_posting_explains_it_in_search(qtbot, window) -> None:
    from PySide6.QtCore import Qt

    panel = show_terms(qtbot, window)
    panel.postings_view.setFocus()
    docno = panel.selected_docno()
    with qtbot.waitSignal(window.search_panel.details.succeeded, timeout=10000):
        qtbot.keyClick(panel.postings_view, Qt.Key.Key_Return)
    assert window.search_panel.selected_docno() == docno


def test_a_long_list_loads_a_page_at_a_time(qtbot, runner, data_dir, tsv_index) -> None:
    """A vocabulary larger than a page is never loaded whole: more comes when scrolled to."""
    words = [f"w{i:05d}" for i in range(1300)]
    source = data_dir / "many.tsv"
    lines = ["id\ttitle\ttext"] + [f"d{i}\tt\t{' '.join(words[i::40])}" for i in range(40)]
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tsv_index(source, "many")
    panel = TermsPanel(runner)
    qtbot.addWidget(panel)
    panel.set_active(True)
    with qtbot.waitSignal(panel.term_jobs.succeeded, timeout=10000):
        panel.set_searcher(Searcher(IndexStore().open("many")))
    model: TermsModel = panel.terms_model
    assert model.rowCount() == 500
    assert model.total >= 1300
    assert model.canFetchMore()
    with qtbot.waitSignal(panel.term_jobs.succeeded, timeout=10000):
        model.fetchMore()
    assert model.rowCount() == 1000
    assert len({r.term for r in model.rows()}) == 1000  # the second page follows the first


@pytest.mark.parametrize("suffix", [".csv", ".json"])
def test_exporting_the_postings_writes_the_clis_shape(qtbot, window, tmp_path, suffix) -> None:
    panel = show_terms(qtbot, window)
    target = tmp_path / f"postings{suffix}"
    exporter = window.look_inside.exporter
    exporter.ask = lambda *_a: target
    with qtbot.waitSignal(exporter.saved, timeout=10000):
        panel.export_postings()
    page = term_postings(window.searcher, panel.term(), window.search_panel.variant(), limit=None)
    if suffix == ".csv":
        rows = list(csv.reader(target.read_text(encoding="utf-8").splitlines()))
        assert rows[0] == ["docno", "docid", "tf", "length", "contribution"]
        assert [r[1] for r in rows[1:]] == [p.docid for p in page.rows]
        assert [float(r[4]) for r in rows[1:]] == [p.contribution for p in page.rows]
    else:
        data = json.loads(target.read_text(encoding="utf-8"))
        assert data["term"] == panel.term()
        assert data["df"] == page.df
        assert [p["docid"] for p in data["postings"]] == [p.docid for p in page.rows]
    assert "Saved" in window.message_bar.text.text()


def test_an_export_to_a_missing_folder_says_so(qtbot, window, tmp_path) -> None:
    panel = show_terms(qtbot, window)
    blocker_file = tmp_path / "not-a-folder"
    blocker_file.write_text("x", encoding="utf-8")
    exporter = window.look_inside.exporter
    exporter.ask = lambda *_a: blocker_file / "terms.csv"
    with qtbot.waitSignal(exporter.failed, timeout=10000) as blocker:
        panel.export_terms()
    text = blocker.args[0]
    assert text.startswith("Could not save the term list to terms.csv: Not a directory")
    assert "Traceback" not in text
    assert "Something went wrong" not in text
    assert window.message_bar.isVisible()
    assert "Could not save" in window.message_bar.text.text()
    assert panel.terms_model.rowCount() > 0  # the view still holds it


def test_a_full_disk_keeps_the_old_file_and_leaves_no_part(qtbot, window, tmp_path) -> None:
    def disk_full(out, fmt, cancel):
        out.write("partial")
        raise OSError(28, "No space left on device")

    (tmp_path / "out").mkdir()
    target = tmp_path / "out" / "postings.csv"
    target.write_text("precious\n", encoding="utf-8")
    exporter = window.look_inside.exporter
    exporter.ask = lambda *_a: target
    with qtbot.waitSignal(exporter.failed, timeout=10000) as blocker:
        window.look_inside.export("the postings", "x.csv", disk_full)
    assert "No space left on device" in blocker.args[0]
    assert target.read_text(encoding="utf-8") == "precious\n"
    assert list(target.parent.iterdir()) == [target]


def test_a_long_export_can_be_cancelled_from_the_message_bar(qtbot, window, tmp_path) -> None:
    import threading

    from bm25desk.engine.progress import Cancelled

    started = threading.Event()

    def slow(out, fmt, cancel):
        out.write("rows\n")
        started.set()
        pause = threading.Event()
        while not cancel.is_set():
            pause.wait(0.01)
        raise Cancelled()

    target = tmp_path / "slow.csv"
    exporter = window.look_inside.exporter
    exporter.ask = lambda *_a: target
    assert window.look_inside.export("a long list", "slow.csv", slow)
    assert "Saving a long list" in window.message_bar.text.text()
    qtbot.waitUntil(started.is_set, timeout=5000)
    with qtbot.waitSignal(exporter.failed, timeout=10000) as blocker:
        window.message_bar.action_requested.emit("cancel-export")
    assert "cancelled" in blocker.args[0]
    assert not target.exists()
    assert list(tmp_path.iterdir()) == [tmp_path / "data"]

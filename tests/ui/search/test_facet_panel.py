"""The facet panel: counts for the current query by file type and folder; a tick filters."""

from __future__ import annotations

from PySide6.QtCore import Qt

from bm25desk.engine import IndexStore, build_index


def _folder(tmp_path):
    folder = tmp_path / "notes"
    (folder / "fruit").mkdir(parents=True)
    (folder / "fruit" / "apples.txt").write_text("Apple trees and apple cider.", encoding="utf-8")
    (folder / "fruit" / "pears.md").write_text("# Pears\n\nPear trees and apple grafts.", "utf-8")
    (folder / "cider.md").write_text("Cider is made from apple juice.", encoding="utf-8")
    (folder / "bees.txt").write_text("Bees pollinate the trees.", encoding="utf-8")
    return folder


def test_facets_count_the_query_and_a_tick_filters(qtbot, make_window, data_dir, tmp_path) -> None:
    build_index(_folder(tmp_path), name="notes", store=IndexStore())
    window = make_window()
    window.resize(1920, 1080)
    window.show()
    qtbot.waitUntil(lambda: window.searcher is not None, timeout=15000)
    wiring = window.facets
    assert not wiring.dock.isHidden()
    assert not wiring.dock.isFloating()
    search = window.search_panel

    def items():
        return {i.data(0, Qt.ItemDataRole.UserRole + 1): i for i in wiring.panel.items()}

    qtbot.waitUntil(lambda: ("type", "txt") in items(), timeout=10000)
    assert items()[("type", "txt")].text(0) == "txt  (2)"  # no query: every document
    search.set_query("apple")
    qtbot.waitUntil(lambda: items()[("type", "txt")].text(0) == "txt  (1)", timeout=10000)
    ticks = items()  # bees.txt has no "apple"
    assert ticks[("type", "md")].text(0) == "md  (2)"
    with qtbot.waitSignal(search.results_shown, timeout=10000):
        ticks[("type", "md")].setCheckState(0, Qt.CheckState.Checked)
    shown = {h.docid for h in search.outcome().result.hits}
    assert shown
    assert all(d.endswith(".md") for d in shown)
    assert search.outcome().result.n_matches == 2
    # The scores are the unfiltered ones (filters never change N, df or Lavg).
    plain = {h.docid: h.score for h in window.searcher.search("apple", search.variant(), 10).hits}
    assert all(h.score == plain[h.docid] for h in search.outcome().result.hits)


def test_a_narrow_window_offers_the_panel_without_covering_the_query(
    qtbot, make_window, data_dir, tmp_path
) -> None:
    build_index(_folder(tmp_path), name="notes", store=IndexStore())
    window = make_window()
    window.resize(1280, 720)
    window.show()
    qtbot.waitUntil(lambda: window.searcher is not None, timeout=15000)
    wiring = window.facets
    assert wiring.dock.isHidden()
    assert wiring.toggle_action.isEnabled()
    assert "View → Facets" in window.statusBar().currentMessage()
    with qtbot.waitSignal(window.search_panel.results_shown, timeout=10000):
        window.search_panel.set_query("apple")
    wiring.toggle_action.trigger()
    assert not wiring.dock.isHidden()
    assert wiring.dock.isFloating()

    def items():
        return {i.data(0, Qt.ItemDataRole.UserRole + 1): i for i in wiring.panel.items()}

    # Counted on opening, for the query typed while the panel was closed.
    qtbot.waitUntil(
        lambda: ("type", "txt") in items() and items()[("type", "txt")].text(0) == "txt  (1)",
        timeout=10000,
    )
    query = window.search_panel.query_edit
    top_left = query.mapToGlobal(query.rect().topLeft())
    assert not wiring.dock.frameGeometry().contains(top_left)
    # Closed, the window made large, opened again: now it docks.
    wiring.toggle_action.trigger()
    window.resize(1920, 1080)
    wiring.toggle_action.trigger()
    assert not wiring.dock.isHidden()
    assert not wiring.dock.isFloating()


def test_no_dock_for_an_index_without_metadata(qtbot, window) -> None:
    assert window.facets.dock.isHidden()
    assert not window.facets.toggle_action.isEnabled()


def test_a_ticked_year_is_a_whole_years_modified_range() -> None:
    import datetime as dt

    from bm25desk.ui.search.facet_panel import filters_of

    f = filters_of({"year": {"2024", "2022"}, "type": {"md"}, "lang": {"fr"}})
    assert f.modified_from == dt.date(2022, 1, 1)
    assert f.modified_to == dt.date(2024, 12, 31)
    assert f.types == ("md",)
    assert dict(f.where) == {"lang": ("fr",)}

"""Issue 10's small ones, each seen in the app before: "1 matches", Markdown "#" in snippets, a
stale "tf saturation at L = 39" with no query, "records" for the files of a folder, and a start
page that listed only txt/md/rst/html.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QDialog, QLabel, QStyleOptionViewItem

from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.extract.registry import EXTRACTORS
from bm25desk.engine.readers.corpus import FORMATS
from bm25desk.ui.indexes.build_summary import build_summary
from bm25desk.ui.indexes.new_index_dialog import NewIndexDialog
from bm25desk.ui.indexes.welcome_page import WelcomePage, corpus_types
from bm25desk.ui.search.results_model import Column
from bm25desk.ui.search.work import make_snippet


def test_one_match_is_one_match(qtbot, window) -> None:
    panel = window.search_panel
    with qtbot.waitSignal(panel.results_shown):
        panel.set_query("apple")  # d1 has it three times
    qtbot.waitUntil(lambda: panel.detail.outcome() is not None, timeout=5000)
    preview = panel.detail.preview
    assert preview.match_count() > 1
    assert preview.match_label.text() == f"{preview.match_count()} matches"
    with qtbot.waitSignal(panel.results_shown):
        panel.set_query("rootstock")
    qtbot.waitUntil(lambda: preview.match_count() == 1, timeout=5000)
    assert preview.match_label.text() == "1 match"


def test_markdown_markers_stay_out_of_snippets() -> None:
    analyzer = Analyzer.create(stopwords="en", stemmer="porter")
    text = "# Pears\n\n## Growing\n\n- Pear trees like sun.\n> Quote about pears."
    snippet = make_snippet(analyzer, text, frozenset({"pear"}), markdown=True)
    assert "#" not in snippet.text
    assert "- Pear" not in snippet.text
    assert snippet.text.startswith("Pears Growing Pear trees")
    for start, end, _term in snippet.spans:
        assert snippet.text[start:end].lower().startswith("pear")
    plain = make_snippet(analyzer, "C# and F# are languages", frozenset({"languag"}))
    assert "C#" in plain.text  # not Markdown: left alone


def test_no_query_no_stale_plot_title(qtbot, window) -> None:
    panel = window.search_panel
    with qtbot.waitSignal(panel.results_shown):
        panel.set_query("apple")
    qtbot.waitUntil(lambda: panel.detail.outcome() is not None, timeout=5000)
    tabs = panel.detail.plots.tabs
    assert "L = " in tabs.tabText(0)
    with qtbot.waitSignal(panel.query_cleared):
        panel.set_query("")
    assert tabs.tabText(0) == "tf saturation"
    assert panel.detail.plots.legend.text() == ""


def test_a_folder_build_counts_files(qtbot, window, tmp_path, monkeypatch) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    for name in ("a.txt", "b.txt"):
        (folder / name).write_text(f"Notes about {name}.", encoding="utf-8")
    monkeypatch.setattr(NewIndexDialog, "exec", lambda self: QDialog.DialogCode.Accepted)
    with qtbot.waitSignal(window.build_finished, timeout=30000):
        window.new_index(folder)
    text = window.message_bar.text.text()
    assert "Indexed 2 documents into" in text
    assert "records" not in text


def test_a_folder_build_that_skipped_files_counts_them() -> None:
    """Before: "Indexed 0 of 0 files" for a folder of three unreadable files."""
    from bm25desk.engine import BuildReport
    from bm25desk.engine.readers.corpus import Skip

    skipped = tuple(Skip(f"/junk/{n}", "binary file") for n in ("a.bin", "b.txt", "c.txt"))
    report = BuildReport("junk", 0, 0, skipped, 0.1, 0, 0, skip_reasons={"binary file": 3})
    text = build_summary(report, "folder")
    assert text.startswith("Indexed 0 documents into “junk”")
    assert "Skipped 3 files: 3 × binary file." in text
    assert "of 0" not in text


def test_the_summary_of_an_update_with_nothing_to_do() -> None:
    from bm25desk.engine import BuildReport

    report = BuildReport("notes", 0, 0, (), 0.01, 3, 12, rebuilt=False)
    text = build_summary(report, "folder")
    assert "up to date" in text
    assert "/s" not in text


def test_the_start_page_lists_every_folder_format(qtbot) -> None:
    page = WelcomePage()
    qtbot.addWidget(page)
    texts = " ".join(label.text() for label in page.findChildren(QLabel))
    for name in ("PDF", "docx", "odt", "EPUB", "eml", "mbox", "Markdown", "HTML"):
        assert name in texts, name
    assert "text, Markdown, reStructuredText, HTML, PDF" in texts


def test_a_newly_registered_file_type_is_on_the_start_page(qtbot, monkeypatch) -> None:
    monkeypatch.setitem(EXTRACTORS, ".csv", lambda path: ("", ""))
    page = WelcomePage()
    qtbot.addWidget(page)
    texts = " ".join(label.text() for label in page.findChildren(QLabel))
    assert "EPUB, csv and e-mail (eml, mbox) files" in texts


def test_the_start_page_lists_every_corpus_format(qtbot, monkeypatch) -> None:
    """NPL, LISA and TIME readers came later: the page names every format the engine reads."""
    page = WelcomePage()
    qtbot.addWidget(page)
    texts = " ".join(label.text() for label in page.findChildren(QLabel))
    for name in ("MS MARCO", "BEIR corpus.jsonl", "SMART (CISI", "TREC", "NPL", "LISA", "TIME"):
        assert name in texts, name
    monkeypatch.setitem(FORMATS, "warc", "WARC web archive")
    assert corpus_types().endswith("TIME and WARC web archive")


def test_tab_goes_from_the_query_to_its_ranking_function_and_parameters(qtbot, window) -> None:
    """Seen under Xvfb: Tab jumped from the ranking function to the index picker."""
    panel = window.search_panel
    window.activateWindow()
    panel.query_edit.setFocus()
    qtbot.waitUntil(lambda: panel.query_edit.hasFocus(), timeout=2000)
    order = []
    for _ in range(4):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        order.append(QApplication.focusWidget())
    k1 = panel.picker.params.controls()["k1"]
    assert order == [
        panel.picker.combo,
        k1.slider,
        k1.spin,
        panel.picker.params.controls()["b"].slider,
    ]


def test_a_long_path_keeps_its_file_name(qtbot, window) -> None:
    """Seen under Xvfb: the Source column showed "/tmp/h3/xvfb/not…", never the file."""
    panel = window.search_panel
    with qtbot.waitSignal(panel.results_shown):
        panel.set_query("apple")
    index = panel.view.proxy.index(0, Column.SOURCE)
    option = QStyleOptionViewItem()
    panel.view.itemDelegateForColumn(Column.SOURCE).initStyleOption(option, index)
    assert option.textElideMode == Qt.TextElideMode.ElideMiddle


def test_the_index_manager_takes_the_keyboard(qtbot, window) -> None:
    """Seen under Xvfb: Ctrl+I opened the manager, but arrows and Delete did nothing there."""
    window.show()
    window.show_index_manager()
    qtbot.waitExposed(window.index_manager)
    view = window.index_panel.view
    qtbot.waitUntil(view.hasFocus, timeout=2000)
    asked = []
    window.confirm = lambda title, text: asked.append(text) or False  # answer No
    qtbot.keyClick(view, Qt.Key.Key_Delete)
    assert len(asked) == 1
    assert window.index_panel.current_name() in asked[0]
    assert window.index_panel.names()  # nothing deleted: the answer was No


def test_a_cjk_snippet_shows_a_hit_far_into_a_text_without_spaces() -> None:
    """Chinese has no spaces to cut at: the window starts a little before the hit, not at 0."""
    from bm25desk.engine.analysis.analyzer import Analyzer

    analyzer = Analyzer.create(tokenizer="cjk", stopwords="none", stemmer="none")
    text = "天地玄黃宇宙洪荒" * 125 + "學而時習之不亦說乎" + "日月盈昃辰宿列張" * 50
    snippet = make_snippet(analyzer, text, frozenset({"學而"}))
    assert snippet.text.startswith("… ")
    assert snippet.text.endswith(" …")
    assert [t for _s, _e, t in snippet.spans] == ["學而"]
    s, e, _t = snippet.spans[0]
    assert snippet.text[s:e] == "學而"
    # About a quarter of the 220 columns before the hit: 27 wide characters (two columns each).
    assert 20 <= s <= 32
    assert len(snippet.text) <= 2 + 110 + 2  # 220 columns are 110 wide characters


def test_a_latin_snippet_still_starts_at_a_space_before_the_hit() -> None:
    from bm25desk.engine.analysis.analyzer import Analyzer

    analyzer = Analyzer.create(stopwords="en", stemmer="porter")
    text = "Filler words go here. " * 30 + "The pears ripen in autumn. " + "More filler. " * 30
    snippet = make_snippet(analyzer, text, frozenset({"pear"}))
    assert snippet.text.startswith("… ")
    assert snippet.text[2] != " "
    assert text.find(snippet.text[2:20]) >= 0  # the window starts at a word
    s, e, _t = snippet.spans[0]
    assert snippet.text[s:e] == "pears"

"""Index → Add documents / Remove documents: in the background, then the index reopens."""

from __future__ import annotations

from pathlib import Path

from bm25desk.engine import IndexStore, build_index
from bm25desk.ui.indexes.edit_dialogs import RemoveDialog, parse_ids

ORCHARD = "orchard"


def add_file(tmp_path: Path) -> Path:
    path = tmp_path / "more.tsv"
    path.write_text(
        "id\ttitle\ttext\n"
        "d9\tQuince\tQuince trees bear hard yellow fruit that is cooked before eating.\n"
        "d1\tApples, again\tApples are picked in autumn and keep all winter.\n"
        "d9\tQuince twice\tA second record with the same id is skipped.\n",
        encoding="utf-8",
    )
    return path


def test_adding_documents_reopens_the_index_with_the_new_n(qtbot, window, tmp_path) -> None:
    actions = window.index_actions
    source = add_file(tmp_path)
    actions.ask_corpus_file = lambda _parent, name: source
    assert window.menu_actions.add_docs.isEnabled()
    with qtbot.waitSignal(window.index_opened, timeout=30000):
        job = actions.add_documents(ORCHARD)
        assert job is not None
        assert not window.menu_actions.add_docs.isEnabled()  # one write at a time
    index = window.searcher.index
    assert index.n_docs == 9  # d9 added, d1 replaced, the second d9 skipped
    assert index.docno("d9") is not None
    text = window.message_bar.text.text()
    assert text.startswith("Added 1 document to “orchard” and replaced 1 of the same id in ")
    assert "It holds 9 documents and " in text
    assert "Skipped 1 record: 1 × " in text
    with qtbot.waitSignal(window.stats_panel.stats_jobs.succeeded, timeout=10000):
        window.show_tab(2)
    assert window.stats_panel.fields["docs"].text() == "9"
    assert window.menu_actions.add_docs.isEnabled()


def test_removing_documents_says_which_ids_were_unknown(qtbot, window) -> None:
    actions = window.index_actions
    actions.ask_ids = lambda _parent, name: ("d1", "d2", "no-such-id")
    with qtbot.waitSignal(window.index_opened, timeout=30000):
        actions.remove_documents(ORCHARD)
    assert window.searcher.index.n_docs == 6
    text = window.message_bar.text.text()
    assert text.startswith("Removed 2 documents from “orchard”")
    assert "It holds 6 documents" in text
    assert "1 id named no document: no-such-id." in text


def test_removing_only_unknown_ids_changes_nothing_and_says_so(qtbot, window) -> None:
    actions = window.index_actions
    actions.ask_ids = lambda _parent, name: ("x1", "x2")
    generation = window.searcher.index.generation
    with qtbot.waitSignal(window.build_finished, timeout=30000) as blocker:
        actions.remove_documents(ORCHARD)
    assert blocker.args[0] is None
    text = window.message_bar.text.text()
    assert text.startswith("Could not remove documents from “orchard”:")
    assert "'x1'" in text
    assert "The index is unchanged." in text
    assert IndexStore().open(ORCHARD).generation == generation
    assert IndexStore().open(ORCHARD).n_docs == 8


def test_a_folder_index_is_not_edited_by_id(qtbot, window, tmp_path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.txt").write_text("Apple trees.", encoding="utf-8")
    build_index(folder, name="notes", store=IndexStore())
    asked: list[str] = []
    window.index_actions.ask_corpus_file = lambda _parent, name: asked.append(name)
    assert window.index_actions.add_documents("notes") is None
    assert not asked  # refused before asking for a file
    assert "follows the folder" in window.message_bar.text.text()
    assert "corpus file" in window.message_bar.text.text()


def test_a_cancelled_dialog_starts_nothing(qtbot, window) -> None:
    window.index_actions.ask_ids = lambda _parent, name: ()
    assert window.index_actions.remove_documents(ORCHARD) is None
    assert not window.builds.jobs.busy()


def test_the_remove_dialog_reads_ids_typed_and_from_a_file(qtbot, tmp_path) -> None:
    dialog = RemoveDialog(ORCHARD)
    qtbot.addWidget(dialog)
    assert not dialog.ok_button.isEnabled()
    dialog.edit.setPlainText("d1\n  d2  \n\nd1\n")
    assert dialog.ids() == ("d1", "d2")
    assert dialog.ok_button.isEnabled()
    ids = tmp_path / "ids.txt"
    ids.write_text("\ufeffd3\nid with spaces\n", encoding="utf-8")
    dialog.load_file(ids)
    assert dialog.ids() == ("d1", "d2", "d3", "id with spaces")
    dialog.load_file(tmp_path / "missing.txt")
    assert "Could not read missing.txt" in dialog.error.text()
    assert parse_ids("") == ()

"""The New-index dialog: detection, TSV preview and column mapping, analysis preview, problems."""

from __future__ import annotations

import itertools
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog

from bm25desk.engine import IndexStore
from bm25desk.engine.readers.corpus import ColumnMap
from bm25desk.ui.common.colors import status_colors
from bm25desk.ui.common.jobs import JobRunner
from bm25desk.ui.indexes.new_index_dialog import NewIndexDialog


def make(qtbot) -> NewIndexDialog:
    dialog = NewIndexDialog(IndexStore())
    qtbot.addWidget(dialog)
    return dialog


def test_a_tsv_with_a_header_is_previewed_and_mapped(qtbot, ui_corpus) -> None:
    dialog = make(qtbot)
    assert dialog.problem_text().startswith("Choose")
    assert not dialog.build_button.isEnabled()
    dialog.set_source(ui_corpus)
    assert dialog.fmt() == "tsv-header"
    assert "TSV with a header" in dialog.detected_label.text()
    assert dialog.tsv_box.isVisibleTo(dialog)
    assert dialog.rows_model.rowCount() == 5
    assert dialog.rows_model.headerData(0, Qt.Orientation.Horizontal) == "id"
    assert dialog.columns() == ColumnMap("id", ("text",), "title")
    assert dialog.name_edit.text() == "orchard"
    assert dialog.problem_text() == ""
    assert dialog.build_button.isEnabled()
    dialog.text_list.item(2).setCheckState(Qt.CheckState.Unchecked)
    assert "text column" in dialog.problem_text()
    dialog.text_list.item(1).setCheckState(Qt.CheckState.Checked)
    request = dialog.request()
    assert request.columns == ColumnMap("id", ("title",), "title")
    assert request.analyzer["stopwords"] == "en"
    assert request.analyzer["stemmer"] == "porter"


def test_analysis_preview_shows_stop_words_and_stems(qtbot, ui_corpus) -> None:
    dialog = make(qtbot)
    dialog.set_source(ui_corpus)
    options = dialog.analysis
    options.sample.setText("The libraries were classifying")
    html = options.preview.text()
    assert "<s>The</s>" in html
    assert "librari" in html
    assert "classifi" in html
    options.stopwords.setCurrentIndex(0)  # none
    options._refresh()
    assert "<s>The</s>" not in options.preview.text()
    options.language.setCurrentIndex(options.language.findData("ro"))
    options.stopwords.setCurrentIndex(1)
    options._refresh()
    assert "no stop list" in options.error()
    assert "stop list" in dialog.problem_text()


def test_a_folder_and_an_unknown_file(qtbot, tmp_path, monkeypatch) -> None:
    dialog = make(qtbot)
    folder = tmp_path / "My Notes"
    folder.mkdir()
    (folder / "a.txt").write_text("hello", encoding="utf-8")
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(folder))
    dialog.choose_folder()
    assert dialog.fmt() == "folder"
    assert dialog.name_edit.text() == "my-notes"
    assert not dialog.tsv_box.isVisibleTo(dialog)
    assert dialog.problem_text() == ""

    odd = tmp_path / "odd.bin"
    odd.write_bytes(b"\x00\x01\x02")
    dialog.set_source(odd)
    assert "binary" in dialog.detected_label.text()
    assert dialog.problem_text()


def test_a_missing_source_and_a_bad_name(qtbot, tmp_path, ui_corpus) -> None:
    dialog = make(qtbot)
    dialog.set_source(tmp_path / "nowhere.tsv")
    assert "no such" in dialog.detected_label.text().lower()
    assert dialog.problem_text()
    dialog.set_source(ui_corpus)
    dialog.name_edit.setText("bad name!")
    assert "invalid index name" in dialog.problem_text().lower()


def test_an_existing_name_warns_that_it_will_be_replaced(qtbot, ui_index, ui_corpus) -> None:
    dialog = make(qtbot)
    dialog.set_source(ui_corpus)
    assert "replaces" in dialog.name_note.text()


def test_dropping_a_file_sets_the_source(qtbot, ui_corpus) -> None:
    from PySide6.QtCore import QMimeData, QPoint, QUrl
    from PySide6.QtGui import QDropEvent

    dialog = make(qtbot)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(ui_corpus))])
    event = QDropEvent(
        QPoint(5, 5),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    dialog.dropEvent(event)
    assert Path(dialog.source_edit.text()) == ui_corpus


def _errors(dialog: NewIndexDialog) -> list[str]:
    """Return the error texts the dialog shows (red labels with text)."""
    bad = status_colors(dialog.palette())["bad"].name()
    labels = (dialog.detected_label, dialog.problem)
    return [label.text() for label in labels if label.text() and bad in label.styleSheet()]


def test_nothing_is_wrong_before_the_user_did_anything(qtbot) -> None:
    """Issue 10: the dialog opened with a red error."""
    dialog = make(qtbot)
    dialog.show()
    assert _errors(dialog) == []
    assert not dialog.build_button.isEnabled()  # but Build waits for a source


def test_the_path_is_checked_as_it_is_typed(qtbot, ui_corpus, tmp_path) -> None:
    """Issue 10: the path was checked only when the focus left the field."""
    dialog = make(qtbot)
    dialog.show()
    dialog.source_edit.setFocus()
    qtbot.keyClicks(dialog.source_edit, str(ui_corpus))
    qtbot.waitUntil(lambda: "TSV with a header" in dialog.detected_label.text(), timeout=3000)
    assert dialog.source_edit.hasFocus()
    assert dialog.build_button.isEnabled()
    # One bad path, one error (not one in each label).
    dialog.source_edit.clear()
    qtbot.keyClicks(dialog.source_edit, str(tmp_path / "nowhere"))
    qtbot.waitUntil(lambda: bool(_errors(dialog)), timeout=3000)
    assert len(_errors(dialog)) == 1
    assert "No such file or folder" in _errors(dialog)[0]
    assert not dialog.build_button.isEnabled()


def test_a_binary_file_is_not_called_a_folder_of_documents(qtbot, tmp_path) -> None:
    """Issue 10: an unrecognised file was shown with the format "Folder of documents"."""
    dialog = make(qtbot)
    odd = tmp_path / "odd.bin"
    odd.write_bytes(b"\x00\x01\x02")
    dialog.set_source(odd)
    assert dialog.fmt() == ""
    assert dialog.format_combo.currentIndex() == -1
    assert "folder of documents" not in dialog.format_combo.currentText().lower()
    assert len(_errors(dialog)) == 1
    assert "binary" in _errors(dialog)[0]
    dialog.format_combo.setCurrentIndex(dialog.format_combo.findData("tsv-header"))
    assert "binary" not in dialog.detected_label.text()


def test_a_folder_is_summarised_before_it_is_built(qtbot, tmp_path) -> None:
    """What the build would read and skip is said before Build (issue 10: "A folder of ...")."""
    dialog = make(qtbot)
    folder = tmp_path / "notes"
    folder.mkdir()
    for name in ("a.txt", "b.txt", "c.md"):
        (folder / name).write_text("hello", encoding="utf-8")
    (folder / "photo.jpg").write_bytes(b"\xff\xd8\xff")
    dialog.set_source(folder)
    text = dialog.folder_preview.text()
    assert dialog.folder_preview.isVisibleTo(dialog)
    assert text.startswith("To index: 3 files: 2 txt, 1 md"), text
    assert "1 skipped" in text

    empty = tmp_path / "pictures"
    empty.mkdir()
    (empty / "photo.jpg").write_bytes(b"\xff\xd8\xff")
    dialog.set_source(empty)
    assert dialog.folder_preview.text().startswith("Nothing to index here")
    assert "empty index" in dialog.folder_preview.text()

    dialog.set_source(tmp_path / "nowhere")
    assert not dialog.folder_preview.isVisibleTo(dialog)


def test_the_folder_summary_runs_in_the_background(qtbot, tmp_path) -> None:
    runner = JobRunner()
    dialog = NewIndexDialog(IndexStore(), runner=runner)
    qtbot.addWidget(dialog)
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.txt").write_text("hello", encoding="utf-8")
    dialog.set_source(folder)
    qtbot.waitUntil(lambda: dialog.folder_preview.text().startswith("To index"), timeout=5000)
    assert dialog.folder_preview.summary is not None
    assert dialog.folder_preview.summary.n_files == 1
    dialog.reject()
    assert runner.wait(5000)


def test_the_dialog_fits_a_laptop_screen_without_overlapping_rows(qtbot, ui_corpus) -> None:
    """Seen in the screenshots: 836 pixels high with a TSV file; the analysis rows overlapped."""
    dialog = make(qtbot)
    dialog.set_source(ui_corpus)
    dialog.show()
    qtbot.waitExposed(dialog)
    assert dialog.tsv_box.isVisible()
    assert dialog.height() <= 680  # a 1280×720 screen less a panel and the title bar
    options = dialog.analysis
    rows = [options.sample, options.preview, options.summary]
    for upper, lower in itertools.pairwise(rows):
        assert upper.geometry().bottom() < lower.geometry().top(), (upper, lower)


def test_a_folder_of_classic_files_is_offered_with_its_format(qtbot, tmp_path) -> None:
    """A LISA folder is detected as LISA and may be built; a TSV format on a folder may not."""
    lisa = Path(__file__).parents[2] / "data" / "corpus" / "lisa"
    dialog = make(qtbot)
    dialog.set_source(lisa)
    assert dialog.fmt() == "lisa"
    assert dialog.source_problem() == ""
    dialog.format_combo.setCurrentIndex(dialog.format_combo.findData("tsv-header"))
    problem = dialog.source_problem()
    assert problem.startswith("This is a folder")
    assert "LISA" in problem
    assert "BEIR" in problem

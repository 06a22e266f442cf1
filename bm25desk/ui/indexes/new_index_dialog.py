"""The New-index dialog: choose a folder or corpus file, check its format, choose the analysis."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QTimer, Slot
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from bm25desk.engine import IndexStore, StoreError
from bm25desk.engine.index.store import default_name
from bm25desk.engine.readers.corpus import (
    FOLDER_FORMATS,
    FORMATS,
    ColumnMap,
    CorpusError,
    detect_format,
)
from bm25desk.ui.common.colors import muted_text, status_colors
from bm25desk.ui.common.jobs import JobRunner
from bm25desk.ui.indexes.analysis_options import AnalysisOptions
from bm25desk.ui.indexes.build_request import BuildRequest
from bm25desk.ui.indexes.folder_preview import FolderPreview
from bm25desk.ui.indexes.tsv_mapping import TsvMapping
from bm25desk.ui.indexes.welcome_page import corpus_types

TYPING_PAUSE_MS = 400


def dropped_path(event: QDragEnterEvent | QDropEvent) -> Path | None:
    """Return the local file or folder carried by a drag, if it carries exactly one."""
    mime = event.mimeData()
    if not mime.hasUrls():
        return None
    urls = [u for u in mime.urls() if u.isLocalFile()]
    if len(urls) != 1:
        return None
    return Path(urls[0].toLocalFile())


class NewIndexDialog(QDialog):
    """Collects a :class:`BuildRequest` for a new index.

    Tests drive it without file dialogs: :meth:`set_source`, then :meth:`request`.
    """

    def __init__(
        self, store: IndexStore, parent: QWidget | None = None, runner: JobRunner | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("New index")
        self.setAcceptDrops(True)
        self.store = store
        self._runner = runner  # for the folder summary (None: worked out at once)
        self._source: Path | None = None
        self._detected = ""
        self._name_edited = False
        self._touched = False  # the user chose or typed a source (errors show only then)
        self._detect_error = ""
        self._read_error = ""  # why the chosen TSV file's first rows could not be read

        self.analysis = AnalysisOptions()
        self.analysis.changed.connect(self._validate)
        # A dialog does not ask its layout how high wrapped text is at its width, so the form's
        # rows overlapped in a narrow column: hold it at the height its narrowest width needs.
        narrowest = self.analysis.minimumSizeHint().width()
        self.analysis.setMinimumHeight(self.analysis.heightForWidth(narrowest))
        analysis_box = QGroupBox("Analysis")
        QVBoxLayout(analysis_box).addWidget(self.analysis)
        self.problem = QLabel()
        self.problem.setWordWrap(True)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.build_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.build_button.setText("Build index")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addWidget(self._make_source_box())
        self.tsv_box = TsvMapping()
        self.tsv_box.changed.connect(self._validate)
        self.rows_model, self.text_list = self.tsv_box.rows_model, self.tsv_box.text_list
        # Side by side, so the dialog fits a 720-pixel-high screen with a TSV file's mapping shown.
        middle = QHBoxLayout()
        middle.addWidget(self.tsv_box, 1)
        middle.addWidget(analysis_box, 1)
        layout.addLayout(middle)
        layout.addWidget(self.problem)
        layout.addWidget(self.buttons)
        self.resize(980, 520)
        self._validate()

    def _make_source_box(self) -> QGroupBox:
        self.source_edit = QLineEdit()
        self.source_edit.setPlaceholderText(
            "A folder of documents or a corpus file — or drop one here"
        )
        self.source_timer = QTimer(self, singleShot=True, interval=TYPING_PAUSE_MS)
        self.source_timer.timeout.connect(self._on_source_typed)
        self.source_edit.textEdited.connect(self.source_timer.start)
        self.source_edit.editingFinished.connect(self._on_source_typed)
        file_button = QPushButton("File…")
        file_button.setToolTip(f"Choose a corpus file: {corpus_types()}")
        folder_button = QPushButton("Folder…")
        folder_button.setToolTip("Choose a folder of documents (txt, md, rst, html, …)")
        file_button.clicked.connect(self.choose_file)
        folder_button.clicked.connect(self.choose_folder)
        source_row = QHBoxLayout()
        source_row.addWidget(self.source_edit, 1)
        source_row.addWidget(file_button)
        source_row.addWidget(folder_button)
        self.detected_label = QLabel()
        self.detected_label.setWordWrap(True)
        self.folder_preview = FolderPreview(self._runner)
        self.format_combo = QComboBox()
        for key, label in FORMATS.items():
            self.format_combo.addItem(label, key)
        self.format_combo.currentIndexChanged.connect(self._on_format_combo_changed)
        self.name_edit = QLineEdit()
        self.name_edit.textEdited.connect(self._on_name_edit_text_edited)
        self.name_edit.textChanged.connect(self._validate)
        self.name_note = QLabel()
        form = QFormLayout()
        form.addRow("Source", source_row)
        form.addRow("", self.detected_label)
        form.addRow("", self.folder_preview)
        form.addRow("Format", self.format_combo)
        form.addRow("Index name", self.name_edit)
        form.addRow("", self.name_note)
        box = QGroupBox("What to index")
        box.setLayout(form)
        return box

    # -- choosing the source -------------------------------------------------------------------

    @Slot()
    def choose_file(self) -> None:
        """Ask for a corpus file."""
        path, _ = QFileDialog.getOpenFileName(
            self,
            "Corpus file",
            "",
            "Corpus files (*.tsv *.jsonl *.gz *.ALL *.all *.txt *.trec *.sgml);;All files (*)",
        )
        if path:
            self.set_source(Path(path))

    @Slot()
    def choose_folder(self) -> None:
        """Ask for a folder of documents."""
        path = QFileDialog.getExistingDirectory(self, "Folder of documents")
        if path:
            self.set_source(Path(path))

    def set_source(self, path: Path | None, *, typed: bool = False) -> None:
        """Use ``path`` as the source: detect its format and suggest a name.

        ``typed``: the path comes from the source box as the user types (it is not rewritten).
        """
        self._touched = True
        self._source = Path(path).expanduser() if path is not None else None
        if not typed:
            self.source_edit.blockSignals(True)
            self.source_edit.setText(str(self._source or ""))
            self.source_edit.blockSignals(False)
        self._detected = ""
        self._detect_error = ""
        if self._source is not None and self._source.exists():
            try:
                self._detected = detect_format(self._source)
            except CorpusError as exc:
                self._detect_error = str(exc)
        self._set_format(self._detected)
        self.folder_preview.show_folder(self._source if self._detected == "folder" else None)
        if self._source is not None and self._source.exists() and not self._name_edited:
            self.name_edit.setText(default_name(self._source))
        self._show_tsv()
        self._validate()

    def _set_format(self, key: str) -> None:
        """Choose format ``key`` ("": none, so an unrecognised file is not called a folder)."""
        self.format_combo.blockSignals(True)
        self.format_combo.setCurrentIndex(self.format_combo.findData(key) if key else -1)
        self.format_combo.blockSignals(False)

    def _show_detected(self, text: str, *, bad: bool) -> None:
        color = status_colors(self.palette())["bad"] if bad else muted_text(self.palette())
        self.detected_label.setStyleSheet(f"color: {color.name()}")
        self.detected_label.setText(text[:1].upper() + text[1:])

    def source_problem(self) -> str:
        """Return why the source cannot be indexed as chosen ("" when it can)."""
        source, fmt = self._source, self.fmt()
        if source is None:
            return "Choose a folder or a corpus file."
        if not source.exists():
            return f"No such file or folder: {source}."
        if not fmt:
            what = self._detect_error or "this file's format was not recognised"
            return f"{what[:1].upper()}{what[1:]}: choose its format, or another source."
        if self._read_error:
            return self._read_error[:1].upper() + self._read_error[1:]
        if fmt == "folder" and not source.is_dir():
            return "This is a file, not a folder: choose its format, or choose a folder."
        if fmt not in FOLDER_FORMATS and source.is_dir():
            kinds = ", ".join(FORMATS[k] for k in sorted(FOLDER_FORMATS) if k in FORMATS)
            return f"This is a folder: choose a format a folder can hold ({kinds})."
        return ""

    def _show_tsv(self) -> None:
        self._read_error = self.tsv_box.show_file(self._source, self.fmt())

    # -- values ----------------------------------------------------------------------------------

    def fmt(self) -> str:
        """Return the chosen format key ("" when none is chosen)."""
        key = self.format_combo.currentData()
        return str(key) if key is not None else ""

    def columns(self) -> ColumnMap | None:
        """Return the column mapping (``tsv-header`` only)."""
        return self.tsv_box.columns(self.fmt())

    def problem_text(self) -> str:
        """Return why the index cannot be built yet ("" when it can)."""
        return self.source_problem() or self.other_problem()

    def other_problem(self) -> str:
        """Return what else stops the build: the name, the columns, the analysis ("" if none)."""
        name = self.name_edit.text().strip()
        try:
            self.store.validate_name(name)
        except StoreError as exc:
            return str(exc)[:1].upper() + str(exc)[1:]
        cols = self.columns()
        if self.fmt() == "tsv-header":
            if cols is None:
                return "This TSV file has no header row to map."
            if not cols.text:
                return "Check at least one text column."
            if cols.docid in cols.text:
                return "The id column should not also be a text column."
        if self.analysis.error():
            return self.analysis.error()[:1].upper() + self.analysis.error()[1:]
        return ""

    def request(self) -> BuildRequest:
        """Return what to build (check :meth:`problem_text` first)."""
        assert self._source is not None
        return BuildRequest(
            self._source,
            self.name_edit.text().strip(),
            self.fmt(),
            self.analysis.options(),
            self.columns(),
        )

    @Slot()
    def _validate(self) -> None:
        """Enable Build, and say what is wrong: once, where it is, after the user did something."""
        self.build_button.setEnabled(not self.problem_text())
        source = self.source_problem()
        if not self._touched:
            self._show_detected("", bad=False)  # nothing chosen yet: no error to show
        elif source:
            self._show_detected(source, bad=True)
        elif self._detected:
            self._show_detected(f"Detected: {FORMATS[self._detected]}", bad=False)
        else:
            self._show_detected("", bad=False)
        self.problem.setText("" if source else self.other_problem())
        self.problem.setStyleSheet(f"color: {status_colors(self.palette())['bad'].name()}")
        name = self.name_edit.text().strip()
        if name and self.store.exists(name):
            self.name_note.setText(f"An index named {name!r} exists: building replaces it.")
        else:
            self.name_note.setText("")
        self.name_note.setStyleSheet(f"color: {status_colors(self.palette())['warn'].name()}")

    @Slot()
    def _on_source_typed(self) -> None:
        """Check the path in the source box as the user types (after a short pause)."""
        text = self.source_edit.text().strip()
        path = Path(text).expanduser() if text else None
        if path != self._source or not self._touched:
            self.set_source(path, typed=True)

    @Slot(int)
    def _on_format_combo_changed(self, _index: int) -> None:
        self._show_tsv()
        self._validate()

    @Slot(str)
    def _on_name_edit_text_edited(self, _text: str) -> None:
        self._name_edited = True

    def done(self, result: int) -> None:
        """Stop the folder summary before closing (QDialog.done)."""
        self.folder_preview.stop()
        super().done(result)

    def accept(self) -> None:
        """Close with Build only when the request is complete (QDialog.accept)."""
        if not self.problem_text():
            super().accept()

    # -- drag and drop ---------------------------------------------------------------------------

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        """Accept a single local file or folder (QWidget.dragEnterEvent)."""
        if dropped_path(event) is not None:
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        """Use the dropped file or folder as the source (QWidget.dropEvent)."""
        path = dropped_path(event)
        if path is not None:
            self.set_source(path)
            event.acceptProposedAction()

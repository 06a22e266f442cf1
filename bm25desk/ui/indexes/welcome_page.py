"""The start page shown while there is no index: offers the bundled sample collection."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from bm25desk.engine.extract.registry import register_builtin
from bm25desk.engine.readers.corpus import FORMATS
from bm25desk.ui.common.colors import muted_text
from bm25desk.ui.common.sample import SAMPLE_DESCRIPTION

# How people call the file types the folder reader knows (by extension); the phrase on the page is
# made from the registry, so a new extractor shows up (by its extension if it is not named here).
_TYPE_NAMES = {
    ".txt": "text",
    ".text": "text",
    ".md": "Markdown",
    ".markdown": "Markdown",
    ".rst": "reStructuredText",
    ".html": "HTML",
    ".htm": "HTML",
    ".xhtml": "HTML",
    ".pdf": "PDF",
    ".docx": "Word (docx)",
    ".odt": "OpenDocument (odt)",
    ".epub": "EPUB",
}
_MAIL = (".eml", ".mbox")


# How people call the corpus-file formats (by format key); a format not named here shows with the
# engine's own label, so a newly added reader is on the page too.
_CORPUS_NAMES = {
    "msmarco-docs": "TSV (MS MARCO or with a header row)",
    "msmarco-passages": "TSV (MS MARCO or with a header row)",
    "tsv-header": "TSV (MS MARCO or with a header row)",
    "beir": "BEIR corpus.jsonl",
    "smart": "SMART (CISI, Cranfield, MED, CACM, ADI)",
    "trec": "TREC",
    "npl": "NPL",
    "lisa": "LISA",
    "time": "TIME",
}


def _in_words(names: list[str]) -> str:
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)


def corpus_types() -> str:
    """Return the corpus-file formats in words: "TSV (…), BEIR corpus.jsonl, … and TIME"."""
    names = [_CORPUS_NAMES.get(key, label) for key, label in FORMATS.items() if key != "folder"]
    return _in_words(list(dict.fromkeys(names)))


def folder_types() -> str:
    """Return the file types a folder is read for, in words: "text, Markdown, … and e-mail"."""
    names: list[str] = []
    extensions = register_builtin()
    for ext in extensions:
        name = _TYPE_NAMES.get(ext, ext.lstrip("."))
        if ext not in _MAIL and name not in names:
            names.append(name)
    mail = [ext.lstrip(".") for ext in _MAIL if ext in extensions]
    if mail:
        names.append(f"e-mail ({', '.join(mail)})")
    return _in_words(names)


class WelcomePage(QWidget):
    """First-start page.

    Signals
    -------
    sample_requested()
        Build and open the bundled sample.
    new_requested()
        Open the New-index dialog.
    """

    sample_requested = Signal()
    new_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        muted = muted_text(self.palette()).name()
        title = QLabel("<h1>bm25desk</h1>")
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        intro = QLabel(
            "Search a collection with the whole BM25 family, and see — term by term — why each "
            "document ranked where it did."
        )
        intro.setWordWrap(True)
        intro.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.sample_button = QPushButton("Try the sample collection")
        self.sample_button.setDefault(True)
        self.sample_button.setMinimumHeight(44)
        font = self.sample_button.font()
        font.setPointSizeF(font.pointSizeF() * 1.2)
        font.setBold(True)
        self.sample_button.setFont(font)
        self.sample_button.setToolTip("Builds in a few seconds")
        self.sample_button.clicked.connect(self.sample_requested)
        sample_note = QLabel(
            f"<span style='color:{muted}'>{SAMPLE_DESCRIPTION}. Indexed in a few seconds.</span>"
        )
        sample_note.setWordWrap(True)
        sample_note.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.new_button = QPushButton("Index your own folder or corpus file…")
        self.new_button.setMinimumHeight(36)
        self.new_button.clicked.connect(self.new_requested)
        formats = QLabel(
            f"<span style='color:{muted}'>Folders of {folder_types()} files; "
            f"{corpus_types()} corpus files. You can also drop a file or folder on this "
            "window.</span>"
        )
        formats.setWordWrap(True)
        formats.setAlignment(Qt.AlignmentFlag.AlignCenter)

        column = QWidget()
        column.setFixedWidth(560)
        inner = QVBoxLayout(column)
        inner.addWidget(title)
        inner.addWidget(intro)
        inner.addSpacing(24)
        inner.addWidget(self.sample_button)
        inner.addWidget(sample_note)
        inner.addSpacing(18)
        inner.addWidget(self.new_button)
        inner.addWidget(formats)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(column)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        layout.addLayout(row)
        layout.addStretch(2)

    def set_busy(self, busy: bool) -> None:
        """Disable the buttons while a build runs."""
        self.sample_button.setEnabled(not busy)
        self.new_button.setEnabled(not busy)

"""Asking what to add to or remove from a corpus-file index: a corpus file, or document ids.

Ids are typed one a line or loaded from a file with one id a line, read as ``bm25desk remove
--ids FILE`` reads it (each line stripped, blank lines ignored: an id may hold spaces).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from bm25desk.ui.common.messages import readable

CORPUS_FILTER = (
    "Corpus files (*.tsv *.tsv.gz *.jsonl *.jsonl.gz *.json *.csv *.txt *.gz);;All files (*)"
)


def parse_ids(text: str) -> tuple[str, ...]:
    """Return the ids in ``text`` (one a line, stripped), each once, in order."""
    return tuple(dict.fromkeys(line.strip() for line in text.splitlines() if line.strip()))


def ask_corpus_file(parent: QWidget | None, name: str) -> Path | None:
    """Ask for the corpus file whose documents are added to index ``name`` (None: cancelled)."""
    path, _ = QFileDialog.getOpenFileName(
        parent, f"Add documents to “{name}” from a file", str(Path.home()), CORPUS_FILTER
    )
    return Path(path) if path else None


class RemoveDialog(QDialog):
    """Asks for the ids of the documents to remove from an index."""

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Remove documents from “{name}”")
        self.resize(460, 360)
        intro = QLabel(
            "Document ids to remove, one a line. The index "
            "is changed in place; its statistics afterwards are those of a fresh build."
        )
        intro.setWordWrap(True)
        self.edit = QPlainTextEdit()
        self.edit.setPlaceholderText("d17\nd42")
        self.error = QLabel()
        self.error.setWordWrap(True)
        load = QPushButton("Load ids from a file…")
        load.clicked.connect(self.load_file)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.ok_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok_button.setText("Remove")
        self.ok_button.setEnabled(False)
        buttons.addButton(load, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.edit.textChanged.connect(
            lambda: self.ok_button.setEnabled(bool(parse_ids(self.edit.toPlainText())))
        )
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.edit, 1)
        layout.addWidget(self.error)
        layout.addWidget(buttons)

    def ids(self) -> tuple[str, ...]:
        """Return the ids given."""
        return parse_ids(self.edit.toPlainText())

    def load_file(self, path: Path | None = None) -> None:
        """Append the ids of a file (one a line) to those typed."""
        if not isinstance(path, Path):
            chosen, _ = QFileDialog.getOpenFileName(self, "Ids to remove", str(Path.home()))
            if not chosen:
                return
            path = Path(chosen)
        try:
            text = path.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            self.error.setText(f"Could not read {path.name}: {readable(exc)}")
            return
        self.error.setText("")
        typed = self.edit.toPlainText().rstrip()
        self.edit.setPlainText((typed + "\n" if typed else "") + text.strip())


def ask_ids(parent: QWidget | None, name: str) -> tuple[str, ...]:
    """Ask for the ids of the documents to remove from ``name`` (empty: cancelled)."""
    dialog = RemoveDialog(name, parent)
    if dialog.exec() != QDialog.DialogCode.Accepted:
        return ()
    return dialog.ids()

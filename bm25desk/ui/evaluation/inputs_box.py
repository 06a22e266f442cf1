"""The Evaluation view's query and judgement files: chosen, read, and described.

Files are read in the background; the box says what was read (formats detected, counts, skipped
lines) and what is missing.
"""

from __future__ import annotations

import dataclasses
from html import escape
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QFileDialog,
    QGridLayout,
    QGroupBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QWidget,
)

from bm25desk.engine import Index
from bm25desk.engine.progress import CancelToken, ProgressFn
from bm25desk.evaluation.detect import (
    QRELS_FORMAT_LABELS,
    QRELS_FORMATS,
    QUERY_FORMAT_LABELS,
    QUERY_FORMATS,
)
from bm25desk.ui.common.formatting import plural
from bm25desk.ui.common.job_controller import JobController
from bm25desk.ui.common.jobs import Job, JobRunner
from bm25desk.ui.common.messages import MessageBar
from bm25desk.ui.common.plain_text import plain_tooltip
from bm25desk.ui.common.widgets import combo_box, text_label
from bm25desk.ui.evaluation.labels import eval_readable, small
from bm25desk.ui.evaluation.work import (
    Companions,
    EvalInputs,
    companion_files,
    load_qrels,
    load_queries,
)

FORMAT_NAMES = {"cranfield": "Cranfield"}
"""Short names of the formats for the combo boxes and summaries (by default the key in capitals)."""


def format_name(key: str) -> str:
    """Return the short name of an evaluation file format (``smart`` → ``SMART``)."""
    return FORMAT_NAMES.get(key, key.upper())


def format_items(keys: tuple[str, ...]) -> list[tuple[str, str]]:
    """Return the ``(text, key)`` items of a format combo: Detect, then every format."""
    return [("Detect", "auto"), *((format_name(k), k) for k in keys)]


def all_format_names() -> str:
    """Return "TREC, BEIR, …, LISA or TIME": every query and judgement format, in list order."""
    names = [format_name(k) for k in dict.fromkeys((*QUERY_FORMATS, *QRELS_FORMATS))]
    return ", ".join(names[:-1]) + " or " + names[-1]


SKIPPED_SHOWN = 200


class InputsBox(QGroupBox):
    """Loads the query and judgement files of an experiment.

    Parameters
    ----------
    runner
        Reads the files in the background.
    messages
        Where read errors are shown.

    Signals
    -------
    inputs_loaded(object)
        Queries or judgements were read: the current :class:`EvalInputs`.
    """

    inputs_loaded = Signal(object)

    def __init__(
        self, runner: JobRunner, messages: MessageBar, parent: QWidget | None = None
    ) -> None:
        super().__init__("Queries and judgements", parent)
        self.messages = messages
        self.inputs = EvalInputs()
        self._paths: dict[str, Path | None] = {"queries": None, "qrels": None}
        self._companions: Companions | None = None
        self._index_name = ""  # the open index
        self._loaded_for = ""  # the index the files were read for
        self.loads = JobController(runner, "eval inputs", parent=self)
        self.loads.succeeded.connect(self._on_loads_succeeded)
        self.loads.failed.connect(self._on_loads_failed)

        self.queries_label = QLabel("no file")
        self.qrels_label = QLabel("no file")
        for label in (self.queries_label, self.qrels_label):
            label.setTextFormat(Qt.TextFormat.RichText)  # file names are escaped
            label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.queries_format = combo_box(
            format_items(QUERY_FORMATS), "The query file's format (Detect reads its content)"
        )
        self.qrels_format = combo_box(
            format_items(QRELS_FORMATS), "The judgement file's format (Detect reads its content)"
        )
        for combo, labels in (
            (self.queries_format, QUERY_FORMAT_LABELS),
            (self.qrels_format, QRELS_FORMAT_LABELS),
        ):
            for i in range(1, combo.count()):
                combo.setItemData(i, labels.get(combo.itemData(i), ""), Qt.ItemDataRole.ToolTipRole)
        self.queries_button = QPushButton("Queries…")
        self.queries_button.setToolTip("A query file: " + "; ".join(QUERY_FORMAT_LABELS.values()))
        self.qrels_button = QPushButton("Judgements…")
        self.qrels_button.setToolTip(
            "Relevance judgements: " + "; ".join(QRELS_FORMAT_LABELS.values())
        )
        self.queries_button.clicked.connect(self._on_queries_button_clicked)
        self.qrels_button.clicked.connect(self._on_qrels_button_clicked)
        self.queries_format.currentIndexChanged.connect(self._on_queries_format_changed)
        self.qrels_format.currentIndexChanged.connect(self._on_qrels_format_changed)
        self.sample_button = QPushButton()
        self.sample_button.clicked.connect(self._on_sample_button_clicked)
        self.sample_button.hide()
        self.summary = text_label(rich=True)
        self.skipped_view = QPlainTextEdit()
        self.skipped_view.setReadOnly(True)
        self.skipped_view.setMaximumHeight(90)
        self.skipped_view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.skipped_view.hide()

        grid = QGridLayout(self)
        grid.setColumnStretch(1, 1)
        grid.addWidget(self.queries_button, 0, 0)
        grid.addWidget(self.queries_label, 0, 1)
        grid.addWidget(self.queries_format, 0, 2)
        grid.addWidget(self.qrels_button, 1, 0)
        grid.addWidget(self.qrels_label, 1, 1)
        grid.addWidget(self.qrels_format, 1, 2)
        grid.addWidget(self.sample_button, 2, 0, 1, 3)
        grid.addWidget(self.summary, 3, 0, 1, 3)
        grid.addWidget(self.skipped_view, 4, 0, 1, 3)
        self.show_inputs()

    # -- the open index --------------------------------------------------------------------------

    def set_index(self, index: Index | None) -> None:
        """Offer the queries and judgements that come with ``index``'s collection, if any.

        Files read for another index are forgotten (they belong to its collection); closing the
        index, or opening the same one again, keeps them.
        """
        if index is not None:
            if self._loaded_for and index.name != self._loaded_for:
                self.reset()
            self._index_name = index.name
        self._companions = companion_files(index)
        if self._companions is not None:
            self.sample_button.setText(self._companions.label)
            self.sample_button.setToolTip(f"{self._companions.queries}\n{self._companions.qrels}")
            self.sample_button.show()
        else:
            self.sample_button.hide()
        self.show_inputs()

    # -- reading ---------------------------------------------------------------------------------

    def set_files(self, queries: str | Path | None, qrels: str | Path | None) -> Job | None:
        """Read a query file and/or a judgement file in the background (None: keep as is)."""
        jobs = {}
        if queries is not None:
            jobs["queries"] = (Path(queries), str(self.queries_format.currentData()))
        if qrels is not None:
            jobs["qrels"] = (Path(qrels), str(self.qrels_format.currentData()))
        if not jobs:
            return None
        for which, (path, _) in jobs.items():
            self._paths[which] = path

        def work(_progress: ProgressFn, cancel: CancelToken) -> dict[str, object]:
            out: dict[str, object] = {}
            for which, (path, fmt) in jobs.items():
                cancel.check()
                try:
                    out[which] = (load_queries if which == "queries" else load_qrels)(path, fmt)
                except Exception as exc:  # reported per file: the other one may still load
                    out[which] = exc
            return out

        for which in jobs:
            (self.queries_label if which == "queries" else self.qrels_label).setText("reading…")
        self._loaded_for = self._index_name
        return self.loads.start(work, replace=True)

    def reset(self) -> None:
        """Forget the files read (and stop reading any)."""
        self.loads.drop()
        self.inputs = EvalInputs()
        self._paths = {"queries": None, "qrels": None}
        self._loaded_for = ""
        self.show_inputs()
        self.inputs_loaded.emit(self.inputs)

    @Slot(object)
    def _on_loads_succeeded(self, loaded: dict[str, object]) -> None:
        errors = []
        changes: dict[str, Any] = {}
        for which, value in loaded.items():
            path = self._paths.get(which)
            if isinstance(value, BaseException):
                errors.append(self._read_error(which, path, value))
                changes[which] = None
                self._paths[which] = None
            else:
                changes[which] = value
        self.inputs = dataclasses.replace(self.inputs, **changes)
        if errors:
            self.messages.show_message(" ".join(errors), "error")
        else:
            self.messages.hide()
        self.show_inputs()
        self.inputs_loaded.emit(self.inputs)

    @Slot(object)
    def _on_loads_failed(self, exc: BaseException) -> None:
        self.messages.show_message(eval_readable(exc), "error")

    @staticmethod
    def _read_error(which: str, path: Path | None, exc: BaseException) -> str:
        kind = "queries" if which == "queries" else "judgements"
        text = eval_readable(exc)
        # The engine's messages start with the file's path: say it once.
        for prefix in (f"{path}: ", f"{str(path)[:1].upper()}{str(path)[1:]}: "):
            if path is not None and text.startswith(prefix):
                text = text[len(prefix) :]
                text = text[:1].upper() + text[1:]
        name = path.name if path is not None else "the file"
        return f"Could not read the {kind} from {name}: {text}"

    # -- what was read ---------------------------------------------------------------------------

    def show_inputs(self) -> None:
        """Show the files read, what they hold, and the lines skipped."""
        q, r = self.inputs.queries, self.inputs.qrels
        for label, path, obj in (
            (self.queries_label, self._paths["queries"], q),
            (self.qrels_label, self._paths["qrels"], r),
        ):
            if path is None or obj is None:
                label.setText(small("no file", self))
                label.setToolTip("")
            else:
                label.setText(escape(path.name))
                label.setToolTip(plain_tooltip(str(path)) or "")
        self.summary.setText("<br>".join(self._summary_lines()))
        skipped = [s for obj in (q, r) if obj is not None for s in obj.skipped]
        if skipped:
            shown = [f"{Path(s.where).name}: {s.reason}" for s in skipped[:SKIPPED_SHOWN]]
            if len(skipped) > SKIPPED_SHOWN:
                shown.append(f"… and {len(skipped) - SKIPPED_SHOWN:,} more")
            self.skipped_view.setPlainText("\n".join(shown))
            self.skipped_view.setToolTip("Lines that could not be read, with the reason")
            self.skipped_view.show()
        else:
            self.skipped_view.clear()
            self.skipped_view.hide()

    def _summary_lines(self) -> list[str]:
        q, r = self.inputs.queries, self.inputs.qrels
        lines = []
        if q is not None:
            detected = " (detected)" if self.queries_format.currentData() == "auto" else ""
            lines.append(
                f"<b>{plural(len(q), 'query', 'queries')}</b> · "
                f"{format_name(q.format)}{detected} · "
                f"{plural(len(q.skipped), 'line')} skipped"
            )
        if r is not None:
            detected = " (detected)" if self.qrels_format.currentData() == "auto" else ""
            lines.append(
                f"<b>{plural(r.n_judgements, 'judgement')}</b> for "
                f"{plural(r.n_queries, 'query', 'queries')} · "
                f"{format_name(r.format)}{detected} · "
                f"{plural(len(r.skipped), 'line')} skipped"
            )
        if q is not None and r is not None:
            judged = self.inputs.judged_queries()
            text = f"{judged:,} of the {len(q):,} queries have judgements."
            if judged == 0:
                text = (
                    "<span style='color:#c62828'>None of the queries has judgements: are these "
                    "the files of the same collection?</span>"
                )
            lines.append(text)
        notes = [n for obj in (q, r) if obj is not None for n in obj.notes]
        if notes:
            lines.append(small("<br>".join(escape(n) for n in notes), self))
        if not lines:
            lines.append(
                small(
                    f"Choose a query file and a judgement file ({all_format_names()}; the "
                    "format is detected).",
                    self,
                )
            )
        return lines

    # -- choosing files --------------------------------------------------------------------------

    def _choose_file(self, title: str) -> str:
        start = ""
        for p in self._paths.values():
            if p is not None:
                start = str(p.parent)
        path, _ = QFileDialog.getOpenFileName(self, title, start, "All files (*)")
        return path

    @Slot()
    def _on_queries_button_clicked(self) -> None:
        path = self._choose_file("Choose a query file")
        if path:
            self.set_files(path, None)

    @Slot()
    def _on_qrels_button_clicked(self) -> None:
        path = self._choose_file("Choose a judgement file")
        if path:
            self.set_files(None, path)

    @Slot()
    def _on_queries_format_changed(self, *_args: object) -> None:
        if self._paths["queries"] is not None:
            self.set_files(self._paths["queries"], None)

    @Slot()
    def _on_qrels_format_changed(self, *_args: object) -> None:
        if self._paths["qrels"] is not None:
            self.set_files(None, self._paths["qrels"])

    @Slot()
    def _on_sample_button_clicked(self) -> None:
        if self._companions is not None:
            for combo in (self.queries_format, self.qrels_format):
                combo.blockSignals(True)
                combo.setCurrentIndex(0)
                combo.blockSignals(False)
            self.set_files(self._companions.queries, self._companions.qrels)

"""Analysis options (language, stemmer, stop list, tokenizer) with a live preview of a sentence."""

from __future__ import annotations

from html import escape
from typing import Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QWidget,
)

from bm25desk.engine.analysis.analyzer import (
    LANGUAGES,
    STEMMERS,
    TOKENIZERS,
    AnalysisError,
    Analyzer,
)
from bm25desk.ui.common.colors import PALETTE, highlight_background, muted_text, status_colors

SAMPLE_SENTENCES = {
    "en": "The librarians were classifying 3 thousand documents, and THE indexes weren't ready.",
    "de": "Die Bibliothekare klassifizierten dreitausend Dokumente, aber die Register fehlten.",
    "fr": "Les bibliothécaires classaient trois mille documents, mais les index manquaient.",
    "es": "Los bibliotecarios clasificaban tres mil documentos, pero faltaban los índices.",
    "it": "I bibliotecari classificavano tremila documenti, ma gli indici mancavano.",
    "nl": "De bibliothecarissen classificeerden drieduizend documenten, maar de indexen ontbraken.",
}
CJK_SAMPLE = "吾輩は猫である。東京タワーは１９５８年に完成した。서울은 한국의 수도이다. 學而時習之"
"""The sample shown while the CJK tokenizer is chosen: Japanese, Korean and Chinese."""
_LANGUAGE_NAMES = {code: name.capitalize() for code, name in LANGUAGES.items()}
_TOKENIZER_NAMES = {"cjk": "CJK (Chinese, Japanese, Korean)"}


def _stoplist_languages() -> set[str]:
    from whoosh.lang.stopwords import stoplists

    return set(stoplists)


class AnalysisOptions(QWidget):
    """Choose how text is analysed, and see what a sample sentence becomes.

    Signals
    -------
    changed()
        An option changed (check :meth:`error` before building).
    """

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._stop_file = ""
        self._error = ""
        self.language = QComboBox()
        for code, name in sorted(_LANGUAGE_NAMES.items(), key=lambda kv: kv[1]):
            self.language.addItem(f"{name} ({code})", code)
        self.language.setCurrentIndex(self.language.findData("en"))
        self.stemmer = QComboBox()
        for key, label in STEMMERS.items():
            self.stemmer.addItem(label, key)
        self.stemmer.setCurrentIndex(self.stemmer.findData("porter"))
        self.stemmer.setToolTip("Porter and Lancaster stem English; Snowball follows the language")
        self.stopwords = QComboBox()
        self.stopwords.addItem("None", "none")
        self.stopwords.addItem("The language's stop list", "language")
        self.stopwords.addItem("From a file…", "file")
        self.stopwords.setCurrentIndex(1)
        self.stopwords.setToolTip(
            "Stop lists come from whoosh (14 languages); a file holds one word per line"
        )
        self.tokenizer = QComboBox()
        for key, label in TOKENIZERS.items():
            self.tokenizer.addItem(_TOKENIZER_NAMES.get(key, key.capitalize()), key)
            self.tokenizer.setItemData(self.tokenizer.count() - 1, label, 3)  # ToolTipRole
        self.lowercase = QCheckBox("Lowercase")
        self.lowercase.setChecked(True)
        self.min_length = QSpinBox()
        self.min_length.setRange(1, 20)
        self.min_length.setToolTip("Tokens shorter than this many characters are dropped")
        self.sample = QLineEdit(SAMPLE_SENTENCES["en"])
        self.sample.setToolTip("Type any text to see how it is analysed")
        self.preview = QLabel()
        self.preview.setWordWrap(True)
        self.preview.setMinimumHeight(48)
        self.preview.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.summary = QLabel()
        self.summary.setWordWrap(True)

        case_row = QHBoxLayout()
        case_row.addWidget(self.lowercase)
        case_row.addSpacing(16)
        case_row.addWidget(QLabel("Minimum length"))
        case_row.addWidget(self.min_length)
        case_row.addStretch(1)
        form = QFormLayout(self)
        form.addRow("Language", self.language)
        form.addRow("Stemmer", self.stemmer)
        form.addRow("Stop words", self.stopwords)
        form.addRow("Tokenizer", self.tokenizer)
        form.addRow("", case_row)
        form.addRow("Try a sentence", self.sample)
        form.addRow("Becomes", self.preview)
        form.addRow("", self.summary)

        for combo in (self.language, self.stemmer, self.tokenizer):
            combo.currentIndexChanged.connect(self._on_option_changed)
        self.tokenizer.currentIndexChanged.connect(self._on_tokenizer_changed)
        self.stopwords.activated.connect(self._on_stopwords_activated)
        self.lowercase.toggled.connect(self._on_option_changed)
        self.min_length.valueChanged.connect(self._on_option_changed)
        self.sample.textChanged.connect(self._on_option_changed)
        self.language.currentIndexChanged.connect(self._on_language_changed)
        self._refresh()

    # -- values ----------------------------------------------------------------------------------

    def options(self) -> dict[str, Any]:
        """Return the chosen options as :meth:`Analyzer.create` keyword arguments."""
        language = str(self.language.currentData())
        stop = str(self.stopwords.currentData())
        stopwords = {"none": "none", "language": language, "file": self._stop_file or "none"}[stop]
        return {
            "tokenizer": str(self.tokenizer.currentData()),
            "lowercase": self.lowercase.isChecked(),
            "stopwords": stopwords,
            "stemmer": str(self.stemmer.currentData()),
            "language": language,
            "min_length": self.min_length.value(),
        }

    def set_options(self, options: dict[str, Any]) -> None:
        """Show ``options`` (Analyzer.create keyword arguments)."""
        if "language" in options:
            self.language.setCurrentIndex(max(0, self.language.findData(options["language"])))
        if "stemmer" in options:
            self.stemmer.setCurrentIndex(max(0, self.stemmer.findData(options["stemmer"])))
        if "tokenizer" in options:
            self.tokenizer.setCurrentIndex(max(0, self.tokenizer.findData(options["tokenizer"])))
        if "lowercase" in options:
            self.lowercase.setChecked(bool(options["lowercase"]))
        if "min_length" in options:
            self.min_length.setValue(int(options["min_length"]))
        stop = options.get("stopwords")
        if stop is not None:
            if stop == "none":
                self.stopwords.setCurrentIndex(0)
            elif stop in LANGUAGES:
                self.stopwords.setCurrentIndex(1)
            else:
                self._stop_file = str(stop)
                self.stopwords.setCurrentIndex(2)
        self._refresh()

    def set_stop_file(self, path: str) -> None:
        """Use the stop words in ``path`` (one word per line)."""
        self._stop_file = path
        self.stopwords.setCurrentIndex(2)
        self._refresh()

    def error(self) -> str:
        """Return why the options cannot be used ("" when they can)."""
        return self._error

    def analyzer(self) -> Analyzer:
        """Return the analyser for the chosen options (raises :class:`AnalysisError`)."""
        return Analyzer.create(**self.options())

    # -- preview ---------------------------------------------------------------------------------

    def _refresh(self) -> None:
        pal = self.palette()
        try:
            options = self.options()
            stop = options["stopwords"]
            if stop in LANGUAGES and stop not in _stoplist_languages():
                raise AnalysisError(
                    f"there is no stop list for {_LANGUAGE_NAMES[options['stopwords']]}: "
                    "choose None or a file"
                )
            analyzer = Analyzer.create(**options)
        except AnalysisError as exc:
            self._error = str(exc)
            self.preview.setText(
                f"<span style='color:{status_colors(pal)['bad'].name()}'>"
                f"{escape(self._error[:1].upper() + self._error[1:])}</span>"
            )
            self.summary.setText("")
            self.changed.emit()
            return
        self._error = ""
        chips = []
        muted = muted_text(pal).name()
        for tok in analyzer.analyze(self.sample.text())[:60]:
            if tok.term is None:
                why = "stop word" if tok.status == "stop" else "too short"
                chips.append(
                    f"<span style='color:{muted}' title='{why}'><s>{escape(tok.surface)}</s></span>"
                )
            else:
                bg = highlight_background(QColor(PALETTE[0]), pal, 0.3)
                term = escape(tok.term)
                chips.append(
                    f"<span style='background-color:{bg.name()}'>&nbsp;{term}&nbsp;</span>"
                )
        self.preview.setText(" ".join(chips) if chips else f"<i style='color:{muted}'>nothing</i>")
        self.summary.setText(
            f"<small style='color:{muted}'>{escape(analyzer.describe())}. "
            "Struck-through words are not indexed.</small>"
        )
        self.changed.emit()

    @Slot()
    def _on_option_changed(self) -> None:
        self._refresh()

    @Slot(int)
    def _on_language_changed(self, _index: int) -> None:
        code = str(self.language.currentData())
        current = self.sample.text()
        if current in SAMPLE_SENTENCES.values() and code in SAMPLE_SENTENCES:
            self.sample.setText(SAMPLE_SENTENCES[code])
        if code not in ("en",) and self.stemmer.currentData() in ("porter", "lancaster"):
            self.stemmer.setCurrentIndex(self.stemmer.findData("snowball"))

    @Slot(int)
    def _on_tokenizer_changed(self, _index: int) -> None:
        # A sample left as it was follows the tokenizer: CJK text for the CJK tokenizer.
        current = self.sample.text()
        if current not in (*SAMPLE_SENTENCES.values(), CJK_SAMPLE):
            return
        code = str(self.language.currentData())
        cjk = self.tokenizer.currentData() == "cjk"
        self.sample.setText(
            CJK_SAMPLE if cjk else SAMPLE_SENTENCES.get(code, SAMPLE_SENTENCES["en"])
        )

    @Slot(int)
    def _on_stopwords_activated(self, _index: int) -> None:
        if self.stopwords.currentData() == "file":
            path, _ = QFileDialog.getOpenFileName(
                self, "Stop-word file (one word per line)", "", "Text files (*.txt);;All files (*)"
            )
            if path:
                self._stop_file = path
            elif not self._stop_file:
                self.stopwords.setCurrentIndex(1)
        self._refresh()

"""How the Evaluation view names and formats configurations, values and errors.

The same in every table and chart: one colour per configuration, short labels, four decimals,
numeric query ids in order, small print, and errors as sentences.
"""

from __future__ import annotations

import math
import re

from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import QApplication, QWidget

from bm25desk.engine import Variant, VariantError
from bm25desk.evaluation.evaluate import EvalInputError
from bm25desk.ui.common.colors import PALETTE, muted_text
from bm25desk.ui.common.messages import readable

SIGNIFICANT = 0.05
"""p-values below this are shown in colour."""


def config_color(i: int) -> QColor:
    """Return the colour of configuration ``i`` (the same in the table and the bar chart)."""
    return QColor(PALETTE[i % len(PALETTE)])


def params_text(variant: Variant) -> str:
    """Return ``k1 = 1.2, b = 0.75`` (or ``no parameters``)."""
    specs = type(variant).params()
    if not specs:
        return "no parameters"
    values = variant.values()
    return ", ".join(f"{p.symbol} = {values[p.name]:g}" for p in specs)


def short_label(variant: Variant) -> str:
    """Return the variant's name on two lines, for a narrow column header.

    The label, then the key and the parameters that differ from the defaults
    (``BM25 (Lucene / Elasticsearch)`` / ``[lucene] k1=0.9``): the same name as everywhere, only
    folded.
    """
    changed = [
        f"{p.symbol}={getattr(variant, p.name):g}"
        for p in type(variant).params()
        if getattr(variant, p.name) != p.default
    ]
    return f"{type(variant).label}\n" + " ".join([f"[{variant.key}]", *changed])


def bold_font() -> QFont:
    """Return the application font in bold (best values)."""
    font = QFont(QApplication.font())
    font.setBold(True)
    return font


def qid_key(qid: str) -> str:
    """Return a sort key that orders numeric ids numerically (``2`` before ``10``)."""
    return f"0{int(qid):020d}" if re.fullmatch(r"\d{1,18}", qid) else f"1{qid.lower()}"


def fmt_value(value: float) -> str:
    """Return a metric value with four decimals (— when undefined)."""
    return f"{value:.4f}" if math.isfinite(value) else "—"


def fmt_p(p: float | None) -> str:
    """Return a p-value: four decimals, or scientific below 10⁻⁴ (— when undefined)."""
    if p is None:
        return "—"
    return f"{p:.4f}" if p >= 1e-4 else f"{p:.1e}"


def small(text: str, widget: QWidget) -> str:
    """Return ``text`` (HTML) as small print in the muted text colour of ``widget``."""
    return f"<small style='color:{muted_text(widget.palette()).name()}'>{text}</small>"


def eval_readable(exc: BaseException) -> str:
    """Return a sentence for an evaluation error (the engine's own words when it has them)."""
    if isinstance(exc, EvalInputError | VariantError):
        text = str(exc)
        return text[:1].upper() + text[1:]
    if isinstance(exc, KeyError) and exc.args and isinstance(exc.args[0], str):
        text = exc.args[0]
        return text[:1].upper() + text[1:]
    if isinstance(exc, UnicodeError):
        return f"The file is not text in a known encoding ({exc})."
    return readable(exc)

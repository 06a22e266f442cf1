"""The pieces the BM25 variants share: length normalisation, saturation and formula text.

Each formula is written once, as a template with named slots (``{tf}``, ``{L}``, ``{df}``...).
:func:`fill` puts numbers into the slots for a ledger line, or the symbols themselves for the
formula shown in help and ``bm25desk variants``, so the two texts cannot disagree.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from bm25desk.engine.index.stats import CollectionStats

FloatArray = npt.NDArray[np.float64]

# -- templates -------------------------------------------------------------------------------------

NORM = "(1 − {b} + {b}·{L}/{Lavg})"
"""The length normaliser: 1 for a document of average length, larger for longer ones."""

SATURATION = "{tf}·({k1}+1)/({tf} + {k1}·{norm})"
"""BM25's tf saturation ``tf·(k1+1)/(tf + K)`` with ``K = k1·norm``."""

NORMALISED_TF = "c = {tf}/{norm}"
"""Lv & Zhai's length-normalised term frequency ``c``."""

RSJ_IDF = "ln(({N} − {df} + 0.5)/({df} + 0.5))"
"""The Robertson/Sparck Jones weight without relevance information (negative when df > N/2)."""

SYMBOLS: Mapping[str, str] = {
    "N": "N",
    "df": "df",
    "tf": "tf",
    "L": "L",
    "Lavg": "Lavg",
    "k1": "k1",
    "b": "b",
    "delta": "δ",
    "epsilon": "ε",
    "c": "c",
    "tfp": "tf'",
}
"""What each slot reads as in a formula without numbers."""


def fmt(x: float) -> str:
    """Format a number for formulas: short, exact for integers."""
    if float(x).is_integer() and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.6g}"


def fill(template: str, values: Mapping[str, str]) -> str:
    """Return ``template`` with its slots filled; ``{norm}`` is the normaliser, filled alike."""
    if "{norm}" in template:
        return template.format(norm=NORM.format(**values), **values)
    return template.format(**values)


def symbolic(template: str) -> str:
    """Return ``template`` as a formula in symbols (``tf·(k1+1)/…``)."""
    return fill(template, SYMBOLS)


# -- numbers -----------------------------------------------------------------------------------


def length_norm(dl: FloatArray, b: float, stats: CollectionStats) -> FloatArray:
    """Return the length normaliser ``1 − b + b·L/Lavg``."""
    avgdl = stats.avgdl if stats.avgdl > 0 else 1.0
    return 1.0 - b + b * dl / avgdl


def saturation(
    tf: FloatArray, dl: FloatArray, k1: float, b: float, stats: CollectionStats
) -> FloatArray:
    """Return ``tf·(k1+1)/(tf + K)`` with ``K = k1·(1 − b + b·L/Lavg)``."""
    return tf * (k1 + 1.0) / (tf + k1 * length_norm(dl, b, stats))


def normalised_tf(tf: FloatArray, dl: FloatArray, b: float, stats: CollectionStats) -> FloatArray:
    """Return Lv & Zhai's length-normalised tf ``c = tf/(1 − b + b·L/Lavg)``."""
    return tf / length_norm(dl, b, stats)


def normalised_tf_value(tf: float, dl: float, b: float, stats: CollectionStats) -> float:
    """Return :func:`normalised_tf` of one (tf, L), computed exactly as for arrays."""
    return float(normalised_tf(np.array([tf]), np.array([dl]), b, stats)[0])

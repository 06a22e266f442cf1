"""What every ranking function is: the :class:`Variant` contract, its parameters and its weights.

Semantics shared by every variant (``docs/scoring.md``):

- ``score(q, d) = Σ over distinct t in q with tf(t, d) > 0 of qtf(t) · w(t, d)`` and
  ``w(t, d) = idf(t) · tf_part(t, d)``. Only documents that contain a query term are scored (as
  Lv & Zhai define BM25+ and as any postings-based engine computes it); a repeated query term counts
  ``qtf`` times.
- N is the number of live documents, df the number of live documents containing t, tf the count of
  t in d, L the length of d in analysed tokens, Lavg the mean L. Logs are natural unless stated.
- Weights may be negative for the ``bim*`` teaching weights (whose idf is negative for terms in more
  than half the documents), for Okapi where its ε floor multiplies a negative mean idf (small
  collections), and for BM25Adpt where its information gain G¹ is negative; such weights are kept,
  not clipped, and explanations flag them.

A variant is a frozen dataclass: its fields are its parameters (with UI metadata from
:func:`param`), its ``repr`` is the canonical id used in logs, run tags and cache keys, and
``dataclasses.replace(v, k1=1.5)`` changes a parameter. What a person reads is
:meth:`Variant.display_name` (the registry's label with its key).
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from bm25desk.engine.index.stats import CollectionStats, TermStats
from bm25desk.engine.scoring.formulas import (
    FloatArray,
    fill,
    fmt,
    normalised_tf_value,
    symbolic,
)


class VariantError(ValueError):
    """Unknown variant key, unknown parameter, or a parameter outside its range."""


def param(lo: float, hi: float, step: float, help: str, symbol: str) -> dict[str, Any]:
    """Return field metadata: the range, step and help text the UI turns into a control."""
    return {"lo": lo, "hi": hi, "step": step, "help": help, "symbol": symbol}


def k1_field() -> Any:
    """Return the ``k1`` parameter field (tf saturation; 1.2 by default)."""
    return field(default=1.2, metadata=param(0.0, 3.0, 0.05, "term-frequency saturation", "k1"))


def b_field() -> Any:
    """Return the ``b`` parameter field (length normalisation; 0.75 by default)."""
    return field(default=0.75, metadata=param(0.0, 1.0, 0.05, "document-length normalisation", "b"))


def delta_field(default: float, hi: float, help: str) -> Any:
    """Return a ``delta`` parameter field (BM25L, BM25+ and TF₁∘δ∘p×IDF's shift δ)."""
    return field(default=default, metadata=param(0.0, hi, 0.05, help, "δ"))


@dataclass(frozen=True, slots=True)
class ParamSpec:
    """One parameter of a variant, as the UI and CLI show it."""

    name: str
    symbol: str
    default: float
    lo: float
    hi: float
    step: float
    help: str


@dataclass(frozen=True, slots=True)
class TermWeight:
    """How one term is weighted under one variant: its idf and its tf part, ready to apply.

    The score, the explanation and every plot call :meth:`tf_part` and read :attr:`idf` from this
    one object, so they cannot drift apart.
    """

    variant: Variant
    stats: CollectionStats = field(repr=False)
    idf: float
    idf_text: str  # the idf formula with the numbers filled in
    k1: float | None = None  # a per-term k1 (BM25Adpt's k1*), else None
    notes: tuple[str, ...] = ()
    # The df whose idf text is written on first read (see with_text_later), else None.
    _text_df: float | None = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def with_text_later(
        cls, variant: Variant, stats: CollectionStats, idf: float, df: float
    ) -> TermWeight:
        """Return the weighting of a term of document frequency ``df``, its idf text unwritten.

        A search reads ``idf`` only; formatting the text of every query term (a few µs each)
        was most of the cost of weighing a term. It is written, as :meth:`Variant.weigh`
        writes it, the first time ``idf_text`` is read (equality and ``repr`` read it too).
        """
        w = object.__new__(cls)
        # The slots' own setters (what object.__setattr__ finds for each name, looked up once):
        # 0.5 µs instead of 1.2, for each new df of a query (see _SLOT_SETTERS)
        set_variant, set_stats, set_idf, set_k1, set_notes, set_text_df = _SLOT_SETTERS
        set_variant(w, variant)
        set_stats(w, stats)
        set_idf(w, idf)
        set_k1(w, None)
        set_notes(w, ())
        set_text_df(w, df)
        return w

    def __getattr__(self, name: str) -> str:
        """Write the idf text of a weighting made by :meth:`with_text_later` (only then unset)."""
        try:
            df = object.__getattribute__(self, "_text_df")
        except AttributeError:
            df = None
        if name != "idf_text" or df is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        text = f"{self.variant.idf_numbers(df, self.stats)} = {fmt(self.idf)}"
        object.__setattr__(self, "idf_text", text)  # the same text whichever thread writes it
        return text

    def tf_part(self, tf: FloatArray, dl: FloatArray) -> FloatArray:
        """Return the tf part for arrays of term frequencies and document lengths."""
        return self.variant.tf_part(tf, dl, self.stats, self.k1)

    def tf_text(self, tf: float, dl: float) -> str:
        """Return the tf-part formula with this document's numbers filled in."""
        return self.variant.tf_text(tf, dl, self.stats, self.k1)


_SLOT_SETTERS = tuple(
    TermWeight.__dict__[name].__set__
    for name in ("variant", "stats", "idf", "k1", "notes", "_text_df")
)
"""The setters of :class:`TermWeight`'s slots that :meth:`TermWeight.with_text_later` fills (a
frozen dataclass: its own ``__setattr__`` refuses; the slots' descriptors do not)."""


class Variant(ABC):
    """A term-weighting function ``w(t, d) = idf(t) · tf_part(t, d)`` (see the module docstring).

    Subclasses are frozen dataclasses registered in :mod:`bm25desk.engine.scoring.variants`. They
    implement :meth:`idf` and :meth:`tf_part` vectorised over numpy arrays, and give each formula
    once, as a template (:mod:`~bm25desk.engine.scoring.formulas`): ``idf_template`` and
    ``tf_template`` become both the symbolic ``idf_formula``/``tf_formula`` (unless a class states
    those in other words) and the formulas with numbers of a ledger line.
    """

    key: ClassVar[str]
    label: ClassVar[str]
    idf_template: ClassVar[str] = ""
    tf_template: ClassVar[str] = ""
    idf_formula: ClassVar[str]
    tf_formula: ClassVar[str]
    citation: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Derive the symbolic formulas from the templates where a class does not state them."""
        super().__init_subclass__(**kwargs)
        if cls.idf_template and "idf_formula" not in cls.__dict__:
            cls.idf_formula = symbolic(cls.idf_template)
        if cls.tf_template and "tf_formula" not in cls.__dict__:
            cls.tf_formula = symbolic(cls.tf_template)

    @abstractmethod
    def idf(self, df: FloatArray, stats: CollectionStats) -> FloatArray:
        """Return idf for an array of document frequencies."""

    @abstractmethod
    def tf_part(
        self, tf: FloatArray, dl: FloatArray, stats: CollectionStats, k1: float | None = None
    ) -> FloatArray:
        """Return the tf part for arrays of tf and document length (``k1`` overrides per term)."""

    # -- formulas with numbers ---------------------------------------------------------------------

    def idf_numbers(self, df: float, stats: CollectionStats) -> str:
        """Return the idf formula with ``N`` and ``df`` filled in (no result)."""
        return fill(self.idf_template, {"N": fmt(stats.n_docs), "df": fmt(df)})

    def tf_numbers(self, tf: float, dl: float, stats: CollectionStats, k1: float | None) -> str:
        """Return the tf-part formula with the numbers filled in (no result)."""
        params = self.values()
        values = {name: fmt(value) for name, value in params.items()}
        if k1 is not None:
            values["k1"] = fmt(k1)
        values.update(tf=fmt(tf), L=fmt(dl), Lavg=fmt(stats.avgdl))
        if "b" in params:  # the length-normalised tf, as the variant computes it
            c = fmt(normalised_tf_value(tf, dl, params["b"], stats))
            values.update(c=c, tfp=c)
        return fill(self.tf_template, values)

    def weigh(self, term: TermStats, stats: CollectionStats) -> TermWeight:
        """Return how ``term`` is weighted (BM25Adpt overrides this to fit k1 per term)."""
        value = float(self.idf(np.array([term.df], dtype=np.float64), stats)[0])
        return TermWeight.with_text_later(self, stats, value, term.df)

    def weigh_many(self, terms: Sequence[TermStats], stats: CollectionStats) -> list[TermWeight]:
        """Return :meth:`weigh` of each term, with one vectorised idf call for all of them.

        The idf of an element of a float64 array does not depend on the array's other elements,
        so the numbers are :meth:`weigh`'s bit for bit (a test checks every variant); a variant
        that overrides :meth:`weigh` (BM25Adpt fits k1 per term) is asked term by term.
        """
        if type(self).weigh is not Variant.weigh or len(terms) < 2:
            return [self.weigh(t, stats) for t in terms]
        dfs = np.array([t.df for t in terms], dtype=np.float64)
        values = np.asarray(self.idf(dfs, stats), dtype=np.float64).tolist()
        return [
            TermWeight.with_text_later(self, stats, value, t.df)
            for t, value in zip(terms, values, strict=True)
        ]

    def tf_text(self, tf: float, dl: float, stats: CollectionStats, k1: float | None) -> str:
        """Return the tf-part formula with numbers and its value."""
        value = float(self.tf_part(np.array([tf]), np.array([dl]), stats, k1)[0])
        # "formula,  c = definition": the value belongs to the formula, not to the definition.
        main, sep, where = self.tf_numbers(tf, dl, stats, k1).partition(",  ")
        return f"{main} = {fmt(value)}" + (f",  where {where}" if sep else "")

    def plain_words(self, term: TermStats, stats: CollectionStats) -> str:
        """Return one plain sentence about how this term's weight was chosen ("" if nothing to say).

        BM25Adpt says why its k1* is what it is; the fixed-formula variants have nothing to add.
        """
        return ""

    # -- parameters and names ------------------------------------------------------------------

    @classmethod
    def params(cls) -> tuple[ParamSpec, ...]:
        """Return this variant's parameters with their ranges and help."""
        out = []
        for f in dataclasses.fields(cls):  # type: ignore[arg-type]
            meta = f.metadata
            if "lo" not in meta:
                continue  # not a number a form sets (bm25f's other fields, say)
            out.append(
                ParamSpec(
                    f.name,
                    str(meta.get("symbol", f.name)),
                    float(f.default),  # type: ignore[arg-type]
                    float(meta["lo"]),
                    float(meta["hi"]),
                    float(meta["step"]),
                    str(meta["help"]),
                )
            )
        return tuple(out)

    @classmethod
    def extra_param(cls, name: str) -> ParamSpec | None:
        """Return the spec of a parameter beyond :meth:`params` (bm25f's fields), or None."""
        return None

    @classmethod
    def from_values(cls, **values: float) -> Variant:
        """Return the variant with these (checked) parameter values."""
        return cls(**values)

    def values(self) -> dict[str, float]:
        """Return the current parameter values by name."""
        return {p.name: float(getattr(self, p.name)) for p in self.params()}

    @classmethod
    def display_name(cls) -> str:
        """Return the one name people see: the registry's label and key (``BM25L … [bm25l]``)."""
        return f"{cls.label} [{cls.key}]"

    def display_with_params(self) -> str:
        """Return :meth:`display_name` with the parameter values (``… [bm25l] k1=1.2 b=0.75``)."""
        params = " ".join(f"{p.symbol}={fmt(getattr(self, p.name))}" for p in self.params())
        return f"{self.display_name()} {params}".rstrip()

    def describe(self) -> str:
        """Return the formula as one line of plain Unicode maths (tooltips, help)."""
        return f"idf = {self.idf_formula};  tf part = {self.tf_formula}"

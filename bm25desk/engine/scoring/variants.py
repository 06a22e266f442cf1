"""The BM25 family: one small registered class per ranking function (the scoring contract).

Semantics shared by every variant (the scoring contract: docs/scoring.md):

- ``score(q, d) = Σ over distinct t in q with tf(t, d) > 0 of qtf(t) · w(t, d)`` and
  ``w(t, d) = idf(t) · tf_part(t, d)``. Only documents that contain a query term are scored (as
  Lv & Zhai define BM25+ and as any postings-based engine computes it); a repeated query term counts
  ``qtf`` times.
- N is the number of live documents, df the number of live documents containing t, tf the count of
  t in d, L the length of d in analysed tokens, Lavg the mean L. Logs are natural unless stated.
- ``w ≥ 0`` for every variant except the ``bim*`` teaching weights (whose idf is negative for terms
  in more than half the documents), BM25Adpt where its information gain G¹ is negative, and okapi
  where ε times a negative mean idf floors a term's idf (small collections); kept, not clipped.

A variant is a frozen dataclass: its fields are its parameters (with UI metadata from
:func:`param`), its ``repr`` is the canonical name used in logs and run tags, and
``dataclasses.replace(v, k1=1.5)`` changes a parameter. :func:`get_variant` and
:func:`all_variants` read the registry; adding a variant is adding one class.
"""

from __future__ import annotations

import dataclasses
import math
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

import numpy as np
import numpy.typing as npt

from bm25desk.engine.index.stats import CollectionStats, TermStats

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


class VariantError(ValueError):
    """Unknown variant key, unknown parameter, or a parameter outside its range."""


def param(lo: float, hi: float, step: float, help: str, symbol: str) -> dict[str, Any]:
    """Return field metadata: the range, step and help text the UI turns into a control."""
    return {"lo": lo, "hi": hi, "step": step, "help": help, "symbol": symbol}


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

    def tf_part(self, tf: FloatArray, dl: FloatArray) -> FloatArray:
        """Return the tf part for arrays of term frequencies and document lengths."""
        return self.variant.tf_part(tf, dl, self.stats, self.k1)

    def tf_text(self, tf: float, dl: float) -> str:
        """Return the tf-part formula with this document's numbers filled in."""
        return self.variant.tf_text(tf, dl, self.stats, self.k1)


def _g(x: float) -> str:
    """Format a number for formulas: short, exact for integers."""
    if float(x).is_integer() and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.6g}"


class Variant(ABC):
    """A term-weighting function ``w(t, d) = idf(t) · tf_part(t, d)`` (see the module docstring).

    Subclasses are frozen dataclasses decorated with :func:`register`. They implement :meth:`idf`
    and :meth:`tf_part` vectorised over numpy arrays, and give their formulas as text.
    """

    key: ClassVar[str]
    label: ClassVar[str]
    idf_formula: ClassVar[str]
    tf_formula: ClassVar[str]
    citation: ClassVar[str] = ""

    @abstractmethod
    def idf(self, df: FloatArray, stats: CollectionStats) -> FloatArray:
        """Return idf for an array of document frequencies."""

    @abstractmethod
    def tf_part(
        self, tf: FloatArray, dl: FloatArray, stats: CollectionStats, k1: float | None = None
    ) -> FloatArray:
        """Return the tf part for arrays of tf and document length (``k1`` overrides per term)."""

    @abstractmethod
    def idf_numbers(self, df: float, stats: CollectionStats) -> str:
        """Return the idf formula with ``N`` and ``df`` filled in (no result)."""

    @abstractmethod
    def tf_numbers(self, tf: float, dl: float, stats: CollectionStats, k1: float | None) -> str:
        """Return the tf-part formula with the numbers filled in (no result)."""

    # -- shared machinery ------------------------------------------------------------------------

    def weigh(self, term: TermStats, stats: CollectionStats) -> TermWeight:
        """Return how ``term`` is weighted (BM25Adpt overrides this to fit k1 per term)."""
        value = float(self.idf(np.array([term.df], dtype=np.float64), stats)[0])
        return TermWeight(self, stats, value, f"{self.idf_numbers(term.df, stats)} = {_g(value)}")

    def tf_text(self, tf: float, dl: float, stats: CollectionStats, k1: float | None) -> str:
        """Return the tf-part formula with numbers and its value."""
        value = float(self.tf_part(np.array([tf]), np.array([dl]), stats, k1)[0])
        # "formula,  c = definition": the value belongs to the formula, not to the definition.
        main, sep, where = self.tf_numbers(tf, dl, stats, k1).partition(",  ")
        return f"{main} = {_g(value)}" + (f",  where {where}" if sep else "")

    @classmethod
    def params(cls) -> tuple[ParamSpec, ...]:
        """Return this variant's parameters with their ranges and help."""
        out = []
        for f in dataclasses.fields(cls):  # type: ignore[arg-type]
            meta = f.metadata
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

    def values(self) -> dict[str, float]:
        """Return the current parameter values by name."""
        return {p.name: float(getattr(self, p.name)) for p in self.params()}

    def describe(self) -> str:
        """Return the formula as one line of plain Unicode maths (tooltips, help)."""
        return f"idf = {self.idf_formula};  tf part = {self.tf_formula}"


def _norm(dl: FloatArray, b: float, stats: CollectionStats) -> FloatArray:
    """Return the length normaliser ``1 − b + b·L/Lavg``."""
    avgdl = stats.avgdl if stats.avgdl > 0 else 1.0
    return 1.0 - b + b * dl / avgdl


def _norm_text(dl: float, b: float, stats: CollectionStats) -> str:
    return f"(1 − {_g(b)} + {_g(b)}·{_g(dl)}/{_g(stats.avgdl)})"


def _saturation(
    tf: FloatArray, dl: FloatArray, k1: float, b: float, stats: CollectionStats
) -> FloatArray:
    """Return ``tf·(k1+1)/(tf + K)`` with ``K = k1·(1 − b + b·L/Lavg)``."""
    return tf * (k1 + 1.0) / (tf + k1 * _norm(dl, b, stats))


def _saturation_text(tf: float, dl: float, k1: float, b: float, stats: CollectionStats) -> str:
    return f"{_g(tf)}·({_g(k1)}+1)/({_g(tf)} + {_g(k1)}·{_norm_text(dl, b, stats)})"


def _k1() -> Any:
    return field(default=1.2, metadata=param(0.0, 3.0, 0.05, "term-frequency saturation", "k1"))


def _b() -> Any:
    return field(default=0.75, metadata=param(0.0, 1.0, 0.05, "document-length normalisation", "b"))


_REGISTRY: dict[str, type[Variant]] = {}
V = TypeVar("V", bound=type[Variant])


def register(cls: V) -> V:
    """Add a variant class to the registry (keys are unique and stable: they are saved)."""
    if cls.key in _REGISTRY:
        raise ValueError(f"variant key {cls.key!r} is already registered")
    _REGISTRY[cls.key] = cls
    return cls


def variant_classes() -> tuple[type[Variant], ...]:
    """Return every registered variant class, in registration order."""
    return tuple(_REGISTRY.values())


def all_variants() -> tuple[Variant, ...]:
    """Return one instance of every variant with its default parameters."""
    return tuple(cls() for cls in _REGISTRY.values())


def get_variant(key: str, **params: float | None) -> Variant:
    """Build the variant ``key`` with the given parameters (``None`` values mean the default).

    Raises
    ------
    VariantError
        For an unknown key, an unknown parameter or a value outside the parameter's range.
    """
    try:
        cls = _REGISTRY[key]
    except KeyError:
        raise VariantError(
            f"unknown variant {key!r}; choose one of: {', '.join(_REGISTRY)}"
        ) from None
    given = {k: v for k, v in params.items() if v is not None}
    specs = {p.name: p for p in cls.params()}
    for name, value in given.items():
        if name not in specs:
            have = ", ".join(specs) or "none"
            raise VariantError(f"variant {key!r} has no parameter {name!r} (it has: {have})")
        spec = specs[name]
        if not (math.isfinite(value) and spec.lo <= value <= spec.hi):
            raise VariantError(
                f"{name} = {value:g} is out of range for {key!r}: "
                f"choose a value in [{spec.lo:g}, {spec.hi:g}]"
            )
    return cls(**given)


def variant_from_name(text: str) -> Variant:
    """Parse a ``key`` or ``key:k1=0.9,b=0.4`` string (the CLI's and settings' shorthand)."""
    key, _, rest = text.partition(":")
    values: dict[str, float | None] = {}
    for item in filter(None, (s.strip() for s in rest.split(","))):
        name, eq, val = item.partition("=")
        try:
            if not eq:
                raise ValueError
            values[name.strip()] = float(val)
        except ValueError:
            raise VariantError(f"cannot read parameter {item!r}: write name=value") from None
    return get_variant(key.strip(), **values)


def rsj_weight(r: float, big_r: float, df: float, n: float) -> float:
    """Return the Robertson/Sparck Jones relevance weight (natural log).

    ``ln[(r + 0.5)(N − R − df + r + 0.5) / ((df − r + 0.5)(R − r + 0.5))]`` with R documents
    marked relevant, r of them containing the term.
    """
    return math.log(((r + 0.5) * (n - big_r - df + r + 0.5)) / ((df - r + 0.5) * (big_r - r + 0.5)))


def rsj_text(r: float, big_r: float, df: float, n: float) -> str:
    """Return the RSJ weight's formula with the numbers filled in (and its value)."""
    value = rsj_weight(r, big_r, df, n)
    return (
        f"ln[({_g(r)} + 0.5)({_g(n)} − {_g(big_r)} − {_g(df)} + {_g(r)} + 0.5) / "
        f"(({_g(df)} − {_g(r)} + 0.5)({_g(big_r)} − {_g(r)} + 0.5))] = {_g(value)}"
    )


# ---------------------------------------------------------------------------------------------
# The variants
# ---------------------------------------------------------------------------------------------


@register
@dataclass(frozen=True, slots=True)
class TFIDF(Variant):
    """TF-IDF with log-scaled tf: the baseline the BM25 family improves on.

    idf = log10(N/df);  tf part = ln(1 + tf).
    """

    key: ClassVar[str] = "tfidf"
    label: ClassVar[str] = "TF-IDF (log tf · log idf)"
    idf_formula: ClassVar[str] = "log10(N/df)"
    tf_formula: ClassVar[str] = "ln(1 + tf)"

    def idf(self, df: FloatArray, stats: CollectionStats) -> FloatArray:
        """Return log10(N/df)."""
        return np.log10(stats.n_docs / df)

    def tf_part(
        self, tf: FloatArray, dl: FloatArray, stats: CollectionStats, k1: float | None = None
    ) -> FloatArray:
        """Return ln(1 + tf)."""
        return np.log1p(tf)

    def idf_numbers(self, df: float, stats: CollectionStats) -> str:
        """Return the idf formula with numbers."""
        return f"log10({_g(stats.n_docs)}/{_g(df)})"

    def tf_numbers(self, tf: float, dl: float, stats: CollectionStats, k1: float | None) -> str:
        """Return the tf-part formula with numbers."""
        return f"ln(1 + {_g(tf)})"


@register
@dataclass(frozen=True, slots=True)
class Okapi(Variant):
    """Okapi BM25 as in rank_bm25's ``BM25Okapi`` (Robertson et al.; Kamphuis et al. ECIR 2020).

    idf = ln((N − df + 0.5)/(df + 0.5)), replaced where negative by ε · (mean idf over the
    vocabulary); tf part = tf·(k1+1)/(tf + K), K = k1·(1 − b + b·L/Lavg).
    """

    key: ClassVar[str] = "okapi"
    label: ClassVar[str] = "Okapi BM25 (Robertson; rank_bm25)"
    idf_formula: ClassVar[str] = "ln((N − df + 0.5)/(df + 0.5)), or ε·mean idf where negative"
    tf_formula: ClassVar[str] = "tf·(k1+1)/(tf + k1·(1 − b + b·L/Lavg))"
    citation: ClassVar[str] = "Robertson et al., TREC-3 (1994); Kamphuis et al., ECIR 2020"
    k1: float = _k1()
    b: float = _b()
    epsilon: float = field(
        default=0.25, metadata=param(0.0, 1.0, 0.05, "floor for negative idf, × mean idf", "ε")
    )

    @staticmethod
    def _raw(df: FloatArray, n: float) -> FloatArray:
        return np.log((n - df + 0.5) / (df + 0.5))

    def mean_idf(self, stats: CollectionStats) -> float:
        """Return the mean raw idf over the vocabulary (negative ones included, as rank_bm25)."""

        def compute() -> float:
            df = stats.df_all().astype(np.float64)
            return float(self._raw(df, stats.n_docs).mean()) if df.size else 0.0

        return float(stats.cached(("okapi-mean-idf",), compute))

    def idf(self, df: FloatArray, stats: CollectionStats) -> FloatArray:
        """Return the raw idf with negative values replaced by ε·mean idf."""
        raw = self._raw(df, stats.n_docs)
        negative = raw < 0
        if negative.any():
            raw = np.where(negative, self.epsilon * self.mean_idf(stats), raw)
        return raw

    def tf_part(
        self, tf: FloatArray, dl: FloatArray, stats: CollectionStats, k1: float | None = None
    ) -> FloatArray:
        """Return tf·(k1+1)/(tf + K)."""
        return _saturation(tf, dl, self.k1, self.b, stats)

    def idf_numbers(self, df: float, stats: CollectionStats) -> str:
        """Return the idf formula with numbers (and the floor when it applies)."""
        n = stats.n_docs
        text = f"ln(({_g(n)} − {_g(df)} + 0.5)/({_g(df)} + 0.5))"
        raw = float(self._raw(np.array([df]), n)[0])
        if raw < 0:
            mean = self.mean_idf(stats)
            text += f" = {_g(raw)} < 0 → ε·mean idf = {_g(self.epsilon)}·{_g(mean)}"
        return text

    def tf_numbers(self, tf: float, dl: float, stats: CollectionStats, k1: float | None) -> str:
        """Return the tf-part formula with numbers."""
        return _saturation_text(tf, dl, self.k1, self.b, stats)


@register
@dataclass(frozen=True, slots=True)
class Lucene(Variant):
    """BM25 as Lucene ≥ 8 and Elasticsearch compute it (Kamphuis et al., ECIR 2020).

    idf = ln(1 + (N − df + 0.5)/(df + 0.5)), never negative; tf part = tf·(k1+1)/(tf + K).
    The (k1+1) factor is kept so that scores equal Elasticsearch's explained scores.
    """

    key: ClassVar[str] = "lucene"
    label: ClassVar[str] = "BM25 (Lucene / Elasticsearch)"
    idf_formula: ClassVar[str] = "ln(1 + (N − df + 0.5)/(df + 0.5))"
    tf_formula: ClassVar[str] = "tf·(k1+1)/(tf + k1·(1 − b + b·L/Lavg))"
    citation: ClassVar[str] = "Kamphuis et al., ECIR 2020, doi:10.1007/978-3-030-45442-5_4"
    k1: float = _k1()
    b: float = _b()

    def idf(self, df: FloatArray, stats: CollectionStats) -> FloatArray:
        """Return ln(1 + (N − df + 0.5)/(df + 0.5))."""
        return np.log1p((stats.n_docs - df + 0.5) / (df + 0.5))

    def tf_part(
        self, tf: FloatArray, dl: FloatArray, stats: CollectionStats, k1: float | None = None
    ) -> FloatArray:
        """Return tf·(k1+1)/(tf + K)."""
        return _saturation(tf, dl, self.k1, self.b, stats)

    def idf_numbers(self, df: float, stats: CollectionStats) -> str:
        """Return the idf formula with numbers."""
        return f"ln(1 + ({_g(stats.n_docs)} − {_g(df)} + 0.5)/({_g(df)} + 0.5))"

    def tf_numbers(self, tf: float, dl: float, stats: CollectionStats, k1: float | None) -> str:
        """Return the tf-part formula with numbers."""
        return _saturation_text(tf, dl, self.k1, self.b, stats)


@register
@dataclass(frozen=True, slots=True)
class ATIRE(Variant):
    """BM25 as in the ATIRE engine (Trotman et al. 2014; Kamphuis et al., ECIR 2020).

    idf = ln(N/df); tf part = tf·(k1+1)/(tf + K).
    """

    key: ClassVar[str] = "atire"
    label: ClassVar[str] = "BM25 (ATIRE)"
    idf_formula: ClassVar[str] = "ln(N/df)"
    tf_formula: ClassVar[str] = "tf·(k1+1)/(tf + k1·(1 − b + b·L/Lavg))"
    citation: ClassVar[str] = "Trotman et al., ADCS 2014; Kamphuis et al., ECIR 2020"
    k1: float = _k1()
    b: float = _b()

    def idf(self, df: FloatArray, stats: CollectionStats) -> FloatArray:
        """Return ln(N/df)."""
        return np.log(stats.n_docs / df)

    def tf_part(
        self, tf: FloatArray, dl: FloatArray, stats: CollectionStats, k1: float | None = None
    ) -> FloatArray:
        """Return tf·(k1+1)/(tf + K)."""
        return _saturation(tf, dl, self.k1, self.b, stats)

    def idf_numbers(self, df: float, stats: CollectionStats) -> str:
        """Return the idf formula with numbers."""
        return f"ln({_g(stats.n_docs)}/{_g(df)})"

    def tf_numbers(self, tf: float, dl: float, stats: CollectionStats, k1: float | None) -> str:
        """Return the tf-part formula with numbers."""
        return _saturation_text(tf, dl, self.k1, self.b, stats)


def _c(tf: FloatArray, dl: FloatArray, b: float, stats: CollectionStats) -> FloatArray:
    """Return Lv & Zhai's length-normalised tf ``c = tf/(1 − b + b·L/Lavg)``."""
    return tf / _norm(dl, b, stats)


def _c_text(tf: float, dl: float, b: float, stats: CollectionStats) -> str:
    return f"c = {_g(tf)}/{_norm_text(dl, b, stats)}"


@register
@dataclass(frozen=True, slots=True)
class BM25L(Variant):
    """BM25L (Lv & Zhai, SIGIR 2011), as in Kamphuis et al. (ECIR 2020).

    idf = ln((N + 1)/(df + 0.5)); c = tf/(1 − b + b·L/Lavg);
    tf part = (k1 + 1)(c + δ)/(k1 + c + δ).
    """

    key: ClassVar[str] = "bm25l"
    label: ClassVar[str] = "BM25L (Lv & Zhai 2011)"
    idf_formula: ClassVar[str] = "ln((N + 1)/(df + 0.5))"
    tf_formula: ClassVar[str] = "(k1+1)·(c+δ)/(k1 + c + δ),  c = tf/(1 − b + b·L/Lavg)"
    citation: ClassVar[str] = "Lv & Zhai, SIGIR 2011 (short paper); Kamphuis et al., ECIR 2020"
    k1: float = _k1()
    b: float = _b()
    delta: float = field(default=0.5, metadata=param(0.0, 2.0, 0.05, "lower-bound shift δ", "δ"))

    def idf(self, df: FloatArray, stats: CollectionStats) -> FloatArray:
        """Return ln((N + 1)/(df + 0.5))."""
        return np.log((stats.n_docs + 1.0) / (df + 0.5))

    def tf_part(
        self, tf: FloatArray, dl: FloatArray, stats: CollectionStats, k1: float | None = None
    ) -> FloatArray:
        """Return (k1 + 1)(c + δ)/(k1 + c + δ)."""
        c = _c(tf, dl, self.b, stats)
        return (self.k1 + 1.0) * (c + self.delta) / (self.k1 + c + self.delta)

    def idf_numbers(self, df: float, stats: CollectionStats) -> str:
        """Return the idf formula with numbers."""
        return f"ln(({_g(stats.n_docs)} + 1)/({_g(df)} + 0.5))"

    def tf_numbers(self, tf: float, dl: float, stats: CollectionStats, k1: float | None) -> str:
        """Return the tf-part formula with numbers."""
        c = float(_c(np.array([tf]), np.array([dl]), self.b, stats)[0])
        return (
            f"({_g(self.k1)}+1)·({_g(c)}+{_g(self.delta)})/({_g(self.k1)} + {_g(c)} + "
            f"{_g(self.delta)}),  {_c_text(tf, dl, self.b, stats)}"
        )


@register
@dataclass(frozen=True, slots=True)
class BM25Plus(Variant):
    """BM25+ (Lv & Zhai, CIKM 2011), as in Kamphuis et al. (ECIR 2020).

    idf = ln((N + 1)/df); tf part = tf·(k1+1)/(K + tf) + δ (only for documents containing t).
    """

    key: ClassVar[str] = "bm25plus"
    label: ClassVar[str] = "BM25+ (Lv & Zhai 2011)"
    idf_formula: ClassVar[str] = "ln((N + 1)/df)"
    tf_formula: ClassVar[str] = "tf·(k1+1)/(k1·(1 − b + b·L/Lavg) + tf) + δ"
    citation: ClassVar[str] = "Lv & Zhai, CIKM 2011; Kamphuis et al., ECIR 2020"
    k1: float = _k1()
    b: float = _b()
    delta: float = field(default=1.0, metadata=param(0.0, 3.0, 0.05, "lower bound δ", "δ"))

    def idf(self, df: FloatArray, stats: CollectionStats) -> FloatArray:
        """Return ln((N + 1)/df)."""
        return np.log((stats.n_docs + 1.0) / df)

    def tf_part(
        self, tf: FloatArray, dl: FloatArray, stats: CollectionStats, k1: float | None = None
    ) -> FloatArray:
        """Return tf·(k1+1)/(K + tf) + δ."""
        return _saturation(tf, dl, self.k1, self.b, stats) + self.delta

    def idf_numbers(self, df: float, stats: CollectionStats) -> str:
        """Return the idf formula with numbers."""
        return f"ln(({_g(stats.n_docs)} + 1)/{_g(df)})"

    def tf_numbers(self, tf: float, dl: float, stats: CollectionStats, k1: float | None) -> str:
        """Return the tf-part formula with numbers."""
        return f"{_saturation_text(tf, dl, self.k1, self.b, stats)} + {_g(self.delta)}"


_ADPT_DIRECT = 8
"""How many df_r BM25Adpt counts by one comparison pass each before it builds a histogram."""

_ADPT_BINS = 1 << 16
"""The histogram's size cap: counts for r beyond it come from a sorted copy of those postings."""


class _CountAtLeast:
    """``r ↦ df_r = |{c ≥ r − 0.5}|`` for r ≥ 2, exactly, without sorting ``c``.

    The gain curve usually stops after a few r, so the first :data:`_ADPT_DIRECT` counts are one
    comparison pass each; a curve that goes on switches to one histogram of the keys
    ``⌊c + 0.5⌋`` (clipped to its size), whose suffix sums are the counts. The keys count exactly:
    for a double c and an integer 2 ≤ r < 2⁵², fl(c + 0.5) ≥ r ⟺ c ≥ r − 0.5, because r − 0.5 is
    a double and the largest double below it, plus 0.5, is exactly the double r − ulp (so no c
    below the threshold rounds up to r). Every count is cached: the fit asks for some twice.
    """

    __slots__ = ("_big", "_c", "_hist", "_known", "_limit")

    def __init__(self, c: FloatArray, limit: int) -> None:
        self._c = c
        self._limit = limit  # the fit asks for no r beyond limit + 1
        self._known: dict[int, int] = {}
        self._hist: list[int] | None = None
        self._big: FloatArray | None = None

    def __call__(self, r: int) -> int:
        value = self._known.get(r)
        if value is None:
            value = self._known[r] = self._count(r)
        return value

    def _count(self, r: int) -> int:
        if self._hist is None:
            if len(self._known) < _ADPT_DIRECT:
                return int(np.count_nonzero(self._c >= r - 0.5))
            self._hist = self._histogram()
        if r < len(self._hist):
            return self._hist[r]
        if self._big is None:  # c ≥ _ADPT_BINS − 0.5: a few postings at most
            self._big = np.sort(self._c[self._c >= _ADPT_BINS - 0.5])
        return int(self._big.size - np.searchsorted(self._big, r - 0.5, side="left"))

    def _histogram(self) -> list[int]:
        """Return ``h`` with ``h[r] = |{c ≥ r − 0.5}|`` for 2 ≤ r < len(h)."""
        # min(x, top) ≥ r ⟺ x ≥ r for every r ≤ top; the fit asks for r = 2 whatever the limit.
        top = max(min(self._limit + 1, _ADPT_BINS - 1), 2)
        keys = np.add(self._c, 0.5, dtype=np.float64)
        np.clip(keys, 0.0, top, out=keys)  # c < −0.5 counts for no r ≥ 2: any key below 2 will do
        counts = np.bincount(keys.astype(np.intp), minlength=top + 1)
        return [int(n) for n in np.cumsum(counts[::-1])[::-1]]


@dataclass(frozen=True, slots=True)
class AdptFit:
    """BM25Adpt's fit for one term: the information gains G⁰..G^T, G¹ and the fitted k1*."""

    gains: tuple[float, ...]
    df_r: tuple[int, ...]
    g1: float
    k1: float
    unique: bool


def adpt_fit(c: FloatArray, df: int, n_docs: int) -> AdptFit:
    """Fit BM25Adpt's per-term k1* from the term's length-normalised tfs ``c`` (one per posting).

    df₀ = N, df₁ = df, df_r = |{d : c ≥ r − 0.5}| for r > 1;
    G^r = log2((df_{r+1} + 0.5)/(df_r + 1)) − log2((df + 0.5)/(N + 1)), for r = 0..T, stopping at
    the first r where G^r > G^{r+1} (T = r), or where no document reaches count r + 1 (df_{r+1} = 0,
    after which G carries no information). k1* minimises
    Σ_{r=0..T} (G^r/G¹ − (k1+1)·r/(k1+r))² over [0.001, 2.5]; with no unique optimum (T < 2, or
    G¹ = 0, or a flat objective) k1* = 0.001.

    df_r is counted without sorting ``c`` (see :class:`_CountAtLeast`): a fit is a few passes over
    the postings.
    """
    return _adpt_fit(c, df, n_docs)[0]


def _adpt_fit(c: FloatArray, df: int, n_docs: int) -> tuple[AdptFit, int]:
    """Return :func:`adpt_fit`'s fit and df₂ (which the fit always counts, for G¹)."""
    c = np.asarray(c)

    def df_r(r: int) -> int:
        if r == 0:
            return n_docs
        if r == 1:
            return df
        return count(r)  # set below, before any r ≥ 2 is asked for

    base = math.log2((df + 0.5) / (n_docs + 1.0))

    def gain(r: int) -> float:
        return math.log2((df_r(r + 1) + 0.5) / (df_r(r) + 1.0)) - base

    gains = [gain(0)]
    dfs = [df_r(0)]
    r = 0
    limit = int(c.max()) + 2 if c.size else 1
    count = _CountAtLeast(c, limit)
    while r < limit:
        nxt = gain(r + 1)
        if gains[r] > nxt or df_r(r + 1) == 0:
            break
        gains.append(nxt)
        dfs.append(df_r(r + 1))
        r += 1
    g1 = gain(1)
    k1, unique = 0.001, False
    if len(gains) >= 3 and g1 != 0.0:
        ratios = np.array(gains) / g1
        rs = np.arange(len(gains), dtype=np.float64)

        def loss(k: FloatArray) -> FloatArray:
            model = (k[:, None] + 1.0) * rs[None, :] / (k[:, None] + rs[None, :])
            return np.asarray(((ratios[None, :] - model) ** 2).sum(axis=1), dtype=np.float64)

        grid = np.linspace(0.001, 2.5, 2500)
        values = loss(grid)
        best = int(np.argmin(values))
        if values.max() - values.min() > 1e-15:
            # Golden-section refinement between the grid neighbours of the best grid point.
            lo, hi = grid[max(best - 1, 0)], grid[min(best + 1, grid.size - 1)]
            phi = (math.sqrt(5.0) - 1.0) / 2.0
            for _ in range(60):
                a, b = hi - phi * (hi - lo), lo + phi * (hi - lo)
                fa, fb = loss(np.array([a, b]))
                if fa <= fb:
                    hi = b
                else:
                    lo = a
            k1, unique = float((lo + hi) / 2.0), True
    return AdptFit(tuple(gains), tuple(dfs), g1, k1, unique), df_r(2)


@register
@dataclass(frozen=True, slots=True)
class BM25Adpt(Variant):
    """BM25Adpt: BM25 with a per-term k1 fitted to the term's information gain (Lv & Zhai 2011).

    idf = G¹ (information gain from 1 to 2 occurrences, log2); tf part =
    tf·(k1*+1)/(tf + k1*·(1 − b + b·L/Lavg)) with k1* fitted per term (see :func:`adpt_fit`).
    Lv & Zhai, "Adaptive term frequency normalization for BM25", CIKM 2011,
    doi:10.1145/2063576.2063871; as implemented by Kamphuis et al., ECIR 2020.
    """

    key: ClassVar[str] = "bm25adpt"
    label: ClassVar[str] = "BM25Adpt (Lv & Zhai 2011, per-term k1)"
    idf_formula: ClassVar[str] = (
        "G¹ = log2((df₂ + 0.5)/(df + 1)) − log2((df + 0.5)/(N + 1)), "
        "df₂ = |{d : tf/(1 − b + b·L/Lavg) ≥ 1.5}|"
    )
    tf_formula: ClassVar[str] = "tf·(k1*+1)/(tf + k1*·(1 − b + b·L/Lavg)), k1* fitted per term"
    citation: ClassVar[str] = "Lv & Zhai, CIKM 2011, doi:10.1145/2063576.2063871"
    b: float = _b()

    def fit(self, term: TermStats, stats: CollectionStats) -> AdptFit:
        """Return the term's fit (cached per collection, term and b)."""

        def compute() -> AdptFit:
            tf, dl = term.postings()
            fit, df2 = _adpt_fit(_c(tf, dl, self.b, stats), term.df, stats.n_docs)
            stats.cached(("adpt-df2", term.term, self.b), lambda: df2)  # for weigh's text
            return fit

        return stats.cached(("adpt", term.term, self.b), compute)  # type: ignore[no-any-return]

    def weigh(self, term: TermStats, stats: CollectionStats) -> TermWeight:
        """Fit k1* and G¹ for this term from its postings."""
        fit = self.fit(term, stats)
        df2 = fit.df_r[2] if len(fit.df_r) > 2 else self._df2(term, stats)
        text = (
            f"log2(({_g(df2)} + 0.5)/({_g(term.df)} + 1)) − "
            f"log2(({_g(term.df)} + 0.5)/({_g(stats.n_docs)} + 1)) = {_g(fit.g1)}"
        )
        gains = ", ".join(_g(round(g, 4)) for g in fit.gains)
        notes = (
            f"G⁰..G^T = {gains} (T = {len(fit.gains) - 1})",
            f"k1* = {_g(fit.k1)}" + ("" if fit.unique else " (no unique optimum: 0.001)"),
        )
        return TermWeight(self, stats, fit.g1, text, fit.k1, notes)

    def _df2(self, term: TermStats, stats: CollectionStats) -> int:
        """Return df₂ = |{c ≥ 1.5}| (counted by the fit: no second pass over the postings)."""

        def compute() -> int:
            tf, dl = term.postings()
            return int((_c(tf, dl, self.b, stats) >= 1.5).sum())

        return int(stats.cached(("adpt-df2", term.term, self.b), compute))

    def idf(self, df: FloatArray, stats: CollectionStats) -> FloatArray:
        """Not a function of df alone (G¹ needs the postings): NaN, so plots can skip it."""
        return np.full(np.shape(df), np.nan)

    def tf_part(
        self, tf: FloatArray, dl: FloatArray, stats: CollectionStats, k1: float | None = None
    ) -> FloatArray:
        """Return tf·(k1*+1)/(tf + k1*·(1 − b + b·L/Lavg)) (k1* is 1.2 for a term-less curve)."""
        return _saturation(tf, dl, 1.2 if k1 is None else k1, self.b, stats)

    def idf_numbers(self, df: float, stats: CollectionStats) -> str:
        """Return the symbolic idf (numbers need the postings: see :meth:`weigh`)."""
        return self.idf_formula

    def tf_numbers(self, tf: float, dl: float, stats: CollectionStats, k1: float | None) -> str:
        """Return the tf-part formula with numbers."""
        return _saturation_text(tf, dl, 1.2 if k1 is None else k1, self.b, stats)


@register
@dataclass(frozen=True, slots=True)
class TFlDpIDF(Variant):
    """TF_l∘δ∘p×IDF (Rousseau & Vazirgiannis, SIGIR 2013).

    idf = ln((N + 1)/df); tf part = 1 + ln(1 + ln(c + δ)), c = tf/(1 − b + b·L/Lavg); floored at 0.
    """

    key: ClassVar[str] = "tfldp"
    label: ClassVar[str] = "TF₁∘δ∘p×IDF (Rousseau & Vazirgiannis 2013)"
    idf_formula: ClassVar[str] = "ln((N + 1)/df)"
    tf_formula: ClassVar[str] = "max(0, 1 + ln(1 + ln(c + δ))),  c = tf/(1 − b + b·L/Lavg)"
    citation: ClassVar[str] = "Rousseau & Vazirgiannis, SIGIR 2013, doi:10.1145/2484028.2484159"
    b: float = _b()
    delta: float = field(default=1.0, metadata=param(0.0, 2.0, 0.05, "lower-bound shift δ", "δ"))

    def idf(self, df: FloatArray, stats: CollectionStats) -> FloatArray:
        """Return ln((N + 1)/df)."""
        return np.log((stats.n_docs + 1.0) / df)

    def tf_part(
        self, tf: FloatArray, dl: FloatArray, stats: CollectionStats, k1: float | None = None
    ) -> FloatArray:
        """Return max(0, 1 + ln(1 + ln(c + δ)))."""
        c = _c(tf, dl, self.b, stats)
        with np.errstate(divide="ignore", invalid="ignore"):
            inner = np.log(c + self.delta)
            # ln(1 + x) is undefined for x ≤ −1 (tiny c + δ): the floor at 0 applies there.
            value = 1.0 + np.log1p(np.where(inner > -1.0, inner, -1.0 + 1e-300))
        return np.maximum(value, 0.0)

    def idf_numbers(self, df: float, stats: CollectionStats) -> str:
        """Return the idf formula with numbers."""
        return f"ln(({_g(stats.n_docs)} + 1)/{_g(df)})"

    def tf_numbers(self, tf: float, dl: float, stats: CollectionStats, k1: float | None) -> str:
        """Return the tf-part formula with numbers."""
        c = float(_c(np.array([tf]), np.array([dl]), self.b, stats)[0])
        return (
            f"max(0, 1 + ln(1 + ln({_g(c)} + {_g(self.delta)}))),  {_c_text(tf, dl, self.b, stats)}"
        )


def _bim_idf(df: FloatArray, n: float) -> FloatArray:
    return np.log((n - df + 0.5) / (df + 0.5))


def _bim_idf_numbers(df: float, stats: CollectionStats) -> str:
    return f"ln(({_g(stats.n_docs)} − {_g(df)} + 0.5)/({_g(df)} + 0.5))"


@register
@dataclass(frozen=True, slots=True)
class BIM(Variant):
    """Binary independence model: the RSJ weight without relevance information (teaching).

    idf = ln((N − df + 0.5)/(df + 0.5)) (negative when df > N/2, and shown so); tf part = 1.
    """

    key: ClassVar[str] = "bim"
    label: ClassVar[str] = "BIM (binary independence; teaching)"
    idf_formula: ClassVar[str] = "ln((N − df + 0.5)/(df + 0.5))"
    tf_formula: ClassVar[str] = "1 (presence only)"
    citation: ClassVar[str] = "Robertson & Sparck Jones, JASIS 1976"

    def idf(self, df: FloatArray, stats: CollectionStats) -> FloatArray:
        """Return ln((N − df + 0.5)/(df + 0.5))."""
        return _bim_idf(df, stats.n_docs)

    def tf_part(
        self, tf: FloatArray, dl: FloatArray, stats: CollectionStats, k1: float | None = None
    ) -> FloatArray:
        """Return 1 for every posting."""
        return np.ones_like(tf, dtype=np.float64)

    def idf_numbers(self, df: float, stats: CollectionStats) -> str:
        """Return the idf formula with numbers."""
        return _bim_idf_numbers(df, stats)

    def tf_numbers(self, tf: float, dl: float, stats: CollectionStats, k1: float | None) -> str:
        """Return the tf-part formula (a constant)."""
        return "1"


@register
@dataclass(frozen=True, slots=True)
class BIMTF(Variant):
    """BIM with tf saturation: the second step from BIM towards BM25 (teaching).

    idf = ln((N − df + 0.5)/(df + 0.5)); tf part = tf/(k1 + tf).
    """

    key: ClassVar[str] = "bim-tf"
    label: ClassVar[str] = "BIM + tf saturation (teaching)"
    idf_formula: ClassVar[str] = "ln((N − df + 0.5)/(df + 0.5))"
    tf_formula: ClassVar[str] = "tf/(k1 + tf)"
    citation: ClassVar[str] = "Robertson & Zaragoza, FnTIR 2009, § 3.4"
    k1: float = _k1()

    def idf(self, df: FloatArray, stats: CollectionStats) -> FloatArray:
        """Return ln((N − df + 0.5)/(df + 0.5))."""
        return _bim_idf(df, stats.n_docs)

    def tf_part(
        self, tf: FloatArray, dl: FloatArray, stats: CollectionStats, k1: float | None = None
    ) -> FloatArray:
        """Return tf/(k1 + tf)."""
        return tf / (self.k1 + tf)

    def idf_numbers(self, df: float, stats: CollectionStats) -> str:
        """Return the idf formula with numbers."""
        return _bim_idf_numbers(df, stats)

    def tf_numbers(self, tf: float, dl: float, stats: CollectionStats, k1: float | None) -> str:
        """Return the tf-part formula with numbers."""
        return f"{_g(tf)}/({_g(self.k1)} + {_g(tf)})"


@register
@dataclass(frozen=True, slots=True)
class BIMTFLen(Variant):
    """BIM with tf saturation and length normalisation: BM25 without (k1+1) (teaching).

    idf = ln((N − df + 0.5)/(df + 0.5)); tf part = tf'/(k1 + tf'), tf' = tf/(1 − b + b·L/Lavg).
    """

    key: ClassVar[str] = "bim-tf-len"
    label: ClassVar[str] = "BIM + tf saturation + length (teaching)"
    idf_formula: ClassVar[str] = "ln((N − df + 0.5)/(df + 0.5))"
    tf_formula: ClassVar[str] = "tf'/(k1 + tf'),  tf' = tf/(1 − b + b·L/Lavg)"
    citation: ClassVar[str] = "Robertson & Zaragoza, FnTIR 2009, § 3.4"
    k1: float = _k1()
    b: float = _b()

    def idf(self, df: FloatArray, stats: CollectionStats) -> FloatArray:
        """Return ln((N − df + 0.5)/(df + 0.5))."""
        return _bim_idf(df, stats.n_docs)

    def tf_part(
        self, tf: FloatArray, dl: FloatArray, stats: CollectionStats, k1: float | None = None
    ) -> FloatArray:
        """Return tf'/(k1 + tf')."""
        tfp = _c(tf, dl, self.b, stats)
        return tfp / (self.k1 + tfp)

    def idf_numbers(self, df: float, stats: CollectionStats) -> str:
        """Return the idf formula with numbers."""
        return _bim_idf_numbers(df, stats)

    def tf_numbers(self, tf: float, dl: float, stats: CollectionStats, k1: float | None) -> str:
        """Return the tf-part formula with numbers."""
        tfp = float(_c(np.array([tf]), np.array([dl]), self.b, stats)[0])
        norm = _norm_text(dl, self.b, stats)
        return f"{_g(tfp)}/({_g(self.k1)} + {_g(tfp)}),  tf' = {_g(tf)}/{norm}"


def iter_param_grid(grid: dict[str, list[float]]) -> Iterator[dict[str, float]]:
    """Yield every combination of a parameter grid, in row-major order (sweeps)."""
    import itertools

    names = list(grid)
    for combo in itertools.product(*(grid[n] for n in names)):
        yield dict(zip(names, combo, strict=True))

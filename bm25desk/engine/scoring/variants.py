"""The registry of ranking functions: every variant by its stable key, in the order people see them.

:func:`get_variant` and :func:`all_variants` read the registry; the built-in variants are
registered below, explicitly and in display order (adding a variant is writing its class and
registering it). This module is also the one place to import the variant API from: the classes
(defined in :mod:`.family` and :mod:`.adpt`), their base (:mod:`.variant`) and RSJ feedback's
weight (:mod:`.feedback`) are re-exported here.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from typing import TypeVar

from bm25desk.engine.index.stats import CollectionStats, IntArray, TermStats
from bm25desk.engine.scoring.adpt import (
    _ADPT_BINS,
    _ADPT_DIRECT,
    AdptFit,
    BM25Adpt,
    adpt_fit,
    fit_in_plain_words,
)
from bm25desk.engine.scoring.bm25f import BM25F
from bm25desk.engine.scoring.family import (
    ATIRE,
    BIM,
    BIMTF,
    BM25L,
    TFIDF,
    BIMTFLen,
    BM25Plus,
    Lucene,
    Okapi,
    TFlDpIDF,
)
from bm25desk.engine.scoring.feedback import rsj_text, rsj_weight
from bm25desk.engine.scoring.formulas import FloatArray, fmt, normalised_tf
from bm25desk.engine.scoring.variant import (
    ParamSpec,
    TermWeight,
    Variant,
    VariantError,
    param,
)

_g = fmt  # the short name the UI modules import
_c = normalised_tf  # Lv & Zhai's c, under the name the BM25Adpt tests import

__all__ = [
    "ATIRE",
    "BIM",
    "BIMTF",
    "BM25F",
    "BM25L",
    "TFIDF",
    "_ADPT_BINS",
    "_ADPT_DIRECT",
    "AdptFit",
    "BIMTFLen",
    "BM25Adpt",
    "BM25Plus",
    "CollectionStats",
    "FloatArray",
    "IntArray",
    "Lucene",
    "Okapi",
    "ParamSpec",
    "TFlDpIDF",
    "TermStats",
    "TermWeight",
    "Variant",
    "VariantError",
    "_c",
    "_g",
    "adpt_fit",
    "all_variants",
    "fit_in_plain_words",
    "get_variant",
    "iter_param_grid",
    "param",
    "register",
    "rsj_text",
    "rsj_weight",
    "variant_classes",
    "variant_from_name",
]

_REGISTRY: dict[str, type[Variant]] = {}
V = TypeVar("V", bound=type[Variant])


def register(cls: V) -> V:
    """Add a variant class to the registry (keys are unique and stable: they are saved)."""
    if cls.key in _REGISTRY:
        raise ValueError(f"variant key {cls.key!r} is already registered")
    _REGISTRY[cls.key] = cls
    return cls


BUILT_IN: tuple[type[Variant], ...] = (
    *(TFIDF, Okapi, Lucene, ATIRE, BM25L, BM25Plus, BM25Adpt, TFlDpIDF),
    BM25F,
    *(BIM, BIMTF, BIMTFLen),
)
"""The built-in variants, in the order people see them."""

for _cls in BUILT_IN:
    register(_cls)


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
        spec = specs.get(name) or cls.extra_param(name)
        if spec is None:
            have = ", ".join(specs) or "none"
            raise VariantError(f"variant {key!r} has no parameter {name!r} (it has: {have})")
        if not (math.isfinite(value) and spec.lo <= value <= spec.hi):
            raise VariantError(
                f"{name} = {value:g} is out of range for {key!r}: "
                f"choose a value in [{spec.lo:g}, {spec.hi:g}]"
            )
    return cls.from_values(**given)


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


def iter_param_grid(grid: dict[str, list[float]]) -> Iterator[dict[str, float]]:
    """Yield every combination of a parameter grid, in row-major order (sweeps)."""
    names = list(grid)
    for combo in itertools.product(*(grid[n] for n in names)):
        yield dict(zip(names, combo, strict=True))

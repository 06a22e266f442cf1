"""Names, keys and parameters of the variants an experiment compares."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, cast

from bm25desk.engine.scoring.variants import Variant

__all__ = ["variant_key", "variant_name", "variant_params", "with_params"]


def variant_name(variant: Variant) -> str:
    """Return the canonical name of a variant (its ``repr``, e.g. ``Lucene(k1=0.9, b=0.4)``)."""
    return repr(variant)


def variant_key(variant: Variant) -> str:
    """Return the registry key of a variant (``lucene``), or its class name if it has none."""
    key = getattr(variant, "key", None)
    return key if isinstance(key, str) else type(variant).__name__.lower()


def variant_params(variant: Variant) -> dict[str, float]:
    """Return a variant's parameters, ``{field name: value}``, in field order."""
    return {f.name: getattr(variant, f.name) for f in dataclasses.fields(cast(Any, variant))}


def with_params(variant: Variant, params: Mapping[str, float]) -> Variant:
    """Return ``variant`` with some parameters changed (variants are frozen dataclasses)."""
    changed: Variant = dataclasses.replace(cast(Any, variant), **params)
    return changed

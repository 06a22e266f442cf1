"""JSON-ready numbers: NaN and infinities become ``null``, numpy floats plain floats."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["json_float", "json_safe"]


def json_float(value: float | np.floating[Any]) -> float | None:
    """Return ``value`` as a float, or None when it is not finite."""
    v = float(value)
    return v if math.isfinite(v) else None


def json_safe(value: Any) -> Any:
    """Return ``value`` with every float made JSON-ready, through dicts, lists and tuples."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, float | np.floating):
        return json_float(value)
    return value

"""Scoring test fixtures: a hypothesis strategy for any variant with drawn parameters."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import strategies as st

from bm25desk.engine.scoring.variants import Variant, get_variant, variant_classes


@st.composite
def _variant_with_params(draw: st.DrawFn, key: str) -> Variant:
    """Draw the variant ``key`` with its defaults or with parameters drawn from their ranges."""
    cls = {c.key: c for c in variant_classes()}[key]
    if draw(st.booleans()):
        return get_variant(key)
    values = {
        p.name: draw(st.sampled_from([p.lo, p.hi, p.default]) | st.floats(p.lo, p.hi))
        for p in cls.params()
    }
    if key == "bm25f" and values["w_text"] == 0.0:
        # Text weight 0 leaves the title alone, and these corpora have none: bm25f says so in
        # an error (tested in test_bm25f.py), which is not what a sweep of rankings is about.
        values["w_text"] = cls().w_text
    return get_variant(key, **values)


@pytest.fixture(scope="session")
def variants() -> Callable[[str], st.SearchStrategy[Variant]]:
    """Return ``key ↦`` a strategy drawing that variant, with defaults or drawn parameters."""
    return _variant_with_params

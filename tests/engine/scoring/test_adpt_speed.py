"""BM25Adpt's fit counts df_r without sorting the postings, and gives exactly the sorted answer.

``adpt_fit`` used to sort the term's length-normalised tfs ``c`` and binary-search each threshold
r − 0.5; it now counts with comparison passes and, for long gain curves, one histogram of
``⌊c + 0.5⌋``. The old implementation is kept below, verbatim, as the reference: every fit must be
equal to it float for float (gains, df_r, G¹, k1*), on random postings and on every CISI term.
"""

from __future__ import annotations

import math
from typing import Any
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bm25desk.engine.index.reader import Index
from bm25desk.engine.scoring import adpt
from bm25desk.engine.scoring.variants import (
    AdptFit,
    CollectionStats,
    FloatArray,
    TermStats,
    TermWeight,
    _c,
    _g,
    adpt_fit,
    get_variant,
)


# A deliberate oracle: the old fit, kept verbatim as the reference the new counting is tested
# against (``duplicates`` lists it beside adpt.py; it must stay a copy, not share code).
def reference_adpt_fit(c: FloatArray, df: int, n_docs: int) -> AdptFit:
    """``adpt_fit`` as it was before the histogram (sort + searchsorted), copied verbatim."""
    c_sorted = np.sort(c)

    def df_r(r: int) -> int:
        if r == 0:
            return n_docs
        if r == 1:
            return df
        return int(c_sorted.size - np.searchsorted(c_sorted, r - 0.5, side="left"))

    base = math.log2((df + 0.5) / (n_docs + 1.0))

    def gain(r: int) -> float:
        return math.log2((df_r(r + 1) + 0.5) / (df_r(r) + 1.0)) - base

    gains = [gain(0)]
    dfs = [df_r(0)]
    r = 0
    limit = int(c_sorted[-1]) + 2 if c_sorted.size else 1
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
    return AdptFit(tuple(gains), tuple(dfs), g1, k1, unique)


def reference_weigh(
    v: adpt.BM25Adpt, term: TermStats, stats: CollectionStats, fit: AdptFit | None = None
) -> TermWeight:
    """``BM25Adpt.weigh`` as it was (the reference fit; df₂ recounted from the postings)."""
    tf, dl = term.postings()
    c = _c(tf, dl, v.b, stats)
    fit = fit or reference_adpt_fit(c, term.df, stats.n_docs)
    df2 = fit.df_r[2] if len(fit.df_r) > 2 else int((c >= 1.5).sum())
    text = (
        f"log2(({_g(df2)} + 0.5)/({_g(term.df)} + 1)) − "
        f"log2(({_g(term.df)} + 0.5)/({_g(stats.n_docs)} + 1)) = {_g(fit.g1)}"
    )
    gains = ", ".join(_g(round(g, 4)) for g in fit.gains)
    notes = (
        f"G⁰..G^T = {gains} (T = {len(fit.gains) - 1})",
        f"k1* = {_g(fit.k1)}" + ("" if fit.unique else " (no unique optimum: 0.001)"),
    )
    return TermWeight(v, stats, fit.g1, text, fit.k1, notes)


def assert_same_fit(c: FloatArray, df: int, n_docs: int) -> AdptFit:
    """Assert the fit equals the reference exactly (== on floats, not approx); return it."""
    got, want = adpt_fit(c, df, n_docs), reference_adpt_fit(c, df, n_docs)
    assert got == want
    assert [x.hex() for x in got.gains] == [x.hex() for x in want.gains]  # -0.0 vs 0.0 too
    assert (got.g1.hex(), got.k1.hex()) == (want.g1.hex(), want.k1.hex())
    return got


# How df_r is counted: comparison passes only, histogram from the first count, the default mix,
# and a tiny histogram whose overflow goes to the sorted tail. Each must give the same fit.
COUNTING = [(10**9, 1 << 16), (0, 1 << 16), (8, 1 << 16), (0, 3), (2, 5)]


def _patched(direct: int, bins: int) -> Any:
    """Patch how many counts are comparison passes and the histogram's size cap."""
    return mock.patch.multiple(adpt, _ADPT_DIRECT=direct, _ADPT_BINS=bins)


def _near_half(k: int, step: int) -> float:
    """A value at, or a few doubles either side of, the threshold k − 0.5."""
    x = k - 0.5
    for _ in range(abs(step)):
        x = math.nextafter(x, math.inf if step > 0 else -math.inf)
    return x


values = st.one_of(
    st.floats(-10.0, 400.0, allow_nan=False),
    st.integers(0, 60).map(float),
    st.builds(_near_half, st.integers(1, 60), st.integers(-2, 2)),
)


@settings(max_examples=300, deadline=None)
@given(
    cs=st.lists(values, max_size=60),
    extra_df=st.integers(0, 5),
    extra_n=st.integers(0, 10_000),
    counting=st.sampled_from(COUNTING),
)
def test_fit_equals_sorted_reference_on_random_postings(
    cs: list[float], extra_df: int, extra_n: int, counting: tuple[int, int]
) -> None:
    c = np.array(cs, dtype=np.float64)
    df = len(cs) + extra_df
    with _patched(*counting):
        assert_same_fit(c, df, df + extra_n)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    size=st.integers(1, 5000),
    p=st.floats(0.05, 0.95),
    b=st.floats(0.0, 1.0),
    n_factor=st.integers(1, 50),
    counting=st.sampled_from(COUNTING),
)
def test_fit_equals_sorted_reference_on_zipf_like_postings(
    seed: int, size: int, p: float, b: float, n_factor: int, counting: tuple[int, int]
) -> None:
    """Geometric tfs over random lengths: the gain curves run long (the histogram's case)."""
    rng = np.random.default_rng(seed)
    tf = rng.geometric(p, size).astype(np.float64)
    dl = np.maximum(rng.integers(1, 300, size), tf).astype(np.float64)
    stats = CollectionStats(size * n_factor, float(rng.uniform(5, 200)), 1, lambda: tf)
    with _patched(*counting):
        assert_same_fit(_c(tf, dl, b, stats), size, size * n_factor)


def test_long_gain_curves_use_the_histogram_and_agree() -> None:
    """A slow geometric tail makes T exceed the comparison passes: histogram counts, same fit."""
    # |{c ≥ r − 0.5}| shrinks by a rising ratio 0.3, 0.34, …: every G^r is above the last, so the
    # curve runs to the largest count (T = 17). Values jittered within (r − 0.5, r + 0.5).
    at_least = [200_000]
    for r in range(17):
        at_least.append(int(at_least[-1] * (0.3 + 0.04 * r)))
    rng = np.random.default_rng(7)
    ends = zip(at_least, [*at_least[1:], 0], strict=True)
    c = np.concatenate([np.full(n - m, r + 1.0) for r, (n, m) in enumerate(ends)])
    c += rng.uniform(-0.49, 0.49, c.size)
    rng.shuffle(c)
    fit = assert_same_fit(c, c.size, 10_000_000)
    assert len(fit.gains) - 1 > adpt._ADPT_DIRECT  # T: the histogram was needed
    assert fit.unique
    with _patched(0, 8):  # the histogram's overflow (r > 7) from the sorted tail
        assert_same_fit(c, c.size, 10_000_000)


def test_histogram_keys_count_exactly_at_every_threshold() -> None:
    """fl(c + 0.5) ≥ r ⟺ c ≥ r − 0.5 for c at and next to every threshold (the claim in
    ``_CountAtLeast``), for r up to the histogram cap and for a few huge r."""
    r = np.concatenate([np.arange(2, adpt._ADPT_BINS + 2), 2.0 ** np.arange(17, 52)])
    r = r.astype(np.float64)
    t = r - 0.5
    assert ((t + 0.5) == r).all()  # thresholds are exact
    below, above = np.nextafter(t, -np.inf), np.nextafter(t, np.inf)
    assert ((below + 0.5) < r).all()
    assert ((t + 0.5) >= r).all()
    assert ((above + 0.5) >= r).all()
    assert (np.floor(below + 0.5) == r - 1).all()


def test_bad_postings_fail_as_before() -> None:
    """NaN or infinite c raised in the sorted version (int() of the largest c): still so."""
    for bad, exc in ((math.nan, ValueError), (math.inf, OverflowError)):
        c = np.array([1.0, bad, 2.0])
        with pytest.raises(exc):
            reference_adpt_fit(c, 3, 10)
        with pytest.raises(exc):
            adpt_fit(c, 3, 10)


def test_fit_accepts_what_the_reference_accepted() -> None:
    """Integer and float32 arrays, a list, an empty array, and negative values."""
    for c in (
        np.array([1, 2, 2, 3, 7], dtype=np.int64),
        np.array([1.5, 2.49, 2.5, 3.7], dtype=np.float32),
        np.array([], dtype=np.float64),
        np.array([-4.0, -1.5, -0.2]),
        np.array([-1.2]),
        np.array([-7.5, -30.0]),
    ):
        assert_same_fit(c, max(len(c), 1), 40)
        with _patched(0, 4):
            assert_same_fit(c, max(len(c), 1), 40)
    as_list: Any = [1.0, 2.0, 3.0]
    assert adpt_fit(as_list, 3, 10) == reference_adpt_fit(np.array(as_list), 3, 10)


@pytest.mark.slow
def test_every_cisi_term_fits_as_before(cisi_index: Index) -> None:
    """On the real CISI index, for every vocabulary term: the same fit and the same weighting
    (idf text, notes and k1*) as the sorted implementation gave."""
    v = get_variant("bm25adpt")
    assert isinstance(v, adpt.BM25Adpt)
    stats = cisi_index.stats
    fresh = CollectionStats(stats.n_docs, stats.avgdl, stats.n_terms, stats.df_all)
    long_curves = 0
    for term in cisi_index.vocabulary():
        ts = cisi_index.term_stats(term)
        assert ts is not None
        tf, dl = ts.postings()
        want = reference_adpt_fit(_c(tf, dl, v.b, stats), ts.df, stats.n_docs)
        got = v.weigh(ts, fresh)  # fits with the new counting (fresh: nothing cached)
        assert v.fit(ts, fresh) == want
        assert (got.k1, got.idf) == (want.k1, want.g1)
        assert got == reference_weigh(v, ts, fresh, want)
        long_curves += len(want.gains) >= 3
    assert long_curves > 100  # the golden-section path ran on real curves


def test_weigh_reads_the_postings_once() -> None:
    """df₂ for the idf text comes from the fit (T < 2 used to re-read and rescan the postings)."""
    calls = 0
    tf = np.array([1.0, 1.0, 1.0, 2.0])
    dl = np.array([10.0, 12.0, 9.0, 11.0])

    def postings() -> tuple[FloatArray, FloatArray]:
        nonlocal calls
        calls += 1
        return tf, dl

    ts = TermStats("t", 4, 5, postings)
    stats = CollectionStats(6, 10.0, 1, lambda: np.array([4]))
    v = get_variant("bm25adpt")
    assert isinstance(v, adpt.BM25Adpt)
    w = v.weigh(ts, stats)
    assert len(v.fit(ts, stats).gains) < 3  # T < 2: df₂ is not in df_r
    assert calls == 1
    ref_stats = CollectionStats(6, 10.0, 1, lambda: np.array([4]))
    want = reference_weigh(v, ts, ref_stats)
    assert (w.idf, w.idf_text, w.k1, w.notes) == (want.idf, want.idf_text, want.k1, want.notes)

"""The compiled top-k kernel (bm25desk/engine/scoring/topk.py + _topk.c) against search.py's dense
scoring.

Exactness means: the same docnos in the same order and bit-identical float64 scores as ranking
``Searcher.scores`` (``scores[docnos] += (qtf · idf) · tf_part`` over the distinct query terms in
query order) by score descending, docno ascending — for every variant, any parameters, ties,
deleted documents, query constraints, several segments, tf above the table's cap, and k larger
than the number of matches. Small blocks and a small cap (patched) make tiny corpora exercise
block skipping and the overflow path.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bm25desk.engine.index import blocks
from bm25desk.engine.index.reader import Index
from bm25desk.engine.scoring import topk
from bm25desk.engine.scoring.query import parse_terms
from bm25desk.engine.scoring.search import Searcher
from bm25desk.engine.scoring.variants import (
    CollectionStats,
    Variant,
    get_variant,
    variant_classes,
)

KEYS = [c.key for c in variant_classes()]
# bm25f ranks by its own exact numpy path over its fields (scoring/bm25f.py), never by the
# kernel; its rankings are tested against a reference in test_bm25f.py.
KERNEL_KEYS = [k for k in KEYS if k != "bm25f"]
WORDS = ["a", "b", "c", "d", "e", "f", "g", "h"]
SWEEP = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

VariantsOf = Callable[[str], st.SearchStrategy[Variant]]
"""The ``variants`` fixture (conftest): a strategy for a variant with drawn parameters."""

needs_kernel = pytest.mark.skipif(not topk.HAVE_KERNEL, reason="the C kernel is not loaded")


@contextlib.contextmanager
def layout(cap: int, shift: int) -> Iterator[None]:
    """Write segments with another cap and block size (and read old-format ones so)."""
    with (
        mock.patch.object(topk, "CAP", cap),
        mock.patch.object(topk, "SHIFT", shift),
        mock.patch.object(blocks, "CAP", cap),
        mock.patch.object(blocks, "SHIFT", shift),
    ):
        yield


# -- building indexes: several segments, deletions -------------------------------------------------


# -- the reference: search.py's dense scores, ranked by (score desc, docno asc) ------------------


def terms_of(searcher: Searcher, query: Sequence[str], variant: Variant) -> list[topk.TermSpec]:
    parsed = parse_terms(list(query))
    out = []
    for term, qtf in parsed.scored:
        w = searcher.weight(term, variant)
        if w is not None:
            out.append((term, qtf, w))
    return out


def reference(
    searcher: Searcher, query: Sequence[str], variant: Variant, k: int, allowed: object = None
) -> tuple[np.ndarray, np.ndarray, int]:
    scores, ok = searcher.scores(parse_terms(list(query)), variant)
    if allowed is not None:
        ok = ok & allowed
    cand = np.flatnonzero(ok)
    order = np.lexsort((cand, -scores[cand]))[:k]
    return cand[order], scores[cand][order], int(cand.size)


def check(
    index: Index,
    query: Sequence[str],
    variant: Variant,
    k: int,
    allowed: object = None,
    searcher: Searcher | None = None,
) -> None:
    searcher = searcher or Searcher(index)
    ref_d, ref_s, n_ref = reference(searcher, query, variant, k, allowed)
    terms = terms_of(searcher, query, variant)
    parts = topk.tf_parts(index, terms, ref_d)
    for kernel in (True, False):
        got = topk.top_k(index, terms, k, allowed, kernel=kernel)
        d, s = got.docnos, got.scores
        assert d.dtype == np.int64
        assert s.dtype == np.float64
        where = f"{variant!r} {list(query)} k={k} kernel={kernel}"
        assert d.tolist() == ref_d.tolist(), where
        assert s.view(np.int64).tolist() == ref_s.view(np.int64).tolist(), where
        # Per-term tf and tf part of each hit: the same as tf_parts, and they add up bit for bit.
        assert got.tfs.shape == got.parts.shape == (d.size, len(terms))
        for t, (tf, part) in enumerate(parts):
            assert got.tfs[:, t].tolist() == tf.tolist(), where
            assert got.parts[:, t].view(np.int64).tolist() == part.view(np.int64).tolist(), where
    assert topk.count_matches(index, terms, allowed) == n_ref
    check_ranked(index, terms, k, allowed, ref_d, ref_s)
    if topk.HAVE_KERNEL:  # lists this short take the short path: the pruning traversal too
        from bm25desk.engine.scoring import _topk

        limit = _topk.short_limit(-1)
        try:
            got = topk.top_k(index, terms, k, allowed, kernel=True)
            where = f"{variant!r} {list(query)} k={k} pruning"
            assert got.docnos.tolist() == ref_d.tolist(), where
            assert got.scores.view(np.int64).tolist() == ref_s.view(np.int64).tolist(), where
            for t, (tf, part) in enumerate(parts):
                assert got.tfs[:, t].tolist() == tf.tolist(), where
                assert got.parts[:, t].view(np.int64).tolist() == part.view(np.int64).tolist()
            check_ranked(index, terms, k, allowed, ref_d, ref_s)
        finally:
            _topk.short_limit(limit)
    # The exhaustive traversal in C: the same ranking, rows and match count (None: no kernel).
    for rows in (True, False):
        ex = topk.exhaustive_top_k(index, terms, k, allowed, rows=rows)
        if ex is None:
            # only where the pruning kernel declines too (weights or tables it cannot take)
            mask = None if allowed is None else np.asarray(allowed)
            assert not topk.HAVE_KERNEL or topk._top_k_kernel(index, terms, k, mask) is None
            break
        got, n = ex
        where = f"{variant!r} {list(query)} k={k} exhaustive rows={rows}"
        assert (got.docnos.tolist(), n) == (ref_d.tolist(), n_ref), where
        assert got.scores.view(np.int64).tolist() == ref_s.view(np.int64).tolist(), where
        for t, (tf, part) in enumerate(parts if rows else ()):
            assert got.tfs[:, t].tolist() == tf.tolist(), where
            assert got.parts[:, t].view(np.int64).tolist() == part.view(np.int64).tolist(), where
    for i, score in enumerate(ref_s.tolist()):
        total = 0.0
        for (_term, qtf, w), (tf, part) in zip(terms, parts, strict=True):
            if tf[i] > 0:
                total += (qtf * w.idf) * float(part[i])
        assert total == score


def check_ranked(
    index: Index,
    terms: list[topk.TermSpec],
    k: int,
    allowed: object,
    ref_d: np.ndarray,
    ref_s: np.ndarray,
) -> None:
    """The one-call ranking: the reference bit for bit, and None only where it must be."""
    got = topk.ranked(index, terms, k, allowed)
    if got is not None:
        where = f"ranked {[t for t, _, _ in terms]} k={k}"
        assert got[0].tolist() == ref_d.tolist(), where
        assert got[1].view(np.int64).tolist() == ref_s.view(np.int64).tolist(), where
        return
    st_ = topk._state(index)
    if not (topk.HAVE_KERNEL and st_.stored and len(st_.segments) == 1 and terms):
        return
    lists = [st_.postings(t)[0] for t, _, _ in terms]
    w0 = terms[0][2]
    taken = (
        all(w.k1 == w0.k1 and np.isfinite(q * w.idf) for _, q, w in terms)
        and all(p is None or p.n_ovf == 0 for p in lists)
        and any(p is not None for p in lists)
        and st_.table(w0, st_.segments[0].cap).ok
    )
    assert not taken, f"ranked declined {[t for t, _, _ in terms]}"


# -- monotonicity: what makes per-block bounds valid -------------------------------------------


@pytest.mark.parametrize("key", KEYS)
@given(data=st.data())
@settings(max_examples=40, deadline=None)
def test_tf_part_is_monotone_and_non_negative(
    key: str, data: st.DataObject, variants: VariantsOf
) -> None:
    """Every variant's tf part is ≥ 0, non-decreasing in tf and non-increasing in L."""
    variant = data.draw(variants(key))
    avgdl = data.draw(st.floats(1.0, 5000.0))
    stats = CollectionStats(1000, avgdl, 10, lambda: np.array([1, 5, 900], dtype=np.int64))
    k1 = data.draw(st.none() | st.floats(0.001, 2.5)) if key == "bm25adpt" else None
    tf = np.arange(1, 300, dtype=np.float64)
    dl = np.unique(np.r_[np.arange(1, 400), np.geomspace(1, 1e6, 300).round()]).astype(np.float64)
    grid = variant.tf_part(np.repeat(tf, dl.size), np.tile(dl, tf.size), stats, k1).reshape(
        tf.size, dl.size
    )
    assert np.isfinite(grid).all()
    assert (grid >= 0).all()
    # Monotone up to rounding (e.g. k1 = 2e-16 makes tf·(k1+1) round up or not): the kernel's
    # bound table is the monotone envelope whenever a table is not exactly monotone.
    ulps = 8 * np.finfo(np.float64).eps * np.abs(grid)
    assert (np.diff(grid, axis=0) >= -ulps[1:]).all(), "decreases in tf"
    assert (np.diff(grid, axis=1) <= ulps[:, 1:]).all(), "increases in L"


def test_table_entries_equal_the_dense_evaluation(make_index: object) -> None:
    """T[j, tf] is bit-identical to tf_part evaluated on the postings themselves."""
    texts = [" ".join(["a"] * (i % 7 + 1) + ["b"] * (i % 3) + ["c"] * i) for i in range(60)]
    index = make_index(texts)  # type: ignore[operator]
    searcher = Searcher(index)
    dl_values, dl_index = topk.length_index(index.doclen)
    assert (dl_values[dl_index] == index.doclen).all()
    for key in KEYS:
        for term in ("a", "b", "c"):
            w = searcher.weight(term, get_variant(key))
            assert w is not None
            table = topk.build_table(w, dl_values)
            docnos, tfs = index.postings(term)
            dense = w.tf_part(tfs.astype(np.float64), index.doclen[docnos].astype(np.float64))
            small = tfs <= topk.CAP
            got = table.T[dl_index[docnos[small]], tfs[small]]
            assert got.view(np.int64).tolist() == dense[small].view(np.int64).tolist()
            assert table.ok
            assert table.U is table.T  # every registered variant is monotone


def test_non_monotone_tables_get_an_envelope() -> None:
    """A tf part that is not monotone gets a bound table that is (and dominates it)."""

    class Bumpy:
        variant = "bumpy"
        k1 = None

        @staticmethod
        def tf_part(tf: np.ndarray, dl: np.ndarray) -> np.ndarray:
            return np.abs(np.sin(tf * 0.7 + dl * 0.01)) + 0.1

    table = topk.build_table(Bumpy(), np.arange(1.0, 50.0))  # type: ignore[arg-type]
    assert table.ok
    assert table.U is not table.T
    assert (table.U >= table.T).all()
    assert (np.diff(table.U[:, 1:], axis=1) >= 0).all()
    assert (np.diff(table.U, axis=0) <= 0).all()


# -- exactness on random corpora -------------------------------------------------------------------

corpora = st.lists(
    st.lists(st.sampled_from(WORDS[:6]), min_size=0, max_size=12).map(" ".join),
    min_size=1,
    max_size=40,
)
queries = st.lists(st.sampled_from([*WORDS, "zz"]), min_size=1, max_size=6)


@pytest.mark.slow
@needs_kernel
@pytest.mark.parametrize("key", KERNEL_KEYS)
@given(texts=corpora, data=st.data())
@SWEEP
def test_random_corpora_every_variant(
    key: str, texts: list[str], data: st.DataObject, make_index: object, variants: VariantsOf
) -> None:
    cap = data.draw(st.sampled_from([1, 2, 3, 32]))
    shift = data.draw(st.sampled_from([2, 3, 7]))
    with layout(cap, shift):
        index = make_index(texts)  # type: ignore[operator]
        searcher = Searcher(index)
        for _ in range(3):
            query = data.draw(queries)
            variant = data.draw(variants(key))
            k = data.draw(st.integers(1, 12) | st.just(1000))
            check(index, query, variant, k, searcher=searcher)


@pytest.mark.slow
@needs_kernel
@given(
    groups=st.lists(corpora, min_size=1, max_size=3),
    data=st.data(),
)
@SWEEP
def test_segments_deletions_and_constraints(
    groups: list[list[str]], data: st.DataObject, make_segmented: object, variants: VariantsOf
) -> None:
    deleted = [
        data.draw(st.lists(st.integers(0, len(g) - 1), max_size=len(g), unique=True))
        for g in groups
    ]
    if sum(len(d) for d in deleted) == sum(len(g) for g in groups):
        deleted[0] = deleted[0][1:]  # keep one live document
    with layout(data.draw(st.sampled_from([2, 32])), data.draw(st.sampled_from([2, 7]))):
        index = make_segmented(groups, deleted)  # type: ignore[operator]
        searcher = Searcher(index)
        for _ in range(3):
            key = data.draw(st.sampled_from(KERNEL_KEYS))
            variant = data.draw(variants(key))
            query = data.draw(queries)
            k = data.draw(st.integers(1, 8) | st.just(500))
            allowed = None
            if data.draw(st.booleans()):
                allowed = np.array(
                    data.draw(
                        st.lists(st.booleans(), min_size=index.n_slots, max_size=index.n_slots)
                    ),
                    dtype=bool,
                )
            check(index, query, variant, k, allowed, searcher)


@needs_kernel
@pytest.mark.parametrize("key", KERNEL_KEYS)
def test_ties_keep_the_lower_docnos(key: str, make_index: object) -> None:
    """Hundreds of documents with equal scores: the top k are the first in docno order."""
    rng = np.random.default_rng(7)
    base = ["a b c", "a a b", "b c c d", "a d"]
    texts = [base[i] for i in rng.integers(0, len(base), 1500)]
    with layout(2, 2):
        index = make_index(texts)  # type: ignore[operator]
        searcher = Searcher(index)
        for query in (["a"], ["a", "b"], ["d", "c"], ["a", "b", "c", "d"], ["b", "b", "a"]):
            for k in (1, 3, 10, 200, 5000):
                check(index, query, get_variant(key), k, searcher=searcher)


@needs_kernel
@pytest.mark.parametrize(
    "variant",
    [get_variant("lucene", k1=0.0), get_variant("bim"), get_variant("okapi", k1=0.0, epsilon=0.0)],
    ids=repr,
)
def test_massive_ties_are_pruned_exactly(variant: Variant, make_index: object) -> None:
    """With k1 = 0 (or BIM) every document with the same terms has the same score: the kernel
    must still return the lowest docnos, and should not score every tied document."""
    texts = ["a x"] * 3000 + ["a b"] * 5 + ["a"] * 3000 + ["b c"] * 3
    index = make_index(texts)  # type: ignore[operator]
    searcher = Searcher(index)
    for query in (["b", "a"], ["a", "b", "c"], ["x", "a"], ["a"]):
        for k in (1, 10, 100):
            check(index, query, variant, k, searcher=searcher)
    from bm25desk.engine.scoring import _topk

    st = topk._state(index)
    args = []
    for i, (t, qtf, w) in enumerate(terms_of(searcher, ["b", "a"], variant)):
        postings = st.postings(t)[0]
        assert postings is not None
        table = st.table(w)
        args.append((postings.pl, qtf * w.idf, table.T, table.U, None, i))
    *_, stats = _topk.search(args, st.segments[0][3], 10, len(args), stats=True)
    assert stats["scored"] < 200, stats


# -- a larger corpus: many blocks, real skipping -------------------------------------------------


@pytest.fixture(scope="module")
def zipf_index(make_index: object) -> Index:
    """6,000 documents over a Zipfian vocabulary of 1,500 words, with bursts (tf up to ~60)."""
    rng = np.random.default_rng(11)
    vocab = [f"w{i}" for i in range(1500)]
    p = 1.0 / np.arange(1, 1501)
    p /= p.sum()
    texts = []
    for _ in range(6000):
        n = int(rng.integers(1, 120))
        toks = [vocab[i] for i in rng.choice(1500, size=n, p=p)]
        if rng.random() < 0.05:
            toks += [vocab[int(rng.integers(20, 200))]] * int(rng.integers(20, 60))
        texts.append(" ".join(toks))
    return make_index(texts)  # type: ignore[operator, no-any-return]


@pytest.mark.slow
@needs_kernel
@pytest.mark.parametrize("key", KERNEL_KEYS)
def test_zipf_corpus(key: str, zipf_index: Index) -> None:
    rng = np.random.default_rng(hash(key) % 1000)
    searcher = Searcher(zipf_index)
    cls = {c.key: c for c in variant_classes()}[key]
    for i in range(25):
        n = int(rng.integers(1, 7))
        query = [f"w{int(j)}" for j in rng.zipf(1.3, size=n) % 1500]
        if i % 5 == 0:
            variant = get_variant(key)
        else:
            variant = get_variant(
                key, **{p.name: float(rng.uniform(p.lo, p.hi)) for p in cls.params()}
            )
        for k in (1, 10, 100):
            check(zipf_index, query, variant, k, searcher=searcher)


@needs_kernel
def test_relevance_feedback_weights(zipf_index: Index) -> None:
    """RSJ weights (negative for common terms) go through the kernel exactly too."""
    from bm25desk.engine.scoring.search import Feedback

    searcher = Searcher(zipf_index)
    fb = Feedback(frozenset(range(0, 400, 3)))
    for query in (["w0", "w1", "w7"], ["w3", "w40", "w2", "w0"]):
        variant = get_variant("lucene")
        ref_scores, ok = searcher.scores(parse_terms(query), variant, fb)
        cand = np.flatnonzero(ok)
        order = np.lexsort((cand, -ref_scores[cand]))[:10]
        terms = []
        for t, qtf in parse_terms(query).scored:
            w = searcher.weight(t, variant, fb)
            assert w is not None
            terms.append((t, qtf, w))
        d, s, _, _ = topk.top_k(zipf_index, terms, 10)
        assert d.tolist() == cand[order].tolist()
        assert s.tolist() == ref_scores[cand][order].tolist()


# -- CISI ------------------------------------------------------------------------------------------


@pytest.mark.slow
@needs_kernel
@pytest.mark.parametrize("key", KERNEL_KEYS)
def test_cisi_every_variant(
    key: str, cisi_index: Index, cisi_queries: list[tuple[str, str]]
) -> None:
    searcher = Searcher(cisi_index)
    cls = {c.key: c for c in variant_classes()}[key]
    rng = np.random.default_rng(5)
    variants_ = [get_variant(key)] + [
        get_variant(key, **{p.name: float(rng.uniform(p.lo, p.hi)) for p in cls.params()})
        for _ in range(2)
    ]
    for variant in variants_:
        for _qid, text in cisi_queries[:25]:
            query = [t for t, _ in searcher.parse(text, syntax=False).scored]
            for k in (1, 10, 1000):
                check(cisi_index, query, variant, k, searcher=searcher)


# -- API details -----------------------------------------------------------------------------------


def test_empty_and_bad_arguments(make_index: object) -> None:
    index = make_index(["a b", "b c"])  # type: ignore[operator]
    d, s, tfs, parts = topk.top_k(index, [], 10)
    assert tfs.shape == parts.shape == (0, 0)
    assert d.size == 0
    assert s.size == 0
    with pytest.raises(ValueError, match="k must be"):
        topk.top_k(index, [], 0)
    with pytest.raises(ValueError, match="boolean mask"):
        topk.top_k(index, [], 3, np.ones(5, dtype=bool))
    assert topk.count_matches(index, []) == 0


@needs_kernel
def test_kernel_rejects_inconsistent_input() -> None:
    from bm25desk.engine.scoring import _topk

    dli = np.zeros(10, dtype=np.int32)
    with pytest.raises(ValueError, match="ascending"):
        _topk.PostingList(np.array([3, 2], np.int32), np.array([1, 1], np.int32), dli)
    with pytest.raises(ValueError, match="positive"):
        _topk.PostingList(np.array([1, 2], np.int32), np.array([1, 0], np.int32), dli)
    with pytest.raises(TypeError, match="int32"):
        _topk.PostingList(np.array([1, 2], np.int64), np.array([1, 1], np.int32), dli)
    pl = _topk.PostingList(np.array([1, 2], np.int32), np.array([1, 40], np.int32), dli, 32, 7)
    table = np.ones((1, 33))
    with pytest.raises(ValueError, match="overflow"):
        _topk.search([(pl, 1.0, table, table, None, 0)], dli, 5, 1)
    with pytest.raises(ValueError, match="not finite"):
        _topk.search([(pl, float("nan"), table, table, np.ones(1), 0)], dli, 5, 1)
    with pytest.raises(ValueError, match="does not fit"):
        _topk.search([(pl, 1.0, np.ones(10), np.ones(10), np.ones(1), 0)], dli, 5, 1)
    with pytest.raises(ValueError, match="columns"):
        _topk.search([(pl, 1.0, table, table, np.ones(1), 1)], dli, 5, 1)
    with pytest.raises(TypeError, match="PostingList"):
        _topk.search([(pl, 1.0, table, table)], dli, 5, 1)
    d, s, tf, part = _topk.search([(pl, 2.0, table, table, np.array([3.0]), 0)], dli, 5, 1)
    assert np.frombuffer(d, np.int64).tolist() == [2, 1]
    assert np.frombuffer(s, np.float64).tolist() == [6.0, 2.0]
    assert np.frombuffer(tf, np.int32).tolist() == [40, 1]
    assert np.frombuffer(part, np.float64).tolist() == [3.0, 1.0]


@needs_kernel
def test_non_finite_weights_fall_back_to_numpy(make_index: object) -> None:
    """A weight the kernel cannot bound (NaN/inf idf) is ranked by the dense path instead."""
    import dataclasses

    index = make_index(["a b", "b c", "a a"])  # type: ignore[operator]
    searcher = Searcher(index)
    w = searcher.weight("a", get_variant("lucene"))
    assert w is not None
    bad = dataclasses.replace(w, idf=float("inf"))
    d, s, _, _ = topk.top_k(index, [("a", 1, bad)], 5)
    d2, s2, _, _ = topk.top_k(index, [("a", 1, bad)], 5, kernel=False)
    assert d.tolist() == d2.tolist()
    assert s.tolist() == s2.tolist()

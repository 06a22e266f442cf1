"""BM25F's compiled ranking against its numpy ranking: the same hits, scores bit for bit.

Random corpora (a skewed vocabulary, so that some lists span several blocks, and some tfs above
the kernel's table cap) with titles and a third field, several segments with deletions; five
field configurations; allowed masks; k from 1 to 1000. The numpy path itself is checked against
a loop reference in test_bm25f.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from bm25desk.engine.index.arrays import IndexCorruptError
from bm25desk.engine.index.reader import Index
from bm25desk.engine.readers.corpus import Document
from bm25desk.engine.scoring import bm25f, bm25f_kernel, topk
from bm25desk.engine.scoring.search import Searcher
from bm25desk.engine.scoring.variants import BM25F, get_variant

needs_kernel = pytest.mark.skipif(not bm25f_kernel.HAVE_KERNEL, reason="the C kernel is not loaded")

WORDS = [f"w{i}" for i in range(40)]
CONFIGS = [
    get_variant("bm25f"),
    get_variant("bm25f", w_title=0.0),
    get_variant("bm25f", w_text=0.0, w_title=3.0, b_title=1.0),
    get_variant("bm25f", k1=0.5, b_text=1.0, w_name=2.5, b_name=0.9),
    get_variant("bm25f", k1=2.0, b_text=0.0, b_title=0.0, w_title=0.7, w_name=0.5, b_name=0.0),
]


def _words(rng: np.random.Generator, n: int) -> str:
    p = 1.0 / np.arange(1, len(WORDS) + 1)  # Zipf-like: w0 is in most documents
    return " ".join(rng.choice(WORDS, size=n, p=p / p.sum()))


def random_index(make_segmented: Any, seed: int, sizes: tuple[int, ...]) -> Index:
    """Build segments of ``sizes`` random documents (titles, a ``name`` field), some deleted."""
    rng = np.random.default_rng(seed)
    n = sum(sizes)
    texts = [_words(rng, int(rng.integers(1, 30))) for _ in range(n)]
    for i in rng.choice(n, size=3, replace=False):
        texts[i] += " w7" * int(rng.integers(33, 80))  # tf above the table's cap (32)
    titles = [_words(rng, int(rng.integers(0, 6))) for _ in range(n)]
    names = [_words(rng, int(rng.integers(1, 4))) if rng.random() < 0.5 else "" for _ in range(n)]

    def document(i: int, text: str) -> Document:
        extra = (("name", names[i]),) if names[i] else ()
        return Document(docid=f"d{i}", text=text, title=titles[i], fields=extra)

    groups, deleted, at = [], [], 0
    for size in sizes:
        groups.append(texts[at : at + size])
        deleted.append(sorted(set(rng.choice(size, size=size // 10, replace=False).tolist())))
        at += size
    index: Index = make_segmented(groups, deleted, document=document)
    return index


def _queries(rng: np.random.Generator, count: int) -> list[str]:
    out = ["w0", "w7 w0", "nosuchword w3", "w1 w1 w2"]  # qtf 2; an unknown term
    for _ in range(count):
        out.append(" ".join(rng.choice([*WORDS, "zzz"], size=int(rng.integers(1, 7)))))
    return out


def _ranked(
    searcher: Searcher, query: str, variant: BM25F, k: int, allowed: Any, kernel: bool
) -> tuple[Any, int]:
    parsed = searcher.parse(query)
    terms = searcher._weighted(parsed, variant, None)
    return bm25f.rank(searcher, variant, terms, k, allowed, True, kernel=kernel)


def _same(a: Any, b: Any) -> None:
    """Assert two hit lists are the same documents with bit-identical scores and details."""
    hits_a, n_a = a
    hits_b, n_b = b
    assert n_a == n_b
    np.testing.assert_array_equal(hits_a.docnos, hits_b.docnos)
    assert hits_a.scores.tobytes() == hits_b.scores.tobytes()
    assert hits_a._next == hits_b._next
    for ha, hb in zip(hits_a, hits_b, strict=True):
        assert [(c.term, c.tf, c.tf_part, c.weight) for c in ha.contributions] == [
            (c.term, c.tf, c.tf_part, c.weight) for c in hb.contributions
        ]


@needs_kernel
@pytest.mark.parametrize("variant", CONFIGS, ids=repr)
def test_kernel_equals_numpy_bit_for_bit(make_segmented: Any, variant: BM25F) -> None:
    index = random_index(make_segmented, 7, (700, 260, 90))
    assert len(index.segments) == 3
    assert index.live is not None
    searcher = Searcher(index)
    rng = np.random.default_rng(11)
    masks = [None, rng.random(index.n_slots) < 0.5, rng.random(index.n_slots) < 0.02]
    for query in _queries(rng, 12):
        for k in (1, 3, 10, 1000):
            for allowed in masks:
                got = _ranked(searcher, query, variant, k, allowed, kernel=True)
                want = _ranked(searcher, query, variant, k, allowed, kernel=False)
                _same(got, want)
    _assert_workspace_clear()


def _assert_workspace_clear() -> None:
    """The kernel leaves the score, seen and mark arrays of the thread's reused scratch zero.

    The layout (bm25f.c): per document of its capacity, acc and ptf (float64), touched and list
    (int32), seen and mark (a byte each); the next query relies on the zeros.
    """
    work = bm25f_kernel._local.work
    cap = work.size // 26
    assert cap >= 1
    assert not work[: 8 * cap].any()
    assert not work[24 * cap : 26 * cap].any()


@needs_kernel
def test_the_kernel_is_what_ranks(make_segmented: Any) -> None:
    index = random_index(make_segmented, 3, (400,))
    searcher = Searcher(index)
    variant = CONFIGS[3]
    parsed = searcher.parse("w0 w5")
    terms = searcher._weighted(parsed, variant, None)
    fields = bm25f.scored_fields(searcher, variant)
    names = [[bm25f._field_term(f, t) for f in fields] for t, _, _ in terms]
    weighted = [(n, qtf * w.idf) for n, (_, qtf, w) in zip(names, terms, strict=True)]
    got = bm25f_kernel.top_k(index, fields, weighted, variant.k1, 10, None)
    assert got is not None
    docnos, scores, matches = got
    dense, matched, _ = bm25f.dense(searcher, variant, terms)
    if index.live is not None:
        matched &= index.live
    assert matches == int(matched.sum())
    assert scores.tobytes() == dense[docnos].tobytes()


@needs_kernel
@pytest.mark.parametrize("variant", CONFIGS, ids=repr)
def test_document_frequencies_match_the_merge(make_segmented: Any, variant: BM25F) -> None:
    index = random_index(make_segmented, 5, (300, 200))
    searcher = Searcher(index)
    fields = bm25f.scored_fields(searcher, variant)
    for term in [*WORDS, "zzz"]:
        docnos, tf, _ = bm25f.term_postings(index, term, fields)
        got = bm25f.term_stats(searcher, term, variant)
        if docnos.size == 0:
            assert got is None
        else:
            assert got is not None
            assert (got.df, got.cf) == (docnos.size, int(tf.sum()))


@needs_kernel
def test_searcher_results_equal_numpy_with_one_segment(make_segmented: Any) -> None:
    index = random_index(make_segmented, 9, (500,))
    searcher = Searcher(index)
    for variant in CONFIGS:
        for query in ("w0 w2 w9", "w7", "w30 w31 w32 zzz"):
            result = searcher.search(query, variant, k=20)
            want = _ranked(searcher, query, variant, 20, None, kernel=False)
            _same((result.hits, result.n_matches), want)


@needs_kernel
def test_damaged_blocks_are_an_error_never_a_crash(make_segmented: Any) -> None:
    index = random_index(make_segmented, 13, (600,))
    searcher = Searcher(index)
    variant = get_variant("bm25f")
    clean = _ranked(searcher, "w0 w1", variant, 10, None, kernel=True)
    seg = index.segments[0]
    arrays = list(seg.kernel_arrays)
    rng = np.random.default_rng(0)
    original = np.array(arrays[0], copy=True)
    errors = 0
    for _ in range(60):
        damaged = original.copy()
        j = int(rng.integers(0, max(damaged.size - 8, 1)))
        damaged[j] ^= np.uint8(1 << int(rng.integers(0, 8)))
        arrays[0] = damaged
        st = topk._state(index)
        with st.lock:
            st.lists.clear()
        bm25f_kernel._lists_of.pop(index, None)  # lists made again, over the damaged blocks
        seg.kernel_arrays = tuple(arrays)
        try:
            hits, _ = _ranked(searcher, "w0 w1", variant, 10, None, kernel=True)
        except IndexCorruptError as exc:
            message = str(exc)
            errors += 1
            assert "rebuild it" in message
        else:
            assert hits.docnos.size == clean[0].docnos.size
        _assert_workspace_clear()
    assert errors > 0


@needs_kernel
def test_any_parameters_give_the_same_bits(make_segmented: Any) -> None:
    """Drawn k1, weights and b (their edges included: k1 0, b 0 and 1, a weight near 0)."""
    index = random_index(make_segmented, 21, (350, 150))
    searcher = Searcher(index)
    rng = np.random.default_rng(5)
    edges = [0.0, 1.0, 1e-300, 20.0]
    for draw in range(25):
        pick = edges if draw % 3 == 0 else [float(x) for x in rng.uniform(0, 20, 4)]
        variant = get_variant(
            "bm25f",
            k1=float(rng.choice([0.0, 3.0, float(rng.uniform(0, 3))])),
            w_text=max(pick[draw % 4], 1e-3),
            b_text=float(rng.choice([0.0, 1.0, float(rng.uniform(0, 1))])),
            w_title=pick[(draw + 1) % 4],
            b_title=float(rng.choice([0.0, 1.0, float(rng.uniform(0, 1))])),
            w_name=pick[(draw + 2) % 4],
            b_name=float(rng.uniform(0, 1)),
        )
        mask = rng.random(index.n_slots) < 0.7 if draw % 2 else None
        for query in _queries(rng, 3):
            got = _ranked(searcher, query, variant, 25, mask, kernel=True)
            _same(got, _ranked(searcher, query, variant, 25, mask, kernel=False))

"""The one-call ranking reads the query's terms itself: ``_topk.ranked_terms``.

:func:`topk.ranked` hands the kernel the query's TermSpecs ``(term, qtf, weighting)`` and the
lexicon's memo (term -> id), and the call does what the Python loop did: the k1 check, the weight
``qtf * idf`` as Python computes it, the finiteness check and the ids (a term not in the
vocabulary left out). These tests hold it to the loop's ``_topk.ranked(tids, qws)`` call byte for
byte, and to :func:`topk.top_k` bit for bit, on random queries; its declines (None) and its
hand-backs to the loop (NotImplemented: a term the memo lacks, a per-term k1, an odd value) are
checked one by one, and so are arguments of the wrong type (an error, never a crash).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Iterator
from typing import Any
from unittest import mock

import numpy as np
import pytest

from bm25desk.engine.index import blocks
from bm25desk.engine.index.reader import Index
from bm25desk.engine.scoring import topk
from bm25desk.engine.scoring.search import Searcher
from bm25desk.engine.scoring.variants import get_variant, variant_classes

needs_kernel = pytest.mark.skipif(not topk.HAVE_KERNEL, reason="the C kernel is not loaded")
pytestmark = needs_kernel

KEYS = [c.key for c in variant_classes() if c.key not in ("bm25f", "bm25adpt")]
WORDS = [f"w{i}" for i in range(50)]


@contextlib.contextmanager
def _layout(cap: int, shift: int) -> Iterator[None]:
    """Blocks of 2**shift postings, tf parts tabled up to cap (larger: overflow postings)."""
    with contextlib.ExitStack() as stack:
        for mod in (topk, blocks):
            stack.enter_context(mock.patch.object(mod, "CAP", cap))
            stack.enter_context(mock.patch.object(mod, "SHIFT", shift))
        yield


@pytest.fixture
def index(make_segmented) -> Index:
    """One segment of 600 documents: "common" in most of them (a negative bim/okapi idf), a
    few with a tf above the cap of 6 (lists with overflow postings), blocks of 4 postings."""
    rng = np.random.default_rng(5)
    texts = []
    for d in range(600):
        n = int(rng.integers(1, 25))
        words = [WORDS[int(i) % len(WORDS)] for i in rng.zipf(1.4, size=n)]
        if d % 5:
            words.append("common")
        if d % 97 == 0:
            words += ["heavy"] * 9
        texts.append(" ".join(words))
    texts += ["w1 w1 w2"] * 20  # ties
    with _layout(6, 2):
        got: Index = make_segmented([texts], [[3, 17, 400]])
    return got


def _segment(index: Index) -> tuple[Any, Any]:
    st = topk._state(index)
    assert st.stored
    assert len(st.segments) == 1
    return st, st.segments[0]


def _terms(index: Index, words: list[tuple[str, int]], key: str) -> list[topk.TermSpec]:
    """The TermSpecs of (word, qtf) pairs under variant ``key`` (words without a weighting, not
    in the vocabulary, left out as the searcher leaves them out)."""
    searcher = Searcher(index)
    variant = get_variant(key)
    out = []
    for word, qtf in words:
        w = searcher.weight(word, variant)
        if w is not None:
            out.append((word, qtf, w))
    return out


def _new(index: Index, terms: Any, k: int, allow: Any = None, memo: Any = None) -> Any:
    """``_topk.ranked_terms`` over the index's segment (memo: the lexicon's unless given)."""
    from bm25desk.engine.scoring import _topk

    st, sg = _segment(index)
    table = st.table(terms[0][2], sg.cap)
    assert table.ok
    memo = sg.seg.lexicon._found if memo is None else memo
    mask = None if allow is None else topk._as_mask(allow, index.n_slots)
    return _topk.ranked_terms(
        sg.seg.kernel_arrays, sg.dli, terms, memo, table.kernel, k, mask, sg.deny, sg.cap,
        sg.shift,
    )  # fmt: skip


def _old(index: Index, terms: list[topk.TermSpec], k: int, allow: Any = None) -> Any:
    """The Python loop's ids and weights through ``_topk.ranked`` (None: the loop declines)."""
    from bm25desk.engine.scoring import _topk

    st, sg = _segment(index)
    first = terms[0][2]
    tids, qws = [], []
    for term, qtf, w in terms:
        if w.k1 != first.k1:
            return None
        qw = qtf * w.idf
        if not math.isfinite(qw):
            return None
        tid = sg.seg.lexicon.find(term)
        if tid >= 0:
            tids.append(tid)
            qws.append(qw)
    if not tids:
        return None
    table = st.table(first, sg.cap)
    mask = None if allow is None else topk._as_mask(allow, index.n_slots)
    return _topk.ranked(
        sg.seg.kernel_arrays, sg.dli, tids, qws, table.kernel, k, mask, sg.deny, sg.cap, sg.shift
    )


def _bits(docnos: np.ndarray, scores: np.ndarray) -> tuple[list[int], list[int]]:
    return docnos.tolist(), scores.view(np.int64).tolist()


def _check_against_top_k(index: Index, terms: list[topk.TermSpec], k: int, allow: Any) -> None:
    """topk.ranked() gives top_k's documents and score bits, or declines."""
    got = topk.ranked(index, terms, k, allow)
    if got is not None:
        want = topk.top_k(index, terms, k, allow, kernel=True)
        assert _bits(*got) == _bits(want.docnos, want.scores), terms


def _memoise(index: Index, words: list[str]) -> None:
    _, sg = _segment(index)
    for word in words:
        sg.seg.lexicon.find(word)


@pytest.mark.parametrize("key", KEYS)
def test_random_queries_same_bytes_as_the_tids_call_and_top_k(index: Index, key: str) -> None:
    """Random queries (qtf up to 3, words outside the vocabulary, masks, any k): the call's
    bytes are the loop's call's, its declines (None) the loop's, its ranking top_k's."""
    rng = np.random.default_rng(hash(key) % 2**32)
    pool = [*WORDS, "common", "heavy", "nosuch", "zzz"]
    ranked = declined = 0
    for _ in range(120):
        size = int(rng.integers(1, 6))
        words = [(str(w), int(rng.integers(1, 4))) for w in rng.choice(pool, size, replace=False)]
        terms = _terms(index, words, key)
        if not terms:
            continue
        _memoise(index, [t for t, _, _ in terms])
        k = int(rng.choice([1, 3, 10, 50, 1000]))
        allow = None if rng.random() < 0.5 else rng.random(index.n_slots) < 0.7
        new = _new(index, terms, k, allow)
        assert new is not NotImplemented
        old = _old(index, terms, k, allow)
        assert new == old, words
        ranked += new is not None
        declined += new is None
        _check_against_top_k(index, terms, k, allow)
        if new is not None:
            want = topk.top_k(index, terms, k, allow, kernel=True)
            got = np.frombuffer(new[0], np.int64), np.frombuffer(new[1], np.float64)
            assert _bits(*got) == _bits(want.docnos, want.scores), words
    assert ranked > 50
    assert declined > 0


def test_terms_absent_from_the_memo_are_handed_back(index: Index) -> None:
    """A term the memo lacks: NotImplemented (the loop looks it up, and fills the memo)."""
    _, sg = _segment(index)
    terms = _terms(index, [("w11", 1), ("w7", 2), ("w3", 1)], "lucene")
    sg.seg.lexicon._found.clear()
    sg.seg.lexicon.find("w11")
    assert _new(index, terms, 10) is NotImplemented
    want = topk.top_k(index, terms, 10, kernel=True)
    got = topk.ranked(index, terms, 10)  # the loop, which remembers w7 and w3
    assert got is not None
    assert _bits(*got) == _bits(want.docnos, want.scores)
    assert {"w11", "w7", "w3"} <= set(sg.seg.lexicon._found)
    again = _new(index, terms, 10)
    assert again == _old(index, terms, 10)
    assert _bits(np.frombuffer(again[0], np.int64), np.frombuffer(again[1], np.float64)) == _bits(
        want.docnos, want.scores
    )


def test_terms_outside_the_vocabulary_are_left_out(index: Index) -> None:
    """A memo id < 0 is a term not in the vocabulary: left out; none left: None."""
    base = _terms(index, [("w12", 1), ("w5", 1)], "lucene")
    w = base[0][2]
    _memoise(index, ["w12", "w5", "nosuch", "other"])
    _, sg = _segment(index)
    assert sg.seg.lexicon._found["nosuch"] == -1
    with_oov = [("nosuch", 1, w), base[0], ("other", 2, w), base[1]]
    got = _new(index, with_oov, 20)
    assert got is not None
    assert got == _new(index, base, 20) == _old(index, with_oov, 20)
    assert _new(index, [("nosuch", 1, w), ("other", 1, w)], 20) is None
    assert topk.ranked(index, [("nosuch", 1, w)], 20) is None
    # An id below -1 (a memo of another kind) is left out alike.
    memo = {"w12": -7, "w5": sg.seg.lexicon._found["w5"]}
    assert _new(index, base, 20, memo=memo) == _new(index, base[1:], 20)


def test_qtf_multiplies_the_weight_as_python_does(index: Index) -> None:
    """qtf > 1: qw = qtf * idf, the float Python makes (a qtf of 1 ranks otherwise)."""
    terms1 = _terms(index, [("w4", 1), ("w9", 1)], "bm25plus")
    terms3 = _terms(index, [("w4", 3), ("w9", 1)], "bm25plus")
    _memoise(index, ["w4", "w9"])
    one, three = _new(index, terms1, 50), _new(index, terms3, 50)
    assert three == _old(index, terms3, 50)
    assert one == _old(index, terms1, 50)
    assert one != three
    _check_against_top_k(index, terms3, 50, None)
    # An int too large for a double, a bool, a numpy int: the loop's (which raises or computes).
    w = terms1[0][2]
    for qtf in (10**400, True, np.int64(2)):
        assert _new(index, [("w4", qtf, w)], 5) is NotImplemented
    with pytest.raises(OverflowError):
        topk.ranked(index, [("w4", 10**400, w)], 5)
    got = topk.ranked(index, [("w4", np.int64(2), w)], 5)
    assert got is not None
    assert got[1].tolist() == np.frombuffer(_new(index, [("w4", 2, w)], 5)[1], np.float64).tolist()


def test_weights_not_finite_decline(index: Index) -> None:
    """An idf or a product that is not finite: None, as the loop declines (top_k's numpy)."""
    terms = _terms(index, [("w11", 1), ("w12", 2)], "lucene")
    _memoise(index, ["w11", "w12", "nosuch"])
    (t1, q1, w1), (t2, _q2, w2) = terms
    for idf, qtf in ((math.inf, 1), (-math.inf, 1), (math.nan, 1), (1e308, 2)):
        bad = dataclasses.replace(w2, idf=idf)
        for spec in ([(t1, q1, w1), (t2, qtf, bad)], [(t2, qtf, bad), (t1, q1, w1)]):
            assert _new(index, spec, 10) is None
            assert topk.ranked(index, spec, 10) is None
        # Even for a term not in the vocabulary (the loop checks the weight before the id).
        assert _new(index, [(t1, q1, w1), ("nosuch", qtf, bad)], 10) is None


def test_negative_weights(index: Index) -> None:
    """Negative idfs (bim's for a term in most documents; a made-up one) rank as top_k."""
    _memoise(index, ["common", "w11", "w6"])
    terms = _terms(index, [("common", 1), ("w11", 1), ("w6", 2)], "bim")
    assert terms[0][2].idf < 0
    assert _new(index, terms, 30) == _old(index, terms, 30) is not None
    _check_against_top_k(index, terms, 30, None)
    lucene = _terms(index, [("w11", 1), ("w6", 1)], "lucene")
    neg = [(lucene[0][0], 2, dataclasses.replace(lucene[0][2], idf=-1.25)), lucene[1]]
    assert _new(index, neg, 30) == _old(index, neg, 30) is not None
    _check_against_top_k(index, neg, 30, None)


def test_per_term_k1_is_the_loops(index: Index) -> None:
    """BM25Adpt's weightings carry k1*: handed back; the loop declines terms of different k1*
    and ranks a single term."""
    _memoise(index, ["w11", "w12"])
    terms = _terms(index, [("w11", 1), ("w12", 1)], "bm25adpt")
    assert all(w.k1 is not None for _, _, w in terms)
    assert terms[0][2].k1 != terms[1][2].k1
    # A later term's k1 not None after a first of None (the call's own check): the loop
    # declines (ranked with the first's table, the scores would not be top_k's).
    lucene = _terms(index, [("w11", 1)], "lucene")
    mixed = [lucene[0], terms[1]]
    assert topk.ranked(index, mixed, 10) is None
    _check_against_top_k(index, mixed, 10, None)
    assert _new(index, mixed, 10) is NotImplemented
    assert _new(index, terms, 10) is NotImplemented
    assert topk.ranked(index, terms, 10) is None
    _check_against_top_k(index, terms, 10, None)
    assert _new(index, terms[:1], 10) is NotImplemented
    one = topk.ranked(index, terms[:1], 10)
    assert one is not None
    want = topk.top_k(index, terms[:1], 10, kernel=True)
    assert _bits(*one) == _bits(want.docnos, want.scores)


def test_per_term_k1_random_queries_rank_as_top_k(index: Index) -> None:
    """BM25Adpt's queries through topk.ranked(): top_k's ranking, or a decline."""
    rng = np.random.default_rng(8)
    ranked = 0
    for _ in range(60):
        words = [(str(w), int(rng.integers(1, 3))) for w in rng.choice(WORDS[3:], 3, replace=False)]
        terms = _terms(index, words, "bm25adpt")
        if terms:
            _memoise(index, [t for t, _, _ in terms])
            _check_against_top_k(index, terms, 10, None)
            _check_against_top_k(index, terms[:1], 10, None)
            ranked += topk.ranked(index, terms[:1], 10) is not None
    assert ranked > 10


class _Clearing:
    """A weighting whose k1, when read, empties the list of terms it is in."""

    def __init__(self, terms: list[Any], w: Any) -> None:
        self.terms, self.w, self.idf = terms, w, w.idf

    @property
    def k1(self) -> None:
        self.terms.clear()
        return None


def test_wrong_types_raise_and_never_crash(index: Index) -> None:
    """Arguments of the wrong type: TypeError (an attribute missing: AttributeError)."""
    terms = _terms(index, [("w11", 1), ("w12", 1)], "lucene")
    _memoise(index, ["w11", "w12"])
    w = terms[0][2]
    odd: list[Any] = [5, [("w11", 1)], [["w11", 1, w]], [("w11", 1, w, 0)], [(b"w11", 1, w)], [7]]
    for bad in odd:
        with pytest.raises(TypeError):
            _new(index, [*terms, *bad] if isinstance(bad, list) else bad, 10)
    for memo in ([("w11", 0)], 0, {"w11": 0}.items()):
        with pytest.raises(TypeError):
            _new(index, terms, 10, memo=memo)
    with pytest.raises(AttributeError):
        _new(index, [("w11", 1, object())], 10)
    # An idf or a memo id of another type: the loop's.
    assert _new(index, [("w11", 1, dataclasses.replace(w, idf=np.float64(w.idf)))], 10) is (
        NotImplemented
    )
    assert _new(index, [("w11", 1, w)], 10, memo={"w11": "3"}) is NotImplemented
    assert _new(index, [("w11", 1, w)], 10, memo={"w11": 2**70}) is NotImplemented
    # A weighting that changes the caller's list while it is read: the call's own copy.
    changing: list[Any] = []
    changing += [("w11", 1, w), ("w12", 1, _Clearing(changing, terms[1][2]))]
    got = _new(index, changing, 10)
    assert got == _old(index, terms, 10)
    assert not changing
    # Ids out of range: the set-up's ValueError, as for tids.
    with pytest.raises(ValueError, match="do not fit"):
        _new(index, [("w11", 1, w)], 10, memo={"w11": 10**9})
    # Many terms (the arrays off the stack).
    many = [(f"x{i}", 1, w) for i in range(100)] + terms
    memo = {f"x{i}": -1 for i in range(100)}
    memo.update((t, _segment(index)[1].seg.lexicon.find(t)) for t, _, _ in terms)
    assert _new(index, many, 10, memo=memo) == _old(index, terms, 10)

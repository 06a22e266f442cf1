"""A query's new terms' dfs in one compiled call (``Lexicon.dfs_many``, ``_blocks.hash_dfs``).

``Index.term_dfs`` on an index of one segment with a hash looks its terms up, reads their dfs off
``ptr`` and remembers them (the lexicon's memo, the index's term-id cache) in one call: the same
dfs, ids and memos as looking each term up on its own (``term_df``), and the same read-ahead.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bm25desk.engine.index import blocks
from bm25desk.engine.index.arrays import IndexCorruptError
from bm25desk.engine.index.reader import Index

needs_codec = pytest.mark.skipif(
    blocks._blocks is None, reason="the C kernel is not loaded (the compiled look-up)"
)

TEXTS = [
    "the cat sat on the mat",
    "a dog and a cat",
    "Zürich straße naïve café",
    "東京 タワー",
    "the end",
]
WORDS = ["the", "cat", "mat", "dog", "zürich", "straße", "café", "東京", "nope", "", "\ud800", "a"]


@pytest.fixture(scope="module")
def index(make_index) -> Index:  # type: ignore[no-untyped-def]
    return make_index(TEXTS)


def _fresh(index: Index) -> Index:
    return Index(Path(index.path))


@needs_codec
@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from(WORDS), max_size=6, unique=True), max_size=5))
def test_dfs_many_is_term_df_term_by_term(index: Index, queries: list[list[str]]) -> None:
    fast, slow = _fresh(index), _fresh(index)
    assert fast._lexicon._slots is not None  # (the hash: the one-call path)
    for terms in queries:
        got = fast.term_dfs(terms)
        assert got == [slow.term_df(t) for t in terms]
    assert fast._tid_cache == slow._tid_cache
    assert fast._lexicon.memo == slow._lexicon.memo


@needs_codec
def test_the_new_ids_are_returned_in_order_and_known_terms_are_not_looked_up_again(
    index: Index,
) -> None:
    ix = _fresh(index)
    lex, ptr = ix._lexicon, ix._ptr
    cache: dict[str, int] = {}
    dfs, ids = lex.dfs_many(["cat", "nope", "the", "cat"], ptr, cache)
    assert dfs == [2, 0, 2, 2]
    assert ids == [lex.find("cat"), lex.find("the")]
    assert cache == {"cat": lex.find("cat"), "nope": -1, "the": lex.find("the")}
    # A term the cache knows is read from it (its df from ptr), a new one from the memo first.
    cache["mat"] = lex.find("dog")
    lex.memo["faux"] = lex.find("cat")
    dfs, ids = lex.dfs_many(["mat", "faux"], ptr, cache)
    assert dfs == [1, 2]
    assert ids == [lex.find("cat")]


@needs_codec
def test_a_ptr_that_does_not_fit_the_lexicon_is_damage(index: Index) -> None:
    ix = _fresh(index)
    lex = ix._lexicon
    short = np.asarray(ix._ptr)[:2].copy()
    tid = lex.find("zürich")
    assert tid >= 1  # (past what the short ptr covers)
    with pytest.raises(IndexCorruptError, match="ptr does not fit"):
        lex.dfs_many(["zürich"], short, {})
    with pytest.raises(TypeError):
        lex.dfs_many(["cat", 3], ix._ptr, {})  # type: ignore[list-item]


@needs_codec
def test_term_dfs_asks_for_the_new_terms_blocks_once(
    index: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    ix = _fresh(index)
    asked: list[list[int]] = []
    monkeypatch.setattr(ix.segments[0], "prefetch_many", asked.append)
    ix.term_dfs(["cat", "nope", "dog"])
    ix.term_dfs(["cat", "dog", "mat"])
    lex = ix._lexicon
    assert asked == [[lex.find("cat"), lex.find("dog")], [lex.find("mat")]]


@needs_codec
def test_look_up_remembers_what_term_by_term_look_ups_remember(
    index: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast, slow = _fresh(index), _fresh(index)
    asked: list[object] = []
    monkeypatch.setattr(fast.segments[0], "prefetch_many", asked.append)
    fast.look_up([*WORDS, "cat"])
    for t in WORDS:
        slow.term_df(t)
    assert fast._tid_cache == slow._tid_cache
    assert fast._lexicon.memo == slow._lexicon.memo
    assert asked == []  # (a batch reads every list right after: no read-ahead)

"""A query's bag of words in one compiled pass (``_tokens.bag``, ``Analyzer.memo_bag``).

``parse_bag`` looks each surface word up in the analyser's memo of query tokens and counts the
terms; the compiled pass splits the text as ``re.findall(r"\\w+")`` or ``str.split()`` does and
does both. These tests compare it with the Python it replaces on random texts around the edges of
both splits, with memos holding every word, some or none, and ``parse_bag`` with and without it.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bm25desk.engine.analysis import analyzer as analysis
from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.scoring.query import QueryToken, parse_bag

needs_bag = pytest.mark.skipif(
    analysis._tokens is None, reason="the C kernel is not loaded (the compiled bag of words)"
)

ALPHABET = [*"aZé_9-'.,  \t\n\x00\x1c\x1f\x85\xa0\u2028\u3000ßİıΣσς٣߀€中𝄞\u0301ǅ"]


def _split(text: str, mode: int) -> list[str]:
    return re.findall(r"\w+", text) if mode == 0 else text.split()


def _python_bag(text: str, mode: int, memo: dict[str, QueryToken]) -> object:
    raw = _split(text, mode)
    if any(s not in memo for s in raw):
        return raw
    counts: dict[str, int] = {}
    for s in raw:
        term = memo[s].term
        if term is not None:
            counts[term] = counts.get(term, 0) + 1
    return tuple(memo[s] for s in raw), tuple(counts.items())


def _token(surface: str, salt: int) -> QueryToken:
    """A token whose term is None for some surfaces, shared by others (stems, case folding)."""
    h = hash(surface) % 5
    term = None if (h + salt) % 5 == 0 else surface.lower()[: 1 + (h % 3)]
    return QueryToken(surface, term, "ok" if term else "stop", "optional")


@needs_bag
@settings(max_examples=400, deadline=None)
@given(
    text=st.text(alphabet=ALPHABET, max_size=80),
    mode=st.integers(0, 1),
    keep=st.floats(0.0, 1.0),
    salt=st.integers(0, 4),
)
def test_the_compiled_bag_is_the_python_one(text: str, mode: int, keep: float, salt: int) -> None:
    words = _split(text, mode)
    memo = {s: _token(s, salt) for i, s in enumerate(words) if (i * 0.37) % 1 <= keep}
    got = analysis._tokens.bag(text, mode, memo)
    assert got == _python_bag(text, mode, memo)
    if isinstance(got, tuple):
        assert all(a is b for a, b in zip(got[0], (memo[s] for s in words), strict=True))


@needs_bag
def test_counts_are_in_first_occurrence_order_and_repeat() -> None:
    memo = {w: QueryToken(w, w.lower(), "ok", "optional") for w in ("b", "A", "a", "c")}
    memo["the"] = QueryToken("the", None, "stop", "optional")
    tokens, scored = analysis._tokens.bag("b a A the c b the", 0, memo)
    assert [t.surface for t in tokens] == ["b", "a", "A", "the", "c", "b", "the"]
    assert scored == (("b", 2), ("a", 2), ("c", 1))
    assert analysis._tokens.bag("", 0, memo) == ((), ())
    assert analysis._tokens.bag("b zz a", 0, memo) == ["b", "zz", "a"]  # zz is new


@needs_bag
def test_bad_arguments_raise() -> None:
    bag = analysis._tokens.bag
    with pytest.raises(TypeError):
        bag(b"bytes", 0, {})
    with pytest.raises(TypeError):
        bag("a", 0, [])
    with pytest.raises(ValueError, match="mode"):
        bag("a", 2, {})
    with pytest.raises(TypeError, match="memo values must be tokens"):
        bag("a", 0, {"a": "a"})
    with pytest.raises(TypeError, match="memo values must be tokens"):
        bag("a", 0, {"a": ("a",)})


@pytest.mark.parametrize(
    "analyzer",
    [
        Analyzer(),
        Analyzer(tokenizer="whitespace", lowercase=False),
        Analyzer.create(stopwords="en", stemmer="porter", min_length=2),
    ],
)
def test_parse_bag_is_the_same_with_and_without_the_compiled_pass(
    analyzer: Analyzer, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = ["The cats and the Dogs, the_end 42", "dogs DOGS dogs é ß", "", "!!! ???", "of the"]
    compiled = [parse_bag(t, analyzer) for t in texts]  # new words, then known ones
    again = [parse_bag(t, analyzer) for t in texts]
    monkeypatch.setattr(analysis, "_tokens", None)
    analyzer.surface_memo.clear()
    plain = [parse_bag(t, analyzer) for t in texts]
    assert compiled == again == plain
    assert parse_bag("the cats", analyzer, ("careful",)).warnings == ("careful",)


WORDS = ["The", "the", "AND", "of", "Σίσυφος", "İstanbul", "ǅemal", "a_b", "x", "Ab", "ab"]

ANALYZERS = [
    Analyzer(),
    Analyzer(lowercase=False),
    Analyzer(tokenizer="whitespace"),
    Analyzer.create(stopwords="en", min_length=2),
    Analyzer.create(lowercase=False, stopwords="en", min_length=3),
    Analyzer.create(tokenizer="whitespace", lowercase=False, stopwords="en"),
    Analyzer.create(stopwords="en", stemmer="porter"),  # (a stemmer: new words in Python)
]


@needs_bag
@settings(max_examples=150, deadline=None)
@given(
    texts=st.lists(
        st.lists(st.sampled_from(WORDS) | st.text(alphabet=ALPHABET, max_size=12), max_size=12),
        min_size=1,
        max_size=5,
    ),
    which=st.integers(0, len(ANALYZERS) - 1),
)
def test_new_words_analysed_in_c_are_the_python_tokens(texts: list[list[str]], which: int) -> None:
    """parse_bag with new words analysed in the compiled pass, and all in Python, from empty
    memos over the same run of queries: the same ParsedQuery each time and the same memo."""
    spec = ANALYZERS[which].spec()
    compiled, plain = Analyzer.from_spec(spec), Analyzer.from_spec(spec)
    queries = [" ".join(words) for words in texts]
    got = [parse_bag(q, compiled) for q in queries]
    saved = analysis._tokens
    analysis._tokens = None
    try:
        want = [parse_bag(q, plain) for q in queries]
    finally:
        analysis._tokens = saved
    assert got == want
    assert compiled.surface_memo == plain.surface_memo
    for memo in (compiled.surface_memo, plain.surface_memo):  # (named tuples equal plain ones)
        assert {type(tok) for tok in memo.values()} <= {QueryToken}


@needs_bag
def test_the_memo_stays_within_its_limit_and_bad_fates_raise() -> None:
    memo: dict[str, QueryToken] = {}
    fate = (True, 1, None, 2, QueryToken, "optional")
    tokens, scored = analysis._tokens.bag("a B c a d", 0, memo, fate)
    assert [t.term for t in tokens] == ["a", "b", "c", "a", "d"]
    assert scored == (("a", 2), ("b", 1), ("c", 1), ("d", 1))
    assert list(memo) == ["a", "B"]  # kept while it held fewer than 2
    stop = frozenset({"the"})
    tokens, scored = analysis._tokens.bag("The x", 0, {}, (False, 2, stop, 9, QueryToken, "r"))
    assert tokens == (QueryToken("The", None, "stop", "r"), QueryToken("x", None, "short", "r"))
    assert scored == ()
    bad_fates = [
        (True, 1, None, 2, QueryToken),
        (True, "1", None, 2, QueryToken, "o"),
        (True, 1, ["the"], 2, QueryToken, "o"),
        (True, 1, None, 2, "QueryToken", "o"),
    ]
    for bad in bad_fates:
        with pytest.raises(TypeError, match="fate must be"):
            analysis._tokens.bag("a", 0, {}, bad)


@needs_bag
def test_tokens_are_made_by_any_make_a_named_tuple_class_directly() -> None:
    """QueryToken (a named tuple of four fields) is filled in C, field by field; any other
    make is called, and its tokens are kept as it returns them."""
    (tok,), _ = analysis._tokens.bag("Word", 0, {}, (True, 1, None, 9, QueryToken, "o"))
    assert type(tok) is QueryToken
    assert tok == QueryToken("Word", "word", "ok", "o")
    assert (tok.surface, tok.term, tok.status, tok.role) == ("Word", "word", "ok", "o")
    made: list[tuple[str, ...]] = []

    def make(*fields: str) -> tuple[str, ...]:
        made.append(fields)
        return fields

    class Three(NamedTuple):
        surface: str
        term: str
        status: str

    (tok,), _ = analysis._tokens.bag("Word", 0, {}, (True, 1, None, 9, make, "o"))
    assert made == [("Word", "word", "ok", "o")]
    assert tok == ("Word", "word", "ok", "o")
    with pytest.raises(TypeError):  # (called: a three-field class refuses four)
        analysis._tokens.bag("Word", 0, {}, (True, 1, None, 9, Three, "o"))

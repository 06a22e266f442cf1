"""The bulk-indexing tokenizer (compiled ``_tokens`` or its Python fallback) gives exactly the
ids of the analyser's terms, for every text."""

from __future__ import annotations

from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bm25desk.engine.analysis import analyzer as analysis
from bm25desk.engine.analysis.analyzer import Analyzer, TokenIds
from bm25desk.engine.index.segment import TermIds

_tokens = pytest.importorskip("bm25desk.engine.analysis._tokens")

# Characters around the edges of \w and of str.split(): letters of several scripts, digits of
# other scripts, combining marks, underscore, punctuation, NUL, the ASCII separators that
# str.split() treats as spaces (\x1c-\x1f), no-break and line separators, astral characters.
ALPHABET = [*"aZé_9-'.,  \t\n\x00\x1c\x1f\x85\xa0\u2028\u3000ßİıΣσς٣߀€中𝄞\u0301ǅ"]

ANALYZERS = [
    Analyzer(),
    Analyzer(lowercase=False),
    Analyzer(tokenizer="whitespace", lowercase=False),
    Analyzer.create(stopwords="en", stemmer="porter", min_length=2),
    Analyzer.create(tokenizer="whitespace", stopwords="en"),
]


def python_ids(analyzer: Analyzer, texts: list[str]) -> tuple[list[list[int]], list[str]]:
    vocab = TermIds()
    get = analyzer.token_ids(vocab).__getitem__
    return [list(map(get, analyzer.raw_tokens(t))) for t in texts], list(vocab)


def compiled_ids(analyzer: Analyzer, texts: list[str]) -> tuple[list[list[int]], list[str]]:
    vocab = TermIds()
    ids_of = analyzer.id_tokenizer(vocab)
    return [ids_of(t).tolist() for t in texts], list(vocab)


@settings(max_examples=300, deadline=None)
@given(
    texts=st.lists(st.text(alphabet=ALPHABET, max_size=60), min_size=1, max_size=6),
    which=st.integers(0, len(ANALYZERS) - 1),
)
def test_compiled_ids_equal_python_ids(texts: list[str], which: int) -> None:
    analyzer = ANALYZERS[which]
    assert compiled_ids(analyzer, texts) == python_ids(analyzer, texts)
    # and the kept ids are the analyser's own terms, in order
    ids, vocab = compiled_ids(analyzer, texts)
    for text, row in zip(texts, ids, strict=True):
        assert [vocab[i] for i in row if i >= 0] == analyzer.terms(text)


def test_table_grows_and_stops_remembering_at_its_limit() -> None:
    """Many distinct tokens (the table doubles several times), then a limit of 3: tokens past
    it are analysed each time and still get their ids."""
    words = [f"w{i}x" for i in range(100_000)]
    text = " ".join(words + words[::-1])
    vocab = TermIds()
    table = _tokens.TokenTable(TokenIds(Analyzer(), vocab).lookup, 0)
    ids = array("i")
    ids.frombytes(table.ids(text))
    assert ids.tolist() == list(range(100_000)) + list(range(99_999, -1, -1))
    assert table.size() == 100_000

    calls: list[str] = []

    def lookup(token: str) -> int:
        calls.append(token)
        return len(token)

    small = _tokens.TokenTable(lookup, 1, 3)
    ids = array("i")
    ids.frombytes(small.ids("a bb ccc dddd a bb ccc dddd eeeee"))
    assert ids.tolist() == [1, 2, 3, 4, 1, 2, 3, 4, 5]
    assert calls == ["a", "bb", "ccc", "dddd", "dddd", "eeeee"]
    assert small.size() == 3


def test_lookup_errors_propagate_and_bad_ids_are_refused() -> None:
    def boom(token: str) -> int:
        raise KeyError(token)

    with pytest.raises(KeyError):
        _tokens.TokenTable(boom, 0).ids("x y")
    with pytest.raises(ValueError, match="out of range"):
        _tokens.TokenTable(lambda t: -2, 0).ids("x")
    with pytest.raises(TypeError):
        _tokens.TokenTable(lambda t: 0, 0).ids(b"bytes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="mode"):
        _tokens.TokenTable(lambda t: 0, 2)


def test_fallback_without_the_extension(monkeypatch) -> None:
    """Without the compiled module the Python path gives the same ids."""
    texts = ["The cats' café — naïve_ones 42", "Σίσυφος ΣΊΣΥΦΟΣ"]
    expected = compiled_ids(ANALYZERS[3], texts)
    monkeypatch.setattr(analysis, "_tokens", None)
    assert compiled_ids(ANALYZERS[3], texts) == expected

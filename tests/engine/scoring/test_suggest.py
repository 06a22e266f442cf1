"""Did you mean (issue 10, engine side): words people type, not stems; nothing on an empty index.

Candidates come from the vocabulary of analysed terms (stems with a stemmer); each is offered as
its most frequent surface word in the index, read from a bounded sample of the documents that
contain it, in the capitalisation the user typed.
"""

from __future__ import annotations

import pytest

from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.index.reader import Index
from bm25desk.engine.scoring import suggest
from bm25desk.engine.scoring.search import Searcher
from bm25desk.engine.scoring.variants import all_variants

PORTER = Analyzer.create(stopwords="en", stemmer="porter")

# "fuzzy" (→ fuzzi) is the usual form; "fuzziness" is rarer; "Fuzzy" starts a sentence.
DOCS = (
    "Fuzzy sets and fuzzy logic: a fuzzy controller.",
    "The fuzziness of fuzzy rules.",
    "Quotas and the quota system; one quota each.",
    "NASA launched it. NASA said so.",
    "Classification of documents: classifying by subject.",
)


@pytest.fixture
def porter_index(make_index) -> Index:
    """Return the documents above, analysed with English stop words and Porter's stemmer."""
    return make_index(DOCS, PORTER)


def test_suggestions_are_surface_words_not_stems(porter_index: Index) -> None:
    """Offer "fuzzy" for "fuzzzy" (analysed "fuzzzi", close to the stem "fuzzi")."""
    s = Searcher(porter_index)
    assert PORTER.terms("fuzzzy") == ["fuzzzi"]
    assert "fuzzi" in porter_index.vocabulary()
    assert s.suggest("fuzzzi") == ["fuzzy"]
    (got,) = s.suggester.suggestions("fuzzzi")
    assert (got.word, got.term, got.df) == ("fuzzy", "fuzzi", 2)
    assert s.suggest("quoat") == ["quota"]  # the stem is "quota"; "quotas" is rarer


def test_suggestions_follow_the_capitalisation_typed(porter_index: Index) -> None:
    """A suggestion is capitalised as the word was typed."""
    s = Searcher(porter_index)
    assert s.suggest("fuzzzi", typed="Fuzzzy") == ["Fuzzy"]
    assert s.suggest("fuzzzi", typed="FUZZZY") == ["FUZZY"]
    assert s.suggest("fuzzzi", typed="fuzzzy") == ["fuzzy"]


def test_a_word_only_ever_in_capitals_keeps_them(porter_index: Index) -> None:
    """A word the index only has in capitals ("NASA") is offered so."""
    assert Searcher(porter_index).suggest("nas") == ["NASA"]


def test_surface_forms_are_read_from_a_bounded_sample(make_index, monkeypatch) -> None:
    """A term in every one of 200 documents: only SAMPLE_DOCS of them are read, once."""
    index = make_index([f"Fuzzy logic {i}" if i % 3 else f"fuzzy sets {i}" for i in range(200)])
    reads = []
    real = index.text
    monkeypatch.setattr(index, "text", lambda d: reads.append(d) or real(d))
    s = Searcher(index)
    assert s.suggest("fuzzu") == ["fuzzy"]
    assert 0 < len(reads) <= suggest.SAMPLE_DOCS
    s.suggest("fuzzu")
    assert len(reads) <= suggest.SAMPLE_DOCS  # cached


@pytest.mark.parametrize("texts", [[], ["", "   "], ["the of and"]], ids=["none", "blank", "stop"])
def test_an_empty_index_has_no_suggestions_and_no_hits(make_index, texts: list[str]) -> None:
    """Return honest empty results on an index without a single indexed word.

    0 documents, or documents with none: every search and the suggester return nothing
    (whoosh's corrector raised IndexError on an empty vocabulary).
    """
    index = make_index(texts, PORTER)
    s = Searcher(index)
    assert index.vocabulary() == []
    assert s.suggest("cat") == []
    assert s.suggester.suggestions("cat", 5) == []
    for v in all_variants():
        r = s.search("cat dog", v, k=10)
        assert (r.hits, r.n_matches, r.n_docs) == ((), 0, len(texts))
        assert r.analysis.unknown == ("cat", "dog")


def test_closest_and_commonest_first(make_index) -> None:
    """Offer candidates closest first and, at the same distance, commonest first.

    whoosh's own order was alphabetical, it kept the alphabetically last when there were more
    candidates than asked for, and it never offered the vocabulary's first word ("bat" here).
    """
    index = make_index(["cot", "cot", "cot cap", "cap", "cut", "bat", "cast"])
    s = Searcher(index)
    assert s.suggest("cat", 3) == ["cot", "cap", "bat"]  # distance 1: df 3, 2, 1 (bat < cut)
    assert s.suggest("cat", 5) == ["cot", "cap", "bat", "cast", "cut"]
    assert suggest.edit_distance("cat", "cast") == 1
    assert suggest.edit_distance("libari", "liber") == 2

"""Query syntax: +, -, phrases, title:, AND/OR/NOT; plain words are exactly a bag of words."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.index.build import build_index
from bm25desk.engine.index.reader import Index
from bm25desk.engine.scoring.query import contains_phrase, has_syntax, parse_query, parse_terms
from bm25desk.engine.scoring.search import Searcher
from bm25desk.engine.scoring.variants import all_variants, get_variant

A = Analyzer()


@pytest.mark.parametrize(
    ("text", "syntax"),
    [
        ("cat dog", False),
        ("e-mail c++ state-of-the-art", False),  # + and - inside words are words
        ("what's 5-3? x:y", False),
        ("and or not", False),  # only upper-case operators are syntax
        ("+cat", True),
        ("cat -dog", True),
        ('"quick brown"', True),
        ("cat AND dog", True),
        ("cat OR dog", True),
        ("NOT dog", True),
        ("title:fox", True),
        ("(cat dog)", True),
    ],
)
def test_has_syntax(text: str, syntax: bool) -> None:
    assert has_syntax(text) is syntax


def test_plain_words_are_a_bag_of_words() -> None:
    q = parse_query("Cat dog, cat! the", A)
    assert not q.syntax
    assert q.scored == (("cat", 2), ("dog", 1), ("the", 1))
    assert q.terms == ("cat", "dog", "the")
    assert not q.has_constraints
    assert [(t.surface, t.role) for t in q.tokens] == [
        ("Cat", "optional"),
        ("dog", "optional"),
        ("cat", "optional"),
        ("the", "optional"),
    ]


def test_required_and_prohibited() -> None:
    q = parse_query("+Cat dog -mouse", A)
    assert q.syntax
    assert q.required == ("cat",)
    assert q.prohibited == ("mouse",)
    assert q.scored == (("cat", 1), ("dog", 1))  # prohibited words are not scored
    roles = {t.surface: t.role for t in q.tokens}
    assert roles == {"Cat": "required", "dog": "optional", "mouse": "prohibited"}


def test_boolean_operators() -> None:
    q = parse_query("cat AND dog", A)
    assert q.required == ("cat", "dog")
    assert q.terms == ("cat", "dog")
    q = parse_query("cat NOT dog", A)
    assert q.prohibited == ("dog",)
    assert q.terms == ("cat",)
    q = parse_query("cat OR dog", A)
    assert not q.has_constraints
    assert q.terms == ("cat", "dog")
    q = parse_query("(cat dog) fish", A)
    assert not q.has_constraints
    assert q.terms == ("cat", "dog", "fish")


def test_phrases() -> None:
    q = parse_query('"Quick brown" fox', A)
    assert q.phrases == (("quick", "brown"),)
    assert q.scored == (("quick", 1), ("brown", 1), ("fox", 1))
    q = parse_query('"fox" cat', A)  # a quoted word must occur (whoosh alone makes it optional)
    assert q.required == ("fox",)
    assert not q.phrases
    q = parse_query('"e-mail" x', A)  # one word for the parser, a phrase once analysed
    assert q.phrases == (("e", "mail"),)
    assert q.terms == ("e", "mail", "x")
    q = parse_query('dog -"lazy dog"', A)
    assert q.prohibited_phrases == (("lazy", "dog"),)
    assert q.terms == ("dog",)


def test_phrase_words_are_analysed_like_documents() -> None:
    a = Analyzer.create(stopwords="en", stemmer="porter")
    q = parse_query('"the running of foxes"', a)
    assert q.phrases == (("run", "fox"),)  # stop words removed, stems as indexed


def test_title_field() -> None:
    q = parse_query("title:Dog cat", A)
    assert q.title_required == ("dog",)
    assert q.scored == (("dog", 1), ("cat", 1))  # a title word is also scored in the body
    q = parse_query('title:"brown fox"', A)
    assert q.title_required == ("brown", "fox")
    q = parse_query("cat -title:dog", A)
    assert q.title_prohibited == ("dog",)
    assert q.terms == ("cat",)


def test_syntax_can_be_switched_off() -> None:
    q = parse_query('+cat -dog "a b"', A, syntax=False)
    assert not q.syntax
    assert not q.has_constraints
    assert q.terms == ("cat", "dog", "a", "b")


@pytest.mark.parametrize(
    "text", ['"unclosed quote', "(((", "title:", "+", "- -", "AND", '""', "cat)"]
)
def test_odd_syntax_never_raises(text: str) -> None:
    q = parse_query(text, A)
    assert isinstance(q.terms, tuple)


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('ab +-"():tile ANDORT\t')), max_size=30))
def test_random_syntax_never_raises(text: str) -> None:
    q = parse_query(text, A)
    assert set(q.required) <= set(q.terms)
    for t in q.tokens:
        assert t.role in ("optional", "required", "prohibited", "phrase", "title")


def test_parse_terms_keeps_tokens_as_given() -> None:
    q = parse_terms(["B", "a", "B"])
    assert q.scored == (("B", 2), ("a", 1))
    assert not q.syntax


def test_contains_phrase() -> None:
    assert contains_phrase(["a", "b", "c", "b", "d"], ("b", "d"))
    assert not contains_phrase(["a", "b", "c"], ("a", "c"))
    assert not contains_phrase(["a", "b"], ("b", "c"))


# -- the constraints applied by the searcher -------------------------------------------------------


def _ids(index: Index, query: str, **kw) -> list[str]:
    return sorted(h.docid for h in Searcher(index).search(query, k=100, **kw).hits)


def test_constraints_filter_matches(tiny_index: Index) -> None:
    t = tiny_index
    assert _ids(t, "cat dog") == ["tiny-1", "tiny-2", "tiny-4", "tiny-5"]
    assert _ids(t, "+cat dog") == ["tiny-1", "tiny-5"]
    assert _ids(t, "dog -cat") == ["tiny-2", "tiny-4"]
    assert _ids(t, "cat AND mat") == ["tiny-1"]
    assert _ids(t, "cat NOT mat") == ["tiny-5"]
    assert _ids(t, '"quick brown fox"') == ["tiny-4"]
    assert _ids(t, '"brown quick"') == []
    assert _ids(t, 'dog -"lazy dog"') == ["tiny-1", "tiny-2"]
    assert _ids(t, "title:dog") == ["tiny-2"]  # "dogs" in tiny-1's title is another word
    assert _ids(t, "title:dogs") == ["tiny-1"]
    assert _ids(t, "cat -title:cats") == ["tiny-5"]
    assert _ids(t, 'title:"quick brown" dog') == ["tiny-4"]
    assert _ids(t, '"cat" dog') == ["tiny-1", "tiny-5"]


def test_constraints_do_not_change_scores(tiny_index: Index) -> None:
    s = Searcher(tiny_index)
    for v in all_variants():
        bag = {h.docid: h.score for h in s.search("cat dog", v, k=10).hits}
        for h in s.search("+cat dog", v, k=10).hits:
            assert h.score == bag[h.docid]
        bag3 = {h.docid: h.score for h in s.search("lazy dog cat", v, k=10).hits}
        phrase = s.search('"lazy dog" cat', v, k=10).hits
        assert [h.docid for h in phrase] == ["tiny-4"]
        assert phrase[0].score == bag3["tiny-4"]


def test_phrase_is_verified_on_the_text(tiny_index: Index) -> None:
    """ "cat mat" has both words in tiny-1 but never adjacent."""
    assert _ids(tiny_index, "cat AND mat") == ["tiny-1"]
    assert _ids(tiny_index, '"cat mat"') == []
    assert _ids(tiny_index, '"the cat"') == ["tiny-1", "tiny-5"]


def test_phrase_across_removed_stop_words(store, tiny_tsv) -> None:
    build_index(tiny_tsv, name="stop", store=store, analyzer=Analyzer.create(stopwords="en"))
    idx = store.open("stop")
    # "jumps over the lazy" → terms jumps, lazy ("over", "the" are stop words).
    assert _ids(idx, '"jumps over the lazy"') == ["tiny-4"]
    assert _ids(idx, '"jumps lazy"') == ["tiny-4"]


def test_title_field_of_a_folder_index(store, tiny_folder) -> None:
    build_index(tiny_folder, name="folder", store=store)
    idx = store.open("folder")
    assert _ids(idx, "title:dog") == ["tiny-2.txt"]
    assert _ids(idx, "title:weaving mat") == ["tiny-6.txt"]


def test_explanation_marks_prohibited_words(tiny_index: Index) -> None:
    e = Searcher(tiny_index).explain("dog -cat", "tiny-1", get_variant("atire"))
    assert [(t.surface, t.status) for t in e.terms] == [("dog", "matched"), ("cat", "prohibited")]
    assert not e.matches
    assert e.score == e.terms[0].weight


_WORDS = st.sampled_from(
    ["cat", "Cat", "dog", "the", "mat", "fox", "quick", "zebra", "e-mail", "c++", "don't", "x:y",
     "5-3", "and", "or", "not", "a.b", "watches", "lazy", "dog."]
)  # fmt: skip


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(words=st.lists(_WORDS, min_size=1, max_size=6))
def test_plain_query_equals_search_terms(tiny_index: Index, words: list[str]) -> None:
    """``search("a b")`` is ``search_terms(analyzer.terms("a b"))``: same hits, same scores."""
    text = " ".join(words)
    assert not has_syntax(text)
    s = Searcher(tiny_index)
    terms = tiny_index.analyzer.terms(text)
    for v in (get_variant("lucene"), get_variant("bm25adpt"), get_variant("bim-tf")):
        got = s.search(text, v, k=10)
        want = s.search_terms(terms, v, k=10)
        assert [(h.docid, h.score) for h in got.hits] == [(h.docid, h.score) for h in want.hits]
        assert got.n_matches == want.n_matches
        assert got.analysis.terms == tuple(dict.fromkeys(terms))


# -- what the parser may catch, and what a query of only exclusions says (issue 11) ---------------


def test_operators_are_kept() -> None:
    """``+a -b`` keeps both operators: a must occur and is scored, b must not and is not."""
    q = parse_query("+a -b", A)
    assert q.syntax
    assert not q.warnings
    assert (q.required, q.prohibited, q.terms) == (("a",), ("b",), ("a",))
    assert [(c.kind, c.words) for c in q.constraints] == [
        ("required", ("a",)),
        ("prohibited", ("b",)),
    ]


def test_a_bug_while_reading_the_query_is_not_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only whoosh's own parse errors fall back to plain words: an error in bm25desk's own walk
    of the query tree propagates instead of quietly turning "+a -b" into a bag of words."""
    from bm25desk.engine.scoring import query

    def broken(self: object, node: object, mode: str) -> None:
        raise IndexError("a bug in the walker")  # also a type whoosh's parser raises

    monkeypatch.setattr(query._Collector, "walk", broken)
    with pytest.raises(IndexError, match="a bug in the walker"):
        parse_query("+a -b", A)


@pytest.mark.parametrize("text", [']DORO"i{(+ ?llR>)', "NOT AND ]OR[Otitle:][~\t]+"])
def test_syntax_whoosh_cannot_read_is_searched_as_words_and_said_so(text: str) -> None:
    """Input whoosh's parser fails on (NotImplementedError, IndexError inside it) is searched as
    plain words, with a warning that says so in words."""
    from bm25desk.engine.scoring.query import UNREADABLE

    q = parse_query(text, A)
    assert not q.syntax
    assert q.warnings == (UNREADABLE,)
    assert "could not read the query's syntax" in UNREADABLE
    assert q.terms == tuple(dict.fromkeys(A.terms(text)))


@pytest.mark.parametrize("text", ["-cat", '-"quick brown"', "-cat -dog", "-title:dog"])
def test_a_query_of_only_excluded_words_says_so(tiny_index: Index, text: str) -> None:
    """A lone ``-cat`` is not "empty": its exclusions are kept and the error says what to do."""
    q = parse_query(text, A)
    assert q.tokens
    assert all(t.role == "prohibited" for t in q.tokens)
    assert not q.scored
    from bm25desk.engine.scoring.search import QueryError

    with pytest.raises(QueryError, match="only excluded words matches nothing to rank; add a"):
        Searcher(tiny_index).search(text)


@pytest.mark.parametrize(
    ("text", "scored", "prohibited"),
    [
        ('library +""', [("librari", 1)], []),
        ("+() library library", [("librari", 2)], []),
        ("library +() -cats", [("librari", 1)], ["cat"]),
        ('+title:"" library', [("librari", 1)], []),
    ],
)
def test_an_empty_required_part_asks_for_nothing(
    tiny_index: Index, text: str, scored: list[tuple[str, int]], prohibited: list[str]
) -> None:
    """whoosh normalises 'library +""' to nothing at all ("the query is empty" was the answer,
    found under Xvfb); as in Lucene, the empty part is dropped and the rest is searched."""
    analyzer = Analyzer.create(stopwords="en", stemmer="porter")
    q = parse_query(text, analyzer)
    assert list(q.scored) == scored
    assert list(q.prohibited) == prohibited
    assert not q.required
    Searcher(tiny_index).search(text)  # no QueryError


def test_constraints_keep_the_words_as_typed() -> None:
    """Each +word, -word, phrase and title: of the query, with the words as typed and analysed."""
    analyzer = Analyzer.create(stopwords="en", stemmer="porter")
    q = parse_query('"The Quick Foxes" +Library -cats title:Dogs -"lazy dog"', analyzer)
    got = [(c.kind, c.words, c.analysed, c.label) for c in q.constraints]
    assert got == [
        ("phrase", ("The", "Quick", "Foxes"), (None, "quick", "fox"), '"The Quick Foxes"'),
        ("required", ("Library",), ("librari",), "+Library"),
        ("prohibited", ("cats",), ("cat",), "-cats"),
        ("title", ("Dogs",), ("dog",), "title:Dogs"),
        ("prohibited-phrase", ("lazy", "dog"), ("lazi", "dog"), '-"lazy dog"'),
    ]
    assert q.constraints[0].terms == ("quick", "fox")


@pytest.mark.parametrize(
    ("text", "quote", "bracket", "phrases"),
    [
        ('"relevance feedback', True, False, ()),
        ('title:"relevance feedback', True, False, ()),
        ('a "b c" "d e', True, False, (("b", "c"),)),
        ('"""a b', True, False, ()),
        ('a \\" b', True, False, ()),  # (no escapes: the parser pairs every quote)
        ("(unbalanced words", False, True, ()),
        ("x) y (z", False, True, ()),
        ('(a "b)" c', False, True, ()),  # the phrase's bracket is its text
        ('"a (b" c', False, False, (("a", "b"),)),
        ('"a b" (c d) +() e', False, False, (("a", "b"),)),
        ('"a b" (c', False, True, (("a", "b"),)),
        ('"a b (c', True, True, ()),  # (after an unclosed quote, brackets are syntax)
        ('"a b" "c (d', True, True, (("a", "b"),)),
        ('(a "b c)', True, False, ()),
    ],
)
def test_what_the_parser_drops_without_a_word_is_said(
    text: str, quote: bool, bracket: bool, phrases: tuple[tuple[str, ...], ...]
) -> None:
    """An unclosed quote or an unmatched bracket is dropped by whoosh's parser, which searches
    the words anyway: the query says so in its warnings, and still searches every word."""
    from bm25desk.engine.scoring.query import UNCLOSED_QUOTE, UNMATCHED_BRACKET

    q = parse_query(text, A)
    assert q.syntax
    assert (UNCLOSED_QUOTE in q.warnings) is quote
    assert (UNMATCHED_BRACKET in q.warnings) is bracket
    assert len(q.warnings) == quote + bracket
    assert q.phrases == phrases
    assert set(q.terms) == set(A.terms(text.replace("title:", "")))


def test_a_searched_query_carries_the_warning_to_its_analysis(tiny_index: Index) -> None:
    from bm25desk.engine.scoring.query import UNCLOSED_QUOTE

    res = Searcher(tiny_index).search('"quick brown')
    assert res.analysis.parsed.warnings == (UNCLOSED_QUOTE,)
    assert len(res.hits) > 0

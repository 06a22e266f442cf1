"""Explanations in words (issue 10, engine side): constraints, BM25Adpt's k1*, one name per variant.

- The explanation carries every ``+word``/``-word``/phrase/``title:`` of the query with whether
  it held for the document, which of its words the document has, and why (``constraints``); a
  document is explained as a match exactly when the ranking lets it through.
- Each BM25Adpt term says in one plain sentence why its k1* is what it is (``plain``).
- Anything shown to a person names a variant by its registry label and key, never its repr.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.index.reader import Index
from bm25desk.engine.scoring.adpt import AdptFit, adpt_fit, fit_in_plain_words
from bm25desk.engine.scoring.search import Searcher
from bm25desk.engine.scoring.variants import all_variants, get_variant

# -- constraints ---------------------------------------------------------------------------------


def _checks(e: object) -> list[tuple[str, str, bool, tuple[bool, ...]]]:
    return [
        (c.constraint.kind, c.constraint.label, c.held, c.present)
        for c in e.constraints  # type: ignore[attr-defined]
    ]


def test_a_document_with_the_phrase(tiny_index: Index) -> None:
    """Every constraint holds where the phrase, "dog" and no "cat" are.

    tiny-4 is "The quick brown fox jumps over the lazy dog.".
    """
    e = Searcher(tiny_index).explain('"quick brown fox" +dog -cat', "tiny-4")
    assert e.matches
    assert _checks(e) == [
        ("phrase", '"quick brown fox"', True, (True, True, True)),
        ("required", "+dog", True, (True,)),
        ("prohibited", "-cat", True, (False,)),
    ]
    phrase = e.constraints[0]
    assert phrase.constraint.words == ("quick", "brown", "fox")
    assert phrase.constraint.analysed == ("quick", "brown", "fox")
    assert phrase.reason == "the words occur together, in this order, in this document"


def test_a_document_without_the_phrase(tiny_index: Index) -> None:
    """The phrase and -cat fail where neither holds, and the reason names both.

    tiny-1 ("The cat sat on the mat. A dog barked at the cat.") has none of the phrase's words,
    has "dog", and has the prohibited "cat".
    """
    e = Searcher(tiny_index).explain('"quick brown fox" +dog -cat', "tiny-1")
    assert not e.matches
    assert _checks(e) == [
        ("phrase", '"quick brown fox"', False, (False, False, False)),
        ("required", "+dog", True, (True,)),
        ("prohibited", "-cat", False, (True,)),
    ]
    assert e.constraints[0].reason == "'quick', 'brown', 'fox' are not in this document"
    assert e.constraints[2].reason == "'cat' is in this document"
    assert e.reason.startswith("fails the query's constraints (+, -, phrase or title:): ")
    assert '"quick brown fox"' in e.reason
    assert "-cat ('cat' is in this document)" in e.reason


def test_words_present_but_not_as_a_phrase(tiny_index: Index) -> None:
    """tiny-1 has "cat" and "mat", never adjacent: every word is there, the phrase is not."""
    e = Searcher(tiny_index).explain('"cat mat"', "tiny-1")
    (check,) = e.constraints
    assert (check.held, check.present) == (False, (True, True))
    assert check.reason == "every word occurs in this document, but not together in this order"


def test_title_constraints_look_in_the_title(tiny_index: Index) -> None:
    """tiny-2's title is "Dog training": title:dog holds there; "dog" in tiny-1's body only."""
    s = Searcher(tiny_index)
    assert _checks(s.explain("title:dog", "tiny-2")) == [("title", "title:dog", True, (True,))]
    e = s.explain("cat title:dog", "tiny-1")
    assert _checks(e) == [("title", "title:dog", False, (False,))]
    assert e.constraints[0].reason == "'dog' is not in its title"


def test_phrase_words_as_typed_and_as_analysed(make_index) -> None:
    """A phrase keeps its words as typed, each with its analysed form (None for a stop word)."""
    analyzer = Analyzer.create(stopwords="en", stemmer="porter")
    index = make_index(["The quick foxes jumped", "quick fox"], analyzer)
    e = Searcher(index).explain('"The Quick Foxes"', "d0")
    (check,) = e.constraints
    assert check.constraint.words == ("The", "Quick", "Foxes")
    assert check.constraint.analysed == (None, "quick", "fox")
    assert check.present == (True, True)
    assert check.held
    assert Searcher(index).explain('"The Quick Foxes"', "d1").constraints[0].held


_SYNTAX_WORDS = st.sampled_from(
    ["cat", "dog", "mat", "fox", "quick", "brown", "the", "zebra", "+cat", "-dog", "+mat",
     '"quick brown"', '"the cat"', '-"lazy dog"', "title:dog", "-title:cats", "AND", "OR", "NOT",
     "title:\"quick brown\"", "(cat", "dog)"]
)  # fmt: skip


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(words=st.lists(_SYNTAX_WORDS, min_size=1, max_size=5))
def test_explained_match_equals_the_ranking(tiny_index: Index, words: list[str]) -> None:
    """Explain a document as a match exactly when the ranking returns it, for any query.

    Every constraint that fails is named in the reason.
    """
    s = Searcher(tiny_index)
    parsed = s.parse(" ".join(words))
    if not parsed.scored:
        return
    v = get_variant("lucene")
    _, ok = s.scores(parsed, v)
    ranked = {h.docno for h in s.search_parsed(parsed, v, k=10).hits}
    assert ranked == set(np.flatnonzero(ok).tolist())
    for d in range(tiny_index.n_docs):
        e = s.explain_docno(parsed, d, v)
        assert e.matches == bool(ok[d]), (words, d)
        if e.reason.startswith("fails the query's constraints"):  # (else: no query term)
            failed = [c for c in e.constraints if not c.held]
            assert failed
            for c in failed:
                assert f"{c.constraint.label} ({c.reason})" in e.reason


def test_constraints_in_json_text_and_markdown(tiny_index: Index) -> None:
    """The constraint checks are in the explanation's JSON, text tree and Markdown."""
    e = Searcher(tiny_index).explain('"quick brown fox" -cat', "tiny-1")
    d = json.loads(e.as_json())
    assert d["constraints"] == [
        {
            "kind": "phrase",
            "label": '"quick brown fox"',
            "words": ["quick", "brown", "fox"],
            "analysed": ["quick", "brown", "fox"],
            "held": False,
            "present": [False, False, False],
            "reason": "'quick', 'brown', 'fox' are not in this document",
        },
        {
            "kind": "prohibited",
            "label": "-cat",
            "words": ["cat"],
            "analysed": ["cat"],
            "held": False,
            "present": [True],
            "reason": "'cat' is in this document",
        },
    ]
    text = e.as_text()
    assert (
        "  constraint \"quick brown fox\" (phrase; quick, brown, fox): fails, 'quick', 'brown', "
        "'fox' are not in this document" in text.splitlines()
    )
    assert "  constraint -cat (prohibited; cat): fails, 'cat' is in this document" in text
    assert "- constraint -cat (prohibited; cat): fails" in e.as_markdown()


def test_cli_explain_shows_the_constraints(tiny_index: Index, capsys) -> None:
    """``bm25desk explain`` and ``search --explain`` show them, as text and as JSON."""
    from bm25desk.cli import main

    assert main(["explain", "tiny", '"quick brown fox" +dog', "tiny-4"]) == 0
    out = capsys.readouterr().out
    assert 'constraint "quick brown fox" (phrase; quick, brown, fox): holds' in out
    assert "constraint +dog (required; dog): holds" in out
    assert main(["explain", "tiny", '"quick brown fox" +dog', "tiny-1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(c["label"], c["held"]) for c in data["constraints"]] == [
        ('"quick brown fox"', False),
        ("+dog", True),
    ]
    assert main(["search", "tiny", '"quick brown fox" +dog', "--explain", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["hits"][0]["explanation"]["constraints"][0]["held"] is True


# -- BM25Adpt in plain words ---------------------------------------------------------------------


def test_plain_words_for_a_fitted_k1(make_index) -> None:
    """The ten-document corpus of test_variants where x's gain curve has T = 3: k1* is fitted."""
    docs = ("x x x x", "x x x x", "x a1 a2 a3", *(f"f{i}a f{i}b f{i}c f{i}d" for i in range(7)))
    index = make_index(docs)
    e = Searcher(index).explain("x", "d0", get_variant("bm25adpt"))
    (row,) = e.terms
    assert row.plain == (
        "k1* = 0.9638 is the saturation that best follows how much this term's information gain "
        "grows from 0 to 3 occurrences in a document (after length normalisation); the smaller "
        "k1*, the sooner further occurrences stop adding weight"
    )
    assert f"    in plain words: {row.plain}" in e.as_text().splitlines()
    assert e.as_dict()["contributions"][0]["plain"] == row.plain


def test_plain_words_when_the_term_never_occurs_twice() -> None:
    """Say so when c = (1): df = 1, df₂ = 0 (see test_variants' cut at df_{r+1} = 0)."""
    fit = adpt_fit(np.array([1.0]), 1, 10)
    assert fit_in_plain_words(fit, 1, 0) == (
        "this term never occurs twice in any document (after length normalisation), so its "
        "saturation cannot be fitted; k1 falls back to 0.001"
    )


def test_plain_words_when_a_second_occurrence_says_less(make_index) -> None:
    """Say so for apple in test_variants' three documents: df 2, df₂ = 1, G¹ = log2 0.8 < 0."""
    index = make_index(("apple apple banana", "apple cherry", "banana durian elder fig"))
    e = Searcher(index).explain("apple", "d0", get_variant("bm25adpt"))
    assert e.terms[0].plain == (
        "this term occurs twice in only 1 of its 2 documents (after length normalisation), so a "
        "second occurrence says less about a document than the first (G¹ = -0.3219 < 0), so its "
        "saturation cannot be fitted; k1 falls back to 0.001"
    )


def test_plain_words_when_the_gain_stops_after_two() -> None:
    """Say so when the curve stops at T = 1 though G¹ > 0.

    c = (3, 2, 2, 2, 1), N = 40: df = 5, df₂ = 4, df₃ = 1, so G¹ = log2(4.5/6) − base > 0 and
    G² = log2(1.5/5) − base < G¹.
    """
    c = np.array([3.0, 2.0, 2.0, 2.0, 1.0])
    fit = adpt_fit(c, 5, 40)
    assert fit.df_r == (40, 5)
    assert fit.g1 > 0
    assert fit_in_plain_words(fit, 5, 4).startswith(
        "this term's information gain stops growing after its second occurrence"
    )


@pytest.mark.parametrize(
    ("fit", "start"),
    [
        (AdptFit((0.0, 0.0, 0.0), (9, 3, 3), 0.0, 0.001, False), "a second occurrence of this"),
        (AdptFit((0.0, 1.0, 2.0), (9, 3, 2), 1.0, 0.001, False), "every k1 between 0.001 and 2.5"),
    ],
)
def test_plain_words_for_the_rare_fallbacks(fit: AdptFit, start: str) -> None:
    """G¹ = 0 (the curve has no scale) and a flat objective (no k1 is better than another)."""
    text = fit_in_plain_words(fit, 3, 3)
    assert text.startswith(start)
    assert "0.001" in text


def test_only_bm25adpt_has_plain_words(tiny_index: Index) -> None:
    """The fixed-formula variants have nothing to add in words; BM25Adpt has for every term."""
    s = Searcher(tiny_index)
    for v in all_variants():
        e = s.explain("cat mat zebra", "tiny-1", v)
        plain = [t.plain for t in e.terms if t.status in ("matched", "unmatched")]
        assert plain
        assert all(plain) if v.key == "bm25adpt" else not any(plain), v.key


# -- one name per variant --------------------------------------------------------------------


@pytest.mark.parametrize("v", list(all_variants()), ids=lambda v: v.key)
def test_explanations_name_the_variant_by_label_and_key(tiny_index: Index, v) -> None:
    """Text and Markdown say "label [key]", never the repr; JSON has the name and the key."""
    e = Searcher(tiny_index).explain("cat", "tiny-1", v)
    name = f"{v.label} [{v.key}]"
    assert v.display_name() == name
    assert f"under {name}" in e.as_text().splitlines()[0]
    assert f"under {name}" in e.as_markdown()
    assert repr(v) not in e.as_text() + e.as_markdown()
    assert type(v).__name__ + "(" not in e.as_text() + e.as_markdown()
    assert e.as_dict()["variant"]["name"] == name
    assert e.as_dict()["variant"]["key"] == v.key


def test_display_name_with_parameters() -> None:
    """The name with parameters uses their symbols; the repr (the canonical id) is unchanged."""
    v = get_variant("bm25l", k1=0.9)
    assert v.display_with_params() == "BM25L (Lv & Zhai 2011) [bm25l] k1=0.9 b=0.75 δ=0.5"
    assert get_variant("bim").display_with_params() == "BIM (binary independence; teaching) [bim]"
    assert repr(v) == "BM25L(k1=0.9, b=0.75, delta=0.5)"  # the canonical id is unchanged


def test_cli_search_names_the_variant(tiny_index: Index, capsys) -> None:
    """``bm25desk search``'s first line names the variant by label, key and parameters."""
    from bm25desk.cli import main

    assert main(["search", "tiny", "cat", "--variant", "tfldp"]) == 0
    head = capsys.readouterr().out.splitlines()[0]
    assert "under TF₁∘δ∘p×IDF (Rousseau & Vazirgiannis 2013) [tfldp] b=0.75 δ=1" in head
    assert "TFlDpIDF(" not in head

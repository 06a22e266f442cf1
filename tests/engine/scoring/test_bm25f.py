"""BM25F against a plain float64 reference written here: loops over documents and fields.

The reference knows nothing of postings, reserved terms or the searcher: it analyses each
document's text, title and extra fields itself, counts, and applies docs/scoring.md's bm25f formula.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.index.reader import Index
from bm25desk.engine.readers.corpus import Document
from bm25desk.engine.scoring.search import Searcher
from bm25desk.engine.scoring.variants import BM25F, VariantError, get_variant

Fields = tuple[tuple[str, str], ...]

TEXTS = [
    "the cat sat on the mat with another cat",
    "a dog chased the cat across the garden and the dog barked",
    "dogs and cats living together in one house",
    "birds sing at dawn in the garden",
    "a long text about gardens " + "filler words here " * 12 + "cat",
    "mat weaving from reeds",
    "nothing in common at all",
]
TITLES = ["Cat notes", "Dog and cat", "", "Birds of the garden", "Garden", "Cat mat", ""]
EXTRA: list[Fields] = [
    (("name", "cat-notes.md"),),
    (("name", "dog.txt"), ("name", "dog cat")),
    (),
    (("name", "birds.html"),),
    (),
    (("name", "mat"),),
    (("name", "misc"),),
]
QUERIES = ["cat", "cat dog", "garden mat cat", "dog dog birds", "reeds notes", "misc cat"]


# -- the reference -------------------------------------------------------------------------------


def reference_scores(
    texts: Sequence[str],
    titles: Sequence[str],
    extra: Sequence[Fields],
    live: Sequence[bool],
    query: str,
    variant: BM25F,
    have: set[str],
) -> tuple[list[float], list[bool]]:
    """Return every document's bm25f score (0.0 for deleted and non-matching ones), and
    whether it matches (has a query term in a scored field)."""
    analyzer = Analyzer()
    docs: list[dict[str, list[str]]] = []
    for text, title, more in zip(texts, titles, extra, strict=True):
        fields = {"text": analyzer.terms(text), "title": analyzer.terms(title)}
        for name, value in more:
            fields[name] = fields.get(name, []) + analyzer.terms(value)
        docs.append(fields)
    n = sum(live)
    scored = [(f, w, b) for f, w, b in variant.fields() if f in have and w > 0]
    avg = {}
    for f, _, _ in scored:
        total = sum(len(d.get(f, [])) for d, ok in zip(docs, live, strict=True) if ok)
        avg[f] = total / n if total else 1.0
    qterms = analyzer.terms(query)
    scores = [0.0] * len(docs)
    matched = [False] * len(docs)
    for t in dict.fromkeys(qterms):
        qtf = qterms.count(t)
        df = sum(
            1
            for d, ok in zip(docs, live, strict=True)
            if ok and any(t in d.get(f, []) for f, _, _ in scored)
        )
        if df == 0:
            continue
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        for i, d in enumerate(docs):
            if not live[i]:
                continue
            ptf = 0.0
            for f, w, b in scored:
                tf = d.get(f, []).count(t)
                if tf:
                    matched[i] = True
                    ptf += w * tf / (1 - b + b * len(d[f]) / avg[f])
            if matched[i] and ptf > 0:
                scores[i] += qtf * idf * (ptf * (variant.k1 + 1) / (variant.k1 + ptf))
    return scores, matched


# -- building indexes with fields and deletions -------------------------------------------------


def build(
    make_segmented: Any,
    texts: Sequence[str],
    titles: Sequence[str],
    extra: Sequence[Fields],
    groups: Sequence[int] = (),
    deleted: Sequence[int] = (),
) -> Index:
    """Build one segment per group of ``groups`` documents (all in one without), ``deleted``
    (global positions) marked deleted."""
    sizes = list(groups) or [len(texts)]
    starts = list(itertools.accumulate([0, *sizes]))
    chunks = [texts[a:b] for a, b in itertools.pairwise(starts)]
    gone = [[i - a for i in deleted if a <= i < b] for a, b in itertools.pairwise(starts)]

    def document(i: int, text: str) -> Document:
        return Document(docid=f"d{i}", text=text, title=titles[i], fields=extra[i])

    index: Index = make_segmented(chunks, gone, document=document)
    return index


def check(index: Index, live: Sequence[bool], variant: BM25F, have: set[str], **docs: Any) -> None:
    """Compare every query's scores, ranking and explanations with the reference."""
    searcher = Searcher(index)
    for query in QUERIES:
        want, want_matched = reference_scores(
            live=live, query=query, variant=variant, have=have, **docs
        )
        parsed = searcher.parse(query)
        got, matched = searcher.scores(parsed, variant)
        for d, w in enumerate(want):
            assert got[d] == pytest.approx(w, rel=1e-12, abs=1e-15), (query, d)
            assert bool(matched[d]) == want_matched[d], (query, d)
        result = searcher.search(query, variant, k=4)
        # The ranking is the dense scores ordered by score descending, docno ascending.
        order = sorted(np.flatnonzero(matched), key=lambda d: (-got[d], d))
        assert [h.docno for h in result.hits] == order[:4]
        assert result.n_matches == len(order)
        for h in result.hits:
            assert h.score == got[h.docno]  # bit for bit
            expl = searcher.explain_docno(parsed, h.docno, variant)
            assert expl.score == h.score
            assert expl.parts_sum == h.score
            assert [c.weight for c in h.contributions] == [
                t.weight for t in expl.terms if t.status == "matched"
            ]


DOCS = {"texts": TEXTS, "titles": TITLES, "extra": EXTRA}
CONFIGS = [
    get_variant("bm25f"),
    get_variant("bm25f", w_title=0.0),
    get_variant("bm25f", w_text=0.0, w_title=3.0, b_title=1.0),
    get_variant("bm25f", k1=0.5, b_text=1.0, w_name=2.5, b_name=0.9),
    get_variant("bm25f", k1=2.0, b_text=0.0, b_title=0.0, w_name=0.5),
]


@pytest.mark.parametrize("variant", CONFIGS, ids=repr)
def test_one_segment_matches_the_reference(make_segmented: Any, variant: BM25F) -> None:
    index = build(make_segmented, **DOCS)
    check(index, [True] * len(TEXTS), variant, {"text", "title", "name"}, **DOCS)


@pytest.mark.parametrize("variant", CONFIGS, ids=repr)
def test_segments_with_deletions_match_the_reference(make_segmented: Any, variant: BM25F) -> None:
    index = build(make_segmented, **DOCS, groups=(3, 2, 2), deleted=(1, 4))
    live = [i not in (1, 4) for i in range(len(TEXTS))]
    assert len(index.segments) == 3
    assert index.n_docs == 5
    check(index, live, variant, {"text", "title", "name"}, **DOCS)


def test_missing_title_is_left_out_and_text_alone_equals_lucene(make_segmented: Any) -> None:
    no_titles = [""] * len(TEXTS)
    docs = {"texts": TEXTS, "titles": no_titles, "extra": [()] * len(TEXTS)}
    index = build(make_segmented, **docs)
    searcher = Searcher(index)
    for k1, b in ((1.2, 0.75), (0.9, 0.4), (2.0, 1.0)):
        f = get_variant("bm25f", k1=k1, b_text=b, w_title=5.0)  # no title field: left out
        check(index, [True] * len(TEXTS), f, {"text"}, **docs)
        lucene = get_variant("lucene", k1=k1, b=b)
        for query in QUERIES:
            parsed = searcher.parse(query)
            got, ok_f = searcher.scores(parsed, f)
            want, ok_l = searcher.scores(parsed, lucene)
            np.testing.assert_array_equal(ok_f, ok_l)
            np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)
            ranked_f = searcher.search(query, f, k=5).hits
            ranked_l = searcher.search(query, lucene, k=5).hits
            assert [h.docid for h in ranked_f] == [h.docid for h in ranked_l]


def test_unknown_field_and_all_zero_weights_say_so(make_segmented: Any) -> None:
    index = build(make_segmented, **DOCS)
    searcher = Searcher(index)
    with pytest.raises(VariantError, match=r"has no field 'heading'.*text, name, title"):
        searcher.search("cat", get_variant("bm25f", w_heading=2.0))
    with pytest.raises(VariantError, match="every field has weight 0"):
        searcher.search("cat", get_variant("bm25f", w_text=0.0, w_title=0.0))
    with pytest.raises(VariantError, match="out of range"):
        get_variant("bm25f", w_title=-1.0)
    with pytest.raises(VariantError, match="no parameter"):
        get_variant("bm25f", heading=1.0)


def test_constraints_restrict_bm25f(make_segmented: Any) -> None:
    index = build(make_segmented, **DOCS)
    searcher = Searcher(index)
    variant = get_variant("bm25f")
    free = {h.docid for h in searcher.search("cat", variant, k=10).hits}
    held = {h.docid for h in searcher.search("cat -dog", variant, k=10).hits}
    assert held == free - {"d1"}
    assert "d1" in free
    assert {h.docid for h in searcher.search("cat title:mat", variant, k=10).hits} == {"d5"}


def test_the_ledger_explains_each_field(make_segmented: Any) -> None:
    index = build(make_segmented, **DOCS)
    searcher = Searcher(index)
    variant = get_variant("bm25f", w_name=1.5)
    expl = searcher.explain("cat", "d0", variant)
    (row,) = expl.terms
    assert [f.field for f in row.fields] == ["text", "title", "name"]
    assert [f.tf for f in row.fields] == [2, 1, 1]
    assert row.pseudo_tf == sum(f.part for f in row.fields)
    assert row.tf_part == row.pseudo_tf * 2.2 / (1.2 + row.pseudo_tf)
    data = expl.as_dict()["contributions"][0]
    assert data["pseudo_tf"] == row.pseudo_tf
    assert [f["field"] for f in data["fields"]] == ["text", "title", "name"]
    assert data["fields"][1]["weight"] == 2.0
    assert data["fields"][1]["b"] == 0.3
    text = expl.as_text()
    assert "in the title field: 1 occurrence in 2 terms" in text
    assert "the fields add up to the pseudo-tf" in text


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    words=st.lists(
        st.lists(st.sampled_from(["cat", "dog", "mat", "reed", "sun"]), max_size=8),
        min_size=2,
        max_size=7,
    ),
    title_words=st.lists(st.sampled_from(["cat", "dog", "sun", ""]), min_size=7, max_size=7),
    w_title=st.floats(0.0, 20.0),
    b_text=st.floats(0.0, 1.0),
    b_title=st.floats(0.0, 1.0),
    k1=st.floats(0.0, 3.0),
)
def test_random_collections_match_the_reference(
    make_segmented: Any,
    words: list[list[str]],
    title_words: list[str],
    w_title: float,
    b_text: float,
    b_title: float,
    k1: float,
) -> None:
    texts = [" ".join(w) or "sun" for w in words]
    titles = title_words[: len(texts)]
    docs = {"texts": texts, "titles": titles, "extra": [()] * len(texts)}
    index = build(make_segmented, **docs)
    have = {"text"} | ({"title"} if any(titles) else set())
    variant = get_variant("bm25f", k1=k1, w_title=w_title, b_text=b_text, b_title=b_title)
    check(index, [True] * len(texts), variant, have, **docs)


def test_term_browser_contributions_are_one_word_bm25f_scores(make_segmented: Any) -> None:
    from bm25desk.engine.scoring.browse import document_terms, term_postings

    index = build(make_segmented, **DOCS, groups=(4, 3), deleted=(2,))
    searcher = Searcher(index)
    variant = get_variant("bm25f", w_name=1.5)
    for term in ("cat", "dog", "garden"):  # (the browser lists terms of the text: body terms)
        page = term_postings(searcher, term, variant, limit=None)
        result = searcher.search(term, variant, index.n_docs, count=False)
        assert {(r.docid, r.contribution) for r in page.rows} == {
            (h.docid, h.score) for h in result.hits
        }
    terms = {r.term: r.weight for r in document_terms(searcher, "d0", variant).rows}
    assert terms["cat"] == searcher.search("cat", variant, 1).hits[0].score


def test_relevance_feedback_counts_every_scored_field(make_segmented: Any) -> None:
    from bm25desk.engine.scoring.feedback import Feedback

    index = build(make_segmented, **DOCS)
    searcher = Searcher(index)
    marked = Feedback(frozenset({5}))  # d5: "cat" in its title ("Cat mat") only, not its text
    bm25f = searcher.weight("cat", get_variant("bm25f"), marked)
    lucene = searcher.weight("cat", get_variant("lucene"), marked)
    assert bm25f is not None
    assert lucene is not None
    assert "r = 1 contain it" in bm25f.idf_text
    assert "r = 0 contain it" in lucene.idf_text
    no_title = searcher.weight("cat", get_variant("bm25f", w_title=0.0), marked)
    assert no_title is not None
    assert "r = 0 contain it" in no_title.idf_text


def test_facets_count_what_bm25f_matches(make_segmented: Any) -> None:
    from bm25desk.engine.scoring import bm25f
    from bm25desk.engine.scoring.facets import facets

    kinds = ["md", "txt", "md", "html", "txt", "md", "txt"]

    def document(i: int, text: str) -> Document:
        return Document(
            docid=f"d{i}", text=text, title=TITLES[i], fields=EXTRA[i], meta=(("type", kinds[i]),)
        )

    index: Index = make_segmented([TEXTS], document=document)
    searcher = Searcher(index)
    variant = get_variant("bm25f", w_name=1.0)
    parsed = searcher.parse("misc")  # only in d6's name field, never in a text or title
    assert [h.docid for h in searcher.search_parsed(parsed, variant).hits] == ["d6"]
    matched = bm25f.matched_mask(searcher, parsed, variant)
    assert facets(index, parsed, matched=matched).as_dict(10) == {
        "type": [{"value": "txt", "count": 1}]
    }
    assert facets(index, parsed).as_dict(10) == {"type": []}  # the body's postings alone


def test_the_repr_names_every_fields_parameters_and_no_empty_extra() -> None:
    # Evaluation runs are labelled (and chosen with --run NAME) by repr.
    assert repr(BM25F()) == "BM25F(k1=1.2, w_text=1.0, b_text=0.75, w_title=2.0, b_title=0.3)"
    named = BM25F.from_values(k1=1.0, w_name=3.0)
    assert repr(named).endswith("b_title=0.3, w_name=3.0, b_name=0.75)")
    assert repr(named) != repr(BM25F.from_values(k1=1.0, w_name=2.0))

"""Look inside an index (engine/scoring/browse.py): terms, a term's postings, a document's terms.

Every number is checked against an independent computation: the vocabulary's df/cf against the
index's own statistics, each posting's contribution against the score a one-word search gives,
each document term's weight against the explain ledger, orders against Python's ``sorted``.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from bm25desk.engine import IndexStore, Searcher, all_variants, build_index, get_variant
from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.index.edit import remove_documents
from bm25desk.engine.scoring.browse import (
    BrowseError,
    document_terms,
    iter_postings,
    list_terms,
    term_postings,
)

WORDS = ["apple", "banana", "cherry", "date", "elder", "fig", "grape", "honeydew", "kiwi", "lime"]


@pytest.fixture
def index_name(store: IndexStore, tmp_path: Path) -> str:
    """120 passages over ten words: many equal tfs and lengths, so ties are everywhere."""
    rng = random.Random(7)
    lines = []
    for i in range(120):
        words = [rng.choice(WORDS[: rng.randint(2, 10)]) for _ in range(rng.randint(1, 12))]
        lines.append(f"d{i:03d}\t{' '.join(words)}\n")
    path = tmp_path / "fruit.tsv"
    path.write_text("".join(lines), "utf-8")
    analyzer = Analyzer.create(stopwords="none", stemmer="none")
    build_index(path, name="fruit", fmt="msmarco-passages", store=store, analyzer=analyzer)
    return "fruit"


def test_terms_sorted_by_cf_df_and_term(store: IndexStore, index_name: str) -> None:
    index = store.open(index_name)
    vocab = index.vocabulary()
    stats = {t: (index.term_stats(t).df, index.term_stats(t).cf) for t in vocab}  # type: ignore[union-attr]
    page = list_terms(index, sort="cf")
    assert page.total == len(vocab) == index.n_terms
    assert [(r.term, r.df, r.cf) for r in page.rows] == sorted(
        ((t, *stats[t]) for t in vocab), key=lambda r: (-r[2], r[0].encode())
    )
    assert [(r.term, r.cf) for r in page.rows] == [(t, cf) for t, _, cf in index.top_terms(100)]
    by_df = list_terms(index, sort="df")
    assert [r.term for r in by_df.rows] == sorted(vocab, key=lambda t: (-stats[t][0], t.encode()))
    assert [r.term for r in list_terms(index, sort="term").rows] == sorted(vocab, key=str.encode)


def test_terms_prefix_and_paging(store: IndexStore, index_name: str) -> None:
    index = store.open(index_name)
    everything = list_terms(index, sort="cf").rows
    pages = [list_terms(index, sort="cf", offset=o, limit=3).rows for o in range(0, 12, 3)]
    assert [r for p in pages for r in p] == list(everything)
    assert list_terms(index, offset=50).rows == ()
    assert [r.term for r in list_terms(index, prefix="d", sort="term").rows] == ["date"]
    assert list_terms(index, prefix="zz").total == 0
    assert list_terms(index, prefix="").total == 10
    with pytest.raises(BrowseError, match="cannot sort terms by 'tf'"):
        list_terms(index, sort="tf")
    with pytest.raises(BrowseError, match="limit must be at least 1"):
        list_terms(index, limit=0)


def test_a_prefix_that_is_not_ascii(store: IndexStore, tmp_path: Path) -> None:
    path = tmp_path / "u.tsv"
    path.write_text("a\tcafé café cafés\nb\tcafe zebra\nc\tcaféine\n", "utf-8")
    analyzer = Analyzer.create(stopwords="none", stemmer="none")
    build_index(path, name="u", fmt="msmarco-passages", store=store, analyzer=analyzer)
    index = store.open("u")
    assert [r.term for r in list_terms(index, prefix="café", sort="term").rows] == [
        "café",
        "caféine",
        "cafés",
    ]
    assert [r.term for r in list_terms(index, prefix="caf", sort="term").rows] == [
        "cafe",
        "café",
        "caféine",
        "cafés",
    ]


def test_each_contribution_is_the_one_word_search_score(store: IndexStore, index_name: str) -> None:
    searcher = Searcher(store.open(index_name))
    for variant in all_variants():
        for term in ("apple", "kiwi", "lime"):
            page = term_postings(searcher, term, variant, limit=None)
            result = searcher.search(term, variant, searcher.index.n_docs, count=False)
            got = {(r.docid, r.contribution) for r in page.rows}
            assert got == {(h.docid, h.score) for h in result.hits}, (variant, term)
            assert page.total == page.df == len(page.rows)
            if page.sort == "contribution":
                # the ranking order is the contribution order (ties by docno in both)
                assert [r.docid for r in page.rows] == [h.docid for h in result.hits]


@pytest.mark.parametrize("sort", ["contribution", "tf", "length", "docno"])
@pytest.mark.parametrize("ascending", [None, True, False])
def test_postings_sorted_and_paged(
    store: IndexStore, index_name: str, sort: str, ascending: bool | None
) -> None:
    searcher = Searcher(store.open(index_name))
    variant = get_variant("bm25l", k1=1.5, b=0.6)
    full = term_postings(searcher, "apple", variant, sort="docno", limit=None).rows
    asc = (sort == "docno") if ascending is None else ascending
    sign = 1 if asc else -1
    expected = sorted(full, key=lambda r: (sign * getattr(r, sort), r.docno))
    assert [r.docno for r in full] == sorted(r.docno for r in full)
    page = term_postings(searcher, "apple", variant, sort=sort, ascending=ascending, limit=None)
    assert list(page.rows) == expected
    pages = []
    for offset in range(0, len(full) + 7, 7):  # small pages take the partition path
        pages += term_postings(
            searcher, "apple", variant, sort=sort, ascending=ascending, offset=offset, limit=7
        ).rows
    assert pages == expected
    streamed = list(iter_postings(searcher, "apple", variant, sort=sort, ascending=ascending))
    assert streamed == expected


def test_postings_rows_are_right(store: IndexStore, index_name: str) -> None:
    index = store.open(index_name)
    searcher = Searcher(index)
    page = term_postings(searcher, "kiwi", get_variant("lucene"), limit=None)
    for r in page.rows:
        assert r.docid == index.docid(r.docno)
        assert r.length == index.doc(r.docno).length
        assert r.tf == index.text(r.docno).split().count("kiwi")
    assert page.idf == searcher.weight("kiwi", get_variant("lucene")).idf  # type: ignore[union-attr]


def test_a_word_is_analysed_and_an_unknown_term_is_a_key_error(
    store: IndexStore, tmp_path: Path
) -> None:
    path = tmp_path / "p.tsv"
    path.write_text("a\trunning dogs\nb\tthe dog runs\n", "utf-8")
    porter = Analyzer.create(stopwords="en", stemmer="porter")
    build_index(path, name="p", fmt="msmarco-passages", store=store, analyzer=porter)
    searcher = Searcher(store.open("p"))
    page = term_postings(searcher, "Dogs", get_variant("lucene"))
    assert page.term == "dog"
    assert [r.docid for r in page.rows] == ["a", "b"]
    with pytest.raises(KeyError, match="'cats' is in no document"):
        term_postings(searcher, "cats", get_variant("lucene"))
    with pytest.raises(BrowseError, match="offset must be 0 or more"):
        term_postings(searcher, "dog", get_variant("lucene"), offset=-1)
    with pytest.raises(BrowseError, match="cannot sort postings by 'df'"):
        term_postings(searcher, "dog", get_variant("lucene"), sort="df")


def test_removed_documents_leave_the_postings(store: IndexStore, index_name: str) -> None:
    before = term_postings(Searcher(store.open(index_name)), "apple", get_variant("lucene"))
    gone = before.rows[0].docid
    remove_documents(index_name, [gone], store=store)
    after = term_postings(Searcher(store.open(index_name)), "apple", get_variant("lucene"))
    assert after.df == before.df - 1
    assert gone not in {r.docid for r in after.rows}


def test_document_terms_match_the_ledger(store: IndexStore, index_name: str) -> None:
    index = store.open(index_name)
    searcher = Searcher(index)
    variant = get_variant("bm25plus", delta=0.5)
    for docid in ("d000", "d017", "d119"):
        doc = document_terms(searcher, docid, variant)
        words = index.text(index.docno(docid)).split()  # type: ignore[arg-type]
        assert doc.exact
        assert {r.term: r.tf for r in doc.rows} == {w: words.count(w) for w in set(words)}
        assert sum(r.tf for r in doc.rows) == doc.length == len(words)
        assert [r.weight for r in doc.rows] == sorted((r.weight for r in doc.rows), reverse=True)
        for row in doc.rows:
            ledger = searcher.explain(row.term, docid, variant)
            assert ledger.score == row.weight
            assert ledger.terms[0].df == row.df
    with pytest.raises(KeyError, match="no document with id 'nope'"):
        document_terms(searcher, "nope", variant)


def test_document_terms_of_a_cjk_index(store: IndexStore, tmp_path: Path) -> None:
    path = tmp_path / "zh.tsv"
    path.write_text("z1\t学而时习之 Confucius\nz2\t不亦说乎\n", "utf-8")
    build_index(
        path,
        name="zh",
        fmt="msmarco-passages",
        store=store,
        analyzer=Analyzer.create(tokenizer="cjk", stopwords="none", stemmer="none"),
    )
    searcher = Searcher(store.open("zh"))
    doc = document_terms(searcher, "z1", get_variant("lucene"))
    assert doc.exact
    assert sorted(r.term for r in doc.rows) == ["confucius", "习之", "学而", "时习", "而时"]
    page = term_postings(searcher, "时习", get_variant("lucene"))
    assert [r.docid for r in page.rows] == ["z1"]
    assert [r.term for r in list_terms(searcher.index, prefix="不", sort="term").rows] == ["不亦"]


def test_contributions_are_float64_exact(store: IndexStore, index_name: str) -> None:
    """The page's contribution is the same float the kernel sums, not a re-rounded one."""
    searcher = Searcher(store.open(index_name))
    variant = get_variant("lucene")
    w = searcher.weight("fig", variant)
    page = term_postings(searcher, "fig", variant, limit=1)
    r = page.rows[0]
    assert w is not None
    expected = w.idf * float(w.tf_part(np.array([float(r.tf)]), np.array([float(r.length)]))[0])
    assert r.contribution == expected

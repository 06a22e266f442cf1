"""Searching real Chinese, Japanese and Korean text (tests/data/cjk) with the cjk tokenizer: each
query finds its document first, highlights fall on the words searched for, and the index stores
exactly the analyser's tokens."""

from __future__ import annotations

import unicodedata
from collections import Counter
from pathlib import Path

import pytest

from bm25desk.engine import Analyzer, IndexStore, Searcher, build_index, get_variant
from bm25desk.engine.index.reader import Index

DATA = Path(__file__).resolve().parents[2] / "data" / "cjk"

QUERIES = {
    "zh": [
        ("熊掌", "zh-mengzi"),
        ("明月", "zh-libai"),
        ("知己知彼", "zh-sunzi"),
        ("北京大学", "zh-beida"),
        ('"北京大学"', "zh-beida"),
        ("桃花源", "zh-taohuayuan"),
        ("长江流域", "zh-changjiang"),
        ("天命", "zh-lunyu-2"),
    ],
    "ja": [
        ("吾輩は猫", "ja-neko"),
        ("羅生門", "ja-rashomon"),
        ("先生", "ja-kokoro"),
        ("東京タワー", "ja-tower"),
        ("ＮＨＫ", "ja-tower"),  # full-width in the query, full-width in the text
        ("nhk", "ja-tower"),
        ("テレビ", "ja-tower"),  # the text has half-width ﾃﾚﾋﾞ
        ("旅人", "ja-okunohosomichi"),
        ("無鉄砲", "ja-botchan"),
        ("マケズ", "ja-amenimo"),
    ],
    "ko": [
        ("세종대왕", "ko-hangul"),
        ("한라산", "ko-jeju"),
        ("김치", "ko-kimchi"),
        ("해운대 해수욕장", "ko-busan"),
        ("올림픽", "ko-taekwondo"),
        ("비빔밥", "ko-bibimbap"),
        ("수도", "ko-seoul"),
    ],
}


@pytest.fixture(scope="module")
def cjk_store(tmp_path_factory: pytest.TempPathFactory) -> IndexStore:
    store = IndexStore(tmp_path_factory.mktemp("cjk-indexes"))
    analyzer = Analyzer.create(tokenizer="cjk", stopwords="en", stemmer="porter")
    for lang in QUERIES:
        build_index(DATA / f"{lang}.jsonl", name=lang, fmt="beir", analyzer=analyzer, store=store)
    return store


@pytest.mark.parametrize(
    ("lang", "query", "expected"),
    [(lang, q, d) for lang, pairs in QUERIES.items() for q, d in pairs],
)
@pytest.mark.parametrize("variant", ["lucene", "bm25l", "tfidf"])
def test_each_query_finds_its_document(
    cjk_store: IndexStore, lang: str, query: str, expected: str, variant: str
) -> None:
    searcher = Searcher(cjk_store.open(lang))
    result = searcher.search(query, get_variant(variant), 3)
    assert result.hits[0].docid == expected
    # highlights in the document found fall on the characters searched for
    top = result.hits[0]
    text = searcher.index.text(top.docno)
    terms = set(result.analysis.terms)
    spans = searcher.index.analyzer.spans(text, terms)
    assert spans
    # every query term the document holds is highlighted, and only those
    assert {t for _, _, t in spans} == terms & set(searcher.index.analyzer.terms(text))
    for start, end, term in spans:  # on the characters as written (width-folded, composed)
        assert unicodedata.normalize("NFKC", text[start:end]).lower() == term


def test_info_shows_the_analyzer(cjk_store: IndexStore) -> None:
    index = cjk_store.open("ja")
    assert index.manifest["analyzer"]["tokenizer"] == "cjk"
    assert index.analyzer.describe().startswith("CJK bigram tokenizer")


@pytest.mark.parametrize("lang", list(QUERIES))
def test_the_index_holds_exactly_the_analyzers_tokens(cjk_store: IndexStore, lang: str) -> None:
    """Every document's stored length and postings are those of analysing its stored text with
    the query analyser (the build uses the analyser's Python path for cjk)."""
    index: Index = cjk_store.open(lang)
    for docno in range(index.n_slots):
        terms = Counter(index.analyzer.terms(index.text(docno)))
        assert index.doc(docno).length == sum(terms.values())
        for term, tf in terms.items():
            docnos, tfs = index.postings(term)
            hit = docnos.tolist().index(docno)
            assert int(tfs[hit]) == tf


def test_snippets_highlight_the_query(cjk_store: IndexStore) -> None:
    from bm25desk.ui.search.work import make_snippet  # Qt-free

    searcher = Searcher(cjk_store.open("zh"))
    hit = searcher.search("明月", get_variant("lucene"), 1).hits[0]
    snippet = make_snippet(searcher.index.analyzer, searcher.index.text(hit.docno), {"明月"})
    assert [snippet.text[s:e] for s, e, _ in snippet.spans] == ["明月", "明月"]

"""Filters restrict a ranking exactly; facets count what a query matches under the other filters."""

from __future__ import annotations

import datetime as dt
import random
from collections import Counter
from unittest import mock

import numpy as np
import pytest

from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.index.build import commit, write_segments
from bm25desk.engine.index.reader import Index
from bm25desk.engine.readers.corpus import Document
from bm25desk.engine.scoring.facets import facets, matching_mask
from bm25desk.engine.scoring.family import Lucene
from bm25desk.engine.scoring.filters import FILTERED_NOTE, FilterError, Filters, filter_mask
from bm25desk.engine.scoring.search import Searcher
from bm25desk.engine.scoring.variants import all_variants

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"]
WORDS += ["eta", "theta", "iota", "kappa", "lambda", "mu"]
TYPES = ["pdf", "md", "txt"]
FOLDERS = [".", "notes", "notes/2024", "notes/2024/june", "mail", "notesx"]
LANGS = ["en", "fr", "de"]
N = 240


def _day(i: int) -> float:
    """A local noon in 2023 or 2024, spread over the documents."""
    day = dt.date(2023, 1, 1) + dt.timedelta(days=(i * 7) % 700)
    return dt.datetime.combine(day, dt.time(12)).timestamp()


def _doc(i: int, rng: random.Random) -> Document:
    text = " ".join(rng.choice(WORDS[: 4 + i % 8]) for _ in range(rng.randint(3, 30)))
    mtime = _day(i)
    meta = [
        ("type", TYPES[i % 3]),
        ("folder", FOLDERS[i % len(FOLDERS)]),
        ("year", str(dt.datetime.fromtimestamp(mtime).year)),
    ]
    if i % 5:
        meta.append(("lang", LANGS[i % 3 if i % 7 else 0]))
    return Document(docid=f"d{i}", text=text, mtime=mtime, meta=tuple(meta))


@pytest.fixture(scope="module")
def docs() -> list[Document]:
    rng = random.Random(14)
    return [_doc(i, rng) for i in range(N)]


@pytest.fixture(scope="module")
def index(docs: list[Document], tmp_path_factory: pytest.TempPathFactory) -> Index:
    directory = tmp_path_factory.mktemp("filtered") / "ix"
    directory.mkdir()
    analyzer = Analyzer()
    with mock.patch("os.fsync"):
        names, _ = write_segments(directory, iter(docs), analyzer, None, max_postings=400)
        commit(
            directory,
            name="ix",
            analyzer=analyzer,
            source={"kind": "memory", "meta_keys": ["type", "folder", "year", "lang"]},
            segments=[(n, None) for n in names],
        )
    return Index(directory)


def _passes(doc: Document, f: Filters) -> bool:
    """The filters' rules, written out plainly over one document."""
    meta: dict[str, set[str]] = {}
    for k, v in doc.meta:
        meta.setdefault(k, set()).add(v)
    if f.types and not meta.get("type", set()) & set(f.types):
        return False
    if f.folders:
        folder = next(iter(meta["folder"]))
        if not any(g == "." or folder == g or folder.startswith(g + "/") for g in f.folders):
            return False
    for key, values in f.where:
        if not meta.get(key, set()) & set(values):
            return False
    day = dt.datetime.fromtimestamp(doc.mtime).date()
    if f.modified_from is not None and day < f.modified_from:
        return False
    return not (f.modified_to is not None and day > f.modified_to)


FILTERS = [
    Filters.of(types=["pdf"]),
    Filters.of(types=[".PDF", "md"]),
    Filters.of(folders=["notes/2024"]),
    Filters.of(folders=["notes"], types=["txt"]),
    Filters.of(folders=["."]),
    Filters.of(where={"lang": "en"}),
    Filters.of(where=[("lang", "en"), ("lang", "de"), ("type", "md")]),
    Filters.of(modified_from="2024-01-01"),
    Filters.of(modified_from="2023-03-01", modified_to="2023-06-30", types=["md"]),
    Filters.of(where={"lang": ["zz"]}),
]


@pytest.mark.parametrize("f", FILTERS, ids=lambda f: repr(f.as_dict()))
def test_the_mask_is_the_rules_written_out(index: Index, docs: list[Document], f: Filters) -> None:
    mask = filter_mask(index, f)
    want = [_passes(d, f) for d in docs]
    assert mask.tolist() == want
    assert filter_mask(index, f) is mask  # cached per (index, filters)
    with pytest.raises(ValueError, match="read-only"):
        mask[0] = True  # read-only: a search cannot spoil the cache


@pytest.mark.parametrize("strategy", ["kernel", "exhaustive"])
@pytest.mark.parametrize("query", ["alpha", "beta gamma theta", "+delta alpha -beta", "mu"])
def test_filtered_top_k_is_the_ranking_restricted(
    index: Index, docs: list[Document], strategy: str, query: str
) -> None:
    searcher = Searcher(index, strategy=strategy)
    for variant in all_variants():
        full = searcher.search(query, variant, k=N, contributions=False)
        ranked = list(zip(full.hits.docids(), full.hits.scores.tolist(), strict=True))
        for f in FILTERS:
            keep = {d.docid for d in docs if _passes(d, f)}
            want = [p for p in ranked if p[0] in keep]
            got = searcher.filtered(f).search(query, variant, k=7)
            assert [(h.docid, h.score) for h in got.hits] == want[:7], (variant.key, f)
            assert got.n_matches == len(want)
            assert got.n_docs == index.n_docs  # N stays the collection's
    assert searcher.filters is None  # filtered() leaves the original alone


def test_explanation_says_the_statistics_are_the_collections(index: Index) -> None:
    searcher = Searcher(index)
    plain = searcher.explain("alpha beta", "d3")
    filtered = searcher.filtered(Filters.of(types=["pdf"])).explain("alpha beta", "d3")
    assert filtered.score == plain.score
    assert all(FILTERED_NOTE in t.notes for t in filtered.terms)
    assert not any(FILTERED_NOTE in t.notes for t in plain.terms)


@pytest.mark.parametrize(
    ("query", "f"),
    [
        (None, Filters()),
        ("alpha", Filters()),
        ("beta -gamma", Filters.of(types=["pdf"], where={"lang": "en"})),
        ("delta", Filters.of(folders=["notes"], modified_from="2024-01-01")),
    ],
)
def test_facets_count_the_matches_under_the_other_filters(
    index: Index, docs: list[Document], query: str | None, f: Filters
) -> None:
    searcher = Searcher(index)
    parsed = searcher.parse(query) if query is not None else None
    matched = matching_mask(index, parsed)
    got = facets(index, parsed, f)
    assert got.keys() == ("type", "folder", "year", "lang")
    for key in got:
        others = f.without(key)
        counts: Counter[str] = Counter()
        for i, d in enumerate(docs):
            if matched[i] and _passes(d, others):
                counts.update(v for k, v in d.meta if k == key)
        want = tuple(sorted(counts.items(), key=lambda p: (-p[1], p[0])))
        assert got[key] == want, key
    if query is not None:
        result = searcher.filtered(f).search(query, k=N)
        assert len(result.hits) == int((matched & filter_mask(index, f)).sum())


def test_bad_filters_say_what_is_wrong(index: Index, make_index) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FilterError, match="metadata key 'colour'"):
        filter_mask(index, Filters.of(where={"colour": "red"}))
    with pytest.raises(FilterError, match="is after"):
        Filters.of(modified_from="2024-02-01", modified_to="2024-01-31")
    with pytest.raises(FilterError, match="not a date"):
        Filters.of(modified_from="31/01/2024")
    plain = make_index(["one two", "three four"])
    with pytest.raises(FilterError, match="no file types"):
        filter_mask(plain, Filters.of(types=["pdf"]))
    with pytest.raises(FilterError, match="no modification dates"):
        filter_mask(plain, Filters.of(modified_to="2024-01-01"))
    with pytest.raises(FilterError):
        facets(plain, None, Filters.of(where={"lang": "en"}))
    assert facets(plain, None).counts == ()


def test_filters_are_normalised_values() -> None:
    f = Filters.of(types=["PDF", ".pdf", " md "], folders=["notes/", "./a\\b", ""], where={})
    assert f.types == ("md", "pdf")
    assert f.folders == (".", "a/b", "notes")
    assert not Filters()
    assert Filters.of(where={"lang": ["en", "en", " "]}).where == (("lang", ("en",)),)
    assert hash(f) == hash(Filters.of(types=["md", "pdf"], folders=["a/b", "notes", "."]))
    assert f.as_dict()["types"] == ["md", "pdf"]


def test_deleted_documents_never_pass(index: Index) -> None:
    live = np.ones(index.n_slots, dtype=bool)
    live[[0, 3]] = False
    with mock.patch.dict(index.__dict__, {"live": live}):
        mask = filter_mask(index, Filters.of(folders=["."], types=["pdf", "md", "txt"]))
    assert mask.tolist()[:4] == [False, True, True, False]


def test_batch_search_and_the_dense_view_keep_to_the_filters(index: Index) -> None:
    f = Filters.of(folders=["notes"], where={"lang": ["en", "de"]})
    searcher = Searcher(index).filtered(f)
    queries = ["alpha", "gamma delta", "kappa -alpha"]
    batch = searcher.search_many(queries, k=5, threads=2)
    for query, got in zip(queries, batch, strict=True):
        one = searcher.search(query, k=5, contributions=False)
        assert not isinstance(got, Exception)
        assert got.hits.docids() == one.hits.docids()
    parsed = searcher.parse("alpha")
    _, matched = searcher.scores(parsed, Lucene())
    assert not (matched & ~filter_mask(index, f)).any()
    assert matched.sum() == searcher.search("alpha", k=5).n_matches

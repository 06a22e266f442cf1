"""Reserved terms (fields, metadata) ride in the postings without changing the body's statistics."""

from __future__ import annotations

from pathlib import Path
from unittest import mock

import numpy as np
import pytest

from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.index.build import commit, write_segments
from bm25desk.engine.index.check import _check
from bm25desk.engine.index.reader import Index
from bm25desk.engine.index.reserved import (
    field_length_term,
    field_prefix,
    field_term,
    meta_prefix,
    meta_term,
    reserved_postings,
)
from bm25desk.engine.readers.corpus import Document
from bm25desk.engine.scoring.search import Searcher

TEXTS = [
    "the cat sat on the mat with another cat",
    "a dog chased the cat across the garden",
    "dogs and cats living together in one house",
    "birds sing at dawn in the garden",
]
TITLES = ["Cat notes", "Dog notes", "", "Birds"]
FIELDS = [
    (("name", "cat-notes.md"), ("heading", "Cats cats and more cats")),
    (("name", "dog.txt"),),
    (),
    (("name", "birds.html"), ("heading", "Dawn chorus"), ("heading", "Garden birds")),
]
META = [
    (("type", "md"), ("folder", "pets")),
    (("type", "txt"), ("folder", "pets")),
    (("type", "txt"),),
    (("type", "html"), ("folder", "nature/birds")),
]


def _plain_and_reserved(make_index):  # type: ignore[no-untyped-def]
    plain = make_index(TEXTS, titles=TITLES)
    rich = make_index(TEXTS, titles=TITLES, fields=FIELDS, meta=META)
    return plain, rich


def test_reserved_terms_change_no_body_statistic_or_score(make_index) -> None:  # type: ignore[no-untyped-def]
    plain, rich = _plain_and_reserved(make_index)
    assert rich.n_docs == plain.n_docs
    assert rich.n_terms == plain.n_terms
    assert rich.avgdl == plain.avgdl
    assert np.array_equal(np.asarray(rich.doclen), np.asarray(plain.doclen))
    assert rich.vocabulary() == plain.vocabulary()
    assert rich.top_terms(1000) == plain.top_terms(1000)
    (rids, rdf, rcf), (pids, pdf, pcf) = rich.term_table(), plain.term_table()
    assert [rich.term_name(int(i)) for i in rids] == [plain.term_name(int(i)) for i in pids]
    assert np.array_equal(rdf, pdf)
    assert np.array_equal(rcf, pcf)
    assert rich.stats.n_terms == plain.stats.n_terms
    for query in ("cat", "garden dog", "birds dawn cats"):
        got = Searcher(rich).search(query, k=10)
        want = Searcher(plain).search(query, k=10)
        assert [h.docid for h in got.hits] == [h.docid for h in want.hits]
        assert [h.score for h in got.hits] == [h.score for h in want.hits]


def test_field_terms_lengths_and_metadata_are_postings(make_index) -> None:  # type: ignore[no-untyped-def]
    rich = make_index(TEXTS, titles=TITLES, fields=FIELDS, meta=META)
    docnos, tfs = rich.postings(field_term("heading", "cats"))
    assert docnos.tolist() == [0]
    assert tfs.tolist() == [3]
    docnos, tfs = rich.postings(field_length_term("heading"))
    assert docnos.tolist() == [0, 3]
    assert tfs.tolist() == [5, 4]
    docnos, _ = rich.postings(meta_term("type", "txt"))
    assert docnos.tolist() == [1, 2]
    ids, df, _ = rich.reserved_table(meta_prefix("type"))
    values = [rich.term_name(int(i))[len(meta_prefix("type")) :] for i in ids]
    assert dict(zip(values, df.tolist(), strict=True)) == {"html": 1, "md": 1, "txt": 2}
    ids, _, _ = rich.reserved_table(field_prefix("name"))
    assert len(ids) > 0
    with pytest.raises(ValueError, match="reserved prefix"):
        rich.reserved_table("cat")


def test_reserved_terms_survive_merges_and_a_merged_lexicon(make_index, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    merged = make_index(TEXTS, titles=TITLES, fields=FIELDS, meta=META, max_postings=8)
    assert merged.postings(meta_term("type", "txt"))[0].tolist() == [1, 2]
    # Two segments committed together: the commit writes a merged lexicon.
    analyzer = Analyzer()
    with mock.patch("os.fsync"):
        names: list[str] = []
        for lo, hi in ((0, 2), (2, 4)):
            docs = (
                Document(
                    docid=f"d{i}", text=TEXTS[i], title=TITLES[i], fields=FIELDS[i], meta=META[i]
                )
                for i in range(lo, hi)
            )
            names += write_segments(tmp_path, iter(docs), analyzer, None)[0]
        commit(
            tmp_path,
            name="two",
            analyzer=analyzer,
            source={"kind": "memory"},
            segments=[(n, None) for n in names],
        )
    two = Index(tmp_path)
    assert len(two.segments) == 2
    assert two.manifest["lexicon"]
    plain = make_index(TEXTS, titles=TITLES)
    assert two.n_terms == plain.n_terms
    assert two.postings(meta_term("type", "txt"))[0].tolist() == [1, 2]
    assert two.postings(field_length_term("heading"))[1].tolist() == [5, 4]
    assert _check(tmp_path, "two", repair=False).ok


@pytest.mark.parametrize("tokenizer", ["word", "whitespace", "treebank", "cjk"])
def test_no_tokenizer_makes_a_reserved_term(tokenizer: str) -> None:
    analyzer = Analyzer(tokenizer=tokenizer)
    text = "a\x1ff\x1ftitle\x1fcat \x1fm\x1ftype\x1fpdf b\x1f c"
    assert not any("\x1f" in t for t in analyzer.terms(text))


def test_reserved_postings_analyse_fields_and_keep_metadata_verbatim() -> None:
    got = reserved_postings(
        [("title", "Cats and cats"), ("title", "cat"), ("empty", "")],
        [("folder", "a/b c"), ("type", "pdf")],
        Analyzer().terms,
    )
    assert got[field_term("title", "cats")] == 2
    assert got[field_term("title", "cat")] == 1
    assert got[field_length_term("title")] == 4
    assert field_length_term("empty") not in got
    assert got[meta_term("folder", "a/b c")] == 1
    assert got[meta_term("type", "pdf")] == 1
    with pytest.raises(ValueError, match="must not contain"):
        field_term("bad\x1fname", "x")

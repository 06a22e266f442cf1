"""Checks of an experiment's inputs and outcome (checks.py): notes, hints, refusals (issue 16.8)."""

from __future__ import annotations

import pytest
from evalkit import DOCS, FakeSearcher

from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.index.build import build_index
from bm25desk.engine.index.store import IndexStore
from bm25desk.engine.scoring.search import Searcher
from bm25desk.engine.scoring.variants import get_variant
from bm25desk.evaluation.data import EvalInputError
from bm25desk.evaluation.experiments import run_experiment
from bm25desk.evaluation.metrics import EvalOptions
from bm25desk.evaluation.qrels import parse_qrels
from bm25desk.evaluation.queries import parse_queries
from bm25desk.evaluation.results import ImplausibleResultError

LUCENE = [get_variant("lucene")]


# -- judged documents the index does not hold ----------------------------------------------------


def test_missing_non_relevant_documents_change_no_metric(searcher):
    """Issue 16.8: "(0 relevant) ... still count as relevant" contradicted itself."""
    judged = {"q1": {"d1": 1, "gone1": 0, "gone2": 0}}
    res = run_experiment(searcher, {"q1": "cats"}, judged, LUCENE, ["RR@10"], k=5)
    assert res.missing_relevant == 0
    assert [n for n in res.notes if "not in the index" in n] == [
        "2 judged documents in 1 queries are not in the index; all are judged non-relevant, "
        "so they change no metric"
    ]


def test_missing_documents_relevant_and_not(searcher):
    judged = {"q1": {"d1": 1, "gone1": 1, "gone2": 0}}
    res = run_experiment(searcher, {"q1": "cats"}, judged, LUCENE, ["R@100"], k=5)
    (note,) = [n for n in res.notes if "not in the index" in n]
    assert note == (
        "2 judged documents in 1 queries are not in the index; the 1 judged relevant count as "
        "relevant and unretrieved (in recall and in nDCG's ideal ranking), the other 1 change "
        "no metric"
    )
    assert res.configs[0].aggregate["R@100"] == pytest.approx(0.5)  # gone1 counts, gone2 not


def test_relevant_documents_none_of_which_is_indexed_are_refused(searcher):
    qrels = parse_qrels("q1 0 x1 1\nq2 0 x2 1\nq2 0 d1 0\n")
    with pytest.raises(EvalInputError) as info:
        run_experiment(searcher, {"q1": "cats", "q2": "dogs"}, qrels, LUCENE)
    message = str(info.value)
    assert "none of the 2 relevant judged documents is in the index" in message
    assert "judged ids look like 'x1', 'x2'" in message
    assert "read as trec from <string>" in message


def test_the_real_index_shows_its_ids(tmp_path):
    corpus = tmp_path / "docs.tsv"
    corpus.write_text("".join(f"{d}\t{t}\n" for d, t in DOCS.items()))
    store = IndexStore(tmp_path / "store")
    build_index(corpus, name="tiny", analyzer=Analyzer(), store=store)
    with pytest.raises(EvalInputError, match="indexed ids look like 'd1', 'd2', 'd3'"):
        run_experiment(Searcher(store.open("tiny")), {"q1": "cats"}, {"q1": {"0": 1}}, LUCENE)


# -- every metric 0 ----------------------------------------------------------------------------

# "cats" retrieves d1, d2 and d5; d4 is about birds and never comes back.
ZERO_JUDGED = {f"q{i}": {"d4": 1, "d1": 0} for i in range(1, 6)}


def test_every_metric_zero_is_refused_with_the_result(searcher):
    queries = {f"q{i}": "cats" for i in range(1, 6)}
    with pytest.raises(ImplausibleResultError) as info:
        run_experiment(searcher, queries, ZERO_JUDGED, LUCENE, ["RR@10", "nDCG@10", "Judged@10"])
    message = str(info.value)
    assert message.startswith("every metric is 0 for every configuration although 5 judged")
    assert "(5 retrieved documents are judged, none relevant)" in message
    assert "--qrels-format" in message
    result = info.value.result
    assert result.configs[0].aggregate["RR@10"] == 0.0
    assert result.configs[0].aggregate["Judged@10"] > 0  # Judged@k is not asked to be above 0
    assert isinstance(info.value, EvalInputError)  # callers that catch input errors see it


def test_every_metric_zero_over_few_queries_is_a_note(searcher):
    queries = {f"q{i}": "cats" for i in range(1, 5)}
    res = run_experiment(searcher, queries, ZERO_JUDGED, LUCENE, ["RR@10"])
    assert any(n.startswith("every metric is 0") for n in res.notes)


def test_zero_without_hits_is_not_refused(searcher):
    queries = {f"q{i}": "fish" for i in range(1, 6)}  # nothing matches: honest zeros
    res = run_experiment(searcher, queries, ZERO_JUDGED, LUCENE, ["RR@10"])
    assert res.configs[0].aggregate["RR@10"] == 0.0
    assert not any("every metric is 0" in n for n in res.notes)


# -- self hits ---------------------------------------------------------------------------------

# ArguAna's shape: every query is itself a document of the collection.
ARGS = {
    "a1": "school uniforms restrict the freedom of pupils",
    "a2": "uniforms cost parents money every year",
    "a3": "homework harms the sleep of children",
    "c1": "pupils keep their freedom with a school uniform policy",
    "c2": "parents save money on clothes with uniforms",
    "c3": "children learn discipline from homework",
}
ARG_QUERIES = {q: ARGS[q] for q in ("a1", "a2", "a3")}
COUNTERS = {"a1": {"c1": 1}, "a2": {"c2": 1}, "a3": {"c3": 1}}


def test_queries_that_find_themselves_get_a_hint():
    res = run_experiment(FakeSearcher(ARGS), ARG_QUERIES, COUNTERS, LUCENE, ["nDCG@10"], k=10)
    (hint,) = res.hints
    assert hint in res.notes  # shown wherever notes are
    assert hint.startswith("3 of 3 queries rank a document with the query's own id first")
    assert "--drop-self-hits" in hint
    dropped = run_experiment(
        FakeSearcher(ARGS),
        ARG_QUERIES,
        COUNTERS,
        LUCENE,
        ["nDCG@10"],
        k=10,
        options=EvalOptions(drop_self_hits=True),
    )
    assert dropped.hints == ()
    assert dropped.configs[0].aggregate["nDCG@10"] > res.configs[0].aggregate["nDCG@10"]


def test_ids_that_merely_coincide_get_no_hint(searcher):
    """CISI numbers queries and documents 1, 2, 3...: the same ids, no self hits."""
    res = run_experiment(searcher, {"d1": "birds", "d2": "sleeping"}, {"d1": {"d4": 1}}, LUCENE)
    assert res.hints == ()


# -- SMART query numbers against judgements that count positions --------------------------------


def test_positions_instead_of_smart_numbers_get_a_hint(searcher):
    queries = parse_queries(".I 1\n.W\ncats\n.I 4\n.W\nbirds\n.I 9\n.W\nsleeping dogs\n")
    judged = {"1": {"d1": 1}, "2": {"d4": 1}, "3": {"d3": 1}}
    res = run_experiment(searcher, queries, judged, LUCENE, ["RR@10"])
    (hint,) = res.hints
    assert "(3 against 1 judged queries)" in hint
    assert "--smart-ids ordinal" in hint
    ordinal = parse_queries(".I 1\n.W\ncats\n.I 4\n.W\nbirds\n", smart_ids="ordinal")
    assert ordinal.ids() == ("1", "2")
    assert run_experiment(searcher, ordinal, judged, LUCENE, ["RR@10"]).hints == ()

"""Tests for evaluation: readers (topics.py), metrics via ir_measures, experiments, CLI."""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import itertools
import json
import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import ir_measures
import numpy as np
import pytest

from bm25desk.engine.progress import Cancelled, CancelToken
from bm25desk.engine.scoring.search import QueryError
from bm25desk.engine.scoring.variants import get_variant
from bm25desk.evaluation.cli import add_eval_commands, parse_range
from bm25desk.evaluation.evaluate import (
    DEFAULT_METRICS,
    EvalInputError,
    EvalOptions,
    Qrels,
    Query,
    Ranking,
    Run,
    compare_to_baseline,
    detect_qrels_format,
    detect_queries_format,
    evaluate_run,
    export_experiment,
    format_run,
    metric_cutoff,
    paired_test,
    parse_metrics,
    parse_qrels,
    parse_queries,
    parse_run,
    read_qrels,
    read_queries,
    read_run,
    run_experiment,
    sweep,
    write_run,
)

EVAL_DATA = Path(__file__).resolve().parents[1] / "data" / "eval"
CISI = Path(__file__).resolve().parents[2] / "bm25desk" / "data" / "sample"  # shipped
SCIFACT = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "scifact"  # optional


def reasons(obj: object) -> list[str]:
    return [f"{s.where.rsplit(':', 1)[1]}: {s.reason}" for s in obj.skipped]  # type: ignore[attr-defined]


def lines_of(obj: object) -> list[int]:
    return [int(s.where.rsplit(":", 1)[1]) for s in obj.skipped]  # type: ignore[attr-defined]


# =============================================================================================
# Query readers
# =============================================================================================


class TestQueries:
    def test_tsv_reports_malformed_lines(self):
        q = read_queries(EVAL_DATA / "queries.tsv")
        assert q.format == "tsv"
        assert q.ids() == ("1048585", "2")
        assert q.text("1048585") == "what is paula deen's brother"
        assert lines_of(q) == [3, 4]
        assert "no tab" in q.skipped[0].reason
        assert "no text" in q.skipped[1].reason

    def test_tsv_duplicate_ids_keep_first(self):
        q = parse_queries("1\tfirst\n1\tsecond\n2\tother\n", format="tsv")
        assert [x.text for x in q] == ["first", "other"]
        assert lines_of(q) == [2]
        assert "duplicate" in q.skipped[0].reason

    def test_beir_jsonl(self):
        q = read_queries(EVAL_DATA / "queries.jsonl")
        assert q.format == "beir"
        assert q.ids() == ("0", "2", "6")  # integer _id read as a string
        assert lines_of(q) == [4, 6, 7]
        assert "no 'text'" in q.skipped[0].reason
        assert "invalid JSON" in q.skipped[1].reason
        assert "_id" in q.skipped[2].reason

    def test_beir_json_string_with_unicode_line_separator_is_one_line(self):
        text = '{"_id": "1", "text": "a\u2028b"}\n{"_id": "2", "text": "c"}\n'
        q = parse_queries(text)
        assert q.ids() == ("1", "2")
        assert q.text("1") == "a\u2028b"
        assert not q.skipped

    def test_trec_topics_title(self):
        q = read_queries(EVAL_DATA / "topics.trec")
        assert q.format == "trec"
        # multi-line title joined, "Topic:" label removed
        assert [(x.qid, x.text) for x in q] == [
            ("401", "foreign minorities, Germany"),
            ("402", "behavioral genetics"),
        ]
        assert reasons(q) == ["22: topic 403 has no <title> text", "30: topic without a <num>"]

    def test_trec_topics_desc_field(self):
        q = read_queries(EVAL_DATA / "topics.trec", field="desc")
        assert q.text("401") == (
            "What language and cultural differences impede the integration "
            "of foreign minorities in Germany?"
        )
        assert q.text("403") == "A topic whose title is empty."

    def test_trec_xml_topics(self):
        q = read_queries(EVAL_DATA / "topics.xml")
        assert [(x.qid, x.text) for x in q] == [("201", "raspberry pi"), ("202", "uss carl vinson")]
        q = read_queries(EVAL_DATA / "topics.xml", field="desc")
        assert q.text("201") == "What is a raspberry pi?"

    def test_smart_cisi_style(self):
        q = read_queries(EVAL_DATA / "small.QRY")  # CRLF, .T/.A/.W/.B records
        assert q.format == "smart"
        assert q.ids() == ("1", "2")
        # only .W, lines stripped and joined with one space
        assert q.text("1") == (
            "What problems and concerns are there in making up descriptive titles? "
            "What difficulties are involved?"
        )
        assert reasons(q) == ["14: query .I 3 has no .W field"]
        assert q.notes == ()

    def test_cranfield_ids_are_ordinal_by_file_name(self):
        q = read_queries(EVAL_DATA / "cran.qry")
        assert q.ids() == ("1", "2", "3")  # .I 001, 002, 004
        assert q.text("3").startswith("what problems of heat conduction")
        assert any("positions" in n for n in q.notes)

    def test_cranfield_declared_ids_on_request(self):
        q = read_queries(EVAL_DATA / "cran.qry", smart_ids="declared")
        assert q.ids() == ("1", "2", "4")  # leading zeros dropped
        assert not q.notes

    def test_smart_ordinal_when_asked_for_any_file(self):
        text = ".I 10\n.W\nfirst\n.I 20\n.W\nsecond\n"
        assert parse_queries(text, smart_ids="ordinal").ids() == ("1", "2")
        assert parse_queries(text).ids() == ("10", "20")

    def test_smart_text_before_first_record_and_empty_w(self):
        text = "junk\n.I 1\n.W\n\n.I 2\n.W inline text\n"
        q = parse_queries(text, format="smart")
        assert q.ids() == ("2",)
        assert q.text("2") == "inline text"
        assert reasons(q) == [
            "1: text before the first .I record",
            "2: query .I 1 has an empty .W field",
        ]

    def test_gz_and_latin1(self, tmp_path):
        p = tmp_path / "queries.tsv.gz"
        with gzip.open(p, "wb") as fh:
            fh.write("1\tcaf\xe9 au lait\n".encode("latin-1"))
        q = read_queries(p)
        assert q.format == "tsv"
        assert q.text("1") == "caf\xe9 au lait"
        assert any("Latin-1" in n for n in q.notes)

    @pytest.mark.parametrize(
        ("text", "name", "fmt"),
        [
            ("<top>\n<num> Number: 1\n", "", "trec"),
            ('<topics>\n<topic number="1">', "", "trec"),
            ('{"_id": "1", "text": "x"}', "", "beir"),
            (".I 1\n.W\nx\n", "", "smart"),
            ("1\tx\n", "", "tsv"),
            ("\n\n1\tx\n", "", "tsv"),
            ("", "cran.qry", "smart"),
        ],
    )
    def test_detect(self, text, name, fmt):
        assert detect_queries_format(text, name) == fmt

    def test_undetectable_and_empty_raise(self, tmp_path):
        with pytest.raises(EvalInputError, match="cannot tell the query format"):
            parse_queries("just some words\n")
        with pytest.raises(EvalInputError, match="no queries found"):
            parse_queries("no tab here\n", format="tsv")
        with pytest.raises(EvalInputError, match="unknown query format"):
            parse_queries("1\tx\n", format="csv")
        with pytest.raises(FileNotFoundError):
            read_queries(tmp_path / "missing.tsv")


# =============================================================================================
# Judgement readers
# =============================================================================================


class TestQrels:
    def test_trec(self):
        text = "1 0 d1 1\n1 0 d2 0\n\n2 Q0 d3 2\n2 0 d4\n2 0 d5 x\n1 0 d1 1\n1 0 d2 3\n"
        q = parse_qrels(text)
        assert q.format == "trec"
        assert q.judgements == {"1": {"d1": 1, "d2": 0}, "2": {"d3": 2}}
        assert q.n_queries == 2
        assert q.n_judgements == 3
        assert q.relevant("1") == frozenset({"d1"})
        assert q.relevant("2", min_rel=2) == frozenset({"d3"})
        assert q.relevant("nope") == frozenset()
        assert lines_of(q) == [5, 6, 7, 8]
        assert "expected 4 columns" in q.skipped[0].reason
        assert "not an integer" in q.skipped[1].reason
        assert "(same; first kept)" in q.skipped[2].reason
        assert "(first 0, now 3; first kept)" in q.skipped[3].reason

    def test_beir_tsv_with_crlf_header(self):
        q = read_qrels(EVAL_DATA / "qrels-test.tsv")
        assert q.format == "beir"
        assert q.judgements == {"0": {"31715818": 1}, "2": {"13734012": 1}, "4": {"22942787": 2}}
        assert reasons(q) == ["4: relevance 'x' is not an integer"]

    def test_beir_without_header(self):
        q = parse_qrels("q1\td1\t1\nq1\td2\t0\n", format="beir")
        assert q.judgements == {"q1": {"d1": 1, "d2": 0}}

    def test_cisi_rel(self):
        q = read_qrels(EVAL_DATA / "small.REL")  # spaces then tabs, CRLF
        assert q.format == "smart"
        assert q.judgements == {"1": {"28": 1, "35": 1, "38": 1}, "2": {"29": 1}}
        assert reasons(q) == [
            "5: duplicate judgement 2 29 (same; first kept)",
            "6: SMART ids are numbers, found '3' 'x'",
        ]

    def test_cranfield_grades_are_mapped(self):
        q = read_qrels(EVAL_DATA / "cranqrel")
        assert q.format == "cranfield"
        assert q.judgements["1"] == {"184": 3, "29": 3, "31": 3, "12": 2, "51": 2}
        assert q.judgements["2"] == {"12": 4, "15": 0, "184": 1}  # 1 is best -> 4; -1 -> 0
        assert q.judgements["3"] == {"5": 0}  # 5 ("no interest") -> 0
        assert reasons(q) == [
            "10: Cranfield grade 7 is not one of 1, 2, 3, 4, -1, 5",
            "11: expected 3 columns 'qid docid grade', found 2",
        ]
        assert any("1→4" in n for n in q.notes)

    def test_gz_detection_uses_name_without_gz(self, tmp_path):
        p = tmp_path / "cranqrel.gz"
        p.write_bytes(gzip.compress((EVAL_DATA / "cranqrel").read_bytes()))
        assert read_qrels(p).format == "cranfield"

    @pytest.mark.parametrize(
        ("text", "name", "fmt"),
        [
            ("1 0 d1 1\n", "", "trec"),
            ("1 Q0 d1 1\n", "qrels.txt", "trec"),
            ("query-id\tcorpus-id\tscore\r\n1\t2\t1\r\n", "", "beir"),
            ("     1     28\t0\t0.000000\n", "", "smart"),
            ("1 28 0 0\n", "CISI.REL", "smart"),
            ("1 184 2\n", "cranqrel", "cranfield"),
            ("1 184 2\n1 5 -1\n", "", "cranfield"),
            ("q1\td1\t1\n", "", "beir"),
        ],
    )
    def test_detect(self, text, name, fmt):
        assert detect_qrels_format(text, name) == fmt

    def test_errors(self):
        with pytest.raises(EvalInputError, match="empty"):
            parse_qrels("\n\n")
        with pytest.raises(EvalInputError, match="cannot tell"):
            parse_qrels("a b c d e\n")
        with pytest.raises(EvalInputError, match=r"no judgements found .*:1: expected 4"):
            parse_qrels("a b c\n", format="trec")
        with pytest.raises(EvalInputError, match="unknown judgement format"):
            parse_qrels("1 0 d 1\n", format="xml")

    def test_from_mapping(self):
        q = Qrels.from_mapping({1: {"d": 1}})  # type: ignore[dict-item]
        assert q.judgements == {"1": {"d": 1}}


# =============================================================================================
# Runs
# =============================================================================================


class TestRuns:
    def test_parse_sorts_by_rank_and_reports(self):
        text = (
            "q1 Q0 d2 2 1.5 tagA\n"
            "q1 Q0 d1 1 2.5 tagA\n"
            "q1 Q0 d1 3 0.5 tagA\n"
            "q1 Q0 d3 x 0.5 tagA\n"
            "q1 Q0 d4 4 nan tagA\n"
            "q1 Q0 d5 4 abc tagA\n"
            "q2 Q0 d9 1 1\n"
            "q2 Q0 d9 1 1 tagB\n"
        )
        run = parse_run(text)
        assert run.tag == "tagA"
        assert run.rankings["q1"].docids == ("d1", "d2")
        assert run.rankings["q1"].scores.tolist() == [2.5, 1.5]
        assert run.rankings["q2"].docids == ("d9",)
        assert lines_of(run) == [3, 4, 5, 6, 7]
        assert any("several run tags" in n for n in run.notes)
        assert run.n_hits == 3

    def test_empty_run(self):
        run = parse_run("")
        assert len(run) == 0
        assert format_run(run) == ""

    def test_round_trip_exact_scores(self, tmp_path):
        run = Run(
            {
                "q1": Ranking.of(["d1", "d2", "d3"], [1 / 3, 1 / 3, 1e-17]),
                "q2": Ranking.of(["d9"], [12.345678901234567]),
            },
            tag="Lucene(k1=0.9, b=0.4)",
        )
        for name in ("run.trec", "run.trec.gz"):
            path = write_run(run, tmp_path / name)
            back = read_run(path)
            assert back.tag == "Lucene(k1=0.9,b=0.4)"  # whitespace removed
            assert {q: r.docids for q, r in back.rankings.items()} == {
                q: r.docids for q, r in run.rankings.items()
            }
            for q in run.rankings:
                assert back.rankings[q].scores.tolist() == run.rankings[q].scores.tolist()
        assert not list(tmp_path.glob("*.tmp"))
        first = (tmp_path / "run.trec").read_text().splitlines()[0]
        assert first == "q1 Q0 d1 1 0.3333333333333333 Lucene(k1=0.9,b=0.4)"

    def test_write_refuses_whitespace_ids(self):
        run = Run({"q1": Ranking.of(["my doc.txt"], [1.0])})
        with pytest.raises(ValueError, match="whitespace"):
            format_run(run)

    def test_ranking_is_read_only(self):
        r = Ranking.of(["a"], [1.0])
        with pytest.raises(ValueError, match="read-only"):
            r.scores[0] = 2.0
        with pytest.raises(ValueError, match="docids but"):
            Ranking.of(["a", "b"], [1.0])


# =============================================================================================
# Metrics through ir_measures
# =============================================================================================

QRELS = """\
q1 0 d1 1
q1 0 d2 0
q1 0 d3 2
q2 0 d9 1
q3 0 d1 0
"""


def run_of(rankings: dict[str, list[tuple[str, float]]]) -> Run:
    return Run({q: Ranking.of([d for d, _ in r], [s for _, s in r]) for q, r in rankings.items()})


class TestMetrics:
    def test_parse_metrics(self):
        ms = parse_metrics("MRR@10, nDCG@10,MAP,P_10,recip_rank,R@1000,Judged@10,RR@10")
        assert [str(m) for m in ms] == [
            "RR@10",
            "nDCG@10",
            "AP",
            "P@10",
            "RR",
            "R@1000",
            "Judged@10",
        ]
        assert [str(m) for m in parse_metrics("P(rel=2)@5,nDCG@10")] == ["P(rel=2)@5", "nDCG@10"]
        assert len(parse_metrics(DEFAULT_METRICS)) == 7
        assert metric_cutoff("nDCG@10") == 10
        assert metric_cutoff("AP") is None

    @pytest.mark.parametrize("bad", ["foo", "nDCG@x", "", "RR@10,,bogus@3"])
    def test_unknown_metric(self, bad):
        with pytest.raises(EvalInputError):
            parse_metrics(bad)

    def test_matches_ir_measures_directly(self):
        qrels = parse_qrels(QRELS)
        run = run_of({"q1": [("d1", 3.0), ("d4", 2.0), ("d3", 1.0)], "q3": [("d1", 1.0)]})
        res = evaluate_run(run, qrels, DEFAULT_METRICS)
        direct = ir_measures.calc_aggregate(
            parse_metrics(DEFAULT_METRICS),
            {q: dict(d) for q, d in qrels.judgements.items()},
            {"q1": {"d1": 3.0, "d4": 2.0, "d3": 1.0}, "q3": {"d1": 1.0}},
        )
        for m, v in direct.items():
            assert res.aggregate[str(m)] == pytest.approx(v, abs=1e-12)
        # q2 is judged but absent from the run: counted 0 (trec_eval -c)
        assert res.qids == ("q1", "q2", "q3")
        assert res.query("q2")["RR@10"] == 0.0
        assert res.query("q1")["RR@10"] == 1.0
        assert res.values("MRR@10").tolist() == [1.0, 0.0, 0.0]

    def test_average_all_vs_judged(self):
        qrels = parse_qrels(QRELS)
        run = run_of({"q1": [("d1", 1.0)], "q4": [("d1", 1.0)], "q5": [("x", 1.0)]})
        topic = ["q1", "q2", "q3", "q4", "q5"]
        judged = evaluate_run(run, qrels, ["RR@10"], queries=topic)
        every = evaluate_run(run, qrels, ["RR@10"], queries=topic, options=EvalOptions("all"))
        assert judged.qids == ("q1", "q2", "q3")
        assert judged.unjudged == ("q4", "q5")
        assert judged.aggregate["RR@10"] == pytest.approx(1 / 3)
        assert every.qids == tuple(topic)
        assert every.aggregate["RR@10"] == pytest.approx(1 / 5)
        # d1 is relevant for q1 but q4 is unjudged: 0 under "all", whatever it retrieved
        assert every.query("q4")["RR@10"] == 0.0
        assert judged.aggregate["RR@10"] * 3 == pytest.approx(every.aggregate["RR@10"] * 5)

    def test_default_topic_set_includes_run_only_queries_for_all(self):
        qrels = parse_qrels(QRELS)
        run = run_of({"q1": [("d1", 1.0)], "q9": [("x", 1.0)]})
        res = evaluate_run(run, qrels, ["RR@10"], options=EvalOptions(average="all"))
        assert res.qids == ("q1", "q2", "q3", "q9")

    def test_ties_engine_vs_trec_eval(self):
        # All scores tie. The engine ranked d1 first; trec_eval orders ties by docid descending.
        qrels = parse_qrels("q 0 d1 1\nq 0 d2 0\n")
        run = run_of({"q": [("d1", 1.0), ("d0", 1.0), ("d2", 1.0)]})
        engine = evaluate_run(run, qrels, ["RR@10", "Judged@1"])
        trec = evaluate_run(
            run, qrels, ["RR@10", "Judged@1"], options=EvalOptions(ties="trec_eval")
        )
        assert engine.aggregate["RR@10"] == 1.0
        assert engine.aggregate["Judged@1"] == 1.0
        assert trec.aggregate["RR@10"] == 0.5  # d2, d1, d0
        # the Judged provider breaks ties by docid ascending (d0 first, unjudged)
        assert trec.aggregate["Judged@1"] == 0.0

    def test_empty_run_counts_zero_for_judged_queries(self):
        res = evaluate_run(Run({}), parse_qrels(QRELS), DEFAULT_METRICS)
        assert res.qids == ("q1", "q2", "q3")
        assert all(v == 0.0 for v in res.aggregate.values())

    def test_query_with_empty_ranking(self):
        run = Run({"q1": Ranking.of([], [])})
        res = evaluate_run(run, parse_qrels(QRELS), ["RR@10"])
        assert res.aggregate["RR@10"] == 0.0

    def test_cutoff_larger_than_run(self):
        qrels = parse_qrels("q 0 a 1\nq 0 b 1\nq 0 c 1\nq 0 z 1\n")
        run = run_of({"q": [("a", 3.0), ("x", 2.0), ("b", 1.0)]})
        res = evaluate_run(run, qrels, ["R@1000", "P@10", "Judged@10"])
        assert res.aggregate["R@1000"] == pytest.approx(0.5)
        assert res.aggregate["P@10"] == pytest.approx(0.2)
        assert res.aggregate["Judged@10"] == pytest.approx(2 / 3)  # ir_measures: judged/len(run)

    def test_drop_self_hits(self):
        qrels = parse_qrels("q1 0 d1 1\nq1 0 q1 1\n")
        run = run_of({"q1": [("q1", 3.0), ("d1", 2.0)]})
        kept = evaluate_run(run, qrels, ["RR@10", "P@1"])
        dropped = evaluate_run(
            run, qrels, ["RR@10", "P@1"], options=EvalOptions(drop_self_hits=True)
        )
        assert kept.aggregate["P@1"] == 1.0
        assert dropped.aggregate["RR@10"] == 1.0  # d1 moves to rank 1
        assert dropped.aggregate["P@1"] == 1.0

    def test_no_queries_gives_nan(self):
        res = evaluate_run(Run({}), parse_qrels(QRELS), ["RR@10"], queries=["zz"])
        assert res.qids == ()
        assert math.isnan(res.aggregate["RR@10"])

    def test_options_validated(self):
        with pytest.raises(EvalInputError):
            EvalOptions(average="some")  # type: ignore[arg-type]
        with pytest.raises(EvalInputError):
            EvalOptions(ties="random")  # type: ignore[arg-type]
        assert set(EvalOptions().describe()) == {"average", "ties", "self_hits"}


# =============================================================================================
# A fake searcher implementing the engine's interface
# =============================================================================================


@dataclass(frozen=True)
class FakeHit:
    rank: int
    docid: str
    score: float


@dataclass(frozen=True)
class FakeResult:
    hits: tuple[FakeHit, ...]


class FakeAnalyzer:
    def terms(self, text: str) -> list[str]:
        return [t for t in text.lower().replace("?", " ").split() if t not in {"the", "a"}]

    def spec(self) -> dict[str, object]:
        return {"tokenizer": "fake"}


class FakeIndex:
    def __init__(self, docs: dict[str, str]) -> None:
        self.analyzer = FakeAnalyzer()
        self.ids = list(docs)
        self.bags = [Counter(self.analyzer.terms(t)) for t in docs.values()]
        self.n_docs = len(docs)
        self.fingerprint = "fake-fp"
        self.avgdl = sum(sum(b.values()) for b in self.bags) / self.n_docs

    def docno(self, docid: str) -> int | None:
        return self.ids.index(docid) if docid in self.ids else None


class FakeSearcher:
    """BM25 (Lucene idf) over a dict of texts; ties by internal order, like the engine."""

    def __init__(self, docs: dict[str, str]) -> None:
        self.index = FakeIndex(docs)
        self.calls: list[tuple[str, object]] = []

    def search(self, query, variant, k=10, *, contributions=True, count=True):
        self.calls.append(("search", query))
        terms = self.index.analyzer.terms(query)
        if not terms:
            raise QueryError("nothing to search for")
        return self._rank(terms, variant, k)

    def search_terms(self, terms, variant, k=10, feedback=None, *, contributions=True, count=True):
        self.calls.append(("terms", tuple(terms)))
        return self._rank(list(terms), variant, k)

    def _rank(self, terms, variant, k):
        k1 = getattr(variant, "k1", 1.2)
        b = getattr(variant, "b", 0.75)
        idx = self.index
        scores = []
        for d, bag in enumerate(idx.bags):
            dl = sum(bag.values())
            s = 0.0
            matched = False
            for t in terms:
                tf = bag.get(t, 0)
                if not tf:
                    continue
                matched = True
                df = sum(1 for x in idx.bags if t in x)
                idf = math.log(1 + (idx.n_docs - df + 0.5) / (df + 0.5))
                s += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / idx.avgdl))
            if matched:
                scores.append((-s, d))
        scores.sort()
        return FakeResult(
            tuple(FakeHit(i + 1, idx.ids[d], -ns) for i, (ns, d) in enumerate(scores[:k]))
        )


DOCS = {
    "d1": "cats purr and cats sleep",
    "d2": "dogs bark at cats",
    "d3": "the dog sleeps all day long and the cat sleeps too",
    "d4": "a long long document about birds birds birds and other birds",
    "d5": "cats and dogs and birds",
    "q3": "a document whose id is a query id about birds",
}
QUERIES = {"q1": "cats", "q2": "sleeping dogs", "q3": "birds", "q4": "the a", "q5": "fish"}
JUDGED = {
    "q1": {"d1": 2, "d2": 1, "gone": 1},
    "q2": {"d3": 1},
    "q3": {"d4": 1, "q3": 1},
    "q4": {"d1": 1},
    "zz": {"d1": 1},
}


@pytest.fixture
def searcher() -> FakeSearcher:
    return FakeSearcher(DOCS)


class TestExperiment:
    def test_basic(self, searcher):
        configs = [get_variant("lucene"), get_variant("lucene", k1=0.5, b=0.3)]
        seen: list[tuple[int, int]] = []
        res = run_experiment(
            searcher,
            QUERIES,
            JUDGED,
            configs,
            ["RR@10", "nDCG@10", "R@100"],
            k=3,
            progress=lambda d, t: seen.append((d, t)),
        )
        assert [c.name for c in res.configs] == [repr(v) for v in configs]
        assert res.qids == ("q1", "q2", "q3", "q4")
        assert res.searched == ("q1", "q2", "q3", "q4")
        assert res.unjudged == ("q5",)
        assert res.judged_without_query == ("zz",)
        assert res.missing_judged == {"q1": ("gone",)}
        assert res.missing_relevant == 1
        assert seen[-1] == (8, 8)
        assert any("not in the index" in n for n in res.notes)
        assert any("not in the query set" in n for n in res.notes)
        assert any("nothing to search for" in n and "q4" in n for n in res.notes)
        c = res.configs[0]
        assert c.run is not None
        assert all(len(r) <= 3 for r in c.run.rankings.values())
        assert "q4" not in c.run.rankings  # analysed to nothing: no ranking, counts 0
        # the experiment's numbers are evaluate_run's numbers on its own run
        again = evaluate_run(c.run, JUDGED, res.metrics, queries=list(QUERIES))
        assert dict(again.aggregate) == dict(c.aggregate)
        assert res.config(0) is c
        assert res.config(c.name) is c
        with pytest.raises(KeyError, match="names 2 configurations"):
            res.config("lucene")
        data = json.loads(json.dumps(res.as_dict(per_query=True)))
        assert data["configs"][0]["per_query"]["q1"]["RR@10"] == 1.0
        assert data["conventions"]["average"] == "judged"

    def test_bag_of_words_by_default_and_query_syntax_on_request(self, searcher):
        v = [get_variant("lucene")]
        run_experiment(searcher, {"q1": "cats -dogs"}, {"q1": {"d1": 1}}, v, ["RR@10"], k=5)
        assert searcher.calls == [("terms", ("cats", "-dogs"))]
        searcher.calls.clear()
        run_experiment(
            searcher, {"q1": "cats -dogs"}, {"q1": {"d1": 1}}, v, ["RR@10"], k=5, query_syntax=True
        )
        assert searcher.calls == [("search", "cats -dogs")]

    def test_tokenize(self, searcher):
        res = run_experiment(
            searcher,
            {"q1": "Cats  purr"},
            {"q1": {"d1": 1}},
            [get_variant("okapi")],
            ["RR@10"],
            k=5,
            tokenize=lambda s: s.lower().split(" "),
        )
        assert searcher.calls == [("terms", ("cats", "", "purr"))]
        assert res.configs[0].aggregate["RR@10"] == 1.0
        with pytest.raises(EvalInputError, match="exclude"):
            run_experiment(
                searcher,
                {"q1": "x"},
                {"q1": {"d1": 1}},
                [get_variant("okapi")],
                "RR@10",
                tokenize=str.split,
                query_syntax=True,
            )

    def test_average_all_counts_unjudged_without_searching_them(self, searcher):
        v = [get_variant("lucene")]
        judged = run_experiment(searcher, QUERIES, JUDGED, v, ["RR@10"], k=5)
        every = run_experiment(
            searcher, QUERIES, JUDGED, v, ["RR@10"], k=5, options=EvalOptions(average="all")
        )
        assert every.qids == tuple(QUERIES)
        assert "q5" not in every.searched
        a, b = judged.configs[0].aggregate["RR@10"], every.configs[0].aggregate["RR@10"]
        assert b == pytest.approx(a * 4 / 5)
        unjudged_too = run_experiment(searcher, QUERIES, JUDGED, v, ["RR@10"], search_unjudged=True)
        assert "q5" in unjudged_too.searched

    def test_drop_self_hits_keeps_k_hits(self, searcher):
        v = [get_variant("lucene")]
        plain = run_experiment(searcher, {"q3": "query birds"}, JUDGED, v, ["RR@10"], k=2)
        dropped = run_experiment(
            searcher,
            {"q3": "query birds"},
            JUDGED,
            v,
            ["RR@10"],
            k=2,
            options=EvalOptions(drop_self_hits=True),
        )
        plain_run = plain.configs[0].run
        drop_run = dropped.configs[0].run
        assert plain_run is not None
        assert drop_run is not None
        assert plain_run.rankings["q3"].docids == ("q3", "d4")
        # one extra hit was fetched, so the list is still k long after dropping the self hit
        assert drop_run.rankings["q3"].docids == ("d4", "d5")

    def test_cancel(self, searcher):
        token = CancelToken()
        token.set()
        with pytest.raises(Cancelled):
            run_experiment(searcher, QUERIES, JUDGED, [get_variant("lucene")], cancel=token)

    def test_bad_inputs(self, searcher):
        v = get_variant("lucene")
        with pytest.raises(EvalInputError, match="none of the 1 queries has judgements"):
            run_experiment(searcher, {"x": "cats"}, JUDGED, [v])
        with pytest.raises(EvalInputError, match="listed twice"):
            run_experiment(searcher, QUERIES, JUDGED, [v, get_variant("lucene")])
        with pytest.raises(EvalInputError, match="no configuration"):
            run_experiment(searcher, QUERIES, JUDGED, [])
        with pytest.raises(EvalInputError, match="k must be"):
            run_experiment(searcher, QUERIES, JUDGED, [v], k=0)
        with pytest.raises(EvalInputError, match="unknown metric"):
            run_experiment(searcher, QUERIES, JUDGED, [v], ["nope"])

    def test_depth_note(self, searcher):
        res = run_experiment(searcher, QUERIES, JUDGED, [get_variant("lucene")], ["R@100"], k=10)
        assert any("R@100 looks at 100 hits" in n for n in res.notes)

    def test_export(self, searcher, tmp_path):
        res = run_experiment(
            searcher, QUERIES, JUDGED, [get_variant("lucene"), get_variant("okapi")], k=5
        )
        files = export_experiment(res, tmp_path / "out")
        names = sorted(p.name for p in files)
        assert names == sorted(
            [
                "Lucene_k1=1.2_b=0.75.run",
                "Lucene_k1=1.2_b=0.75.card.json",
                "Okapi_k1=1.2_b=0.75_epsilon=0.25.run",
                "Okapi_k1=1.2_b=0.75_epsilon=0.25.card.json",
                "per_query.csv",
                "experiment.json",
            ]
        )
        back = read_run(tmp_path / "out" / "Lucene_k1=1.2_b=0.75.run")
        original = res.configs[0].run
        assert original is not None
        assert back.tag == "Lucene(k1=1.2,b=0.75)"
        assert {q: r.docids for q, r in back.rankings.items()} == {
            q: r.docids for q, r in original.rankings.items()
        }
        # re-evaluating the written run gives the same numbers (no ties in this corpus)
        again = evaluate_run(back, JUDGED, res.metrics, queries=list(QUERIES))
        for m in res.metrics:
            assert again.aggregate[m] == pytest.approx(res.configs[0].aggregate[m], abs=1e-12)
        card = json.loads((tmp_path / "out" / "Lucene_k1=1.2_b=0.75.card.json").read_text())
        assert card["variant"] == {
            "key": "lucene",
            "name": "Lucene(k1=1.2, b=0.75)",
            "params": {"k1": 1.2, "b": 0.75},
        }
        assert card["index"]["fingerprint"] == "fake-fp"
        assert card["index"]["analyzer"] == {"tokenizer": "fake"}
        assert card["conventions"]["ties"] == "engine"
        assert card["bm25desk"]
        assert card["created"]
        assert card["run_file"] == "Lucene_k1=1.2_b=0.75.run"
        rows = (tmp_path / "out" / "per_query.csv").read_text().splitlines()
        assert rows[0] == "config,key,qid,judged,missing_judged," + ",".join(res.metrics)
        assert len(rows) == 1 + 2 * 4
        assert rows[1].startswith('"Lucene(k1=1.2, b=0.75)",lucene,q1,1,1,')

    def test_export_needs_runs(self, searcher, tmp_path):
        res = run_experiment(searcher, QUERIES, JUDGED, [get_variant("lucene")], keep_runs=False)
        with pytest.raises(ValueError, match="did not keep"):
            export_experiment(res, tmp_path)


# =============================================================================================
# Significance
# =============================================================================================


class TestSignificance:
    def test_exact_small(self):
        t = paired_test([0.0, 0.0, 0.0], [1.0, 1.0, 1.0])
        # 8 sign assignments; |sum| = 3 only for all-plus and all-minus
        assert t.exact
        assert t.permutations == 8
        assert t.p_value == pytest.approx(2 / 8)
        assert (t.wins, t.losses, t.ties) == (3, 0, 0)
        assert t.delta == 1.0
        assert t.t is None  # zero variance
        assert t.p_t is None

    def test_exact_enumeration_by_hand(self):
        base = [0.5, 0.2, 0.9, 0.4]
        cand = [0.7, 0.1, 0.9, 0.8]
        d = np.subtract(cand, base)
        observed = abs(d.sum())
        count = sum(
            abs(sum(s * x for s, x in zip(signs, d, strict=True))) >= observed - 1e-12
            for signs in itertools.product((-1, 1), repeat=4)
        )
        t = paired_test(base, cand)
        assert t.p_value == pytest.approx(count / 16)
        assert (t.wins, t.losses, t.ties) == (2, 1, 1)

    def test_monte_carlo_is_seeded(self):
        rng = np.random.default_rng(1)
        a = rng.random(60)
        b = a + rng.normal(0.02, 0.1, 60)
        t1 = paired_test(a, b, permutations=2000, seed=7)
        t2 = paired_test(a, b, permutations=2000, seed=7)
        assert not t1.exact
        assert t1.p_value == t2.p_value
        assert 0 < t1.p_value <= 1
        identical = paired_test(a, a, permutations=500)
        assert identical.p_value == 1.0
        assert identical.ties == 60

    def test_t_test_against_scipy(self):
        stats = pytest.importorskip("scipy.stats")
        rng = np.random.default_rng(3)
        for n in (2, 3, 5, 12, 40, 300):
            a = rng.random(n)
            b = a + rng.normal(0.05, 0.2, n)
            ours = paired_test(a, b, permutations=200)
            ref = stats.ttest_rel(b, a)
            assert ours.t == pytest.approx(float(ref.statistic), rel=1e-9)
            assert ours.p_t == pytest.approx(float(ref.pvalue), rel=1e-7, abs=1e-14)

    def test_errors(self):
        with pytest.raises(ValueError, match="shape"):
            paired_test([1.0], [1.0, 2.0])
        empty = paired_test([], [])
        assert empty.p_value == 1.0
        assert empty.n == 0

    def test_compare_to_baseline(self, searcher):
        configs = [get_variant("lucene"), get_variant("bm25l"), get_variant("okapi")]
        res = run_experiment(searcher, QUERIES, JUDGED, configs, ["RR@10", "nDCG@10"], k=5)
        tests = compare_to_baseline(res, "bm25l", permutations=100)
        assert [(t.metric, t.candidate) for t in tests] == [
            ("RR@10", repr(configs[0])),
            ("RR@10", repr(configs[2])),
            ("nDCG@10", repr(configs[0])),
            ("nDCG@10", repr(configs[2])),
        ]
        assert all(t.baseline == repr(configs[1]) for t in tests)
        assert all(t.n == 4 for t in tests)
        only = compare_to_baseline(res, 0, ["MRR@10"])
        assert [t.metric for t in only] == ["RR@10", "RR@10"]
        with pytest.raises(KeyError):
            compare_to_baseline(res, "tfidf")


# =============================================================================================
# Sweeps
# =============================================================================================


class TestSweep:
    def test_grid_and_best(self, searcher):
        grid = {"k1": [0.5, 1.0, 2.0], "b": [0.0, 0.75]}
        res = sweep(searcher, QUERIES, JUDGED, get_variant("lucene"), grid, ["nDCG@10", "RR@10"])
        assert res.axes == ("k1", "b")
        assert res.values == ((0.5, 1.0, 2.0), (0.0, 0.75))
        assert res.grids["nDCG@10"].shape == (3, 2)
        assert res.experiment.k == 10  # the largest cutoff
        g = res.grids["nDCG@10"]
        best = res.best["nDCG@10"]
        assert best.value == g.max()
        assert g[best.index] == g.max()
        assert best.index == np.unravel_index(np.argmax(g), g.shape)
        assert repr(best.variant) == repr(get_variant("lucene", **best.params))
        expected_edge = tuple(
            a for a, i, n in zip(res.axes, best.index, (3, 2), strict=True) if i in (0, n - 1)
        )
        assert res.on_edge("nDCG@10") == expected_edge
        cell = res.cell((1, 1))
        assert cell.params == {"k1": 1.0, "b": 0.75}
        # each cell equals an experiment run with that configuration alone
        alone = run_experiment(searcher, QUERIES, JUDGED, [cell.variant], ["nDCG@10"], k=10)
        assert alone.configs[0].aggregate["nDCG@10"] == pytest.approx(g[1, 1])
        data = json.loads(json.dumps(res.as_dict()))
        assert data["axes"] == {"k1": [0.5, 1.0, 2.0], "b": [0.0, 0.75]}
        assert data["best"]["nDCG@10"]["value"] == pytest.approx(best.value)

    def test_delta_axis(self, searcher):
        res = sweep(
            searcher,
            QUERIES,
            JUDGED,
            get_variant("bm25l"),
            {"k1": [1.2], "b": [0.75], "delta": [0.0, 0.5, 1.0]},
            "AP",
        )
        assert res.grids["AP"].shape == (1, 1, 3)
        assert res.experiment.k == 1000  # AP has no cutoff

    def test_bad_grids(self, searcher):
        v = get_variant("lucene")
        with pytest.raises(EvalInputError, match="no parameter 'delta'"):
            sweep(searcher, QUERIES, JUDGED, v, {"delta": [0.5]})
        with pytest.raises(EvalInputError, match="outside"):
            sweep(searcher, QUERIES, JUDGED, v, {"b": [1.5]})
        with pytest.raises(EvalInputError, match="empty"):
            sweep(searcher, QUERIES, JUDGED, v, {})
        with pytest.raises(EvalInputError, match="no values"):
            sweep(searcher, QUERIES, JUDGED, v, {"k1": []})


# =============================================================================================
# CLI
# =============================================================================================


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bm25desk")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--data-dir", default=None)
    add_eval_commands(parser.add_subparsers(dest="command"), common)
    return parser


@pytest.fixture
def cli_files(tmp_path: Path) -> tuple[Path, Path]:
    queries = tmp_path / "queries.tsv"
    queries.write_text("".join(f"{q}\t{t}\n" for q, t in QUERIES.items()))
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(
        "".join(f"{q} 0 {d} {r}\n" for q, docs in JUDGED.items() for d, r in docs.items())
    )
    return queries, qrels


def run_cli(argv: list[str], searcher: FakeSearcher | None = None) -> int:
    args = make_parser().parse_args(argv)

    def open_searcher(name: str) -> FakeSearcher:
        if name != "tiny":
            raise LookupError(f"no index named {name!r}")
        return searcher or FakeSearcher(DOCS)

    return int(args.handler(args, open_searcher))


class TestCli:
    def test_eval_table(self, cli_files, capsys):
        q, r = cli_files
        code = run_cli(
            [
                "eval",
                "tiny",
                "--queries",
                str(q),
                "--qrels",
                str(r),
                "--variants",
                "lucene,okapi:k1=1.5,b=0.75",
                "--b",
                "0.5",
                "--k",
                "20",
                "--per-query",
                "--baseline",
                "lucene",
            ]
        )
        out, err = capsys.readouterr()
        assert code == 0, err
        assert "Lucene(k1=1.2, b=0.5)" in out  # global --b applied
        assert "Okapi(k1=1.5, b=0.75, epsilon=0.25)" in out  # inline wins
        assert "RR@10" in out
        assert "mean over 4 judged queries" in out
        assert "paired tests against Lucene(k1=1.2, b=0.5)" in out
        assert "per query: Okapi" in out
        assert "note:" in err

    def test_eval_json_and_run_dir(self, cli_files, capsys, tmp_path):
        q, r = cli_files
        code = run_cli(
            [
                "eval",
                "tiny",
                "--queries",
                str(q),
                "--qrels",
                str(r),
                "--variants",
                "bm25plus",
                "--delta",
                "0.5",
                "--metrics",
                "MRR@10,MAP",
                "--average",
                "all",
                "--json",
                "--run-dir",
                str(tmp_path / "runs"),
            ]
        )
        out, _ = capsys.readouterr()
        assert code == 0
        data = json.loads(out)
        assert data["metrics"] == ["RR@10", "AP"]
        assert data["configs"][0]["name"] == "BM25Plus(k1=1.2, b=0.75, delta=0.5)"
        assert data["conventions"]["average"] == "all"
        assert data["queries"]["evaluated"] == 5
        assert (tmp_path / "runs" / "per_query.csv").exists()
        assert len(data["files"]) == 4

    @pytest.mark.parametrize(
        ("extra", "message"),
        [
            (["--metrics", "bogus@3"], "unknown metric 'bogus@3'"),
            (["--variants", "nope"], "unknown variant 'nope'"),
            (["--variants", "tfidf", "--k1", "1.0"], "--k1: none of the chosen variants"),
            (["--variants", "lucene", "--b", "2"], "out of range"),
            (["--baseline", "okapi", "--variants", "lucene"], "--baseline okapi"),
            (["--k", "0"], "--k must be at least 1"),
        ],
    )
    def test_eval_bad_input(self, cli_files, capsys, extra, message):
        q, r = cli_files
        code = run_cli(["eval", "tiny", "--queries", str(q), "--qrels", str(r), *extra])
        _, err = capsys.readouterr()
        assert code == 2
        assert message in err
        assert len(err.strip().splitlines()) == 1

    def test_eval_missing_file_and_index(self, cli_files, capsys, tmp_path):
        q, r = cli_files
        assert (
            run_cli(["eval", "tiny", "--queries", str(tmp_path / "no.tsv"), "--qrels", str(r)]) == 2
        )
        assert "no such file" in capsys.readouterr().err
        assert run_cli(["eval", "other", "--queries", str(q), "--qrels", str(r)]) == 2
        assert "cannot open index 'other'" in capsys.readouterr().err

    def test_sweep(self, cli_files, capsys):
        q, r = cli_files
        code = run_cli(
            [
                "sweep",
                "tiny",
                "--queries",
                str(q),
                "--qrels",
                str(r),
                "--variant",
                "bm25l",
                "--k1",
                "0.5:1.5:0.5",
                "--b",
                "0.25,0.75",
                "--delta",
                "0.5:1",
            ]
        )
        out, err = capsys.readouterr()
        assert code == 0, err
        assert "nDCG@10 for bm25l (k1, b, delta)" in out
        assert "delta = 0.6" in out
        assert "best nDCG@10:" in out

    def test_sweep_json(self, cli_files, capsys):
        q, r = cli_files
        code = run_cli(
            [
                "sweep",
                "tiny",
                "--queries",
                str(q),
                "--qrels",
                str(r),
                "--variant",
                "lucene",
                "--k1",
                "0.5:1.0:0.25",
                "--metric",
                "RR@10,nDCG@10",
                "--json",
            ]
        )
        out, _ = capsys.readouterr()
        assert code == 0
        data = json.loads(out)
        assert data["axes"] == {"k1": [0.5, 0.75, 1.0]}
        assert set(data["grids"]) == {"RR@10", "nDCG@10"}

    @pytest.mark.parametrize(
        ("extra", "message"),
        [
            (["--variant", "lucene", "--k1", "1:0.5:0.1"], "end is before the start"),
            (["--variant", "lucene", "--k1", "0.5:1:0"], "step must be positive"),
            (["--variant", "lucene", "--k1", "a:b"], "expected A:B:STEP"),
            (["--variant", "lucene", "--delta", "0.5"], "no parameter 'delta'"),
            (["--variant", "lucene"], "at least one parameter range"),
            (["--variant", "lucene", "--b", "0:2:0.5"], "out of range"),
        ],
    )
    def test_sweep_bad_input(self, cli_files, capsys, extra, message):
        q, r = cli_files
        code = run_cli(["sweep", "tiny", "--queries", str(q), "--qrels", str(r), *extra])
        _, err = capsys.readouterr()
        assert code == 2
        assert message in err

    def test_registered_in_the_real_cli(self):
        cli = pytest.importorskip("bm25desk.cli")
        args = cli.build_parser().parse_args(
            ["eval", "idx", "--queries", "q", "--qrels", "r", "--json", "--k1", "0.9"]
        )
        assert args.handler.__name__ == "cmd_eval"
        assert args.json
        assert args.k1 == 0.9

    def test_parse_range(self):
        assert parse_range("0.1:0.3:0.1") == [0.1, 0.2, 0.3]
        assert parse_range("0.5:1.5:0.25") == [0.5, 0.75, 1.0, 1.25, 1.5]
        assert parse_range("0.9") == [0.9]
        assert parse_range("0.9,1.2") == [0.9, 1.2]
        assert parse_range("1:1.2") == [1.0, 1.1, 1.2]
        with pytest.raises(EvalInputError, match="too many"):
            parse_range("0:100:0.01")


# =============================================================================================
# Real collections: CISI ships with the package; SciFact (CC BY-NC 2.0) is optional data
# =============================================================================================


def needs_scifact(test):
    """Mark ``test`` as needing SciFact; skip it when SciFact is not beside the clone."""
    missing = not (SCIFACT / "queries.jsonl").exists()
    skip = pytest.mark.skipif(missing, reason=f"optional data not found: {SCIFACT}")
    return skip(pytest.mark.scifact(test))


def test_cisi_files():
    q = read_queries(CISI / "CISI.QRY")
    r = read_qrels(CISI / "CISI.REL")
    assert (q.format, r.format) == ("smart", "smart")
    assert len(q) == 112
    assert r.n_queries == 76
    assert r.n_judgements == 3114
    assert not q.skipped
    assert not r.skipped
    assert set(r.qids()) <= set(q.ids())
    assert q.text("1").startswith("What problems and concerns are there")


@needs_scifact
def test_scifact_files():
    q = read_queries(SCIFACT / "queries.jsonl")
    test = read_qrels(SCIFACT / "qrels" / "test.tsv")
    train = read_qrels(SCIFACT / "qrels" / "train.tsv")
    assert len(q) == 1109
    assert (test.format, test.n_queries, test.n_judgements) == ("beir", 300, 339)
    assert (train.n_queries, train.n_judgements) == (809, 919)
    assert set(test.qids()) <= set(q.ids())
    assert not q.skipped
    assert not test.skipped


# Acceptance numbers of issue 4 with the real engine (built into a temporary store).


def _real_engine():
    from bm25desk.engine.analysis.analyzer import Analyzer
    from bm25desk.engine.index.build import build_index
    from bm25desk.engine.index.store import IndexStore
    from bm25desk.engine.scoring.search import Searcher

    return Analyzer, build_index, Searcher, IndexStore


@pytest.fixture(scope="module")
def cisi_searcher(tmp_path_factory):
    analyzer_cls, build_index, searcher_cls, store_cls = _real_engine()
    store = store_cls(tmp_path_factory.mktemp("cisi-store"))
    # whitespace tokens, case and punctuation kept, no stop words, no stemming
    analyzer = analyzer_cls(tokenizer="whitespace", lowercase=False)
    build_index(CISI / "CISI.ALL", name="cisi", analyzer=analyzer, store=store)
    return searcher_cls(store.open("cisi"))


@pytest.mark.parametrize(("average", "expected"), [("all", 0.2986), ("judged", 0.4400)])
def test_cisi_acceptance_mrr10(cisi_searcher, average, expected):
    queries = read_queries(CISI / "CISI.QRY")
    qrels = read_qrels(CISI / "CISI.REL")
    okapi = get_variant("okapi", k1=1.5, b=0.75, epsilon=0.25)
    res = run_experiment(
        cisi_searcher,
        queries,
        qrels,
        [okapi],
        ["RR@10"],
        k=10,
        options=EvalOptions(average=average),  # type: ignore[arg-type]
    )
    assert len(res.qids) == (112 if average == "all" else 76)
    assert res.missing_judged_count == 0
    assert round(res.configs[0].aggregate["RR@10"], 4) == expected


@needs_scifact
@pytest.mark.slow
def test_scifact_acceptance(tmp_path):
    analyzer_cls, build_index, searcher_cls, store_cls = _real_engine()
    store = store_cls(tmp_path)
    analyzer = analyzer_cls.create(stopwords="en", stemmer="porter")
    build_index(SCIFACT / "corpus.jsonl", name="scifact", analyzer=analyzer, store=store)
    searcher = searcher_cls(store.open("scifact"))
    queries = read_queries(SCIFACT / "queries.jsonl")
    qrels = read_qrels(SCIFACT / "qrels" / "test.tsv")
    lucene = get_variant("lucene", k1=0.9, b=0.4)
    res = run_experiment(searcher, queries, qrels, [lucene], ["nDCG@10", "R@100"], k=100)
    agg = res.configs[0].aggregate
    assert len(res.qids) == 300
    assert 0.665 <= agg["nDCG@10"] <= 0.679
    assert 0.90 <= agg["R@100"] <= 0.94


def test_query_dataclass_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Query("1", "x").qid = "2"  # type: ignore[misc]


def _tutorial_smart_lines(path: Path) -> list[str]:
    """The tutorial's SMART reading: a field's lines are stripped and joined with one space."""
    joined = ""
    with path.open() as fh:
        for line in fh:
            joined += "\n" + line.strip() if line.startswith(".") else " " + line.strip()
    return joined.lstrip("\n").split("\n")


def test_cisi_tutorial_tokenisation_through_facade():
    """0.3146: the tutorial's ``str.split(" ")`` tokens (empty strings included), rank_bm25's
    BM25Okapi defaults, MRR@10 over all 112 queries. Our SMART reader gives the tutorial's exact
    query texts; the documents are rebuilt the tutorial's way (every field but .X, joined)."""
    from bm25desk.engine import rank

    docs: dict[str, str] = {}
    docid, text = "", ""
    for line in _tutorial_smart_lines(CISI / "CISI.ALL"):
        if line.startswith(".I"):
            docid = line.split(" ")[1].strip()
        elif line.startswith(".X"):
            docs[docid], docid, text = text.lstrip(" "), "", ""
        else:
            text += line.strip()[3:] + " "
    queries = read_queries(CISI / "CISI.QRY")
    ids = list(docs)
    bm25 = rank.BM25([docs[d].split(" ") for d in ids], "okapi", k1=1.5, b=0.75, epsilon=0.25)
    rankings = {}
    try:
        for q in queries:
            scores = bm25.get_scores(q.text.split(" "))
            top = np.argsort(scores)[::-1][:10]  # rank_bm25's get_top_n order
            rankings[q.qid] = Ranking.of([ids[i] for i in top], scores[top])
    finally:
        bm25.close()
    qrels = read_qrels(CISI / "CISI.REL")
    res = evaluate_run(Run(rankings), qrels, ["RR@10"], queries=queries, options=EvalOptions("all"))
    assert len(res.qids) == 112
    assert round(res.aggregate["RR@10"], 4) == 0.3146

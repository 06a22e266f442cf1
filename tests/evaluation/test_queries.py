"""Query readers (queries.py): TREC, BEIR, TSV, SMART; ids, fields, notes, skipped lines."""

from __future__ import annotations

import dataclasses
import gzip

import pytest
from evalkit import EVAL_DATA, lines_of, reasons

from bm25desk.evaluation.data import EvalInputError, Query
from bm25desk.evaluation.queries import parse_queries, read_queries


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

    def test_undetectable_and_empty_raise(self, tmp_path):
        with pytest.raises(EvalInputError, match="cannot tell the query format"):
            parse_queries("just some words\n")
        with pytest.raises(EvalInputError, match="no queries found"):
            parse_queries("no tab here\n", format="tsv")
        with pytest.raises(EvalInputError, match="unknown query format"):
            parse_queries("1\tx\n", format="csv")
        with pytest.raises(FileNotFoundError):
            read_queries(tmp_path / "missing.tsv")


def test_query_dataclass_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Query("1", "x").qid = "2"  # type: ignore[misc]

"""Judgement readers (qrels.py): TREC, BEIR, SMART, Cranfield; skipped lines and notes."""

from __future__ import annotations

import gzip

import pytest
from evalkit import EVAL_DATA, lines_of, reasons

from bm25desk.evaluation.data import EvalInputError, Qrels
from bm25desk.evaluation.qrels import parse_qrels, read_qrels


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


# -- issue 16 item 8: a misread file fails loudly -----------------------------------------------


class TestMisreadQrels:
    def test_trec_read_as_smart_collapses_and_is_refused(self):
        """MED.REL read as SMART: the iteration column (0) becomes every judgement's document."""
        with pytest.raises(EvalInputError) as info:
            read_qrels(EVAL_DATA / "med" / "MED.REL", format="smart")
        message = str(info.value)
        assert "6 of 9 judgements repeat an earlier (query, document) pair" in message
        assert "read as smart 'qid docid 0 0' (as chosen)" in message
        assert "--qrels-format" in message
        assert "\n" not in message

    def test_smart_read_as_trec_is_refused(self):
        """CACM's qrels.text read as TREC: the constant 3rd column becomes the document."""
        with pytest.raises(EvalInputError, match=r"4 of 7 judgements repeat .* read as trec"):
            read_qrels(EVAL_DATA / "cacm" / "qrels.text", format="trec")

    def test_nothing_relevant_is_refused(self):
        with pytest.raises(EvalInputError) as info:
            parse_qrels("q1 0 d1 0\nq1 0 d2 0\nq2 0 d1 -1\n")
        assert "none of the 3 judgements is relevant" in str(info.value)
        assert "read as trec 'qid iteration docid relevance' (detected from its content)" in str(
            info.value
        )

    def test_a_few_duplicates_are_only_reported(self):
        q = parse_qrels("1 0 a 1\n1 0 b 1\n1 0 c 1\n1 0 a 1\n")
        assert q.n_judgements == 3
        assert lines_of(q) == [4]

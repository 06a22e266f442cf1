"""Format detection (detect.py): by content, the file name breaking ties only."""

from __future__ import annotations

import pytest
from evalkit import EVAL_DATA

from bm25desk.evaluation.data import EvalInputError
from bm25desk.evaluation.detect import detect_qrels_format, detect_queries_format


class TestDetectQueries:
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


class TestDetectQrels:
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


# -- issue 16 item 8: the content decides, not the name -----------------------------------------


@pytest.mark.parametrize(
    ("path", "fmt"),
    [
        ("med/MED.REL", "trec"),  # a .REL name, TREC content
        ("cacm/qrels.text", "smart"),  # "01 0003  0 0": the 3rd column is 0, the 2nd varies
        ("adi/ADI.REL", "smart"),
        ("small.REL", "smart"),
        ("cranqrel", "cranfield"),
        ("qrels-test.tsv", "beir"),
        ("npl/rlv-ass", "npl"),
        ("lisa/LISARJ.NUM", "lisa"),
        ("time/TIME.REL", "time"),
    ],
)
def test_qrels_files(path, fmt):
    p = EVAL_DATA / path
    assert detect_qrels_format(p.read_text(), p.name) == fmt
    assert detect_qrels_format(p.read_text(), "judgements.txt") == fmt  # without a telling name


@pytest.mark.parametrize(
    ("path", "fmt"),
    [
        ("med/MED.QRY", "smart"),
        ("cacm/query.text", "smart"),
        ("adi/ADI.QRY", "smart"),
        ("npl/query-text", "npl"),
        ("lisa/LISA.QUE", "lisa"),
        ("time/TIME.QUE", "time"),
    ],
)
def test_query_files(path, fmt):
    p = EVAL_DATA / path
    assert detect_queries_format(p.read_text(), "queries.txt") == fmt


def test_a_name_does_not_override_the_content():
    trec = "1 0 13 1\n1 0 14 1\n2 0 15 1\n"
    assert detect_qrels_format(trec, "MED.REL") == "trec"
    assert detect_qrels_format(trec, "cranqrel") == "trec"
    cisi = "1 28 0 0.000000\n1 35 0 0.000000\n"
    assert detect_qrels_format(cisi, "qrels.txt") == "smart"
    # cranqrel without a -1 grade: the name decides only because the grades fit
    assert detect_qrels_format("1 184 2\n1 29 3\n", "cranqrel") == "cranfield"
    assert detect_qrels_format("1 184 7\n1 29 3\n", "cranqrel") == "beir"


def test_lisa_rel_points_to_lisarj_num():
    with pytest.raises(EvalInputError, match=r"read LISARJ\.NUM"):
        detect_qrels_format("Query 1\n2 Relevant Refs:\n3392 3396 -1\n", "LISA.REL")

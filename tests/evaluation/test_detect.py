"""Format detection (detect.py): by content, the file name breaking ties only."""

from __future__ import annotations

import pytest

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

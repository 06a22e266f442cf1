"""The classic Glasgow collections' query and judgement files, read without conversion.

Fixtures in tests/data/eval/<collection>/ are written by hand in each collection's own layout (the
contents are invented; the layouts are those of ir.dcs.gla.ac.uk/resources/test_collections).
"""

from __future__ import annotations

import pytest
from evalkit import EVAL_DATA, lines_of, reasons

from bm25desk.evaluation.data import EvalInputError
from bm25desk.evaluation.qrels import parse_qrels, read_qrels
from bm25desk.evaluation.queries import parse_queries, read_queries

MED, CACM, ADI = EVAL_DATA / "med", EVAL_DATA / "cacm", EVAL_DATA / "adi"
NPL, LISA, TIME = EVAL_DATA / "npl", EVAL_DATA / "lisa", EVAL_DATA / "time"


# -- the SMART collections: MED, CACM, ADI ------------------------------------------------------


def test_med_qrels_are_trec_despite_the_rel_name():
    """MED.REL is ``qid 0 docid 1``: read as SMART, every query collapsed onto document 0."""
    r = read_qrels(MED / "MED.REL")
    assert r.format == "trec"
    assert r.judgements == {
        "1": {"1": 1, "2": 1, "3": 1},
        "2": {"4": 1, "5": 1, "6": 1},
        "3": {"7": 1, "8": 1, "9": 1},
    }
    assert not r.skipped
    q = read_queries(MED / "MED.QRY")
    assert (q.format, q.ids()) == ("smart", ("1", "2", "3"))
    assert q.text("3") == (
        "the crossing of fatty acids through the placental barrier.  normal "
        "fatty acid levels in placenta and fetus."
    )


def test_cacm_qrels_are_smart_with_padded_ids():
    """CACM's qrels.text is ``01 0003  0 0``: SMART's layout, ids written with leading zeros."""
    r = read_qrels(CACM / "qrels.text")
    assert r.format == "smart"
    assert r.judgements == {
        "1": {"1": 1, "3": 1},
        "10": {"4": 1, "6": 1, "8": 1},
        "12": {"1": 1, "3": 1},
    }
    q = read_queries(CACM / "query.text")
    assert q.ids() == ("1", "10", "12")  # the judgements' "01" is query 1
    assert q.text("10") == "Parallel languages; languages for parallel computation"  # no .N


def test_adi():
    q = read_queries(ADI / "ADI.QRY")
    r = read_qrels(ADI / "ADI.REL")
    assert (q.format, r.format) == ("smart", "smart")
    # SMART lines are stripped and joined; spaces inside a line stay (the tutorials' reading)
    assert q.text("2") == "What is information science?  Give definitions where possible."
    assert r.judgements == {"1": {"2": 1, "4": 1}, "2": {"3": 1}, "3": {"2": 1, "4": 1}}


# -- NPL (Vaswani) -----------------------------------------------------------------------------


def test_npl_queries_and_judgements():
    q = read_queries(NPL / "query-text")
    assert q.format == "npl"
    assert q.ids() == ("1", "2", "3")
    assert q.text("3") == (
        "USE OF DIGITAL COMPUTERS IN THE DESIGN OF BAND PASS FILTERS HAVING GIVEN PHASE "
        "AND ATTENUATION CHARACTERISTICS"
    )
    r = read_qrels(NPL / "rlv-ass")
    assert r.format == "npl"
    assert r.judgements == {"1": {"3": 1, "4": 1}, "2": {"5": 1, "6": 1}, "3": {"1": 1, "2": 1}}
    assert any("rlv-ass" in n for n in r.notes)


def test_npl_malformed_records_are_reported():
    text = "1\nfirst query\n/\nnot a number\nsecond\n/\n3\n/\n4\nlast, unterminated\n"
    q = parse_queries(text, format="npl")
    assert [(x.qid, x.text) for x in q] == [("1", "first query"), ("4", "last, unterminated")]
    assert reasons(q) == [
        "4: expected a query number alone, found 'not a number'",
        "7: query 3 has no text",
    ]
    r = parse_qrels("1\n 12 x7 13\n /\n2\n 5 /\n", format="npl")
    assert r.judgements == {"1": {"12": 1, "13": 1}, "2": {"5": 1}}
    assert reasons(r) == ["2: 'x7' is not a document number"]


# -- LISA --------------------------------------------------------------------------------------


def test_lisa_queries_and_judgements():
    q = read_queries(LISA / "LISA.QUE")
    assert q.format == "lisa"
    assert q.ids() == ("1", "2", "3")
    assert q.text("3") == "THE HISTORY OF SCHOOL LIBRARIES IN BRITAIN."  # the "#" is gone
    assert q.text("1").endswith("COMPUTERS, PUBLIC LIBRARIES.")
    r = read_qrels(LISA / "LISARJ.NUM")
    assert r.format == "lisa"
    # query 1 announces 3 documents and continues on the next line
    assert r.judgements == {"1": {"1": 1, "2": 1, "4": 1}, "2": {"3": 1, "5": 1}, "3": {"6": 1}}


def test_lisa_counts_are_checked():
    r = parse_qrels("1 2 10 11 12\n2 3 20\n", format="lisa")
    assert r.judgements == {"1": {"10": 1, "11": 1}, "2": {"20": 1}}
    assert reasons(r) == [
        "1: 1 numbers beyond the count of query 1",
        "2: query 2 announces 3 documents, 1 follow",
    ]


# -- TIME --------------------------------------------------------------------------------------


def test_time_queries_and_judgements():
    q = read_queries(TIME / "TIME.QUE")
    assert q.format == "time"
    assert q.ids() == ("1", "2", "3")
    assert q.text("1") == (
        "KENNEDY ADMINISTRATION PRESSURE ON NGO DINH DIEM TO STOP SUPPRESSING THE BUDDHISTS ."
    )
    r = read_qrels(TIME / "TIME.REL")
    assert r.format == "time"
    assert r.judgements == {"1": {"2": 1, "4": 1}, "2": {"3": 1, "5": 1}, "3": {"1": 1}}
    # the document numbers are positions in TIME.ALL, which the user has to know
    assert any("positions in TIME.ALL" in n for n in r.notes)


def test_time_malformed():
    q = parse_queries("junk\n*FIND 1\n\ntext\n*FIND\nno number\n*FIND 3\n*STOP\n", format="time")
    assert [(x.qid, x.text) for x in q] == [("1", "text")]
    assert lines_of(q) == [1, 5, 7]
    r = parse_qrels("1 2 3\n\n2\n\n3 x\n\n4 5\n", format="time")
    assert r.judgements == {"1": {"2": 1, "3": 1}, "4": {"5": 1}}
    assert reasons(r) == ["3: query 2 lists no document", "5: 'x' is not a number"]


@pytest.mark.parametrize("fmt", ["npl", "lisa", "time"])
def test_empty_glasgow_files_say_so(fmt):
    with pytest.raises(EvalInputError, match=f"no queries found in {fmt} format"):
        parse_queries("\n\n", format=fmt)
    with pytest.raises(EvalInputError, match=f"no judgements found in {fmt} format"):
        parse_qrels("\n", format=fmt)

"""The edges of a ranking: absurd k (issue 16.9) and hits that tie on score (issue 10).

k is validated by the engine: not a whole number or below 1 is a clear QueryError; more than the
live documents means all of them (``-k 99999999999999999999`` used to end in a traceback). Hits
that tie with a neighbour carry a ``tie_group`` (the rank of the first hit of their run), and the
tie rule — index order — is stated where a view can quote it.
"""

from __future__ import annotations

import pytest

from bm25desk.engine.index.reader import Index
from bm25desk.engine.scoring import topk
from bm25desk.engine.scoring.results import TIE_RULE, tie_groups
from bm25desk.engine.scoring.search import QueryError, Searcher
from bm25desk.engine.scoring.variants import get_variant

HUGE = 99999999999999999999


@pytest.mark.parametrize("kernel", [True, False], ids=["kernel", "numpy"])
@pytest.mark.parametrize("k", [HUGE, 2**63, 2**63 - 1, 10**6, 7])
def test_absurd_k_means_every_document(
    tiny_index: Index, monkeypatch: pytest.MonkeyPatch, kernel: bool, k: int
) -> None:
    """Any k beyond the documents ranks them all, with the kernel and without it."""
    if not kernel:
        monkeypatch.setattr(topk, "HAVE_KERNEL", False)
    s = Searcher(tiny_index)
    r = s.search("cat dog mat", get_variant("lucene"), k=k)
    assert r.n_matches == 5
    assert [h.rank for h in r.hits] == [1, 2, 3, 4, 5]
    assert [h.docid for h in r.hits] == [h.docid for h in s.search("cat dog mat", k=5).hits]


@pytest.mark.parametrize(
    ("k", "message"),
    [
        (0, "k must be at least 1"),
        (-3, "k must be at least 1"),
        (-HUGE, "k must be at least 1"),
        (2.5, "k must be a whole number"),
        ("10", "k must be a whole number"),
        (True, "k must be a whole number"),
        (None, "k must be a whole number"),
    ],
)
def test_bad_k_is_a_clear_query_error(tiny_index: Index, k: object, message: str) -> None:
    """A k that is not a whole number of at least 1 is a QueryError saying so."""
    with pytest.raises(QueryError, match=message):
        Searcher(tiny_index).search("cat", k=k)  # type: ignore[arg-type]


def test_cli_accepts_an_absurd_k(tiny_index: Index, capsys: pytest.CaptureFixture[str]) -> None:
    """``bm25desk search -k 99999999999999999999`` lists every match (it was a traceback)."""
    from bm25desk.cli import main

    assert main(["search", "tiny", "cat", "-k", str(HUGE)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("2 matching documents for cat")  # tiny-1 and tiny-5 ("cats" is another)
    assert "  2. " in out


# -- ties ----------------------------------------------------------------------------------------


def test_tie_groups_of_a_ranking() -> None:
    """Runs of equal scores share the rank of their first; a last tie beyond the list counts."""
    assert tie_groups([]) == []
    assert tie_groups([3.0, 2.0, 1.0]) == [None, None, None]
    assert tie_groups([3.0, 2.0, 2.0, 1.0]) == [None, 2, 2, None]
    assert tie_groups([2.0, 2.0, 2.0]) == [1, 1, 1]
    assert tie_groups([3.0, 1.0], next_score=1.0) == [None, 2]  # ties beyond the list
    assert tie_groups([3.0, 1.0], next_score=0.5) == [None, None]
    assert tie_groups([float("nan"), float("nan")]) == [None, None]


def test_hits_carry_their_tie_group(make_index) -> None:
    """Hits carry tie groups: under BIM (tf part 1) d0, d2, d4 ("x") tie, as d1, d3 ("x y") do."""
    index = make_index(["x", "x y", "x", "x y", "x", "z"])
    s = Searcher(index)
    hits = s.search("x y", get_variant("bim"), k=10).hits
    assert [h.docid for h in hits] == ["d1", "d3", "d0", "d2", "d4"]
    assert [h.tie_group for h in hits] == [1, 1, 3, 3, 3]
    r = s.search("x y", get_variant("bim"), k=3)
    assert [h.tie_group for h in r.hits] == [1, 1, 3]  # d0 ties d2, beyond the list
    assert r.has_ties
    assert r.tie_rule == TIE_RULE
    unique = s.search("x y", get_variant("lucene"), k=2, contributions=False)
    assert [h.tie_group for h in unique.hits] == [1, 1]  # d1 and d3 are alike under any variant


def test_no_ties_no_groups(tiny_index: Index) -> None:
    """Distinct scores have no tie groups."""
    r = Searcher(tiny_index).search("cat mat dog", get_variant("lucene"), k=10)
    assert len({h.score for h in r.hits}) == len(r.hits)
    assert [h.tie_group for h in r.hits] == [None] * len(r.hits)
    assert not r.has_ties


def test_the_tie_rule_is_said_in_words() -> None:
    """The tie rule a view can quote names index order."""
    assert "index order" in TIE_RULE
    assert "sorted path order for a folder" in TIE_RULE

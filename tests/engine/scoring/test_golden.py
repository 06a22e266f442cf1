"""Golden file: the top-5 documents and scores of every variant on CISI for fixed queries.

``tests/data/golden_cisi.json`` pins them, so that any change to analysis, indexing or scoring that
moves a CISI ranking shows up here. Regenerate it only deliberately, after checking why the numbers
moved: ``pytest tests/engine/scoring/test_golden.py --update-golden``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bm25desk.engine.index.reader import Index
from bm25desk.engine.scoring.search import Searcher
from bm25desk.engine.scoring.variants import all_variants

GOLDEN = Path(__file__).resolve().parents[2] / "data" / "golden_cisi.json"
QUERIES = (
    "library classification",
    "information retrieval systems evaluation",
    "the use of citation indexes in science",
    "computerized indexing of medical documents",
    "+automatic -manual indexing",
)
TOP = 5


def _results(index: Index) -> dict[str, dict[str, list[list[object]]]]:
    s = Searcher(index)
    return {
        v.key: {q: [[h.docid, h.score] for h in s.search(q, v, k=TOP).hits] for q in QUERIES}
        for v in all_variants()
    }


def test_golden_cisi(cisi_index: Index, request: pytest.FixtureRequest) -> None:
    got = {
        "collection": "CISI.ALL",
        "analyzer": cisi_index.analyzer.describe(),
        "variants": {v.key: v.values() for v in all_variants()},
        "queries": list(QUERIES),
        "top": TOP,
        "results": _results(cisi_index),
    }
    if request.config.getoption("--update-golden", default=False):
        text = json.dumps(got, indent=1, ensure_ascii=False)
        text = re.sub(r'\[\s+("[^"]*"),\s+(\S+)\s+\]', r"[\1, \2]", text)  # one hit per line
        GOLDEN.write_text(text + "\n", encoding="utf-8")
    if not GOLDEN.exists():
        pytest.fail(f"{GOLDEN} is missing: generate it with --update-golden")
    want = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert got["analyzer"] == want["analyzer"]
    assert got["variants"] == want["variants"], "default parameters changed"
    assert got["queries"] == want["queries"]
    for key, per_query in want["results"].items():
        for q, rows in per_query.items():
            mine = got["results"][key][q]
            assert [r[0] for r in mine] == [r[0] for r in rows], (key, q)
            assert [r[1] for r in mine] == pytest.approx([r[1] for r in rows], rel=1e-9), (key, q)
    assert got["results"].keys() == want["results"].keys()

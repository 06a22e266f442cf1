"""Shared helpers of the evaluation tests: fixture files, a fake engine, a CLI harness."""

from __future__ import annotations

import argparse
import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from bm25desk.engine.scoring.search import QueryError
from bm25desk.evaluation.cli import add_eval_commands
from bm25desk.evaluation.data import Ranking, Run

EVAL_DATA = Path(__file__).resolve().parents[1] / "data" / "eval"
"""Small query, judgement and document files in the layouts of real collections."""

SAMPLE = Path(__file__).resolve().parents[2] / "bm25desk" / "data" / "sample"
"""CISI as the package ships it (CISI.ALL, CISI.QRY, CISI.REL)."""

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
"""``../shared/data`` beside the repository (SciFact; may be absent)."""


def reasons(obj: object) -> list[str]:
    return [f"{s.where.rsplit(':', 1)[1]}: {s.reason}" for s in obj.skipped]  # type: ignore[attr-defined]


def lines_of(obj: object) -> list[int]:
    return [int(s.where.rsplit(":", 1)[1]) for s in obj.skipped]  # type: ignore[attr-defined]


QRELS = """\
q1 0 d1 1
q1 0 d2 0
q1 0 d3 2
q2 0 d9 1
q3 0 d1 0
"""


def run_of(rankings: dict[str, list[tuple[str, float]]]) -> Run:
    return Run({q: Ranking.of([d for d, _ in r], [s for _, s in r]) for q, r in rankings.items()})


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


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bm25desk")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--data-dir", default=None)
    add_eval_commands(parser.add_subparsers(dest="command"), common)
    return parser


def run_cli(argv: list[str], searcher: FakeSearcher | None = None) -> int:
    args = make_parser().parse_args(argv)

    def open_searcher(name: str) -> FakeSearcher:
        if name != "tiny":
            raise LookupError(f"no index named {name!r}")
        return searcher or FakeSearcher(DOCS)

    return int(args.handler(args, open_searcher))


def run_with_files(command: str, files: tuple[Path, Path], *extra: str) -> int:
    """Run ``command`` on index ``tiny`` with the ``cli_files`` fixture's queries and qrels."""
    queries, qrels = files
    return run_cli([command, "tiny", "--queries", str(queries), "--qrels", str(qrels), *extra])

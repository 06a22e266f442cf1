"""BM25F and filtered search against unfiltered search and tantivy, on one corpus in one run.

Issue 14 asks that fields and filters be measured at 1 M passages against unfiltered Lucene-style
search. This script takes a passages TSV (``docid<TAB>text``), writes it as a BEIR-shaped JSONL
with a title (3–8 of the passage's own words, drawn per document) and two metadata columns —
``year`` (25 values, ~4 % each) and ``lang`` (en 70 %, de 20 %, fr 10 %) — builds bm25desk (title
field, ``--meta-column year --meta-column lang``) and tantivy (title, body, year, lang fields) on
it, and answers the same queries under each configuration, every configuration in a fresh process
(first pass: the headline), rounds interleaved:

======================  =============================================================
``bm25desk``            BM25 (Lucene's variant, as tantivy) over the text, unfiltered
``bm25desk-year``       BM25, filter year = 2010 (~4 % of the documents)
``bm25desk-lang``       BM25, filter lang = en (~70 %)
``bm25desk-bm25f``      BM25F over title and text (the variant's default field weights)
``tantivy``             BM25 over the body, no filter
``tantivy-year``        BM25 over the body, a required term year = 2010
``tantivy-fields``      title and body as separate BM25 fields, summed (Lucene's way)
======================  =============================================================

Queries: 2–5 distinct words of a random document, a third of them with one of the corpus's ten
most frequent words added (so some postings are long). Usage::

    python -m tests.benchmarks.fields_filters --passages FILE --out DIR [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

CONFIGS = (
    "bm25desk",
    "bm25desk-year",
    "bm25desk-lang",
    "bm25desk-bm25f",
    "tantivy",
    "tantivy-year",
    "tantivy-fields",
)
LANGS = ("en", "de", "fr")
LANG_P = (0.7, 0.2, 0.1)


def load() -> str:
    """Return the 1/5/15-minute load averages."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def prepare(passages: Path, out: Path, n_queries: int, seed: int) -> None:
    """Write ``corpus.jsonl`` and ``queries.txt`` under ``out`` (kept when already there)."""
    corpus, qfile = out / "corpus.jsonl", out / "queries.txt"
    if corpus.exists() and qfile.exists():
        return
    rng = np.random.default_rng(seed)
    texts: list[str] = []
    with passages.open(encoding="utf-8") as src, corpus.open("w", encoding="utf-8") as dst:
        for i, line in enumerate(src):
            docid, _, text = line.rstrip("\n").partition("\t")
            words = text.split()
            if not words:
                continue
            k = int(rng.integers(3, 9))
            title = " ".join(
                words[j] for j in sorted(rng.choice(len(words), min(k, len(words)), replace=False))
            )
            rec = {
                "_id": docid,
                "title": title,
                "text": text,
                "year": str(2000 + (i * 7919) % 25),
                "lang": LANGS[int(rng.choice(3, p=LANG_P))],
            }
            dst.write(json.dumps(rec) + "\n")
            texts.append(text)
    counts: dict[str, int] = {}
    for t in texts[:: max(1, len(texts) // 20000)]:
        for w in set(t.split()):
            counts[w] = counts.get(w, 0) + 1
    frequent = sorted(counts, key=counts.__getitem__, reverse=True)[:10]
    queries = []
    for q in range(n_queries):
        words = list(dict.fromkeys(texts[int(rng.integers(len(texts)))].split()))
        k = min(len(words), int(rng.integers(2, 6)))
        picked = [words[j] for j in rng.choice(len(words), k, replace=False)]
        if q % 3 == 0:
            picked.append(frequent[int(rng.integers(len(frequent)))])
        queries.append(" ".join(dict.fromkeys(picked)))
    qfile.write_text("\n".join(queries) + "\n", encoding="utf-8")


def build(out: Path) -> dict[str, Any]:
    """Build both engines' indexes (skipped when built); return build times and peak memory."""
    info_file = out / "builds.json"
    if info_file.exists():
        return dict(json.loads(info_file.read_text()))
    info: dict[str, Any] = {"load_before": load()}
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "bm25desk", "--data-dir", str(out / "data"), "index",
         str(out / "corpus.jsonl"), "--name", "ff", "--meta-column", "year",
         "--meta-column", "lang"],
        check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    info["bm25desk_build_s"] = time.perf_counter() - started
    started = time.perf_counter()
    subprocess.run([sys.executable, __file__, "--tantivy-build", str(out)], check=True)
    info["tantivy_build_s"] = time.perf_counter() - started
    info["load_after"] = load()
    info_file.write_text(json.dumps(info, indent=1))
    return info


def _tantivy_schema() -> Any:
    import tantivy

    sb = tantivy.SchemaBuilder()
    sb.add_unsigned_field("docno", stored=False, fast=True)
    sb.add_text_field("title", stored=False, tokenizer_name="ws", index_option="freq")
    sb.add_text_field("body", stored=False, tokenizer_name="ws", index_option="freq")
    sb.add_unsigned_field("year", stored=False, indexed=True, fast=True)
    sb.add_text_field("lang", stored=False, tokenizer_name="raw", index_option="basic")
    return sb.build()


def _tantivy_register(index: Any) -> None:
    import tantivy

    index.register_tokenizer(
        "ws", tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build()
    )


def tantivy_build(out: Path) -> None:
    """Index ``corpus.jsonl`` with tantivy (both cores)."""
    import tantivy

    path = out / "tantivy"
    path.mkdir(exist_ok=True)
    index = tantivy.Index(_tantivy_schema(), path=str(path))
    _tantivy_register(index)
    writer = index.writer(512 << 20, 0)
    with (out / "corpus.jsonl").open(encoding="utf-8") as src:
        for i, line in enumerate(src):
            rec = json.loads(line)
            doc = tantivy.Document()
            doc.add_unsigned("docno", i)
            doc.add_text("title", rec["title"])
            doc.add_text("body", rec["text"])
            doc.add_unsigned("year", int(rec["year"]))
            doc.add_text("lang", rec["lang"])
            writer.add_document(doc)
    writer.commit()
    writer.wait_merging_threads()


def _tantivy_searcher(out: Path, config: str) -> Any:
    import tantivy

    index = tantivy.Index.open(str(out / "tantivy"))
    _tantivy_register(index)
    searcher, schema = index.searcher(), index.schema
    query, occur = tantivy.Query, tantivy.Occur
    year = query.range_query(schema, "year", tantivy.FieldType.Unsigned, 2010, 2010)
    fields = ("title", "body") if config == "tantivy-fields" else ("body",)

    def search(q: str) -> int:
        terms = list(dict.fromkeys(q.split()))
        should = [
            (occur.Should, query.term_query(schema, f, t, index_option="freq"))
            for f in fields
            for t in terms
        ]
        tq = query.boolean_query(should)
        if config == "tantivy-year":
            tq = query.boolean_query([(occur.Must, tq), (occur.Must, year)])
        return len(searcher.search(tq, 10, count=False).hits)

    return search


def _bm25desk_searcher(out: Path, config: str) -> Any:
    from bm25desk.engine.index.store import IndexStore
    from bm25desk.engine.scoring.filters import Filters
    from bm25desk.engine.scoring.search import QueryError, Searcher
    from bm25desk.engine.scoring.variants import get_variant

    index = IndexStore(out / "data" / "indexes").open("ff")
    searcher = Searcher(index)
    variant = get_variant("bm25f" if config == "bm25desk-bm25f" else "lucene")
    if config == "bm25desk-year":
        searcher = searcher.filtered(Filters.of(where={"year": ["2010"]}))
    elif config == "bm25desk-lang":
        searcher = searcher.filtered(Filters.of(where={"lang": ["en"]}))

    def search(q: str) -> int:
        try:
            got = searcher.search(q, variant, 10, syntax=False, contributions=False, count=False)
        except QueryError:  # only stop words (a small corpus draws such queries): no hits
            return 0
        return len(got.hits)

    return search


def worker(out: Path, config: str) -> dict[str, Any]:
    """Open one engine in this fresh process and answer every query once (the first pass)."""
    queries = (out / "queries.txt").read_text(encoding="utf-8").split("\n")[:-1]
    before = load()
    started = time.perf_counter()
    search = (_tantivy_searcher if config.startswith("tantivy") else _bm25desk_searcher)(
        out, config
    )
    opened = time.perf_counter() - started
    lat, found = [], 0
    t0 = time.perf_counter()
    for q in queries:
        t = time.perf_counter()
        found += search(q)
        lat.append(time.perf_counter() - t)
    wall = time.perf_counter() - t0
    return {
        "config": config,
        "open_s": opened,
        "qps": len(queries) / wall,
        "p50_ms": 1000 * float(np.percentile(lat, 50)),
        "p95_ms": 1000 * float(np.percentile(lat, 95)),
        "hits": found,
        "load": f"{before} → {load()}",
    }


def main(argv: list[str] | None = None) -> int:
    """Prepare, build, then time every configuration in fresh processes; write results.md."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--passages", type=Path)
    p.add_argument("--out", type=Path)
    p.add_argument("--queries", type=int, default=1000)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--configs", default=",".join(CONFIGS))
    p.add_argument("--worker", nargs=2, metavar=("OUT", "CONFIG"), help=argparse.SUPPRESS)
    p.add_argument("--tantivy-build", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.tantivy_build:
        tantivy_build(args.tantivy_build)
        return 0
    if args.worker:
        print(json.dumps(worker(Path(args.worker[0]), args.worker[1])))
        return 0
    if args.passages is None or args.out is None:
        p.error("--passages and --out are required")
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    prepare(args.passages, out, args.queries, seed=42)
    builds = build(out)
    configs = args.configs.split(",")
    runs: dict[str, list[dict[str, Any]]] = {c: [] for c in configs}
    for _ in range(args.rounds):
        for c in configs:
            res = subprocess.run(
                [sys.executable, "-m", "tests.benchmarks.fields_filters", "--worker", str(out), c],
                check=True, capture_output=True, text=True,
            )  # fmt: skip
            runs[c].append(json.loads(res.stdout.strip().splitlines()[-1]))
            print(runs[c][-1], flush=True)
    (out / "results.json").write_text(json.dumps({"builds": builds, "runs": runs}, indent=1))
    base = statistics.median(r["qps"] for r in runs.get("tantivy", runs[configs[0]]))
    lines = [
        f"Corpus: {args.passages} as {out / 'corpus.jsonl'}; {args.queries} queries, top 10; "
        f"{args.rounds} rounds, each configuration in a fresh process (first pass).",
        f"Builds: bm25desk {builds['bm25desk_build_s']:.1f} s, tantivy "
        f"{builds['tantivy_build_s']:.1f} s "
        f"(load {builds['load_before']} → {builds['load_after']}).",
        "",
        "| configuration | q/s median (min–max) | ÷ tantivy unfiltered | p50 ms | p95 ms "
        "| open s | load (1/5/15 min) |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for c in configs:
        qps = [r["qps"] for r in runs[c]]
        med = statistics.median(qps)
        lines.append(
            f"| {c} | {med:,.0f} ({min(qps):,.0f}–{max(qps):,.0f}) | {med / base:.2f}× | "
            f"{statistics.median(r['p50_ms'] for r in runs[c]):.2f} | "
            f"{statistics.median(r['p95_ms'] for r in runs[c]):.2f} | "
            f"{statistics.median(r['open_s'] for r in runs[c]):.2f} | {runs[c][-1]['load']} |"
        )
    (out / "results.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Index size on disk, part by part: bm25desk beside tantivy with its documents' text stored.

Usage (from the repository root)::

    .venv/bin/python -m tests.benchmarks.index_size --size 1m --out bench-results/size-1m

The main suite (``run.py``) builds tantivy without stored text (it compares scoring, and tantivy
needs none to rank), so its "index MB" column sets an index that can show each hit's text
(bm25desk's) beside one that cannot. Issue 15's size goal is against tantivy *with* stored text,
and its postings goal against tantivy's postings; this script builds both engines from the same
raw corpus (``run.py``'s cached one) and sorts each index's files into the same parts:

- **postings**: the documents and tfs of every term's list, with what a reader needs to skip
  through them (bm25desk: ``blocks.bin`` and its per-block arrays and frontiers; tantivy: ``.idx``);
- **terms**: the vocabulary and per-term statistics and pointers (bm25desk's lexicon and per-term
  arrays; tantivy's ``.term``);
- **stored**: the documents' text and ids as a hit shows them (bm25desk's ``text.*``, ``docid.*``,
  ``title.*``, ``loc.*``; tantivy's ``.store``: the id, stored only, and the body);
- **per document**: lengths and the like (bm25desk's ``doclen``, file ``mtime`` and ``size``,
  ``docid_order``; tantivy's ``.fieldnorm`` and ``.fast``);
- **other**: manifests, meta files, anything else.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.benchmarks import engines, provenance, run
from tests.benchmarks.engines import Corpus

PARTS = ("postings", "terms", "stored", "per document", "other")

_BM25DESK = {
    "postings": ("blocks.bin", "blk_", "tfront", "ovf"),
    "terms": ("terms.", "cf.npy", "ptr.npy", "bptr.npy", "tptr.npy", "tdocs.npy"),
    "stored": ("text.", "docid.", "title.", "loc."),
    "per document": ("doclen.npy", "mtime.npy", "size.npy", "docid_order.npy"),
}
_TANTIVY = {
    "postings": (".idx",),
    "terms": (".term",),
    "stored": (".store",),
    "per document": (".fieldnorm", ".fast"),
}


def part_of(name: str, rules: dict[str, tuple[str, ...]], suffix: bool) -> str:
    """Return the part a file belongs to (its name's start, or for tantivy its suffix)."""
    for part, keys in rules.items():
        if any(name.endswith(k) if suffix else name.startswith(k) for k in keys):
            return part
    return "other"


def parts(index_dir: Path, engine: str) -> dict[str, int]:
    """Return the bytes of ``index_dir``'s files by part (see the module docstring)."""
    rules, suffix = (_TANTIVY, True) if engine == "tantivy" else (_BM25DESK, False)
    out = dict.fromkeys(PARTS, 0)
    for f in index_dir.rglob("*"):
        if f.is_file():
            out[part_of(f.name, rules, suffix)] += f.stat().st_size
    return out


class StoredTantivy(engines.Tantivy):
    """tantivy with the documents' ids and text stored (tantivy-py's default document store)."""

    name = "tantivy"

    def _schema(self, pretok: bool) -> Any:
        import tantivy

        sb = tantivy.SchemaBuilder()
        sb.add_unsigned_field("docno", stored=False, fast=True)
        # The id stored, not indexed: no per-document terms in tantivy's postings and terms.
        sb.add_bytes_field("docid", stored=True, indexed=False, fast=False)
        sb.add_text_field("body", stored=True, tokenizer_name="words", index_option="freq")
        return sb.build()

    def _documents(self, corpus: Corpus) -> Iterator[Any]:
        import tantivy

        for i, (docid, text) in enumerate(engines.read_raw(corpus)):
            doc = tantivy.Document()
            doc.add_unsigned("docno", i)
            doc.add_bytes("docid", docid.encode())
            doc.add_text("body", text)
            yield doc

    def build(self, corpus: Corpus, index_dir: Path, pretok: bool) -> dict[str, Any]:
        import tantivy

        index_dir.mkdir(parents=True, exist_ok=True)
        index = tantivy.Index(self._schema(False), path=str(index_dir))
        self._register(index)
        writer = index.writer(self.heap, 0)
        for doc in self._documents(corpus):
            writer.add_document(doc)
        writer.commit()
        writer.wait_merging_threads()
        index.reload()
        return {"n_docs": index.searcher().num_docs, "segments": index.searcher().num_segments}


def measure(corpus: Corpus, work: Path) -> dict[str, Any]:
    """Build both engines from the raw corpus in ``work`` and return their sizes by part."""
    results: dict[str, Any] = {}
    for engine in (engines.Bm25desk(), StoredTantivy()):
        index_dir = work / engine.name
        engines.clean(index_dir)
        run.log(f"{engine.name}: build from raw text")
        started = time.perf_counter()
        info = engine.build(corpus, index_dir, pretok=False)
        seconds = time.perf_counter() - started
        by_part = parts(index_dir, engine.name)
        results[engine.name] = {
            "version": engine.version(),
            "build_s": seconds,
            "n_docs": info["n_docs"],
            "parts": by_part,
            "total": sum(by_part.values()),
        }
        engines.clean(index_dir)
    return results


def report(corpus: Corpus, results: dict[str, Any], prov: dict[str, Any]) -> str:
    """Return the Markdown table: each part in MB, and bm25desk's ÷ tantivy's."""
    ours, theirs = results["bm25desk"], results["tantivy"]
    lines = [
        f"# Index size by part: {corpus.name} — {corpus.n_docs:,} documents, "
        f"{corpus.n_tokens:,} tokens",
        "",
        f"{prov['date']} · bm25desk at {prov['commit']} · tantivy {theirs['version']} "
        f"(docid and body stored) · {prov['machine']}",
        "",
        "Both built from the same raw text (`\\w+` lowercased; tantivy with frequencies, no "
        "positions). What each part holds: `tests/benchmarks/index_size.py`.",
        "",
        "| part | bm25desk MB | tantivy MB | bm25desk ÷ tantivy |",
        "|---|---:|---:|---:|",
    ]
    for part in (*PARTS, "total"):
        a = ours["total"] if part == "total" else ours["parts"][part]
        b = theirs["total"] if part == "total" else theirs["parts"][part]
        ratio = f"{a / b:.2f}×" if b else "—"
        name = f"**{part}**" if part == "total" else part
        lines.append(f"| {name} | {a / 1e6:,.1f} | {b / 1e6:,.1f} | {ratio} |")
    lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", required=True, choices=[s for s in run.SIZES if s != "scifact"])
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--cache", type=Path, default=Path("bench-results/cache"))
    ap.add_argument("--seed", type=int, default=42)
    args = ap.parse_args(argv)
    n_queries = run.SIZES[args.size][2]
    corpus, _, _, _ = run.prepare(args.size, args.seed, n_queries, args.cache)
    args.out.mkdir(parents=True, exist_ok=True)
    work = args.out / "work"
    results = measure(corpus, work)
    shutil.rmtree(work, ignore_errors=True)
    m = provenance.machine()
    prov = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "commit": provenance.project_commit(),
        "machine": f"{m['cpu']} · {m['cores']} cores · {m['memory_gb']} GB",
        "load_after": provenance.load(),
    }
    text = report(corpus, results, prov)
    (args.out / "results.json").write_text(
        json.dumps({"provenance": prov, "results": results}, indent=1), encoding="utf-8"
    )
    (args.out / "results.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()

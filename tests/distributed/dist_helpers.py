"""Corpora and comparisons of the distributed tests (a module of its own: conftest names clash).

Every build here is compared with a one-process ``bm25desk index`` of the same corpus: the same
segment files byte for byte when nothing is resolved across parts (the stored text document by
document: assembling copies each part's zstd frames, so frames are cut at the parts' boundaries
too), else the same live documents, postings, statistics and skip report, and the same scores
under every variant.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bm25desk.engine import Index, IndexStore, Searcher, all_variants, build_index
from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.index.manifest import segment_entries
from bm25desk.engine.index.textstore import FILES as TEXT_FILES
from bm25desk.engine.index.textstore import ZBlob
from bm25desk.engine.progress import Cancelled, CancelToken

WORDS = [
    *("river", "bank", "money", "loan", "water", "flood", "stream", "bridge", "boat", "fish"),
    *("net", "harbour", "ship", "sail", "wind", "storm", "rain", "cloud", "sun", "summer"),
    *("winter", "snow", "ice", "mountain", "valley", "forest", "tree", "leaf", "root", "branch"),
]
QUERIES = ("river bank", "flood water water storm", "ship sail wind", "snow mountain valley ice")


def analyzer() -> Analyzer:
    """The analyser of every distributed test (English stop words, Porter)."""
    return Analyzer.create(stopwords="en", stemmer="porter")


def records(n: int, seed: int = 3) -> list[dict[str, str]]:
    """Return ``n`` BEIR records with varied lengths and some titles."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        words = " ".join(rng.choice(WORDS) for _ in range(3 + rng.randrange(40)))
        title = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(3)))
        out.append({"_id": f"doc{i}", "title": title, "text": words})
    return out


def clean_corpus(path: Path, n: int = 600) -> Path:
    """Write ``n`` good records, one a line: every build gives byte-identical segments."""
    lines = [json.dumps(r) for r in records(n)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def assert_table_files_build_as_reference(
    build: Callable[..., Any], folder: Path, store: IndexStore
) -> None:
    """Assert that :func:`records` as Parquet and as TSV with a header build the reference.

    ``build(path, name, **kw)`` builds index ``name`` of ``store`` from the table at ``path``
    with the keyword arguments ``kw`` (columns, analyser, store); each must hold
    :func:`clean_corpus`'s segments, byte for byte, with nothing skipped.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    one_process(clean_corpus(folder / "clean.jsonl"), store)
    rows = records(600)
    parquet = folder / "table.parquet"
    pq.write_table(pa.Table.from_pylist(rows), parquet, row_group_size=200)
    tsv = folder / "table.tsv"
    lines = ["_id\ttitle\ttext", *(f"{r['_id']}\t{r['title']}\t{r['text']}" for r in rows)]
    tsv.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for path in (parquet, tsv):
        name = path.suffix[1:]
        got = build(
            str(path), name, id_col="_id", title_col="title", analyzer=analyzer(), store=store
        )
        assert (got.indexed, got.skipped) == (600, ()), path
        assert segment_files(store.root / name) == segment_files(store.root / "reference"), path


def messy_lines(n: int = 600) -> list[str]:
    """Return records with every kind of skip, duplicates within and across any cut, as lines.

    No blank or malformed line, so a table read of it has one row per line (row n = line n).
    """
    rs = records(n)
    lines = [json.dumps(r) for r in rs]
    lines.insert(n - 10, json.dumps(rs[2]))  # repeats an id of the first part in the last
    lines.insert(n // 2, json.dumps(rs[n // 2 - 5]))  # repeats an id from just before a cut
    lines.insert(40, json.dumps(rs[38]))  # a repeat inside one part
    lines.insert(100, json.dumps({"_id": "empty", "title": "", "text": "   "}))
    lines.insert(200, json.dumps({"_id": " ", "title": "", "text": "no id"}))
    return lines


def messy_corpus(path: Path, n: int = 600) -> Path:
    """Write :func:`messy_lines` plus a malformed line and blank lines (file reader only)."""
    lines = messy_lines(n)
    lines.insert(300, "{not json")
    lines.insert(7, "")
    lines.insert(450, "   ")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def one_process(path: Path, store: IndexStore, name: str = "reference") -> Any:
    """Build ``path`` the way ``bm25desk index`` builds a small file (one process)."""
    return build_index(path, name=name, analyzer=analyzer(), store=store, workers=1, replace=True)


def segment_files(index_dir: Path) -> list[dict[str, str]]:
    """Return each segment's files (name → SHA-256) in manifest order; names of folders vary.

    The compressed text's files are replaced by one entry, ``text``: the SHA-256 of its
    documents, each with its length (the frames are cut wherever the writer's input ended).
    """
    manifest = json.loads((index_dir / "manifest.json").read_text("utf-8"))
    text_files = {f"text.{suffix}" for suffix in TEXT_FILES}
    out = []
    for seg, _ in segment_entries(manifest):
        files = sorted(p for p in (index_dir / seg).iterdir() if p.is_file())
        hashes = {
            p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in files
            if p.name not in text_files
        }
        if (index_dir / seg / "text.zst").exists():
            hashes["text"] = ZBlob(index_dir / seg, "text").digest()
        out.append(hashes)
    return out


def live_content(index: Index) -> dict[str, Any]:
    """Return what an index holds over its live documents: fields, postings, statistics."""
    docs = []
    for docno in range(index.n_slots):
        if index.is_live(docno):
            rec = index.doc(docno)
            docs.append((rec.docid, rec.title, rec.length, index.text(docno)))
    postings = {}
    for term in index.vocabulary():
        docnos, tfs = index.postings(term)
        stats = index.term_stats(term)
        assert stats is not None
        ids = [index.docid(int(d)) for d in docnos]
        postings[term] = (stats.df, stats.cf, list(zip(ids, tfs.tolist(), strict=True)))
    return {
        "n_docs": index.n_docs,
        "total_len": index.total_len,
        "n_terms": index.n_terms,
        "docs": docs,
        "postings": postings,
    }


def rankings(index: Index) -> dict[str, list[tuple[str, float]]]:
    """Return the top 40 (docid, score) of every test query under every variant."""
    searcher = Searcher(index)
    out = {}
    for variant in all_variants():
        for query in QUERIES:
            hits = searcher.search(query, variant, 40, contributions=False).hits
            out[f"{variant!r} {query}"] = [(h.docid, h.score) for h in hits]
    return out


def assert_same_index(store: IndexStore, name: str, reference: str = "reference") -> None:
    """Assert ``name`` holds and ranks exactly what ``reference`` does."""
    with store.open(name) as got, store.open(reference) as want:
        assert live_content(got) == live_content(want)
        assert rankings(got) == rankings(want)


def skips(report: Any) -> list[tuple[str, str]]:
    """Return a build report's skipped records as (where, reason)."""
    return [(s.where, s.reason) for s in report.skipped]


def numbered_skips(report: Any) -> list[tuple[int, str]]:
    """Return (line or row number, reason) of a report's skips, whatever names the source."""
    out = []
    for s in report.skipped:
        head, _, tail = s.where.replace(" row ", ":").rpartition(":")
        assert head, s.where
        assert tail.isdigit(), s.where
        out.append((int(tail), s.reason.replace("(first seen at row", "(first seen at line")))
    return out


def leftovers(root: Path) -> list[str]:
    """Return temporary folders left in an index store's root."""
    if not root.exists():
        return []
    return sorted(p.name for p in root.iterdir() if p.name.startswith((".tmp-", ".trash-")))


def _ctrl_c_as_in_a_terminal() -> None:
    """In the child, before exec: SIGINT's default action, as for a terminal's foreground job.

    A shell starts a background job (``pytest &``, a CI script run from one) with SIGINT
    ignored, and an ignored signal stays ignored across exec: the command would never see the
    test's Ctrl-C and would finish its build (exit 0, nothing on stderr).
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupted_cli_build(tmp_path: Path, engine_args: list[str], n: int) -> None:
    """Ctrl-C ``bm25desk index`` of ``n`` records once its tasks write parts; check what is left.

    The command exits 130 with one line, the index it was replacing is as it was, and no
    temporary folder remains.
    """
    corpus = clean_corpus(tmp_path / "corpus.jsonl", n=n)
    data = tmp_path / "data"
    store = IndexStore(data / "indexes")
    one_process(clean_corpus(tmp_path / "small.jsonl", n=50), store, name="victim")
    before = (store.root / "victim" / "manifest.json").read_bytes()
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "BM25DESK_NO_PROGRESS": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "bm25desk.cli", "--data-dir", str(data), "index", str(corpus),
         "--name", "victim", "--replace", *engine_args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        preexec_fn=_ctrl_c_as_in_a_terminal,
    )  # fmt: skip
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and proc.poll() is None:
        if list(store.root.glob(".tmp-victim-*/part-*/attempt-*/seg-*")):
            break  # the tasks are writing their parts
        time.sleep(0.1)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, (proc.returncode, err)
    assert "bm25desk: interrupted" in err
    assert "Traceback" not in err, err
    assert (store.root / "victim" / "manifest.json").read_bytes() == before
    assert leftovers(store.root) == []


def progress_then_cancel(build: Callable[..., Any], store: IndexStore) -> list[tuple[int, int]]:
    """Build index "kept" in three parts, then cancel a rebuild at its first progress report.

    ``build(**kw)`` runs one engine's build of "kept" in three parts with ``kw`` (progress,
    cancel, replace). Progress must count finished parts up to (3, 3); the cancelled rebuild
    must raise :class:`Cancelled` and leave the first build as it was, with no temporary folder.
    Returns the cancelled build's progress reports.
    """
    done: list[tuple[int, int]] = []
    build(progress=lambda *p: done.append(p))
    assert done[-1] == (3, 3)  # finished tasks, one a part
    assert all(total == 3 for _, total in done)
    assert [d for d, _ in done] == sorted(d for d, _ in done)
    before = (store.root / "kept" / "manifest.json").read_bytes()
    cancel = CancelToken()
    seen: list[tuple[int, int]] = []

    def progress(done: int, total: int) -> None:
        seen.append((done, total))
        cancel.set()

    with pytest.raises(Cancelled):
        build(progress=progress, cancel=cancel, replace=True)
    assert seen
    assert (store.root / "kept" / "manifest.json").read_bytes() == before
    assert leftovers(store.root) == []
    return seen

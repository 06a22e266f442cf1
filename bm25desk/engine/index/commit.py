"""Commit a set of segments as an index generation: exact live statistics, lexicon, manifest.

:func:`commit` is the last step of every build and update: it computes the collection
statistics over live documents (N, total length, a content fingerprint), writes a merged
lexicon with live df and cf when there are several segments or deletions, and replaces
``manifest.json`` atomically — the moment the new generation becomes visible to readers.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

import bm25desk
from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.index.arrays import I64, save_array
from bm25desk.engine.index.integrity import checksum_entries
from bm25desk.engine.index.lexicon import sort_terms, write_lexicon
from bm25desk.engine.index.manifest import (
    FORMAT,
    files_of,
    keep_generation_copy,
    write_manifest,
)
from bm25desk.engine.index.reserved import reserved_bounds
from bm25desk.engine.index.segment import Segment
from bm25desk.engine.index.snapshot import WRITER_FILES, generation_manifests


def now() -> str:
    """Return the current UTC time as an ISO 8601 string (seconds)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def commit(
    directory: Path,
    *,
    name: str,
    analyzer: Analyzer,
    source: dict[str, Any],
    segments: list[tuple[str, str | None]],
    created: str | None = None,
    report: dict[str, Any] | None = None,
    generation: int = 1,
    skips: str | None = None,
    previous: dict[str, Any] | None = None,
    build: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Compute exact live statistics, write the lexicon if needed, and replace the manifest.

    ``segments`` lists ``(segment dir, deletion file or None)`` in docno order; ``skips`` names
    the skip list file. Every file gets its checksum in the manifest (reused from ``previous``,
    the generation this one follows, for the files it already had: they are immutable).
    ``build`` says how the index was built (engine, parts, versions); without it (an update, a
    repair) the previous generation's entry is kept.
    """
    opened = [Segment(directory / s) for s, _ in segments]
    masks = [
        np.load(directory / d, allow_pickle=False).astype(bool) if d else None for _, d in segments
    ]
    n_docs, total_len, fingerprint = _live_totals(opened, masks)
    lexicon: str | None = None
    if len(opened) > 1 or any(m is not None for m in masks):
        lexicon = f"lex-g{generation}"
        n_terms = _write_merged_lexicon(directory / lexicon, opened, masks)
    elif opened:
        seg = opened[0]
        df = np.diff(seg.ptr)
        lo, hi = reserved_bounds(seg.lexicon.term_bytes, len(seg.lexicon))
        n_terms = int((df > 0).sum()) - int((df[lo:hi] > 0).sum())  # body and title terms
    else:
        n_terms = 0
    manifest = {
        "format": FORMAT,
        "bm25desk": bm25desk.__version__,
        "name": name,
        "created": created or now(),
        "updated": now(),
        "generation": generation,
        "source": source,
        "analyzer": analyzer.spec(),
        "segments": [{"name": s, "deleted": d} for s, d in segments],
        "lexicon": lexicon,
        "stats": {
            "n_docs": n_docs,
            "total_len": total_len,
            "avgdl": total_len / n_docs if n_docs else 0.0,
            "n_terms": n_terms,
        },
        "fingerprint": fingerprint,
        "report": report or {},
        "skips": skips,
    }
    if build is None and previous is not None and isinstance(previous.get("build"), dict):
        build = previous["build"]
    if build:
        manifest["build"] = build
    manifest["files"] = _checksums(directory, sorted(files_of(manifest)), previous)
    if previous is not None:
        keep_generation_copy(directory, previous)  # readers of it may still need its files
    return write_manifest(directory, manifest)


def _checksums(
    directory: Path, names: list[str], previous: dict[str, Any] | None
) -> dict[str, dict[str, Any]]:
    """Return the checksums of the files under ``names``, reusing ``previous``' entries."""
    old = previous.get("files") if previous is not None else None
    old_names = files_of(previous) if previous is not None and isinstance(old, dict) else set()
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        if name in old_names and isinstance(old, dict):
            reused = {k: v for k, v in old.items() if k == name or k.startswith(f"{name}/")}
            if reused:
                out.update(reused)
                continue
        out.update(checksum_entries(directory, [name]))
    return out


def _live_totals(segments: list[Segment], masks: list[np.ndarray | None]) -> tuple[int, int, str]:
    """Return the live document count, live total length and the content fingerprint."""
    n_docs = 0
    total_len = 0
    digest = hashlib.sha256()
    for seg, dele in zip(segments, masks, strict=True):
        live = None if dele is None else ~dele
        lens = np.asarray(seg.doclen)
        n_docs += int(seg.n_docs if live is None else live.sum())
        total_len += int(
            lens.sum(dtype=np.int64) if live is None else lens[live].sum(dtype=np.int64)
        )
        # Identity of the content: stored ids and lengths, plus what is deleted.
        digest.update(lens.tobytes())
        digest.update(np.asarray(seg.docids.offsets).tobytes())
        digest.update(seg.docids.raw())
        if dele is not None:
            digest.update(np.packbits(dele).tobytes())
    return n_docs, total_len, digest.hexdigest()[:16]


def _write_merged_lexicon(
    directory: Path, segments: list[Segment], masks: list[np.ndarray | None]
) -> int:
    """Write the union vocabulary with live df and cf; terms with no live posting are dropped."""
    if directory.exists():  # left by an update killed before its commit: never in a manifest
        shutil.rmtree(directory)
    directory.mkdir()
    vocab: dict[str, int] = {}
    per_seg: list[tuple[list[str], I64, I64]] = []
    for seg, dele in zip(segments, masks, strict=True):
        if dele is None:
            df = np.diff(seg.ptr).astype(np.int64)
            cf = np.asarray(seg.cf, dtype=np.int64)
        else:
            df, cf = _live_counts(seg, dele)
        terms = seg.lexicon.terms()
        per_seg.append((terms, df, cf))
        for t, d in zip(terms, df.tolist(), strict=True):
            if d > 0:
                vocab.setdefault(t, 0)
    union = list(vocab)
    order = sort_terms(union)
    sorted_terms = [union[i] for i in order.tolist()]
    gid = {t: i for i, t in enumerate(sorted_terms)}
    df_all = np.zeros(len(sorted_terms), dtype=np.int64)
    cf_all = np.zeros(len(sorted_terms), dtype=np.int64)
    for terms, df, cf in per_seg:
        keep = np.flatnonzero(df > 0)
        idx = np.array([gid[terms[i]] for i in keep.tolist()], dtype=np.int64)
        np.add.at(df_all, idx, df[keep])
        np.add.at(cf_all, idx, cf[keep])
    write_lexicon(directory, sorted_terms)
    save_array(directory / "df.npy", df_all)
    save_array(directory / "cf.npy", cf_all)
    lo, hi = reserved_bounds(
        lambda i: sorted_terms[i].encode("utf-8", "replace"), len(sorted_terms)
    )
    return len(sorted_terms) - (hi - lo)  # the vocabulary size leaves out reserved terms


_RUN = 1 << 22
"""Postings decoded at a time when counting live postings."""


def _live_counts(seg: Segment, dele: np.ndarray) -> tuple[I64, I64]:
    """Return per term the live df and cf of a segment with deletions (runs of terms)."""
    ptr = np.asarray(seg.ptr)
    n_terms = len(ptr) - 1
    df = np.zeros(n_terms, dtype=np.int64)
    cf = np.zeros(n_terms, dtype=np.int64)
    t0 = 0
    while t0 < n_terms:
        t1 = max(t0 + 1, int(np.searchsorted(ptr, int(ptr[t0]) + _RUN, side="right")) - 1)
        t1 = min(t1, n_terms)
        docs, tfs = seg.postings_range(t0, t1)
        term = np.repeat(np.arange(t1 - t0), np.diff(ptr[t0 : t1 + 1]))
        live = (~dele[docs]).astype(np.int64)
        df[t0:t1] = np.bincount(term, weights=live, minlength=t1 - t0).astype(np.int64)
        cf[t0:t1] = np.bincount(term, weights=live * tfs, minlength=t1 - t0).astype(np.int64)
        t0 = t1
    return df, cf


class NewFiles:
    """What a writer adds to an index folder, removed again if it fails before its commit.

    Runs under the writer lock, so everything new in the folder that looks like a writer's file
    is this writer's own.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.before = set(os.listdir(directory))

    def discard(self, generation: int) -> None:
        """Remove the new files unless ``generation`` got committed after all."""
        try:
            current = json.loads((self.directory / "manifest.json").read_text("utf-8"))
            if isinstance(current, dict) and current.get("generation") == generation:
                return  # the commit went through: its files are the index now
        except (OSError, ValueError):
            pass
        for name in set(os.listdir(self.directory)) - self.before:
            if not name.startswith(WRITER_FILES):
                continue
            p = self.directory / name
            if p.is_dir():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink(missing_ok=True)


def next_generation(directory: Path, previous: dict[str, Any] | None) -> int:
    """Return the generation number after the current one (also past any kept copies)."""
    gen = previous.get("generation", 0) if previous is not None else 0
    gens = [gen if isinstance(gen, int) else 0, *generation_manifests(directory)]
    return max(gens) + 1

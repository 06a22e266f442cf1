"""The on-disk layout of a segment: its format, its files and its ``meta.json``.

A segment is a directory of ``.npy`` arrays (written with ``allow_pickle=False``, opened with
``mmap_mode="r"``) and byte blobs; opening one reads nothing but a small JSON file, so opening an
index never loads its postings. Layout (format 4)::

    meta.json            format, n_docs, n_terms, nnz, total_len, block layout (shift, cap)
    terms.bin/.off.npy   the vocabulary, sorted by UTF-8 bytes (binary search, no dict to load)
    terms.hash.npy       its hash: term → id in ~3 memory reads (termhash.py; optional, below)
    ptr.npy cf.npy       postings per term (CSR pointer: df = diff), collection frequency
    bptr.npy             first block of each term (its blocks are bptr[t]..bptr[t+1])
    blocks.bin           the blocks of 128 postings: frontier, bit-packed gaps and tfs (blocks.py)
    blk_last blk_off     per block: last docno (skipping reads no block), offset in blocks.bin
    ovf ovf_doc ovf_tf   the postings with tf > cap: position, docno, tf (exact tf parts)
    tfront*              the frontier of each term of several blocks (its bound for any function)
    tptr.npy tdocs.npy   title postings (documents whose title contains the term)
    doclen.npy           exact document lengths in analysed tokens
    docid|title|loc .bin/.off.npy   stored fields; text.zst & co: zstd frames (textstore.py)
    mtime.npy size.npy   file times and sizes
    docid_order.npy      permutation sorting docids by bytes (docid → docno by binary search)

Offsets and counts — ``ptr``, ``cf``, ``bptr``, ``blk_off``, ``tptr``, ``terms.off`` and the
stored fields' ``.off`` — are uint32 when their largest value fits (a segment under 4 G postings,
tokens or bytes), int64 otherwise (:func:`~bm25desk.engine.index.arrays.narrow`): format 4.
Format 3 wrote them all as int64 and is read as it is; segments of format 1 and 2
(``docs.npy``/``tfs.npy`` int32 postings, plain ``text.bin``, no stored bounds) are still read
too. Everything written is format 4, and an update rewrites older segments.

``terms.hash.npy`` (:data:`OPTIONAL_FILES`) is written with every lexicon, a segment's or a merged
one, since it was introduced; lexicons written before have none and are searched by binary search,
with the same answers. It adds a file and changes nothing else, so it is no new format: an older
bm25desk reads such an index (it ignores the file), and an update does not rewrite the segments
without it (a new format would: :func:`~bm25desk.engine.index.ingest.upgrade_segments` rewrites
every segment of an older one, a whole index, to add a table of 6 bytes a term); merges write it.
Whether a lexicon has one is what its folder holds; the checks verify it wherever it is present
or the manifest lists it (:func:`optional_files`), so one that goes missing from an index that
had it, or appears unlisted, is damage.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from bm25desk.engine.index import blocks
from bm25desk.engine.index.arrays import IndexCorruptError

__all__ = [
    "BLOCK_FILES",
    "COMMON_FILES",
    "FORMAT",
    "OLD_FILES",
    "OPTIONAL_FILES",
    "optional_files",
    "read_json",
    "read_meta",
    "segment_files",
    "segment_meta",
    "write_json",
]


FORMAT = 4
"""Segment format written: block-compressed postings with stored bounds, compressed text, and
offsets and counts stored as uint32 where they fit (format 3: the same, all int64)."""

COMMON_FILES = (
    "meta.json",
    "terms.bin",
    "terms.off.npy",
    "ptr.npy",
    "cf.npy",
    "tptr.npy",
    "tdocs.npy",
    "doclen.npy",
    "docid_order.npy",
    "docid.bin",
    "docid.off.npy",
    "title.bin",
    "title.off.npy",
    "loc.bin",
    "loc.off.npy",
    "text.off.npy",
    "mtime.npy",
    "size.npy",
)
BLOCK_FILES = (
    "bptr.npy",
    "blk_last.npy",
    "blk_off.npy",
    "blocks.bin",
    "ovf.npy",
    "ovf_doc.npy",
    "ovf_tf.npy",
    "tfront_term.npy",
    "tfront_off.npy",
    "tfront.bin",
    "text.zst",
    "text.zoff.npy",
    "text.zdoc.npy",
)
OLD_FILES = ("docs.npy", "tfs.npy", "text.bin")
"""The postings and text of segments of format 1 and 2 (still read)."""
OPTIONAL_FILES = ("terms.hash.npy",)
"""The files a lexicon (a segment's or a merged one) has when written since they were introduced:
the hash of its terms (:mod:`~bm25desk.engine.index.termhash`)."""


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write JSON atomically (temporary file + fsync + rename)."""
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1, ensure_ascii=False)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def read_json(path: Path) -> dict[str, Any]:
    """Read a JSON object, turning damage into :class:`IndexCorruptError`."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except FileNotFoundError as exc:
        raise IndexCorruptError(f"index file missing: {path.name}") from exc
    except (OSError, ValueError) as exc:
        raise IndexCorruptError(f"index file damaged: {path.name} ({exc})") from exc
    if not isinstance(data, dict):
        raise IndexCorruptError(f"index file damaged: {path.name} is not a JSON object")
    return data


def read_meta(directory: Path) -> dict[str, int]:
    """Read a segment's ``meta.json`` as integers.

    Returns n_docs, n_terms, nnz, total_len, and the segment format with its block layout
    (format 1 and 2 segments: format 2, no blocks).
    """
    meta = read_json(directory / "meta.json")
    try:
        out = {k: int(meta[k]) for k in ("n_docs", "n_terms", "nnz", "total_len")}
        out["format"] = int(meta.get("format", 2))
        if out["format"] >= 3:
            out["shift"], out["cap"] = int(meta["shift"]), int(meta["cap"])
    except (KeyError, ValueError, TypeError) as exc:
        raise IndexCorruptError(f"segment {directory.name}: bad meta.json") from exc
    if out["format"] > FORMAT:
        raise IndexCorruptError(
            f"segment {directory.name} has format {out['format']}, newer than this bm25desk "
            f"understands ({FORMAT}): upgrade bm25desk or rebuild the index"
        )
    if out["format"] >= 3 and not (
        2 <= out["shift"] <= blocks.MAX_SHIFT and 1 <= out["cap"] <= blocks.MAX_CAP
    ):
        raise IndexCorruptError(f"segment {directory.name}: bad meta.json (block layout)")
    return out


def segment_files(fmt: int) -> tuple[str, ...]:
    """Return the files every segment of format ``fmt`` has (see also :func:`optional_files`)."""
    return COMMON_FILES + (BLOCK_FILES if fmt >= 3 else OLD_FILES)


def optional_files(index_dir: Path, folder: str, manifest: dict[str, Any]) -> list[str]:
    """Return the :data:`OPTIONAL_FILES` of ``folder`` (a segment or lexicon) to verify.

    Those the manifest's checksums list and those the folder holds (paths relative to
    ``index_dir``): a listed file that is missing and a present one that is not listed are
    then reported by the checksums' verification. An index whose manifest lists its files costs
    no look-up on disk for them; one written before them costs one per folder.
    """
    listed = manifest.get("files")
    out = []
    for name in OPTIONAL_FILES:
        rel = f"{folder}/{name}"
        if (isinstance(listed, dict) and rel in listed) or os.path.exists(index_dir / rel):
            out.append(rel)
    return out


def segment_meta(n_docs: int, n_terms: int, nnz: int, total_len: int) -> dict[str, int]:
    """Return the ``meta.json`` of a new (format 4) segment."""
    return {
        "format": FORMAT,
        "n_docs": n_docs,
        "n_terms": n_terms,
        "nnz": nnz,
        "total_len": total_len,
        "shift": blocks.SHIFT,
        "cap": blocks.CAP,
    }

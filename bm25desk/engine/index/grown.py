"""Whether a corpus file only grew since it was indexed: its old size and a checksum of that prefix.

A TSV or JSONL corpus that gains records at its end (a crawl, a log, a growing export) need not be
rebuilt: the records after the old end are read and added (:func:`~.edit.append_grown`). What
makes that safe is knowing the first part of the file is exactly what was indexed. At build time
(before the source is read) :func:`prefix_record` stores the file's size, its XXH3-64 checksum
and its line count in the manifest's ``source``; :func:`check_growth` later reads that many bytes
again and compares. Anything else — a file that shrank, whose old bytes changed, that did not end
with a line break, that is compressed, or a format that is not one record a line — is rebuilt,
and :class:`Growth` says why.

The prefix is measured before the build reads the file, so records appended *while* it was being
indexed come again in the next update's range: their ids are then already in the index and they
are skipped as repeated ids, exactly as a fresh build of the file skips them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Literal

import xxhash

from bm25desk.engine.progress import CancelToken, ProgressFn
from bm25desk.engine.readers.api import LINE_FORMATS
from bm25desk.engine.readers.source import GZIP_MAGIC

__all__ = ["Growth", "check_growth", "prefix_record"]

_BLOCK = 8 << 20
"""Bytes hashed at a time."""


@dataclass(frozen=True, slots=True)
class Growth:
    """What an update of a changed corpus file should do, and why.

    ``action`` is ``append`` (read the lines in ``[start, end)``: ``end`` is just past the last
    complete line), ``wait`` (the file grew, but holds no complete new line yet) or ``rebuild``.
    ``prefix`` is the manifest entry describing ``[0, end)`` after an append; ``lines`` counts the
    lines before ``start`` (so that skipped records are reported with their line in the file).
    """

    action: Literal["append", "wait", "rebuild"]
    reason: str
    start: int = 0
    end: int = 0
    lines: int = 0
    prefix: dict[str, Any] = field(default_factory=dict)


def prefix_record(path: Path, fmt: str) -> dict[str, Any]:
    """Return ``{"size", "mtime", "prefix": {...}}`` for a file that may later only grow.

    Called before a build reads ``path``. Empty for formats that are not one record a line, for
    folders and for compressed files (those are rebuilt when they change).
    """
    if fmt not in LINE_FORMATS or not path.is_file():
        return {}
    st = path.stat()
    with open(path, "rb") as fh:
        if fh.read(2) == GZIP_MAGIC:
            return {}
        fh.seek(0)
        hasher = xxhash.xxh3_64()
        done, lines, last = _hash(fh, st.st_size, hasher)
    prefix = {"bytes": done, "xxh3": hasher.hexdigest(), "lines": lines, "ends_line": last != 0}
    return {"size": done, "mtime": st.st_mtime, "prefix": prefix}


def _hash(
    fh: BinaryIO,
    size: int,
    hasher: Any,
    cancel: CancelToken | None = None,
    progress: ProgressFn | None = None,
) -> tuple[int, int, int]:
    """Hash up to ``size`` bytes from ``fh``; return (bytes, newlines, 1 if it ends a line)."""
    done = lines = 0
    ends_line = 1  # an empty prefix ends where a line starts
    while done < size:
        block = fh.read(min(_BLOCK, size - done))
        if not block:
            break
        hasher.update(block)
        lines += block.count(b"\n")
        done += len(block)
        ends_line = int(block.endswith(b"\n"))
        if cancel is not None:
            cancel.check()
        if progress is not None:
            progress(done, size)
    return done, lines, ends_line


def check_growth(
    source: dict[str, Any],
    path: Path,
    cancel: CancelToken | None = None,
    progress: ProgressFn | None = None,
) -> Growth:
    """Return whether the changed corpus file ``path`` only gained lines at its end.

    ``source`` is the index manifest's ``source`` entry. Reads the old prefix once (to compare its
    checksum) and goes on over the new bytes, so the new prefix's checksum costs no second pass.
    """
    prefix = source.get("prefix")
    fmt = source.get("format")
    if fmt not in LINE_FORMATS:
        return Growth("rebuild", f"a {fmt} file is rebuilt when it changes")
    if not isinstance(prefix, dict) or not isinstance(prefix.get("bytes"), int):
        return Growth("rebuild", "the index records no checksum of the file's contents")
    old = prefix["bytes"]
    size = path.stat().st_size
    if size < old:
        return Growth("rebuild", f"the file shrank from {old:,} to {size:,} bytes")
    if not prefix.get("ends_line"):
        return Growth(
            "rebuild",
            "the file did not end with a line break when indexed: its last line may have grown",
        )
    with open(path, "rb") as fh:
        if fh.read(2) == GZIP_MAGIC:
            return Growth("rebuild", "the file is compressed now")
        fh.seek(0)
        hasher = xxhash.xxh3_64()
        done, lines, _ = _hash(fh, old, hasher, cancel, progress)
        if done != old or hasher.hexdigest() != prefix.get("xxh3"):
            return Growth("rebuild", f"the file's first {old:,} bytes changed since it was indexed")
        end, new_lines = _complete_lines(fh, old, size, hasher, cancel)
    if end == old:
        return Growth("wait", f"the file grew by {size - old:,} bytes but has no complete new line")
    new_prefix = {
        "bytes": end,
        "xxh3": hasher.hexdigest(),
        "lines": lines + new_lines,
        "ends_line": True,
    }
    return Growth(
        "append",
        f"the file grew from {old:,} to {end:,} bytes and its first {old:,} bytes are unchanged: "
        "only the new records were read",
        old,
        end,
        lines,
        new_prefix,
    )


def _complete_lines(
    fh: BinaryIO, start: int, size: int, hasher: Any, cancel: CancelToken | None
) -> tuple[int, int]:
    """Hash on from ``start`` up to the last line break before ``size``; return (end, lines).

    Bytes after the last line break (a line still being written) are left for a later update.
    """
    end, lines, pos = start, 0, start
    pending: list[bytes] = []  # bytes read since the last line break
    while pos < size:
        block = fh.read(min(_BLOCK, size - pos))
        if not block:
            break
        pos += len(block)
        cut = block.rfind(b"\n")
        if cut < 0:
            pending.append(block)
            continue
        for piece in (*pending, block[: cut + 1]):
            hasher.update(piece)
            lines += piece.count(b"\n")
        end = pos - len(block) + cut + 1
        pending = [block[cut + 1 :]]
        if cancel is not None:
            cancel.check()
    return end, lines

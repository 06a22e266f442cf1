"""The manifest: what one generation of an index is made of, and the checksums of its files.

``manifest.json`` names the segments (with their deletion files), the merged lexicon, the skip
list, the collection statistics, the analyser and the source. From format 2 on it also holds the
size and xxHash (XXH3, 64 bits) of every file of the generation (``files``) and a checksum of
its own content (``checksum``), so that any damage to any file — the manifest included — is
detected. Format 1 manifests (no checksums) are still read.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import xxhash

from bm25desk.engine.index.arrays import IndexCorruptError
from bm25desk.engine.index.layout import read_json

FORMAT = 4
"""On-disk format version written; an index with a newer one is refused. Format 4: segments
with block-compressed postings, stored block bounds and compressed text, their offsets and counts
uint32 where they fit; formats 1–3 (3: the same with int64 offsets; 1 and 2: plain int32
postings; 1 without checksums) are still read, and their segments rewritten in format 4 by the
next update or merge that touches them."""

CHECKSUMS_SINCE = 2
"""The first format whose manifests carry checksums."""


def manifest_checksum(manifest: dict[str, Any]) -> str:
    """Return the checksum of a manifest's content (every key but ``checksum``)."""
    body = {k: v for k, v in manifest.items() if k != "checksum"}
    text = json.dumps(body, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return xxhash.xxh3_64_hexdigest(text.encode("ascii"))


def read_manifest_file(path: Path) -> dict[str, Any]:
    """Read a manifest and check its format version (:class:`IndexCorruptError` if unusable)."""
    manifest = read_json(path)
    fmt = manifest.get("format")
    if not isinstance(fmt, int) or isinstance(fmt, bool):
        raise IndexCorruptError(f"{path.name} has no format version")
    if fmt > FORMAT:
        raise IndexCorruptError(
            f"index format {fmt} is newer than this bm25desk understands ({FORMAT}): "
            "upgrade bm25desk or rebuild the index"
        )
    return manifest


def verify_manifest_checksum(manifest: dict[str, Any]) -> None:
    """Raise :class:`IndexCorruptError` when a format-2 manifest's own checksum is wrong."""
    if manifest.get("format", 1) < CHECKSUMS_SINCE:
        return
    if manifest.get("checksum") != manifest_checksum(manifest):
        raise IndexCorruptError("index file damaged: manifest.json (checksum mismatch)")


def segment_entries(manifest: dict[str, Any]) -> list[tuple[str, str | None]]:
    """Return the ``(segment dir, deletion file or None)`` entries, checking their shape."""
    entries = manifest.get("segments")
    if not isinstance(entries, list):
        raise IndexCorruptError("manifest.json: 'segments' is not a list")
    out: list[tuple[str, str | None]] = []
    for entry in entries:
        try:
            name, dele = entry["name"], entry.get("deleted")
        except (KeyError, TypeError, AttributeError) as exc:
            raise IndexCorruptError(f"manifest.json has a bad segment entry: {entry!r}") from exc
        if not _plain_name(name) or (dele is not None and not _plain_name(dele)):
            raise IndexCorruptError(f"manifest.json has a bad segment entry: {entry!r}")
        out.append((name, dele or None))
    return out


def _plain_name(name: object) -> bool:
    """Return whether ``name`` is a plain file name inside the index folder (no path tricks)."""
    return (
        isinstance(name, str)
        and name not in ("", ".", "..")
        and "/" not in name
        and "\\" not in name
        and "\x00" not in name
    )


def files_of(manifest: dict[str, Any]) -> set[str]:
    """Return the top-level names (segment and lexicon folders, files) a manifest refers to."""
    names: set[str] = set()
    for seg, dele in segment_entries(manifest):
        names.add(seg)
        if dele:
            names.add(dele)
    for key in ("lexicon", "skips"):
        value = manifest.get(key)
        if _plain_name(value):
            names.add(str(value))
    return names


def write_manifest(directory: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    """Commit ``manifest``: its generation copy, then ``manifest.json`` (atomic, synced).

    The copy ``manifest-<G>.json`` lets a later writer see which files a reader of generation G
    still needs, and lets ``bm25desk check --repair`` restore a lost ``manifest.json``.
    """
    manifest = dict(manifest, checksum=manifest_checksum(manifest))
    gen = int(manifest.get("generation", 1))
    write_json_synced(directory / f"manifest-{gen}.json", manifest)
    write_json_synced(directory / "manifest.json", manifest)
    sync_dir(directory)
    return manifest


def keep_generation_copy(directory: Path, manifest: dict[str, Any]) -> None:
    """Write ``manifest-<G>.json`` for the current generation if it is missing (format 1)."""
    path = directory / f"manifest-{int(manifest.get('generation', 1))}.json"
    if not path.exists():
        write_json_synced(path, manifest)


def write_json_synced(path: Path, data: dict[str, Any]) -> None:
    """Write JSON atomically: a unique temporary file, fsync, rename."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1, ensure_ascii=True)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def sync_dir(directory: Path) -> None:
    """Flush a directory's entries (renames) to disk where the platform allows it."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - e.g. Windows
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)

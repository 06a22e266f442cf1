"""Check an index completely, and repair it on request (Lucene's CheckIndex).

:func:`check_index` hashes every file of the current generation against the manifest, checks the
manifest's own checksum and every structural invariant of every segment in full, and reports per
segment. With ``repair=True`` (and the index's writer lock) it restores a lost or damaged
``manifest.json`` from the generation's kept copy, and drops damaged segments — saying how many
documents are lost — by committing a new generation without them; anything else needs a rebuild.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bm25desk.engine.index import commit as commit_mod
from bm25desk.engine.index.arrays import IndexCorruptError, load_array
from bm25desk.engine.index.integrity import LEXICON_FILES, Stamps, check_segment, verify_files
from bm25desk.engine.index.layout import FORMAT, optional_files, read_meta, segment_files
from bm25desk.engine.index.lexicon import Lexicon
from bm25desk.engine.index.manifest import (
    read_manifest_file,
    segment_entries,
    verify_manifest_checksum,
    write_json_synced,
)
from bm25desk.engine.index.reader import Index
from bm25desk.engine.index.segment import Segment
from bm25desk.engine.index.snapshot import collect_garbage, generation_manifests
from bm25desk.engine.index.store import IndexStore, StoreError


@dataclass
class SegmentCheck:
    """The verdict on one segment."""

    name: str
    n_docs: int
    error: str = ""
    files: tuple[str, ...] = ()  # its files, verified (when no error)


@dataclass
class CheckReport:
    """What :func:`check_index` found (and repaired)."""

    name: str
    generation: int = 0
    checksums: bool = True
    segments: list[SegmentCheck] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Return whether the index is sound now (after any repair)."""
        return not self.problems

    def as_text(self) -> str:
        """Return a human report, one line per segment and problem."""
        lines = [f"index {self.name!r}, generation {self.generation}:"]
        for s in self.segments:
            verdict = f"DAMAGED: {s.error}" if s.error else "ok"
            lines.append(f"  segment {s.name} ({s.n_docs:,} documents): {verdict}")
        if not self.checksums:
            lines.append(
                "  note: built by an older bm25desk without checksums; rebuild to add them"
            )
        lines += [f"  repaired: {r}" for r in self.repaired]
        lines += [f"  problem: {p}" for p in self.problems]
        if self.problems:
            lines.append(
                "  the index is damaged: rebuild it with 'bm25desk index' (or try --repair)"
            )
        else:
            lines.append("  no problems found")
        return "\n".join(lines)


def check_index(name: str, *, store: IndexStore | None = None, repair: bool = False) -> CheckReport:
    """Verify every checksum and invariant of index ``name``; repair what can be when asked."""
    store = store or IndexStore()
    if not store.exists(name):
        raise StoreError(f"no index named {name!r}")
    directory = store.path(name)
    if repair:
        with store.writing(name):
            return _check(directory, name, repair=True)
    return _check(directory, name, repair=False)


def _check(directory: Path, name: str, repair: bool) -> CheckReport:
    report = CheckReport(name)
    manifest = _manifest(directory, report, repair)
    if manifest is None:
        return report
    report.generation = int(manifest.get("generation", 1))
    report.checksums = isinstance(manifest.get("files"), dict)
    try:
        entries = segment_entries(manifest)
    except IndexCorruptError as exc:
        report.problems.append(str(exc))
        return report
    # Stamped as the files pass (saved only if everything does): the open below, and later
    # ones, then trust them.
    stamps = Stamps(directory, read=False)
    for seg_name, dele in entries:
        report.segments.append(_check_segment(directory, manifest, seg_name, dele, stamps))
    lex = manifest.get("lexicon")
    lexicon_error = ""
    lex_files = [f"{lex}/{f}" for f in LEXICON_FILES] if lex else []
    if lex:
        lex_files += optional_files(directory, lex, manifest)
        try:
            verify_files(directory, manifest, lex_files, force=True, stamps=stamps)
            if not Lexicon(directory / lex).check_hash():
                raise IndexCorruptError("terms.hash.npy does not match the lexicon")
        except IndexCorruptError as exc:
            lexicon_error = str(exc)
    lexicon_error = lexicon_error or _check_extras(directory, manifest, report)
    damaged = [s for s in report.segments if s.error]
    if repair and (damaged or lexicon_error):
        _drop_segments(directory, manifest, entries, damaged, report)
        return report
    report.problems += [f"segment {s.name}: {s.error}" for s in damaged]
    if lexicon_error:
        report.problems.append(f"lexicon {lex}: {lexicon_error}")
    if not report.problems:
        checked = [f for s in report.segments for f in s.files] + lex_files
        stamps.save(set(checked))
        try:  # the whole: statistics against the arrays, the manifest's own checksum
            Index(directory).close()
        except IndexCorruptError as exc:
            report.problems.append(str(exc))
    return report


def _check_extras(directory: Path, manifest: dict[str, Any], report: CheckReport) -> str:
    """Check the skip list and the generation's manifest copy (searches never read them)."""
    skips = manifest.get("skips")
    if isinstance(skips, str) and isinstance(manifest.get("files"), dict):
        try:
            verify_files(directory, manifest, [skips], force=True)
        except IndexCorruptError as exc:
            report.problems.append(f"skip list: {exc}")
    copy = directory / f"manifest-{report.generation}.json"
    if report.checksums and not copy.exists():
        report.problems.append(f"the copy {copy.name} is missing")
    elif copy.exists():
        try:
            kept = read_manifest_file(copy)
            verify_manifest_checksum(kept)
            if kept.get("checksum") != manifest.get("checksum"):
                raise IndexCorruptError("it differs from manifest.json")
        except IndexCorruptError as exc:
            report.problems.append(f"the copy {copy.name} is damaged ({exc})")
    return ""


def _manifest(directory: Path, report: CheckReport, repair: bool) -> dict[str, Any] | None:
    """Read and verify the manifest; with ``repair``, restore it from its generation copy."""
    try:
        manifest = read_manifest_file(directory / "manifest.json")
        verify_manifest_checksum(manifest)
        return manifest
    except IndexCorruptError as exc:
        problem = f"manifest: {exc}"
    for gen in sorted(generation_manifests(directory), reverse=True):
        copy = directory / f"manifest-{gen}.json"
        try:
            manifest = read_manifest_file(copy)
            verify_manifest_checksum(manifest)
        except IndexCorruptError:
            continue
        if repair:
            write_json_synced(directory / "manifest.json", manifest)
            report.repaired.append(f"manifest.json restored from generation {gen}'s copy")
            return manifest
        report.problems.append(f"{problem}; --repair restores it from generation {gen}'s copy")
        return None
    report.problems.append(f"{problem}; no intact copy is left")
    return None


def _check_segment(
    directory: Path, manifest: dict[str, Any], seg_name: str, dele: str | None, stamps: Stamps
) -> SegmentCheck:
    """Hash and fully check one segment and its deletion file (stamped in ``stamps``)."""
    n_docs, fmt = 0, FORMAT
    with contextlib.suppress(IndexCorruptError):
        meta = read_meta(directory / seg_name)
        n_docs, fmt = meta["n_docs"], meta["format"]  # to say what a repair would lose
    files = [f"{seg_name}/{f}" for f in segment_files(fmt)]
    files += optional_files(directory, seg_name, manifest) + ([dele] if dele else [])
    try:
        verify_files(directory, manifest, files, force=True, stamps=stamps)
        seg = Segment(directory / seg_name)
        n_docs = seg.n_docs
        check_segment(seg, seg.nnz, full=True, deep=True)
        if dele:
            mask = load_array(directory / dele, mmap=False)
            if mask.dtype.kind != "b" or mask.shape != (seg.n_docs,):
                raise IndexCorruptError(f"deletion file {dele} does not fit its segment")
            n_docs -= int(mask.sum())
    except IndexCorruptError as exc:
        return SegmentCheck(seg_name, n_docs, str(exc))
    return SegmentCheck(seg_name, n_docs, files=tuple(files))


def _drop_segments(
    directory: Path,
    manifest: dict[str, Any],
    entries: list[tuple[str, str | None]],
    damaged: list[SegmentCheck],
    report: CheckReport,
) -> None:
    """Commit a new generation without the damaged segments (the lexicon is recomputed)."""
    from bm25desk.engine.analysis.analyzer import Analyzer

    bad = {s.name for s in damaged}
    kept = [(s, d) for s, d in entries if s not in bad]
    for s in damaged:
        lost = f"{s.n_docs:,} documents" if s.n_docs else "its documents"
        report.repaired.append(f"dropped segment {s.name} ({s.error}): {lost} lost")
    generation = commit_mod.next_generation(directory, manifest)
    new = commit_mod.commit(
        directory,
        name=str(manifest.get("name", directory.name)),
        analyzer=Analyzer.from_spec(manifest["analyzer"]),
        source=dict(manifest.get("source", {})),
        segments=kept,
        created=manifest.get("created"),
        report=dict(manifest.get("report", {})),
        generation=generation,
        skips=manifest.get("skips"),
        previous=manifest,
    )
    if not damaged:
        report.repaired.append("lexicon recomputed (no documents lost)")
    collect_garbage(directory, new)
    report.generation = generation
    report.segments = [s for s in report.segments if s.name not in bad]

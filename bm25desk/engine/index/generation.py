"""Write one new generation of an index under its writer lock, whatever produced the segments.

Every build ends here — a one-process build, the built-in parallel build, a Spark or Dask job
assembled on the driver: :func:`write_generation` takes the index's writer lock, lets a
*producer* write segments into the right folder (a temporary folder renamed into place for a new
index, the index's own folder for a rebuild), commits them as the next generation and cleans up.
A producer that fails or is cancelled leaves the previous index exactly as it was.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.index import commit as commit_mod
from bm25desk.engine.index.arrays import IndexCorruptError
from bm25desk.engine.index.commit import NewFiles, next_generation
from bm25desk.engine.index.integrity import FINE_RACY_SECONDS, racy_seconds
from bm25desk.engine.index.manifest import read_manifest_file
from bm25desk.engine.index.report import BuildReport, reason_counts
from bm25desk.engine.index.snapshot import collect_garbage
from bm25desk.engine.index.source import skip_records, write_skips
from bm25desk.engine.index.store import EmptyBuildError, IndexStore, StoreError
from bm25desk.engine.readers.corpus import ReadReport, Skip

Entries = list[tuple[str, str | None]]
"""``(segment folder, deletion file or None)`` in docno order, as the manifest lists them."""

Producer = Callable[[Path, ReadReport], tuple[Entries, int]]
"""``produce(directory, report) -> (entries, documents written)``: writes segments into
``directory`` (and records what it read and skipped in ``report``)."""


@dataclass(frozen=True, slots=True)
class NewGeneration:
    """What a build commits besides its segments: the manifest's name, source and analyser.

    ``build`` says how the index was built (engine, parts, versions; see ``bm25desk info``);
    ``folder`` is the source folder of a folder build (its skipped files remember their state);
    ``empty`` gives the message of an :class:`EmptyBuildError` from the skipped records.
    """

    name: str
    source: dict[str, Any]
    analyzer: Analyzer
    build: dict[str, Any] = field(default_factory=dict)
    replace: bool = False
    allow_empty: bool = False
    folder: Path | None = None
    empty: Callable[[tuple[Skip, ...]], str] | None = None


def write_generation(store: IndexStore, plan: NewGeneration, produce: Producer) -> BuildReport:
    """Run ``produce`` under ``plan.name``'s writer lock and commit what it wrote.

    Raises
    ------
    StoreError
        An index of that name built from another source (unless ``plan.replace``);
        :class:`EmptyBuildError` when nothing was written (unless ``plan.allow_empty``);
        :class:`~bm25desk.engine.index.store.IndexLockedError` while another process writes the
        index; :class:`~bm25desk.engine.index.store.IndexWriteError` when the disk is full.
    """
    name = plan.name
    started = time.monotonic()
    with store.writing(name):
        store.remove_stale_temps(name)
        target = store.root / name
        if store.exists(name):
            previous = previous_manifest(target, name, plan.source.get("path"), plan.replace)
            generation = next_generation(target, previous)
            new_files = NewFiles(target)
            try:
                manifest, report, count = _write(target, plan, generation, previous, produce)
            except BaseException:
                new_files.discard(generation)
                raise
            collect_garbage(target, manifest)
        else:
            tmp = store.temp_dir(name)
            try:
                manifest, report, count = _write(tmp, plan, 1, None, produce)
                store.install(tmp, name)
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
    verify_once(store, name)
    skipped = tuple(report.skipped)
    return BuildReport(
        name,
        report.read,
        count,
        skipped,
        time.monotonic() - started,
        manifest["stats"]["n_docs"],
        manifest["stats"]["n_terms"],
        added=count,
        skip_reasons=reason_counts(skipped),
    )


def verify_once(store: IndexStore, name: str) -> None:
    """Open the new generation once, so its checks run and are stamped while it is in memory.

    The first open of files this machine has not checked hashes and reads them all (1.6 s after
    a 100 k-document build, measured by the benchmark harness); done here it costs ~1 % of the
    build and the user's first open reads nothing through. Files written in the last clock ticks
    cannot be stamped yet (:func:`~bm25desk.engine.index.integrity.racy_seconds`): on a file
    system with sub-second times that is a wait of at most 50 ms; otherwise the user's first open
    checks them instead, as before.
    """
    st = (store.path(name) / "manifest.json").stat()  # written last
    wait = racy_seconds(st) - (time.time() - st.st_ctime_ns / 1e9)
    if 0 < wait <= FINE_RACY_SECONDS:
        time.sleep(wait)
    with store.open(name):
        pass


def previous_manifest(target: Path, name: str, path: Any, replace: bool) -> dict[str, Any] | None:
    """Return the existing index's manifest (None when damaged); refuse another source.

    A damaged index (its manifest unreadable) may be rebuilt without ``replace``: its source is
    unknown and the damage message asks for exactly that.
    """
    try:
        previous = read_manifest_file(target / "manifest.json")
    except IndexCorruptError:
        return None
    old = (
        previous.get("source", {}).get("path") if isinstance(previous.get("source"), dict) else None
    )
    if old and old != str(path) and not replace:
        raise StoreError(
            f"an index named {name!r} already exists, built from {old}; choose another name "
            "or replace it (--replace)"
        )
    return previous


def _write(
    directory: Path,
    plan: NewGeneration,
    generation: int,
    previous: dict[str, Any] | None,
    produce: Producer,
) -> tuple[dict[str, Any], ReadReport, int]:
    """Produce the segments into ``directory``, then commit them as ``generation``."""
    report = ReadReport()
    entries, count = produce(directory, report)
    skipped = tuple(report.skipped)
    if count == 0 and not plan.allow_empty:
        message = plan.empty(skipped) if plan.empty is not None else "no documents found"
        raise EmptyBuildError(message)
    skips = write_skips(directory, generation, skip_records(skipped, plan.folder))
    manifest = commit_mod.commit(
        directory,
        name=plan.name,
        analyzer=plan.analyzer,
        source=plan.source,
        segments=entries,
        report={"read": report.read, "indexed": count, "skipped": len(skipped)},
        generation=generation,
        skips=skips,
        previous=previous,
        build=plan.build,
    )
    return manifest, report, count

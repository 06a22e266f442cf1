"""Add, replace and remove documents of a corpus-file index by id; append a grown file's records.

None of these rebuilds anything. New documents go into new segments (the build's own
:func:`~.ingest.write_segments`), documents that go or are replaced are marked in new deletion
masks of their old segments, and :func:`~.commit.commit` writes one new generation atomically,
under the index's writer lock, recomputing N, the total length, df and cf over live documents.
So afterwards every score is exactly that of a fresh build of the resulting collection, for every
variant and parameter.

**Order.** Live documents keep their relative order; added documents come after them in the order
of the file they came from; a *replaced* document (an added one whose id the index already had)
takes its new place at the end, and its old one is deleted. A fresh build of the resulting
collection in that order ranks identically, ties included (ties go by index order).

**Ids.** Within an added file a repeated id is skipped, as a build skips it. When a grown file's
new records are appended (:func:`append_grown`), a record whose id the index already has is
skipped the same way: a fresh build of the whole file would have skipped it too.

The manifest's ``source`` records every edit (``edits``: the last :data:`EDIT_HISTORY`, and
``edit_totals``), which ``bm25desk info`` shows; an update that would have to rebuild an edited
index from its source refuses unless told to discard the edits (they are not in the source).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bm25desk.engine.index import commit as commit_mod
from bm25desk.engine.index.grown import Growth
from bm25desk.engine.index.ingest import write_segments
from bm25desk.engine.index.inplace import Change, commit_in_place, deletion_entries
from bm25desk.engine.index.reader import Index
from bm25desk.engine.index.report import BuildReport, reason_counts
from bm25desk.engine.index.source import read_skips, recorded_columns, skip_records
from bm25desk.engine.index.store import EmptyBuildError, IndexStore, StoreError
from bm25desk.engine.progress import CancelToken, ProgressFn, Throttle
from bm25desk.engine.readers.detect import detect_format
from bm25desk.engine.readers.document import ColumnMap, Document, ReadReport, Skip

__all__ = ["EDIT_HISTORY", "EditReport", "add_documents", "append_grown", "remove_documents"]

EDIT_HISTORY = 100
"""Edits listed one by one in the manifest (older ones are only counted in ``edit_totals``)."""

_SHOWN_MISSING = 1000


@dataclass(frozen=True, slots=True)
class EditReport:
    """What :func:`add_documents` or :func:`remove_documents` did.

    ``replaced`` documents are counted in neither ``added`` nor ``removed``; ``not_found`` lists
    (the first 1,000 of) the ids a removal named that no live document has, ``n_not_found`` all.
    """

    name: str
    operation: str  # "add" or "remove"
    read: int
    added: int
    replaced: int
    removed: int
    skipped: tuple[Skip, ...]
    seconds: float
    n_docs: int
    n_terms: int
    not_found: tuple[str, ...] = ()
    n_not_found: int = 0
    skip_reasons: dict[str, int] = field(default_factory=dict)

    def summary(self) -> str:
        """Return a one-paragraph human summary."""
        if self.operation == "add":
            head = f"Added {self.added:,} and replaced {self.replaced:,} documents of {self.name!r}"
        else:
            head = f"Removed {self.removed:,} documents from {self.name!r}"
        text = f"{head} in {self.seconds:.1f} s; {self.n_docs:,} documents, {self.n_terms:,} terms."
        if self.n_not_found:
            text += f" {self.n_not_found:,} ids are in no document: {_listed(self.not_found)}."
        if self.skipped:
            reasons = "; ".join(f"{n} × {r}" for r, n in self.skip_reasons.items())
            text += f" Skipped {len(self.skipped):,}: {reasons}."
        return text


@dataclass
class _Edit:
    """One edit being applied: documents to write, docnos to delete, and what to record."""

    docs: Iterator[Document] | None = None
    gone: set[int] = field(default_factory=set)
    report: ReadReport = field(default_factory=ReadReport)
    source: dict[str, Any] = field(default_factory=dict)
    skipped: list[Skip] = field(default_factory=list)


def add_documents(
    name: str,
    source: str | Path,
    *,
    fmt: str | None = None,
    columns: ColumnMap | None = None,
    store: IndexStore | None = None,
    progress: ProgressFn | None = None,
    cancel: CancelToken | None = None,
) -> EditReport:
    """Add the documents of corpus file ``source`` to index ``name``, replacing any of equal id.

    ``source`` may be in any supported format (detected unless ``fmt`` is given; ``columns`` for a
    TSV with a header row); its documents are analysed with the index's own analyser, and the
    metadata and field columns the index was built with are read from a TSV or JSONL source too.
    Progress is reported in bytes of ``source``.

    Raises
    ------
    StoreError
        When ``name`` is not a corpus-file index (a folder index follows its folder: use
        update), or ``source`` holds no document; :class:`~.store.IndexLockedError` while another
        process writes the index.
    CorpusError
        When ``source`` is missing or its format cannot be read.
    """
    from bm25desk.engine.readers import api

    store = store or IndexStore()
    started = time.monotonic()
    path = Path(source).expanduser().resolve()
    fmt = fmt or detect_format(path)
    with store.writing(name):
        index = _open_editable(store, name)
        try:
            edit = _Edit()
            # The index's metadata and field columns, where the added file has named columns.
            extra = recorded_columns(index.source)[1] if fmt in api.COLUMN_FORMATS else None
            docs = api.read_corpus(
                path,
                fmt,
                columns=columns,
                extra=extra,
                report=edit.report,
                progress=progress,
                cancel=cancel,
            )
            ids: list[str] = []
            edit.docs = _recorded(docs, ids)
            record: dict[str, Any] = {"op": "add", "from": str(path), "format": fmt}

            def replaced() -> dict[str, Any]:
                for docid in ids:
                    docno = index.docno(docid)
                    if docno is not None:
                        edit.gone.add(docno)
                if not ids:
                    from bm25desk.engine.index.build import empty_message

                    raise EmptyBuildError(empty_message(path, edit.report.skipped))
                record.update(added=len(ids) - len(edit.gone), replaced=len(edit.gone))
                return _with_edit(index.source, record)

            manifest, count = _apply(index, edit, replaced, cancel)
        finally:
            index.close()
    skipped = tuple(edit.report.skipped)
    return EditReport(
        name,
        "add",
        edit.report.read,
        count - len(edit.gone),
        len(edit.gone),
        0,
        skipped,
        time.monotonic() - started,
        manifest["stats"]["n_docs"],
        manifest["stats"]["n_terms"],
        skip_reasons=reason_counts(skipped),
    )


def remove_documents(
    name: str,
    ids: Iterable[str],
    *,
    store: IndexStore | None = None,
    progress: ProgressFn | None = None,
    cancel: CancelToken | None = None,
) -> EditReport:
    """Remove the documents with the given ids from index ``name``.

    Ids no live document has are reported (:attr:`EditReport.not_found`), not an error, unless
    none of the ids is found: then nothing is written and :class:`StoreError` says so.
    Progress is reported in ids looked up.
    """
    store = store or IndexStore()
    started = time.monotonic()
    wanted = list(dict.fromkeys(ids))
    missing: list[str] = []
    with store.writing(name):
        index = _open_editable(store, name)
        try:
            edit = _Edit()
            throttle = Throttle(progress)
            for i, docid in enumerate(wanted):
                docno = index.docno(docid)
                if docno is None:
                    missing.append(docid)
                else:
                    edit.gone.add(docno)
                if not i & 255:
                    if cancel is not None:
                        cancel.check()
                    throttle(i, len(wanted))
            throttle(len(wanted), len(wanted))
            if not edit.gone:
                raise StoreError(
                    f"no document of {name!r} has any of these ids: {_listed(missing) or 'none'}"
                )
            record = {"op": "remove", "removed": len(edit.gone), "not_found": len(missing)}
            manifest, _ = _apply(index, edit, lambda: _with_edit(index.source, record), cancel)
        finally:
            index.close()
    return EditReport(
        name,
        "remove",
        0,
        0,
        0,
        len(edit.gone),
        (),
        time.monotonic() - started,
        manifest["stats"]["n_docs"],
        manifest["stats"]["n_terms"],
        tuple(missing[:_SHOWN_MISSING]),
        len(missing),
    )


def append_grown(
    index: Index,
    growth: Growth,
    progress: ProgressFn | None,
    cancel: CancelToken | None,
    started: float,
) -> BuildReport:
    """Add the records a grown corpus file gained (``growth``), under the caller's writer lock.

    Records whose id the index already has are skipped as repeated ids (see the module
    docstring). Closes ``index``.
    """
    from bm25desk.engine.readers import api

    src = index.source
    path = Path(src["path"])
    columns, extra = recorded_columns(src)
    edit = _Edit()
    docs = api.read_corpus(
        path,
        src.get("format"),
        columns=columns,
        extra=extra,
        report=edit.report,
        progress=progress,
        cancel=cancel,
        byte_range=(growth.start, growth.end),
    )
    edit.docs = _new_ids_only(index, docs, edit.report, str(path))

    def grown_source() -> dict[str, Any]:
        _renumber_lines(edit.report, str(path), growth.lines)
        return {
            **src,
            "size": growth.end,
            "mtime": path.stat().st_mtime,
            "prefix": growth.prefix,
        }

    try:
        manifest, count = _apply(index, edit, grown_source, cancel)
    finally:
        index.close()
    skipped = tuple(edit.report.skipped)
    return BuildReport(
        index.name,
        edit.report.read,
        count,
        skipped,
        time.monotonic() - started,
        manifest["stats"]["n_docs"],
        manifest["stats"]["n_terms"],
        added=count,
        rebuilt=False,
        skip_reasons=reason_counts(skipped),
        note=f"Appended: {growth.reason}.",
    )


def _listed(ids: Iterable[str] | tuple[str, ...], shown: int = 5) -> str:
    """Return the first ``shown`` ids quoted, with "…" when there are more."""
    ids = list(ids)
    return ", ".join(repr(i) for i in ids[:shown]) + (", …" if len(ids) > shown else "")


# -- the shared steps ------------------------------------------------------------------------------


def _open_editable(store: IndexStore, name: str) -> Index:
    """Open index ``name`` (the caller holds its writer lock); refuse a folder index."""
    index = store.open(name)
    kind = index.source.get("kind")
    if kind == "folder":
        index.close()
        raise StoreError(
            f"{name!r} follows the folder {index.source.get('path', '')}: add or delete files "
            "there and run 'bm25desk update', or index a corpus file to edit documents by id"
        )
    return index


def _apply(
    index: Index, edit: _Edit, new_source: Any, cancel: CancelToken | None
) -> tuple[dict[str, Any], int]:
    """Write ``edit.docs`` as new segments, delete ``edit.gone``, commit; return (manifest, count).

    ``new_source()`` is called after the documents are written (it may depend on them) and
    returns the manifest's new ``source`` entry. Nothing is left behind on error or cancel.
    """
    counts: list[int] = []

    def write(generation: int) -> Change:
        seg_names: list[str] = []
        count = 0
        if edit.docs is not None:
            seg_names, count = write_segments(index.path, edit.docs, index.analyzer, cancel)
        counts.append(count)
        source = new_source()
        gone = np.zeros(index.n_slots, dtype=bool)
        gone[sorted(edit.gone)] = True
        entries = deletion_entries(index, gone, generation) + [(s, None) for s in seg_names]
        if cancel is not None:
            cancel.check()
        records = read_skips(index.path, index.manifest)
        records += skip_records(edit.report.skipped, None)
        return Change(entries, source, index.manifest.get("report"), records)

    manifest = commit_in_place(index, write)
    return manifest, counts[0]


def _recorded(docs: Iterator[Document], ids: list[str]) -> Iterator[Document]:
    """Yield ``docs``, appending each one's id to ``ids``."""
    for doc in docs:
        ids.append(doc.docid)
        yield doc


def _new_ids_only(
    index: Index, docs: Iterator[Document], report: ReadReport, where: str
) -> Iterator[Document]:
    """Yield the documents whose id the index does not have; skip the others as repeated ids."""
    for doc in docs:
        if index.docno(doc.docid) is None:
            yield doc
        else:
            report.read -= 1  # the reader counted it; a fresh build would have skipped it
            report.skip(where, f"duplicate id {doc.docid!r} (already indexed from an earlier line)")


def _renumber_lines(report: ReadReport, name: str, before: int) -> None:
    """Turn the line numbers of a byte range's skips into line numbers of the whole file."""
    prefix = f"{name}:"
    for i, skip in enumerate(report.skipped):
        where = skip.where
        if where.startswith(prefix) and where[len(prefix) :].isdigit():
            line = int(where[len(prefix) :]) + before
            report.skipped[i] = Skip(f"{prefix}{line}", skip.reason)


def _with_edit(source: dict[str, Any], record: dict[str, Any]) -> dict[str, Any]:
    """Return ``source`` with ``record`` (and the time) added to its edit history and totals."""
    record = {**record, "at": commit_mod.now()}
    edits = [e for e in source.get("edits", []) if isinstance(e, dict)]
    totals = dict(source.get("edit_totals") or {})
    totals["operations"] = int(totals.get("operations", 0)) + 1
    for key in ("added", "replaced", "removed"):
        totals[key] = int(totals.get(key, 0)) + int(record.get(key, 0))
    return {**source, "edits": [*edits, record][-EDIT_HISTORY:], "edit_totals": totals}

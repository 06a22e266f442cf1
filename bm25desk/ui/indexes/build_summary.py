"""What the window says when a build, an update or an edit by id ends (Qt-free).

A folder's build counts the documents indexed and the files skipped, a corpus file's counts
records; an update that found nothing to do says so instead of reporting a rate of 0
documents per second.
"""

from __future__ import annotations

from bm25desk.engine import BuildReport
from bm25desk.engine.index.edit import EditReport
from bm25desk.ui.common.formatting import plural


def build_summary(report: BuildReport, source_kind: str = "") -> str:
    """Return one paragraph about ``report`` (``source_kind``: ``folder`` or a file format)."""
    unit = "file" if source_kind == "folder" else "record"
    name = f"“{report.name}”"
    if report.rebuilt and source_kind == "folder":
        # Files skipped are not among those read, and one mbox file holds many documents:
        # "of N files" would be wrong both ways, so a folder's build counts documents.
        head = f"Indexed {plural(report.indexed, 'document')} into {name}"
    elif report.rebuilt:
        head = f"Indexed {report.indexed:,} of {plural(report.read, unit)} into {name}"
    elif not (report.added or report.changed or report.removed):
        head = f"{name} is up to date: nothing changed in its source"
    else:
        head = (
            f"Updated {name}: {report.added:,} new, {report.changed:,} changed, "
            f"{report.removed:,} removed"
        )
    rate = ""
    if report.indexed and report.seconds >= 0.05:
        rate = f", {report.indexed / report.seconds:,.0f} documents/s"
    text = (
        f"{head} ({report.seconds:.1f} s{rate}). It holds {plural(report.n_docs, 'document')} "
        f"and {plural(report.n_terms, 'term')}."
    )
    if report.skipped:
        reasons = "; ".join(f"{n:,} × {r}" for r, n in report.skip_reasons.items())
        text += f" Skipped {plural(len(report.skipped), unit)}: {reasons}."
    return text


def edit_summary(report: EditReport) -> str:
    """Return one paragraph about documents added or removed by id (``report``)."""
    name = f"“{report.name}”"
    if report.operation == "add":
        head = f"Added {plural(report.added, 'document')} to {name}"
        if report.replaced:
            head += f" and replaced {report.replaced:,} of the same id"
    else:
        head = f"Removed {plural(report.removed, 'document')} from {name}"
    text = (
        f"{head} in {report.seconds:.1f} s. It holds {plural(report.n_docs, 'document')} and "
        f"{plural(report.n_terms, 'term')}."
    )
    if report.n_not_found:
        shown = ", ".join(report.not_found[:5]) + (", …" if report.n_not_found > 5 else "")
        text += f" {plural(report.n_not_found, 'id')} named no document: {shown}."
    if report.skipped:
        reasons = "; ".join(f"{n:,} × {r}" for r, n in report.skip_reasons.items())
        text += f" Skipped {plural(len(report.skipped), 'record')}: {reasons}."
    return text

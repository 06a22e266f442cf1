"""What to build: a source, a name, a format, analysis options and a column mapping (Qt-free)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.index.store import IndexInfo
from bm25desk.engine.readers.corpus import ColumnMap
from bm25desk.ui.common.sample import SAMPLE_NAME, sample_path


@dataclass(frozen=True, slots=True)
class BuildRequest:
    """Everything :func:`bm25desk.engine.build_index` needs, as chosen in the UI."""

    source: Path
    name: str
    fmt: str | None = None
    analyzer: dict[str, Any] = field(default_factory=dict)  # Analyzer.create keyword arguments
    columns: ColumnMap | None = None
    analyzer_spec: dict[str, Any] | None = None  # a stored spec (rebuilds): used as it is
    kind: str = "build"  # build | rebuild | update | add | remove (documents, by id)
    allow_empty: bool = False  # build even when no document was found (the user insisted)
    ids: tuple[str, ...] = ()  # the documents to remove (kind "remove")

    def make_analyzer(self) -> Analyzer:
        """Return the analyser (from the stored spec for rebuilds, else from the options)."""
        if self.analyzer_spec is not None:
            return Analyzer.from_spec(self.analyzer_spec)
        return Analyzer.create(**self.analyzer)


def sample_request() -> BuildRequest:
    """Return the request that builds the bundled sample (English stop words, Porter stemmer)."""
    return BuildRequest(
        sample_path(),
        SAMPLE_NAME,
        "smart",
        {"stopwords": "en", "stemmer": "porter", "language": "en"},
    )


def rebuild_request(info: IndexInfo) -> BuildRequest:
    """Return a request that rebuilds an index from its recorded source and analyser."""
    src = info.source
    cols = src.get("columns")
    columns = ColumnMap(cols["docid"], tuple(cols["text"]), cols.get("title")) if cols else None
    return BuildRequest(
        Path(str(src.get("path", ""))),
        info.name,
        src.get("format"),
        {},
        columns,
        analyzer_spec=info.analyzer or None,
        kind="rebuild",
    )

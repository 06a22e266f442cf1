"""SMART records (CISI, Cranfield, CACM ...): ``.I <id>`` then fields ``.T .A .W .B .X ...``."""

from __future__ import annotations

from collections.abc import Iterator

from bm25desk.engine.extract.common import collapse, join_title
from bm25desk.engine.readers.document import Document
from bm25desk.engine.readers.records import Admission
from bm25desk.engine.readers.source import Source

__all__ = ["read_smart"]


def _smart_field(line: bytes) -> bytes | None:
    """Return the field letter if ``line`` is a SMART field marker (``.X``, then end or space)."""
    if (
        len(line) >= 2
        and line[0] == 0x2E  # "."
        and 0x41 <= line[1] <= 0x5A  # "A".."Z"
        and (len(line) == 2 or line[2] in b" \t\r\n")
    ):
        return line[1:2]
    return None


def read_smart(src: Source) -> Iterator[Document]:
    """Yield the documents of a SMART file (the ``.X`` citation data is not text)."""
    report, name = src.report, src.name
    admit = Admission(report)
    rec_id: str | None = None
    rec_line = 0
    fields: list[tuple[bytes, list[bytes]]] = []
    junk_reported = False

    def finish() -> Document | None:
        where = f"{name}:{rec_line}"
        if not rec_id:
            report.skip(where, "missing id after .I")
            return None
        titles: list[str] = []
        parts: list[str] = []
        for tag, lines in fields:
            if tag == b"X":  # citation data (doc ids and counts), not text
                continue
            content = b"\n".join(lines).decode("utf-8", "replace").strip()
            if not content:
                continue
            if tag == b"T" and not titles:
                titles.append(content)
            else:
                parts.append(content)
        title = collapse(titles[0]) if titles else ""
        return admit(where, rec_line, Document(rec_id, join_title(title, "\n".join(parts)), title))

    in_record = False
    for lineno, raw in src.lines():
        line = raw.rstrip(b"\r\n")
        tag = _smart_field(line)
        if tag == b"I":
            if in_record and (doc := finish()) is not None:
                yield doc
            in_record = True
            rec_id = line[2:].strip().decode("utf-8", "replace")
            rec_line = lineno
            fields = []
        elif not in_record:
            if line.strip() and not junk_reported:
                junk_reported = True
                report.skip(f"{name}:{lineno}", "text before the first .I record")
        elif tag is not None:
            rest = line[2:].strip()
            fields.append((tag, [rest] if rest else []))
        elif fields:
            fields[-1][1].append(line)
        elif line.strip():
            # Text right after ``.I`` with no field marker: keep it rather than lose it.
            fields.append((b"", [line]))
    if in_record and (doc := finish()) is not None:
        yield doc

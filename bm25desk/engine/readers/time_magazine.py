"""TIME magazine (``TIME.ALL``): ``*TEXT`` lines start the records, ``*STOP`` ends the file.

A record of the real file (423 of them)::

    *TEXT 017 01/04/63 PAGE 020

    THE ALLIES AFTER NASSAU IN DECEMBER 1960, THE U.S

    . FIRST PROPOSED TO HELP NATO DEVELOP ITS OWN NUCLEAR STRIKE FORCE .

The body is double spaced: its blank lines are dropped. A document's id is the record's position
in the file (1, 2, 3 …), because the judgements (``TIME.REL``) number documents that way; the
``*TEXT`` number, date and page become its title ("TEXT 017 01/04/63 PAGE 020"). The title is not
put into the indexed text: it is a reference, not words of the article. A record that is skipped
(an empty one) still takes its position, so the ids of the others stay those of ``TIME.REL``.
"""

from __future__ import annotations

from collections.abc import Iterator

from bm25desk.engine.extract.common import collapse
from bm25desk.engine.readers.document import Document
from bm25desk.engine.readers.records import Admission, RecordLines
from bm25desk.engine.readers.source import Source

__all__ = ["is_time_header", "read_time"]

_TEXT = b"*TEXT"
_STOP = b"*STOP"


def is_time_header(line: str | bytes) -> bool:
    """Return whether ``line`` starts a TIME record (``*TEXT`` and what follows)."""
    raw = line.encode("utf-8", "replace") if isinstance(line, str) else line
    head = raw.lstrip()
    return head.startswith(_TEXT) and (len(head) == len(_TEXT) or head[len(_TEXT)] in b" \t\r\n")


def read_time(src: Source) -> Iterator[Document]:
    """Yield the documents of a ``TIME.ALL`` file; text outside records is skipped once per run."""
    report, name = src.report, src.name
    admit = Admission(report)
    position = 0
    rec_line = 0
    title = ""
    lines: RecordLines | None = None  # the body lines of the record being read; None outside
    stopped = junk_reported = False

    def finish() -> Document | None:
        assert lines is not None
        where = f"{name}:{rec_line}"
        if lines.too_long:
            report.skip(where, lines.too_long_reason())
            return None
        text = b"\n".join(lines.lines).decode("utf-8", "replace")
        return admit(where, rec_line, Document(str(position), text, title))

    for lineno, raw in src.lines():
        line = raw.rstrip(b"\r\n")
        if stopped:
            if line.strip() and not junk_reported:
                junk_reported = True
                report.skip(f"{name}:{lineno}", "text after *STOP (the end of the records)")
        elif is_time_header(line):
            if lines is not None and (doc := finish()) is not None:
                yield doc
            position += 1
            rec_line, lines = lineno, RecordLines()
            title = collapse(line.strip()[1:].decode("utf-8", "replace"))
        elif line.strip() == _STOP:
            if lines is not None and (doc := finish()) is not None:
                yield doc
            lines, stopped, junk_reported = None, True, False
        elif lines is not None:
            if line.strip():
                lines.append(line.strip())
        elif line.strip() and not junk_reported:
            junk_reported = True
            report.skip(f"{name}:{lineno}", "text before the first *TEXT record")
    if lines is not None and (doc := finish()) is not None:
        yield doc

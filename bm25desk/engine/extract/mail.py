"""E-mail text extraction with the standard library: one message (.eml) or a whole mailbox (mbox).

A message's text is its Subject, From, To, Cc and Date lines, its plain body (or its HTML body's
visible text), and the text of its attachments in the formats this package reads, forwarded mails
included (to :data:`MAX_ATTACHMENT_DEPTH`).
"""

from __future__ import annotations

import email.message
import email.policy
import io
import posixpath
import re
from collections.abc import Iterator
from email.parser import BytesParser
from pathlib import Path

from bm25desk.engine.extract import limits
from bm25desk.engine.extract.common import ExtractError, collapse, join_title
from bm25desk.engine.extract.decoding import decode_text
from bm25desk.engine.extract.epub import epub_text
from bm25desk.engine.extract.html_text import parse_html
from bm25desk.engine.extract.limits import Body, BytesSource, Deadline
from bm25desk.engine.extract.odt import odt_text
from bm25desk.engine.extract.pdf import pdf_text
from bm25desk.engine.extract.pool import run_limited
from bm25desk.engine.extract.word import docx_text

__all__ = [
    "MAX_ATTACHMENT_DEPTH",
    "eml_text",
    "extract_eml",
    "extract_mbox",
    "iter_mbox",
    "mbox_text",
]

MAX_ATTACHMENT_DEPTH = 3
"""How deep forwarded mails (``message/rfc822`` attachments) are followed."""

_MAIL_HEADERS = ("From", "To", "Cc", "Date")
_DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
_ODT_TYPE = "application/vnd.oasis.opendocument.text"


def _part_bytes(part: email.message.Message) -> bytes:
    payload = part.get_payload(decode=True)
    return payload if isinstance(payload, bytes) else b""


def _part_text(part: email.message.Message) -> str:
    """Return a text part's content as a string; unknown or wrong charsets never raise."""
    data = _part_bytes(part)
    charset = part.get_content_charset()
    if charset:
        try:
            return data.decode(charset, "replace").replace("\r\n", "\n")
        except LookupError:
            pass
    return decode_text(data)


def _attachment_text(part: email.message.Message, name: str, deadline: Deadline, depth: int) -> str:
    """Return an attachment's text if this module reads its type, else ""."""
    ctype = part.get_content_type()
    ext = posixpath.splitext(name.lower())[1]
    if ctype == "message/rfc822":
        inner = part.get_payload()
        if isinstance(inner, list) and inner and isinstance(inner[0], email.message.Message):
            if depth >= MAX_ATTACHMENT_DEPTH:
                return ""
            subject, text = _mail_text(inner[0], deadline, depth + 1)
            return join_title(subject, text)
        return ""
    if ctype == "text/html" or ext in {".html", ".htm", ".xhtml"}:
        return parse_html(_part_text(part), deadline).body
    if ctype.startswith("text/") or ext in {".txt", ".md", ".rst", ".csv"}:
        return _part_text(part)
    body: Body | None = None
    if ctype == "application/pdf" or ext == ".pdf":
        body = pdf_text
    elif ctype == _DOCX_TYPE or ext == ".docx":
        body = docx_text
    elif ctype == _ODT_TYPE or ext == ".odt":
        body = odt_text
    elif ctype == "application/epub+zip" or ext == ".epub":
        body = epub_text
    if body is None:
        return ""
    title, text = body(io.BytesIO(_part_bytes(part)), deadline)
    return join_title(title, text) if title and not text.startswith(title) else text


def _mail_text(msg: email.message.Message, deadline: Deadline, depth: int = 0) -> tuple[str, str]:
    """(subject, header lines + body + attachments) of one parsed message."""
    deadline.check()
    subject = collapse(str(msg.get("Subject", "") or ""))
    lines = [f"Subject: {subject}"] if subject else []
    for header in _MAIL_HEADERS:
        value = msg.get(header)
        if value:
            lines.append(f"{header}: {collapse(str(value))}")
    body_text = ""
    if isinstance(msg, email.message.EmailMessage):
        body = msg.get_body(preferencelist=("plain", "html"))
        if body is not None:
            body_text = _part_text(body)
            if body.get_content_type() == "text/html":
                body_text = parse_html(body_text, deadline).body
    elif not msg.is_multipart():  # pragma: no cover - every message here is parsed as EmailMessage
        body_text = _part_text(msg)
    parts = ["\n".join(lines), body_text.strip()]
    if isinstance(msg, email.message.EmailMessage):
        for part in msg.iter_attachments():
            deadline.check()
            ctype = part.get_content_type()
            name = collapse(part.get_filename() or "") or f"(unnamed {ctype})"
            try:
                text = _attachment_text(part, name, deadline, depth)
            except MemoryError:
                raise
            except ExtractError as exc:
                if str(exc).startswith("timed out"):
                    raise
                parts.append(f"Attachment: {name} (not indexed: {exc})")
                continue
            except Exception as exc:  # a strange attachment costs itself, not the whole mail
                parts.append(f"Attachment: {name} (not indexed: {type(exc).__name__})")
                continue
            parts.append(f"Attachment: {name}" + (f"\n{text.strip()}" if text.strip() else ""))
    return subject, "\n\n".join(p for p in parts if p)


_PARSER = BytesParser(policy=email.policy.default)


def eml_text(stream: BytesSource, deadline: Deadline) -> tuple[str, str]:
    """Extract ``(title, text)`` from one RFC 5322 message (``.eml``).

    The text holds the Subject, From, To, Cc and Date header lines, the plain-text body (or the
    HTML body's visible text when there is no plain one), then one ``Attachment: <name>`` line per
    attachment followed by its text when it is text, HTML, PDF, DOCX, ODT, EPUB or a forwarded
    mail. An attachment that cannot be read is listed with the reason; it never fails the mail.

    Parameters
    ----------
    stream
        The message's bytes.
    deadline
        Checked before every attachment.

    Returns
    -------
    tuple[str, str]
        The Subject and the text.
    """
    return _mail_text(_PARSER.parse(stream), deadline)


def extract_eml(path: Path) -> tuple[str, str]:
    """E-mail (EML): headers, body and attachments' text; the title is the Subject."""
    return run_limited(eml_text, path)


# The mbox "From " separator: at the start of the file or of a line. Writers escape body lines
# that start with "From " as ">From " (mboxo/mboxrd), so a separator is never inside a message.
_MBOX_FROM = re.compile(rb"^From [^\n]*\n", re.M)
_MBOX_QUOTED = re.compile(rb"^>(>*From )", re.M)


def _mbox_messages(data: bytes) -> Iterator[bytes]:
    starts = [m.start() for m in _MBOX_FROM.finditer(data)]
    if not starts:
        if data.strip():
            raise ExtractError("not an mbox file (no 'From ' line)")
        return
    if data[: starts[0]].strip():
        raise ExtractError("not an mbox file (text before the first 'From ' line)")
    for start, end in zip(starts, [*starts[1:], len(data)], strict=True):
        raw = data[start:end]
        raw = raw[raw.index(b"\n") + 1 :]
        yield _MBOX_QUOTED.sub(rb"\1", raw)


def iter_mbox(path: Path) -> Iterator[tuple[str, str, str]]:
    """Yield ``(key, title, text)`` for every message of an mbox file, in file order.

    ``key`` is the message's Message-ID when it has one, else its 1-based position; ``title`` is
    its Subject. This is the one-document-per-message view, ready for a reader that can turn one
    file into several documents; :func:`extract_mbox` gives the one-document view.

    The file is read (never opened for writing, unlike :class:`mailbox.mbox`) and split at its
    ``From`` lines; ``>From`` quoting is undone.

    Parameters
    ----------
    path
        The mbox file.

    Yields
    ------
    tuple[str, str, str]
        One message's key, title and text (as :func:`eml_text` gives it).

    Raises
    ------
    ExtractError
        When the file is too large or is not an mbox file.
    """
    size = path.stat().st_size
    if size > limits.SIZE_LIMIT:
        raise ExtractError(limits.too_large(size, limits.SIZE_LIMIT))
    deadline = Deadline(float("inf"))
    for n, raw in enumerate(_mbox_messages(path.read_bytes()), 1):
        msg = _PARSER.parsebytes(raw)
        key = collapse(str(msg.get("Message-ID", "") or "")).strip("<>") or str(n)
        subject, text = _mail_text(msg, deadline)
        yield key, subject, text


def mbox_text(stream: BytesSource, deadline: Deadline) -> tuple[str, str]:
    """Extract ``(title, text)`` from an mbox file: every message, one after another.

    Parameters
    ----------
    stream
        The file's bytes.
    deadline
        Checked before every message.

    Returns
    -------
    tuple[str, str]
        An empty title (the file name is the best name for a mailbox) and each message's text as
        :func:`eml_text` gives it, separated by blank lines.
    """
    texts: list[str] = []
    for raw in _mbox_messages(stream.read()):
        texts.append(_mail_text(_PARSER.parsebytes(raw), deadline)[1])
    return "", "\n\n\n".join(texts)


def extract_mbox(path: Path) -> tuple[str, str]:
    """Mailbox (mbox): all messages as one document (see :func:`iter_mbox` for one per message)."""
    return run_limited(mbox_text, path)

r"""Terminal output for the command line: document text can never steer the terminal.

Titles, ids, paths and snippets come from the documents, and a document may contain escape
sequences (set the window title, clear the screen, move the cursor) or bidirectional overrides
that make a line read differently from what it is. Everything the CLI prints for people passes
through :func:`visible`, which shows such characters as escapes (``\\x1b``, ``\\u202e``) instead of
sending them; JSON output passes through :func:`json_safe`, which writes the few characters JSON
leaves raw as ``\\uXXXX`` escapes, so the parsed values stay exact.
"""

from __future__ import annotations

import re
from typing import Any, TextIO

# C0 controls except tab and newline, DEL, the C1 controls (U+0080–U+009F: 8-bit CSI, OSC ...),
# and the bidirectional marks, embeddings, overrides and isolates.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# What json.dumps(ensure_ascii=False) leaves raw of the above: DEL, C1 and the bidi characters.
_JSON_RAW = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def visible(text: str) -> str:
    r"""Return ``text`` with every control character except tab and newline shown as an escape.

    Parameters
    ----------
    text
        Text about to be printed for a person (it may hold document content).

    Returns
    -------
    str
        The same text, with ESC, CR, other C0/C1 controls, DEL and bidirectional controls
        replaced by ``\\xHH`` or ``\\uHHHH``.
    """
    return _UNSAFE.sub(_escape, text)


def json_safe(text: str) -> str:
    r"""Return JSON text with DEL, C1 and bidirectional controls written as ``\\uXXXX`` escapes.

    Only valid for text produced by :func:`json.dumps` (those characters can occur only inside
    its strings, where the escape means the same character).
    """
    return _JSON_RAW.sub(_json_escape, text)


class SafeStream:
    """A text stream that filters everything written to it (the CLI's ``sys.stdout``).

    Parameters
    ----------
    stream
        The stream to write to.
    json
        Escape as JSON (:func:`json_safe`) instead of for people (:func:`visible`).
    """

    def __init__(self, stream: TextIO, *, json: bool = False) -> None:
        self._stream = stream
        self._filter = json_safe if json else visible

    def write(self, text: str) -> int:
        """Write ``text`` filtered; return its length (as :meth:`io.TextIOBase.write` does)."""
        self._stream.write(self._filter(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        """Pass everything else (``flush``, ``isatty``, ``fileno``, ``buffer`` ...) through."""
        return getattr(self._stream, name)

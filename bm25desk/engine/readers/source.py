"""Opening corpus files: gzip by its magic bytes, byte ranges, byte progress, cancel, bounded lines.

Every corpus format may be gzip-compressed; compression is recognised by its magic bytes, not by
the file name. Decompression is bounded: output comes in steps of :data:`CHUNK` bytes, a stream
that expands more than :data:`MAX_GZIP_RATIO` times is treated as damaged, and no line (record) of
more than :data:`MAX_LINE_BYTES` is held in memory — it is skipped with its line number.
"""

from __future__ import annotations

import codecs
import functools
import io
import os
import zlib
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any, BinaryIO

from bm25desk.engine.progress import CancelToken, ProgressFn
from bm25desk.engine.readers.document import CorpusError, ReadReport

__all__ = [
    "CHECK_EVERY",
    "CHUNK",
    "MAX_GZIP_RATIO",
    "MAX_LINE_BYTES",
    "Source",
    "check_file",
    "head_lines",
    "open_each",
    "open_text_head",
]

CHECK_EVERY = 256
"""Records (or lines) between cancel checks; a power of two for a cheap mask."""

CHUNK = 1 << 20
"""Bytes read at a time where records are not lines (TREC), and decompressed at a time."""

MAX_LINE_BYTES = 256 * 1024 * 1024
"""Longest line (record) read; longer ones are skipped. MS MARCO's longest body is ~3 MB."""

MAX_GZIP_RATIO = 200
"""How many times its compressed size a gzip stream may expand to (text: 3-10; a bomb: ~1000)."""

GZIP_GRACE = 64 * 1024 * 1024
"""Bytes a gzip stream may expand to before its ratio is checked."""

GZIP_MAGIC = b"\x1f\x8b"
_READ_BUFFER = 1 << 20
_SNIFF_LINE_LIMIT = 1 << 20  # longest line read while detecting (MS MARCO bodies can be ~MBs)
_UTF8_BOM = codecs.BOM_UTF8


def check_file(path: Path) -> None:
    """Raise :class:`CorpusError` unless ``path`` is a readable file."""
    if not path.exists():
        raise CorpusError(f"no such file or folder: {path}")
    if path.is_dir():
        raise CorpusError(f"{path} is a folder, not a corpus file")
    if not os.access(path, os.R_OK):
        raise CorpusError(f"cannot read {path}: permission denied")


class _Gunzip(io.RawIOBase):
    """Raw gzip decompression for :class:`io.BufferedReader`, member after member.

    Unlike :class:`gzip.GzipFile` it hands out every byte it could decompress before it reports a
    truncated or corrupt stream, so a damaged download still yields all its complete records; and
    wrapped in a large buffer it iterates lines faster.
    """

    def __init__(self, raw: BinaryIO) -> None:
        super().__init__()
        self._raw = raw
        self._d = zlib.decompressobj(31)  # 31: expect a gzip header and trailer
        self._out = b""
        self._pos = 0
        self._eof = False
        self._compressed = 0
        self._expanded = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while self._pos >= len(self._out):
            if self._eof:
                return 0
            self._fill()
        n = min(len(buffer), len(self._out) - self._pos)
        buffer[:n] = self._out[self._pos : self._pos + n]
        self._pos += n
        return n

    def _fill(self) -> None:
        d = self._d
        if d.eof:  # end of a member: another member, zero padding, or the end
            data = d.unused_data or self._read_raw()
            if not data.strip(b"\x00"):
                self._eof = True
                return
            d = self._d = zlib.decompressobj(31)
        else:
            data = d.unconsumed_tail or self._read_raw()
            if not data:
                raise EOFError("compressed file ended before the end-of-stream marker was reached")
        # A bounded output keeps a highly compressed member from filling memory.
        self._out, self._pos = d.decompress(data, CHUNK), 0
        self._expanded += len(self._out)
        if self._expanded > GZIP_GRACE and self._expanded > MAX_GZIP_RATIO * self._compressed:
            raise zlib.error(
                f"expands more than {MAX_GZIP_RATIO} times its compressed size (a gzip bomb?)"
            )

    def _read_raw(self) -> bytes:
        data = self._raw.read(CHUNK)
        self._compressed += len(data)
        return data


class Source:
    """A corpus file opened for binary reading (gzip or not), with byte progress and cancel."""

    def __init__(
        self,
        path: Path,
        stack: ExitStack,
        report: ReadReport,
        throttle: ProgressFn,
        cancel: CancelToken,
        byte_range: tuple[int, int] | None = None,
        skip_repeats: bool = True,
    ) -> None:
        self.path = path
        self.skip_repeats = skip_repeats  # False: the line readers admit repeated ids too
        self.name = str(path)
        self.report = report
        self.throttle = throttle
        self.cancel = cancel
        self.limit: int | None = None
        try:
            self.raw = stack.enter_context(io.BufferedReader(io.FileIO(path, "rb"), _READ_BUFFER))
            self.total = os.fstat(self.raw.fileno()).st_size
            self.gz = self.raw.read(2) == GZIP_MAGIC
            self.raw.seek(0)
            if byte_range is not None:
                if self.gz:
                    raise CorpusError("a compressed file cannot be read in byte ranges")
                start, end = byte_range
                self.raw.seek(start)
                self.limit = end - start
                self.total = end - start
        except OSError as exc:
            raise CorpusError(f"cannot read {path}: {exc.strerror or exc}") from exc
        self.stream: io.BufferedIOBase
        if self.gz:
            self.stream = stack.enter_context(io.BufferedReader(_Gunzip(self.raw), _READ_BUFFER))
        else:
            self.stream = self.raw
        self.done = 0
        self.throttle(0, self.total)

    def position(self) -> int:
        """Return the bytes of the file read so far (of ``total``)."""
        # Plain files count consumed bytes exactly; gzip reports how far into the compressed file
        # the decompressor has read, which is what ``total`` measures.
        return min(self.raw.tell(), self.total) if self.gz else min(self.done, self.total)

    def tick(self) -> None:
        """Check for cancellation and report progress (throttled)."""
        self.cancel.check()
        self.throttle(self.position(), self.total)

    def finish(self) -> None:
        """Report the whole file as read."""
        self.throttle(self.total, self.total)

    def _damaged(self, exc: Exception, line: int | None) -> None:
        self.report.skip(
            self.name if line is None else f"{self.name}:{line}",
            f"damaged compressed data, reading stopped here ({type(exc).__name__}: {exc})",
        )

    def lines(self) -> Iterator[tuple[int, bytes]]:
        """Yield ``(line number, line)``, line ending kept, a leading UTF-8 BOM dropped."""
        lineno = done = 0
        limit = self.limit
        readline = self.stream.readline
        try:
            for line in iter(functools.partial(readline, MAX_LINE_BYTES + 1), b""):
                if limit is not None and done >= limit:
                    break  # the next line belongs to the next byte range
                lineno += 1
                done += len(line)
                if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                    del line  # a line that long is not a record: drop it rather than hold it
                    done += self._skip_long_line(lineno)
                    continue
                if not lineno & (CHECK_EVERY - 1):
                    self.done = done
                    self.tick()
                if lineno == 1 and line.startswith(_UTF8_BOM):
                    line = line[len(_UTF8_BOM) :]
                yield lineno, line
        except (EOFError, zlib.error) as exc:
            self._damaged(exc, lineno + 1)
        except OSError as exc:
            raise CorpusError(f"error reading {self.path}: {exc.strerror or exc}") from exc
        self.finish()

    def _skip_long_line(self, lineno: int) -> int:
        """Read past the rest of an over-long line; report it; return the bytes passed over."""
        passed = 0
        while piece := self.stream.readline(CHUNK):
            passed += len(piece)
            if piece.endswith(b"\n"):
                break
        self.report.skip(
            f"{self.name}:{lineno}",
            f"line longer than {MAX_LINE_BYTES // 2**20} MB (not read)",
        )
        return passed

    def chunks(self) -> Iterator[bytes]:
        """Yield the decompressed content in chunks of about :data:`CHUNK` bytes."""
        first = True
        try:
            while True:
                # read1: data decompressed before a damaged part is returned, not dropped.
                chunk = self.stream.read1(CHUNK)
                if not chunk:
                    break
                self.done += len(chunk)
                if first and chunk.startswith(_UTF8_BOM):
                    chunk = chunk[len(_UTF8_BOM) :]
                first = False
                self.tick()
                yield chunk
        except (EOFError, zlib.error) as exc:
            self._damaged(exc, None)
        except OSError as exc:
            raise CorpusError(f"error reading {self.path}: {exc.strerror or exc}") from exc
        self.finish()


class _Shifted:
    """Progress through one file of several, reported as progress through all of them."""

    __slots__ = ("_fn", "_offset", "_size", "_total")

    def __init__(self, fn: ProgressFn, offset: int, size: int, total: int) -> None:
        self._fn, self._offset, self._size, self._total = fn, offset, size, total

    def __call__(self, done: int, total: int) -> None:
        # A file that changed size since it was measured still spans exactly its share: it never
        # pushes into the next file's, and its end is the end of its share.
        at_end = bool(total) and done >= total
        self._fn(self._offset + (self._size if at_end else min(done, self._size)), self._total)


def open_each(
    paths: Sequence[Path], report: ReadReport, throttle: ProgressFn, cancel: CancelToken
) -> Iterator[Source]:
    """Open several corpus files one after another as one source (each closed before the next).

    Progress runs over the files' summed sizes, so it rises steadily from the first file's start
    to the last file's end; skips name the file they are in.
    """
    sizes = []
    for path in paths:
        try:
            sizes.append(path.stat().st_size)
        except OSError as exc:
            raise CorpusError(f"cannot read {path}: {exc.strerror or exc}") from exc
    total, offset = sum(sizes), 0
    for path, size in zip(paths, sizes, strict=True):
        with ExitStack() as stack:
            yield Source(path, stack, report, _Shifted(throttle, offset, size, total), cancel)
        offset += size


def open_text_head(path: Path, limit: int) -> bytes:
    """Return the first ``limit`` (decompressed) bytes of a file, without a UTF-8 BOM."""
    parts: list[bytes] = []
    size = 0
    try:
        with path.open("rb") as raw:
            gz = raw.read(2) == GZIP_MAGIC
            raw.seek(0)
            stream = io.BufferedReader(_Gunzip(raw)) if gz else raw
            while size < limit:
                try:
                    part = stream.read1(limit - size)
                except (EOFError, zlib.error) as exc:
                    if parts:
                        break  # a damaged tail is reported when the file is read
                    raise CorpusError(f"{path} is not a readable gzip file: {exc}") from exc
                if not part:
                    break
                parts.append(part)
                size += len(part)
    except OSError as exc:
        raise CorpusError(f"cannot read {path}: {exc.strerror or exc}") from exc
    head = b"".join(parts)
    return head[len(_UTF8_BOM) :] if head.startswith(_UTF8_BOM) else head


def head_lines(path: Path, n: int) -> list[bytes]:
    """Return the first ``n`` non-blank lines (without line endings), each cut at 1 MB."""
    out: list[bytes] = []
    head = open_text_head(path, min(n * _SNIFF_LINE_LIMIT, 16 * _SNIFF_LINE_LIMIT))
    for line in io.BytesIO(head):
        line = line.rstrip(b"\r\n")
        if line.strip():
            out.append(line[:_SNIFF_LINE_LIMIT])
            if len(out) >= n:
                break
    return out

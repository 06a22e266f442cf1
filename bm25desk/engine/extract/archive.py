"""ZIP containers (DOCX, ODT, EPUB) read safely: sizes and ratios checked while unpacking; safe XML.

A ZIP's headers say how large each member is, but an archive is only as honest as its writer, so
:class:`Archive` counts the bytes it actually unpacks: the whole archive may unpack to
:attr:`Limits.unpacked` bytes and each member to :attr:`Limits.ratio` times its compressed size
(Apache POI's zip-bomb rule). Members are read in bounded steps, so a bomb is refused after it has
produced at most a step more than the limit, never after it has filled memory.
"""

from __future__ import annotations

import zipfile
import zlib
from collections.abc import Callable
from typing import IO
from xml.etree import ElementTree as ET

from bm25desk.engine.extract.common import ExtractError
from bm25desk.engine.extract.limits import INFLATE_GRACE, Limits, too_large

__all__ = ["DC", "Archive", "parse_xml", "qname"]

DC = "http://purl.org/dc/elements/1.1/"
"""The Dublin Core namespace: ``dc:title`` of ODT's ``meta.xml`` and of an EPUB's package."""

OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # legacy .doc, and password-protected OOXML
_STEP = 1 << 16  # bytes unpacked per read: deflate honours the bound, so memory stays small
# Deflate decompresses in steps of a bounded size; bzip2 and LZMA members decompress a whole
# compressed block at once, which a bomb can make gigabytes. No office format or e-book uses them.
_METHODS = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED}
_ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, NotImplementedError)


class Archive:
    """A ZIP archive whose members are unpacked within a byte budget and a ratio limit.

    Parameters
    ----------
    stream
        The archive's bytes, seekable.
    kind
        What the archive is for users ("Word document", "e-book"), for messages.
    limits
        The limits of this extraction.

    Raises
    ------
    ExtractError
        For an encrypted or legacy binary document, a damaged archive, a compression method no
        document uses, or headers that already announce more than the limits allow.
    """

    def __init__(self, stream: IO[bytes], kind: str, limits: Limits) -> None:
        head = stream.read(len(OLE2_MAGIC))
        stream.seek(0)
        if head == OLE2_MAGIC:
            # Office writes password-protected DOCX/ODT-alikes as OLE2 containers, and so is a .doc.
            raise ExtractError(f"encrypted {kind}, or an old binary format (not a ZIP archive)")
        try:
            self.zip = zipfile.ZipFile(stream)
        except zipfile.BadZipFile as exc:
            raise ExtractError(f"damaged archive ({exc})") from None
        except (EOFError, OSError, ValueError) as exc:
            raise ExtractError(f"damaged archive ({type(exc).__name__}: {exc})") from None
        self.limits = limits
        self.left = limits.unpacked
        infos = self.zip.infolist()
        # The headers can only understate (zipfile stops at the size they declare); refusing what
        # they already admit to saves unpacking anything.
        announced = sum(info.file_size for info in infos)
        if announced > limits.unpacked:
            self.close()
            raise ExtractError(too_large(announced, limits.unpacked, " when unpacked"))
        for info in infos:
            if info.compress_type not in _METHODS:
                self.close()
                raise ExtractError(
                    f"damaged archive ({info.filename}: compression method "
                    f"{info.compress_type} is not used by documents)"
                )

    def __enter__(self) -> Archive:
        """Return the archive (``with Archive(...) as a``)."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the archive."""
        self.close()

    def close(self) -> None:
        """Close the archive."""
        self.zip.close()

    def names(self) -> list[str]:
        """Return the members' names."""
        return self.zip.namelist()

    def read(self, name: str) -> bytes:
        """Unpack one member within the limits.

        Parameters
        ----------
        name
            The member.

        Returns
        -------
        bytes
            The member's bytes.

        Raises
        ------
        ExtractError
            When the member is missing or damaged, or unpacking it passes the archive's byte budget
            or the member's ratio limit.
        """
        data = self.get(name)
        if data is None:
            raise ExtractError(f"damaged archive ({name} is missing)")
        return data

    def get(self, name: str) -> bytes | None:
        """Unpack one member within the limits, or return None when the archive has no such member.

        Raises
        ------
        ExtractError
            As :meth:`read`, except for a missing member.
        """
        try:
            info = self.zip.getinfo(name)
        except KeyError:
            return None
        parts: list[bytes] = []
        self._unpack(info, parts.append)
        return b"".join(parts)

    def check_all(self) -> None:
        """Unpack every member and drop the bytes: the check before a library unpacks them itself.

        Raises
        ------
        ExtractError
            As :meth:`read`, for the first member that breaks a limit or is damaged.
        """
        for info in self.zip.infolist():
            self._unpack(info, lambda _part: None)

    def _unpack(self, info: zipfile.ZipInfo, sink: Callable[[bytes], object]) -> None:
        limits = self.limits
        ratio_cap = max(info.compress_size, 1) * limits.ratio
        done = 0
        try:
            with self.zip.open(info) as member:
                while part := member.read(_STEP):
                    done += len(part)
                    self.left -= len(part)
                    if self.left < 0:
                        unpacked = limits.unpacked - self.left
                        raise ExtractError(too_large(unpacked, limits.unpacked, " when unpacked"))
                    if done > INFLATE_GRACE and done > ratio_cap:
                        raise ExtractError(
                            f"refused: {info.filename} unpacks to more than {limits.ratio:g} "
                            "times its compressed size (a ZIP bomb?)"
                        )
                    sink(part)
        except ExtractError:
            raise
        except _ZIP_ERRORS as exc:
            raise ExtractError(f"damaged archive ({info.filename}: {exc})") from None


def parse_xml(data: bytes, what: str) -> ET.Element:
    """Parse an archive member as XML, refusing entity declarations.

    expat has refused exponential entity expansion since 2.4.1; refusing any DTD entity
    declaration keeps this safe with older ones too, and documents never need them.

    Raises
    ------
    ExtractError
        For entity declarations or XML that does not parse.
    """
    if b"<!ENTITY" in data[:65536]:
        raise ExtractError(f"unsafe XML in {what} (entity declarations)")
    try:
        return ET.fromstring(data)
    except ET.ParseError as exc:
        raise ExtractError(f"damaged document ({what}: {exc})") from None


def qname(ns: str, name: str) -> str:
    """Return ElementTree's name for ``name`` in namespace ``ns``: ``{ns}name``."""
    return f"{{{ns}}}{name}"

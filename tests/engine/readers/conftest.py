"""Fixtures of the reader tests: a folder tree with every kind of file a folder index meets."""

from __future__ import annotations

from pathlib import Path

import pytest
from reader_helpers import write


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    write(root / "a.txt", "Short first line\n\nThe body of a.\n")
    write(root / "long.txt", ("x" * 130) + "\nrest\n")
    write(
        root / "sub" / "b.md", "Intro text\n```\n# not a heading\n```\n# Real   Title #\n\nBody.\n"
    )
    write(root / "sub" / "deeper" / "c.rst", ".. comment\n\n=====\n Top\n=====\n\nSome text.\n")
    write(root / "page.HTML", "<html><head><title>Page</title></head><body><p>Hello</p></body>")
    write(root / "cp1252.txt", "Price: 5 \u20ac and na\u00efve\n".encode("cp1252"))
    write(root / "latin1.txt", b"caf\xe9 \x81 done\n")  # 0x81 is not cp1252: falls to latin-1
    write(root / "bom.txt", "\ufeffWith BOM\r\nline two\r\n".encode())
    write(root / "utf16.txt", "UTF-16 text\n".encode("utf-16"))
    write(root / "empty.md", "   \n\n")
    write(root / "bin.txt", b"MZ\x00\x00binary")
    write(root / "image.png", b"\x89PNG")
    write(root / "sheet.xlsx", b"PK")
    write(root / "other.png", b"\x89PNG")
    write(root / "README", "no extension")
    write(root / ".hidden.txt", "secret")
    write(root / ".git" / "config.txt", "x")
    write(root / "node_modules" / "pkg" / "readme.md", "# pkg")
    write(root / "__pycache__" / "x.txt", "x")
    write(root / ".notes" / "n.txt", "x")
    return root

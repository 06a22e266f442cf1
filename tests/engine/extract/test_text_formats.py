"""Tests for the plain-text, Markdown, reST and HTML extractors."""

from __future__ import annotations

from pathlib import Path

from bm25desk.engine.extract.registry import register_builtin

EXTRACTORS = register_builtin()


def write(path: Path, data: str | bytes) -> Path:
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def test_html_extraction(tmp_path: Path) -> None:
    page = (
        '<!DOCTYPE html><html><head><meta charset="shift_jis">'
        "<style>p { color: red }</style><script>alert('x')</script></head>"
        "<body><noscript>enable js</noscript><template><p>hidden</p></template>"
        "<h1>Main  heading</h1><p>Caf&eacute; &amp; bar&nbsp;<b>bold</b></p>"
        "<ul><li>one</li><li>two</li></ul>text<br>after break<div>block</div>"
        "<p>\u65e5\u672c</p></body></html>"
    )
    f = write(tmp_path / "p.htm", page.encode("shift_jis"))
    title, text = EXTRACTORS[".htm"](f)
    assert title == "Main heading"
    assert text == (
        "Main heading\nCafé & bar bold\none\ntwo\ntext\nafter break\nblock\n\u65e5\u672c"
    )
    utf8 = write(tmp_path / "u.html", "<title>T\u00e9</title><p>\u00e9t\u00e9</p>")
    assert EXTRACTORS[".html"](utf8) == ("T\u00e9", "T\u00e9\n\u00e9t\u00e9")


def test_markdown_and_rst_titles(tmp_path: Path) -> None:
    md = EXTRACTORS[".md"]
    rst = EXTRACTORS[".rst"]
    assert md(write(tmp_path / "a.md", "---\ntitle: 'From front matter'\n---\n# H\n"))[0] == (
        "From front matter"
    )
    assert md(write(tmp_path / "b.md", "Setext title\n============\n\ntext\n"))[0] == "Setext title"
    assert md(write(tmp_path / "c.md", "## only level two\n"))[0] == ""
    assert rst(write(tmp_path / "a.rst", "Title\n-----\n"))[0] == "Title"
    assert rst(write(tmp_path / "b.rst", "Title\n--\n"))[0] == ""
    assert rst(write(tmp_path / "c.rst", "no title at all\n"))[0] == ""

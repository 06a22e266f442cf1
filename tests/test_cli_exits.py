"""The command line's contract with terminals and scripts: safe output, exit codes, no tracebacks.

Document text (titles, ids, paths, snippets) is printed with control characters escaped, while
``--json`` keeps it exact; every failure is one line on stderr with its documented exit code: a data
directory that is a file (2), an empty ``--name`` (2), a file-system error (2), a bug (4, with the
traceback in the log file the message names), Ctrl-C (130), a closed pipe (141).
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bm25desk import cli, console, launcher

ESC_TITLE = "Title \x1b]0;PWNED\x07 \x1b[2J\u202eevil\u202c \x9b31m end"
SAMPLE = Path(__file__).resolve().parents[1] / "bm25desk" / "data" / "sample" / "CISI.ALL"


@pytest.fixture
def hostile_index(data_dir: Path, tmp_path: Path) -> str:
    """An index of one document whose title, id and folder hold terminal escape sequences."""
    folder = tmp_path / "folder\x1b[31m"
    folder.mkdir()
    (folder / "doc\x1b[2J.txt").write_text(f"{ESC_TITLE}\nbody words here\n", encoding="utf-8")
    assert cli.main(["index", str(folder), "--name", "hostile"]) == 0
    return "hostile"


def _no_raw_controls(text: str) -> None:
    raw = [c for c in text if c not in "\n\t" and (ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F)]
    assert raw == []
    assert "\u202e" not in text
    assert "\u202c" not in text


def test_visible_escapes_controls_and_keeps_text() -> None:
    assert (
        console.visible("a\x1b[2Jb\tc\nd\re\x9bf\u202eg") == "a\\x1b[2Jb\tc\nd\\x0de\\x9bf\\u202eg"
    )
    assert console.visible("Café – ok ✓") == "Café – ok ✓"


def test_json_safe_keeps_values_exact() -> None:
    data = {"title": ESC_TITLE + "\x7f"}
    text = console.json_safe(json.dumps(data, ensure_ascii=False))
    _no_raw_controls(text)
    assert json.loads(text) == data


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "hostile", "body"],
        ["explain", "hostile", "body", "doc\x1b[2J.txt"],
        ["list"],
        ["info", "hostile"],
    ],
)
def test_human_output_escapes_document_text(
    hostile_index: str, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(argv) == 0
    out, err = capsys.readouterr()
    _no_raw_controls(out)
    assert "\\x1b" in out  # shown, not sent
    assert err == ""


def test_json_output_stays_exact(hostile_index: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["search", "hostile", "body", "--json"]) == 0
    out, _ = capsys.readouterr()
    _no_raw_controls(out)
    hit = json.loads(out)["hits"][0]
    assert hit["title"] == ESC_TITLE
    assert hit["docid"] == "doc\x1b[2J.txt"


def test_data_dir_that_is_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    for argv in (["list"], ["index", str(SAMPLE)], ["search", "x", "y"]):
        assert cli.main(["--data-dir", str(afile), *argv]) == cli.EXIT_INPUT
        _, err = capsys.readouterr()
        assert err == (
            f"bm25desk: error: the data directory {afile} is a file, not a folder: "
            "choose another with --data-dir DIR or BM25DESK_DATA_DIR\n"
        )
    assert afile.read_text() == "not a folder"


def test_empty_name_is_refused(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["index", str(SAMPLE), "--name", ""]) == cli.EXIT_INPUT
    assert "--name is empty" in capsys.readouterr().err
    assert cli.main(["list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_file_system_error_is_one_line(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def full(args: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device", "/data/indexes/x.tmp")

    monkeypatch.setitem(cli.COMMANDS, "list", full)
    assert cli.main(["list"]) == cli.EXIT_INPUT
    err = capsys.readouterr().err
    assert err == "bm25desk: error: No space left on device: /data/indexes/x.tmp\n"


def test_a_bug_is_logged_not_shown(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(args: object) -> int:
        raise ZeroDivisionError("float division by zero")

    monkeypatch.setitem(cli.COMMANDS, "list", broken)
    assert cli.main(["list"]) == cli.EXIT_INTERNAL
    err = capsys.readouterr().err
    log = data_dir / "bm25desk.log"
    assert err == (
        "bm25desk: error: internal error (ZeroDivisionError: float division by zero); "
        f"details are in {log}\n"
    )
    text = log.read_text(encoding="utf-8")
    assert "Traceback (most recent call last)" in text
    assert 'raise ZeroDivisionError("float division by zero")' in text


def test_ctrl_c_in_a_command(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setitem(cli.COMMANDS, "list", interrupted)
    assert cli.main(["list"]) == cli.EXIT_INTERRUPTED
    assert capsys.readouterr().err == "bm25desk: interrupted\n"


def test_ctrl_c_during_start_up(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C while the CLI or the app is still importing: exit 130, one line, no traceback."""

    def interrupted(*args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "main", interrupted)
    assert launcher.main(["list"]) == 130
    from bm25desk import app, display

    monkeypatch.setattr(display, "problem", lambda: None)
    monkeypatch.setattr(app, "main", interrupted)
    assert launcher.main([]) == 130
    assert capsys.readouterr().err == "bm25desk: interrupted\n" * 2


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "bm25desk", *args]


def test_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    """``bm25desk search … | head -1``: exit 141, nothing on stderr (no BrokenPipeError)."""
    env = dict(os.environ, BM25DESK_DATA_DIR=str(tmp_path / "data"), BM25DESK_NO_PROGRESS="1")
    subprocess.run(_cli("index", str(SAMPLE)), env=env, check=True, capture_output=True)
    # Far more JSON than a pipe buffers (every hit with its contributions).
    cmd = _cli("search", "cisi", "library information systems", "-k", "1000", "--json")
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    assert proc.stderr is not None
    assert proc.stdout.readline().strip() == b"{"
    proc.stdout.close()  # what head does after its first line
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=60) == cli.EXIT_PIPE
    assert err == ""

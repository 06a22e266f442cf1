"""`bm25desk --self-test`: passes on a working install, fails clearly on a broken one."""

from __future__ import annotations

import dataclasses
import importlib
import io
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from bm25desk import paths, selftest
from bm25desk.engine import Searcher

TINY_SMART = """\
.I 1
.T
Library classification systems
.W
Classification systems organise a library's books by subject.
.I 2
.T
Information retrieval
.W
Retrieval systems rank documents for a query.
.I 3
.T
Cataloguing
.W
A library catalogue describes each book: author, title, subject.
"""


@pytest.fixture(autouse=True)
def offscreen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture
def tiny_sample(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Swap the bundled CISI for a 3-document SMART file (a fast self-test)."""
    path = tmp_path / "TINY.ALL"
    path.write_text(TINY_SMART)
    monkeypatch.setattr(selftest, "sample_path", lambda: path)
    return path


def run() -> tuple[int, str]:
    out = io.StringIO()
    rc = selftest.run_self_test(out)
    return rc, out.getvalue()


def line(report: str, check: str) -> str:
    found = [x for x in report.splitlines() if re.match(rf"^\S+\s+{re.escape(check)}\s", x)]
    assert found, report
    return found[0]


@pytest.mark.slow
def test_self_test_passes_on_the_bundled_sample() -> None:
    assert selftest.sample_path().is_file()
    before_dir, before_env = paths.data_dir(), os.environ.get("BM25DESK_DATA_DIR")
    rc, report = run()
    assert rc == 0, report
    paths_line = line(report, "compiled paths")
    assert paths_line.startswith(("ok", "--")), paths_line
    assert re.search(r"kernel: (C|numpy)\b.*tokenizer: (C|Python)\b", paths_line), paths_line
    assert line(report, "sample collection").startswith("ok")
    assert "1,460 documents" in line(report, "sample collection")
    assert re.search(r"; (C|Python) tokenizer\)", line(report, "sample collection"))
    assert re.search(r"\((C kernel|numpy path)\)", line(report, "search + explain"))
    assert line(report, "search + explain").startswith("ok")
    from bm25desk.engine import all_variants

    assert f"{len(all_variants())} variants" in line(report, "search + explain")
    formats = line(report, "document formats")
    assert formats.startswith("ok")
    for ext in ("pdf", "docx", "odt", "epub", "eml", "mbox", "html", "md", "txt"):
        assert f" {ext}" in formats
    ui = line(report, "desktop UI")
    assert ui.startswith(("ok", "--")), ui  # "--": no main window in this build yet
    assert report.rstrip().splitlines()[-1].startswith("self-test passed")
    # Nothing left behind, nothing changed.
    tmp = re.search(r"^data dir: (.+) \(temporary", report, re.M)
    assert tmp is not None
    assert not Path(tmp.group(1)).exists()
    assert paths.data_dir() == before_dir
    assert os.environ.get("BM25DESK_DATA_DIR") == before_env


def test_user_data_dir_is_never_used(
    tiny_sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user_dir = tmp_path / "user-data"
    monkeypatch.setenv("BM25DESK_DATA_DIR", str(user_dir))
    rc, report = run()
    assert rc == 0, report
    assert not user_dir.exists()
    assert os.environ["BM25DESK_DATA_DIR"] == str(user_dir)


def test_missing_sample_fails_with_a_clear_message(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(selftest, "sample_path", lambda: Path("/nonexistent/CISI.ALL"))
    rc, report = run()
    assert rc == 1
    assert line(report, "sample collection").startswith("FAIL")
    assert "the sample collection is missing from the installation" in report
    assert "skipped: the sample index was not built" in line(report, "search + explain")
    assert (
        report.rstrip()
        .splitlines()[-1]
        .startswith("self-test FAILED (2 of 5: sample collection, search + explain)")
    )


def test_explanation_that_does_not_add_up_fails(
    tiny_sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    explain = Searcher.explain

    def off_by_one(self: Searcher, *args: object, **kwargs: object) -> object:
        e = explain(self, *args, **kwargs)  # type: ignore[arg-type]
        return dataclasses.replace(e, score=e.score + 1.0)

    monkeypatch.setattr(Searcher, "explain", off_by_one)
    rc, report = run()
    assert rc == 1
    failure = line(report, "search + explain")
    assert failure.startswith("FAIL")
    assert "explained score" in failure
    assert "differs from the ranking score" in failure


def test_crash_in_a_check_is_a_failure_not_a_traceback(
    tiny_sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*args: object, **kwargs: object) -> object:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr("bm25desk.engine.readers.corpus.read_folder", boom)
    rc, report = run()
    assert rc == 1
    assert "RuntimeError: disk on fire" in line(report, "document formats")
    assert "Traceback" not in report


def test_missing_main_window_is_reported_not_failed(
    tiny_sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_import = importlib.import_module

    def without_ui(name: str, package: str | None = None) -> ModuleType:
        if name == "bm25desk.ui.main_window":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real_import(name, package)

    monkeypatch.setattr(importlib, "import_module", without_ui)
    rc, report = run()
    assert rc == 0, report
    ui = line(report, "desktop UI")
    assert ui.startswith("--")
    assert "no main window in this build" in ui


def test_module_does_not_import_qt() -> None:
    code = (
        "import sys, bm25desk.selftest; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def _selftest(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("BM25DESK_")}
    environ.update(env)
    return subprocess.run(
        [sys.executable, "-m", "bm25desk.selftest", *args],
        capture_output=True,
        text=True,
        env=environ,
        timeout=300,
    )


def test_extensions_check_passes_with_all_loaded() -> None:
    """CI's check: every compiled extension is built and used (this install has a compiler)."""
    proc = _selftest("--extensions")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == [
        "ok    kernel     C",
        "ok    tokenizer  C",
        "ok    codec      C",
        "ok    id table   C",
        "compiled extensions: all loaded",
    ]


def test_extensions_check_fails_loudly_without_them() -> None:
    proc = _selftest("--extensions", BM25DESK_NO_EXTENSIONS="1")
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert lines[0] == "FAIL  kernel     numpy (switched off by BM25DESK_NO_EXTENSIONS)"
    assert lines[1] == "FAIL  tokenizer  Python (switched off by BM25DESK_NO_EXTENSIONS)"
    assert lines[2] == "FAIL  codec      Python (switched off by BM25DESK_NO_EXTENSIONS)"
    assert lines[3] == "FAIL  id table   Python (switched off by BM25DESK_NO_EXTENSIONS)"
    assert lines[4].startswith("compiled extensions MISSING")


def test_self_test_reports_the_fallback_and_fails_when_extensions_are_required(
    tiny_sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    status = {"kernel": (False, "numpy (test)"), "tokenizer": (True, "C")}
    monkeypatch.setattr(selftest, "extension_status", lambda: status)
    rc, report = run()
    assert rc == 0, report
    assert line(report, "compiled paths").startswith("--")
    assert "kernel: numpy (test), tokenizer: C — searches and builds are slower" in report
    monkeypatch.setenv("BM25DESK_REQUIRE_EXTENSIONS", "1")
    rc, report = run()
    assert rc == 1
    assert line(report, "compiled paths").startswith("FAIL")
    assert "the compiled extensions are required here" in report

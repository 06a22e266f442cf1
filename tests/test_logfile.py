"""The log file: every message that says "details are in the log" names a file that has them."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from bm25desk import logfile, paths


def test_record_writes_into_the_data_dir(data_dir: Path) -> None:
    path = logfile.record("Traceback (most recent call last):\n  boom", source="test")
    assert path == data_dir / "bm25desk.log"
    text = path.read_text(encoding="utf-8")
    assert "ERROR test: Traceback (most recent call last):\n  boom\n" in text


def test_unwritable_data_dir_falls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    afile = tmp_path / "afile"
    afile.write_text("a file where the data dir should be")
    monkeypatch.setenv("BM25DESK_DATA_DIR", str(afile))
    monkeypatch.setattr(paths, "_override", None)
    logs = tmp_path / "user-logs"
    monkeypatch.setattr(logfile.platformdirs, "user_log_dir", lambda *a, **k: str(logs))
    path = logfile.record("details")
    assert path == logs / "bm25desk.log"
    assert "details" in path.read_text(encoding="utf-8")
    assert afile.read_text() == "a file where the data dir should be"


def test_setup_logs_records_to_the_same_file(data_dir: Path) -> None:
    handlers = logfile.setup(stderr=False)
    try:
        logging.getLogger("bm25desk.test").warning("a warning for the log")
    finally:
        for handler in handlers:
            logging.getLogger("bm25desk").removeHandler(handler)
            handler.close()
    assert "a warning for the log" in (data_dir / "bm25desk.log").read_text(encoding="utf-8")


def test_the_apps_message_names_the_log(data_dir: Path) -> None:
    """The UI's "Something went wrong" message: the traceback is in the file it names."""
    from bm25desk.ui.common.messages import readable

    try:
        raise ZeroDivisionError("division by zero")
    except ZeroDivisionError as exc:
        message = readable(exc)
    log = data_dir / "bm25desk.log"
    assert message == (
        f"Something went wrong (ZeroDivisionError: division by zero). Details are in {log}."
    )
    text = log.read_text(encoding="utf-8")
    assert 'raise ZeroDivisionError("division by zero")' in text

"""app.main: organisation names, --data-dir, the window, and an event loop that returns."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QApplication

from bm25desk import app, paths


def test_main_runs_the_window_and_honours_data_dir(qtbot, tmp_path, monkeypatch) -> None:
    shown = []

    def fake_exec(self) -> int:
        windows = [w for w in QApplication.topLevelWidgets() if w.isVisible()]
        shown.extend(w.windowTitle() for w in windows)
        for w in windows:
            w.close()
        return 0

    monkeypatch.setattr(QApplication, "exec", fake_exec)
    monkeypatch.setattr(paths, "_override", None)
    target = tmp_path / "elsewhere"
    try:
        assert app.main(["--data-dir", str(target)]) == 0
    finally:
        paths.set_data_dir(None)
    assert shown == ["bm25desk"]
    assert QCoreApplication.organizationName() == "bm25desk"
    assert (target / "config" / "bm25desk.ini").exists()


def test_bad_arguments_exit_with_a_usage_message() -> None:
    with pytest.raises(SystemExit):
        app.main(["--no-such-flag"])

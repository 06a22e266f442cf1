"""FolderWatcher: file-system events (or periodic rescans) → changes_found(FolderChanges)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bm25desk.engine import IndexStore, build_index
from bm25desk.engine.index.changes import FolderChanges
from bm25desk.ui.indexes.folder_watcher import FolderWatcher, list_dirs

FILES = {
    "a.txt": "Apple\nA red apple.\n",
    "b.txt": "Banana\nA yellow banana.\n",
    "sub/c.md": "# Cherry\n\nA dark cherry.\n",
}


@pytest.fixture
def folder_index(tmp_path: Path) -> tuple[IndexStore, Path]:
    folder = tmp_path / "docs"
    for i, (rel, text) in enumerate(sorted(FILES.items())):
        p = folder / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        os.utime(p, (1_600_000_000 + i, 1_600_000_000 + i))
    store = IndexStore()
    build_index(folder, name="docs", store=store)
    return store, folder


def _counts(changes: FolderChanges) -> tuple[int, int, int]:
    return len(changes.added), len(changes.changed), len(changes.removed)


def _modify(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    os.utime(path, (1_700_000_000, 1_700_000_000))  # also an attribute event for the folder


def test_watcher_reports_add_modify_delete(qtbot, runner, folder_index) -> None:
    store, folder = folder_index
    watcher = FolderWatcher(runner, store, "docs", folder, debounce_ms=100)
    watcher.start()
    qtbot.waitUntil(lambda: len(watcher.watched_dirs) == 2, timeout=10000)
    assert watcher.watching
    cb = _counts
    with qtbot.waitSignal(
        watcher.changes_found, timeout=10000, check_params_cb=lambda c: cb(c) == (1, 0, 0)
    ):
        (folder / "sub" / "new.txt").write_text("Date\nA sweet date.\n", encoding="utf-8")
    with qtbot.waitSignal(
        watcher.changes_found, timeout=10000, check_params_cb=lambda c: cb(c) == (1, 1, 0)
    ):
        _modify(folder / "a.txt", "Apple\nA green apple.\n")
    with qtbot.waitSignal(
        watcher.changes_found, timeout=10000, check_params_cb=lambda c: cb(c) == (1, 1, 1)
    ) as blocker:
        (folder / "b.txt").unlink()
    changes = blocker.args[0]
    assert changes.count == 3
    assert changes.added == ("sub/new.txt",)
    assert changes.changed == ("a.txt",)
    assert changes.removed == ("b.txt",)
    # A new sub-folder gets watched too.
    with qtbot.waitSignal(
        watcher.changes_found, timeout=10000, check_params_cb=lambda c: c.count == 4
    ):
        (folder / "new").mkdir()
        (folder / "new" / "e.txt").write_text("Elder\nElderberry.\n", encoding="utf-8")
    qtbot.waitUntil(lambda: str(folder / "new") in watcher.watched_dirs, timeout=10000)
    watcher.stop()
    assert watcher.watched_dirs == []


def test_rescan_fallback_beyond_the_cap(qtbot, runner, folder_index) -> None:
    store, folder = folder_index
    watcher = FolderWatcher(runner, store, "docs", folder, max_dirs=1, rescan_ms=200)
    watcher.start()
    qtbot.waitUntil(lambda: not watcher.watching, timeout=10000)
    assert watcher.watched_dirs == []
    with qtbot.waitSignal(
        watcher.changes_found, timeout=10000, check_params_cb=lambda c: _counts(c) == (0, 0, 1)
    ):
        (folder / "sub" / "c.md").unlink()
    watcher.stop()


def test_forced_fallback_and_no_event_when_nothing_changed(qtbot, runner, folder_index) -> None:
    store, folder = folder_index
    watcher = FolderWatcher(runner, store, "docs", folder, rescan_ms=200)
    watcher.fall_back("test")
    seen: list[FolderChanges] = []
    watcher.changes_found.connect(seen.append)
    watcher.start()
    qtbot.wait(600)  # a few rescans, nothing changed: nothing reported
    assert seen == []
    assert watcher.watched_dirs == []
    with qtbot.waitSignal(
        watcher.changes_found, timeout=10000, check_params_cb=lambda c: _counts(c) == (1, 0, 0)
    ):
        (folder / "z.txt").write_text("Zucchini\nGreen.\n", encoding="utf-8")
    # Back to the indexed state: an empty FolderChanges is reported (the UI hides its notice).
    with qtbot.waitSignal(
        watcher.changes_found, timeout=10000, check_params_cb=lambda c: c.count == 0
    ):
        (folder / "z.txt").unlink()
    watcher.stop()


def test_stopped_watcher_reports_nothing(qtbot, runner, folder_index) -> None:
    store, folder = folder_index
    watcher = FolderWatcher(runner, store, "docs", folder, debounce_ms=50, rescan_ms=100)
    watcher.start()
    watcher.stop()
    seen: list[FolderChanges] = []
    watcher.changes_found.connect(seen.append)
    (folder / "z.txt").write_text("Zucchini\nGreen.\n", encoding="utf-8")
    qtbot.wait(500)
    assert seen == []
    assert not watcher.active


def test_list_dirs_skips_hidden_and_caps(tmp_path: Path) -> None:
    root = tmp_path / "root"
    for d in ("a/b", ".git/x", "node_modules/y", "c"):
        (root / d).mkdir(parents=True)
    dirs = sorted(Path(p).relative_to(root).as_posix() for p in list_dirs(root, 100))
    assert dirs == [".", "a", "a/b", "c"]
    assert list_dirs(root, 2) is None


def test_window_shows_changes_and_updates_automatically(qtbot, make_window, folder_index) -> None:
    _store, folder = folder_index
    w = make_window()
    w.show()
    w.open_index("docs")
    qtbot.waitUntil(lambda: w.searcher is not None and w.folder_watcher is not None, timeout=15000)
    watcher = w.folder_watcher
    qtbot.waitUntil(lambda: len(watcher.watched_dirs) == 2, timeout=10000)
    assert not w.menu_actions.auto_update.isChecked()
    (folder / "d.txt").write_text("Date\nA sweet date.\n", encoding="utf-8")
    qtbot.waitUntil(lambda: w.changes_label.isVisible(), timeout=10000)
    assert "1 file changed" in w.changes_label.text()
    assert w.build_job is None  # not automatic by default
    # Turning the setting on updates now; the reopened index has the file; the notice goes.
    with qtbot.waitSignal(w.build_finished, timeout=20000) as blocker:
        w.menu_actions.auto_update.trigger()
    assert w.settings.auto_update_folders
    assert blocker.args[0].added == 1
    qtbot.waitUntil(lambda: w.searcher is not None and w.searcher.index.n_docs == 4, timeout=15000)
    qtbot.waitUntil(lambda: not w.changes_label.isVisible(), timeout=10000)
    assert w.folder_watcher is watcher  # the same watcher goes on
    # From now on, changes are picked up by themselves.
    with qtbot.waitSignal(w.build_finished, timeout=20000) as blocker:
        (folder / "a.txt").unlink()
    assert blocker.args[0].removed == 1
    qtbot.waitUntil(lambda: w.searcher is not None and w.searcher.index.n_docs == 3, timeout=15000)
    # Closing the index stops the watcher.
    w.close_index()
    assert w.folder_watcher is None
    assert not watcher.active


def test_window_does_not_watch_a_corpus_file_index(qtbot, window) -> None:
    assert window.folder_watcher is None
    assert not window.changes_label.isVisible()


def test_files_skipped_by_a_build_are_not_changes(qtbot, make_window, tmp_path) -> None:
    """Issue 10: before, a binary, damaged or empty file counted as new forever, and the notice
    "N files changed · Update" stayed after every Update."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.txt").write_text("Apple\nA red apple.\n", encoding="utf-8")
    (folder / "scan.txt").write_bytes(b"\x00\x01binary\x00")
    (folder / "empty.md").write_bytes(b"")
    report = build_index(folder, name="notes", store=IndexStore())
    assert len(report.skipped) == 2
    w = make_window()
    w.show()
    qtbot.waitUntil(lambda: w.folder_watcher is not None, timeout=15000)
    watcher = w.folder_watcher
    with qtbot.waitSignal(watcher.changes_found, timeout=10000) as blocker:
        watcher.rescan(report=True)
    assert blocker.args[0].count == 0
    assert not w.changes_label.isVisible()
    with qtbot.waitSignal(w.build_finished, timeout=20000) as done:
        w.update_index("notes")
    assert "up to date" in w.message_bar.text.text()
    assert "0 documents/s" not in w.message_bar.text.text()
    assert done.args[0].indexed == 0
    with qtbot.waitSignal(watcher.changes_found, timeout=10000) as blocker:
        watcher.rescan(report=True)
    assert blocker.args[0].count == 0
    assert not w.changes_label.isVisible()

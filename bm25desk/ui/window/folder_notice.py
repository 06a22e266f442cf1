"""The status bar's "N files changed · Update" for the open folder index (issue 6).

And the automatic update, when the user asked for it.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import QLabel

from bm25desk.engine import Index, IndexStore
from bm25desk.engine.index.changes import FolderChanges
from bm25desk.ui.common.formatting import plural
from bm25desk.ui.common.jobs import JobRunner
from bm25desk.ui.indexes.folder_watcher import FolderWatcher


class FolderNotice(QObject):
    """Watches the open index's folder and shows what an update would do.

    Signals
    -------
    update_requested(str)
        Update the named index (the user clicked Update, or automatic updates are on).
    """

    update_requested = Signal(str)

    def __init__(
        self, runner: JobRunner, store: IndexStore, label: QLabel, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.runner = runner
        self.store = store
        self.label = label
        self.label.setObjectName("folder_changes")
        self.label.linkActivated.connect(self._on_label_link_activated)
        self.label.hide()
        self.watcher: FolderWatcher | None = None
        self.auto_update = False
        self.can_update = lambda: True  # the window says whether a build could start now
        self._auto_updated_for: object = None

    def watch(self, index: Index | None) -> None:
        """Watch the folder of ``index`` if it is a folder index; stop watching any other."""
        source = index.source if index is not None else {}
        watcher = self.watcher
        if (
            watcher is not None
            and index is not None
            and watcher.name == index.name
            and str(watcher.folder) == str(source.get("path", ""))
        ):
            watcher.rescan(report=True)  # reopened (after an update): refresh the notice
            return
        if watcher is not None:
            watcher.stop()
            watcher.changes_found.disconnect(self._on_changes_found)
            watcher.deleteLater()
            self.watcher = None
        self.label.hide()
        self._auto_updated_for = None
        if index is None or source.get("kind") != "folder" or not source.get("path"):
            return
        watcher = FolderWatcher(self.runner, self.store, index.name, source["path"], self)
        watcher.changes_found.connect(self._on_changes_found)
        self.watcher = watcher
        watcher.start()

    def set_auto_update(self, on: bool) -> None:
        """Update as soon as the folder changes (or only when asked)."""
        self.auto_update = on
        if on and self.watcher is not None and self.watcher.last.count:
            self._on_changes_found(self.watcher.last)

    @Slot(object)
    def _on_changes_found(self, changes: FolderChanges) -> None:
        watcher = self.watcher
        if watcher is None:
            return
        name = watcher.name
        if not changes.count:
            self.label.hide()
            self._auto_updated_for = None
            return
        self.label.setText(
            f'{plural(changes.count, "file")} changed · <a href="update:{name}">Update</a>'
        )
        self.label.setToolTip(
            f"In the folder of “{name}”: {len(changes.added):,} new, "
            f"{len(changes.changed):,} changed, {len(changes.removed):,} deleted"
        )
        self.label.show()
        if (
            self.auto_update
            and self.can_update()
            and changes != self._auto_updated_for  # never loop on files an update cannot index
        ):
            self._auto_updated_for = changes
            self.update_requested.emit(name)

    @Slot(str)
    def _on_label_link_activated(self, link: str) -> None:
        kind, _, name = link.partition(":")
        if kind == "update" and name:
            self.update_requested.emit(name)

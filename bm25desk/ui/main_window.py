"""The main window: index list, Search / Compare / Statistics tabs, builds, menus and shortcuts."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDockWidget,
    QLabel,
    QMainWindow,
    QMessageBox,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from bm25desk.engine import (
    BuildReport,
    IndexCorruptError,
    IndexStore,
    Searcher,
    StoreError,
    Variant,
    VariantError,
    build_index,
    get_variant,
    update_index,
)
from bm25desk.engine.progress import CancelToken, ProgressFn
from bm25desk.ui.common.icons import app_icon
from bm25desk.ui.common.jobs import Job, JobRunner
from bm25desk.ui.common.latest_only import LatestOnly
from bm25desk.ui.common.messages import MessageBar, readable
from bm25desk.ui.common.sample import SAMPLE_NAME, SAMPLE_QUERY
from bm25desk.ui.common.settings import Settings
from bm25desk.ui.common.variant_picker import variant_summary
from bm25desk.ui.compare.panel import ComparePanel
from bm25desk.ui.evaluation.panel import EvalPanel
from bm25desk.ui.indexes.build_progress import BuildProgress, estimate_docs_per_byte
from bm25desk.ui.indexes.build_request import BuildRequest, rebuild_request, sample_request
from bm25desk.ui.indexes.folder_watcher import FolderWatcher
from bm25desk.ui.indexes.new_index_dialog import NewIndexDialog, dropped_path
from bm25desk.ui.indexes.panel import IndexPanel
from bm25desk.ui.indexes.skip_report_dialog import SkipReportDialog
from bm25desk.ui.indexes.welcome_page import WelcomePage
from bm25desk.ui.search.panel import SearchPanel
from bm25desk.ui.statistics.panel import StatsPanel

log = logging.getLogger(__name__)

SHORTCUTS = (
    ("Ctrl+L / Ctrl+F", "Focus the query box"),
    ("↓ (in the query box)", "Move to the results"),
    ("Enter", "Search now (skip the typing delay)"),
    ("Esc (in the query box)", "Clear the query"),
    ("Ctrl+] / Ctrl+[", "Next / previous ranking function"),
    ("Ctrl+0", "Reset the parameters to their defaults"),
    ("F3 / Shift+F3", "Next / previous highlighted match in the preview"),
    ("Ctrl+O", "Open the selected document's file"),
    ("Ctrl+Shift+C", "Copy the score ledger as text"),
    ("Ctrl+1 / Ctrl+2 / Ctrl+3", "Search / Compare / Statistics tab"),
    ("Ctrl+N", "New index"),
    ("F5", "Update the selected index from its source"),
    ("Ctrl+R", "Rebuild the selected index"),
    ("Ctrl+I", "Show or hide the index list"),
    ("F1", "This list"),
    ("Ctrl+Q", "Quit"),
)


def _warm_up(_progress: ProgressFn, _cancel: CancelToken) -> None:
    """Import the analysis libraries (nltk's first import takes seconds) off the GUI thread."""
    from bm25desk.engine.analysis.analyzer import Analyzer

    Analyzer.create(stemmer="porter", stopwords="en")


class MainWindow(QMainWindow):
    """The application window.

    Signals
    -------
    index_opened(str)
        An index was opened for searching.
    build_finished(object)
        A build or update ended: its :class:`BuildReport`, or None when cancelled or failed.
    """

    index_opened = Signal(str)
    build_finished = Signal(object)

    def __init__(
        self,
        store: IndexStore | None = None,
        settings: Settings | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("bm25desk")
        self.setWindowIcon(app_icon())
        self.setAcceptDrops(True)
        self.store = store or IndexStore()
        self.settings = settings or Settings()
        self.runner = JobRunner(self)
        self.searcher: Searcher | None = None
        self.build_job: Job | None = None
        self.last_report: BuildReport | None = None
        self._build_request: BuildRequest | None = None
        self.confirm = self._confirm  # replaced in tests: no modal dialogs there
        self._opening = ""
        self._pending_query: str | None = None
        self._pending_tab: int | None = None
        self.opener = LatestOnly(self.runner, "open index", self)
        self.opener.succeeded.connect(self._on_opener_succeeded)
        self.opener.failed.connect(self._on_opener_failed)

        self.message_bar = MessageBar()
        self.message_bar.action_requested.connect(self._on_message_bar_action_requested)
        self.build_progress = BuildProgress()
        self.build_progress.cancel_requested.connect(self.cancel_build)
        self.welcome = WelcomePage()
        self.welcome.sample_requested.connect(self.build_sample)
        self.welcome.new_requested.connect(self.new_index)
        self.search_panel = SearchPanel(self.runner)
        self.compare_panel = ComparePanel(self.runner)
        self.stats_panel = StatsPanel(self.runner)
        self.eval_panel = EvalPanel(self.runner)
        self.eval_panel.apply_parameters_requested.connect(
            self._on_eval_panel_apply_parameters_requested
        )
        self.eval_panel.open_query_requested.connect(self._on_eval_panel_open_query_requested)
        self.search_panel.results_shown.connect(self._on_search_panel_results_shown)
        self.search_panel.query_cleared.connect(self._on_search_panel_query_cleared)
        self.search_panel.variant_changed.connect(self._on_search_panel_variant_changed)
        self.search_panel.failed.connect(self.show_error)
        self.compare_panel.jobs.failed.connect(self.show_error)
        self.compare_panel.delta_jobs.failed.connect(self.show_error)
        self.stats_panel.stats_jobs.failed.connect(self.show_error)
        self.stats_panel.lookup_jobs.failed.connect(self.show_error)

        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.search_panel, "Search")
        self.tabs.addTab(self.compare_panel, "Compare")
        self.tabs.addTab(self.stats_panel, "Statistics")
        self.tabs.addTab(self.eval_panel, "Evaluation")
        self.tabs.currentChanged.connect(self._on_tabs_current_changed)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.welcome)
        self.stack.addWidget(self.tabs)
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.message_bar)
        layout.addWidget(self.build_progress)
        layout.addWidget(self.stack, 1)
        self.setCentralWidget(central)

        self.index_panel = IndexPanel(self.store)
        self.index_panel.open_requested.connect(self.open_index)
        self.index_panel.new_requested.connect(self.new_index)
        self.index_panel.update_requested.connect(self.update_index)
        self.index_panel.rebuild_requested.connect(self.rebuild_index)
        self.index_panel.delete_requested.connect(self.delete_index)
        self.index_dock = QDockWidget("Indexes")
        self.index_dock.setObjectName("indexes")
        self.index_dock.setWidget(self.index_panel)
        self.index_dock.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetMovable
            | QDockWidget.DockWidgetFeature.DockWidgetClosable
        )
        self.addDockWidget(Qt.DockWidgetArea.TopDockWidgetArea, self.index_dock)

        self.index_label = QLabel()
        self.variant_label = QLabel()
        # folder watcher: "N files changed · Update" in the status bar (hidden when none)
        self.folder_watcher: FolderWatcher | None = None
        self._auto_updated_for: object = None
        self.changes_label = QLabel()
        self.changes_label.setObjectName("folder_changes")
        self.changes_label.linkActivated.connect(self._on_changes_label_link_activated)
        self.changes_label.hide()
        self.statusBar().addPermanentWidget(self.changes_label)
        self.statusBar().addPermanentWidget(self.variant_label)
        self.statusBar().addPermanentWidget(self.index_label)
        self._make_menus()
        self.resize(1360, 900)
        self.resizeDocks([self.index_dock], [110], Qt.Orientation.Vertical)
        self.index_panel.refresh()
        self._restore()

    # -- menus -----------------------------------------------------------------------------------

    def _action(self, menu, text: str, slot, shortcut: str | tuple[str, ...] = "") -> QAction:
        action = QAction(text, self)
        if shortcut:
            keys = (shortcut,) if isinstance(shortcut, str) else shortcut
            action.setShortcuts([QKeySequence(k) for k in keys])
        action.triggered.connect(slot)
        menu.addAction(action)
        return action

    def _make_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        self.new_action = self._action(file_menu, "&New index…", self.new_index, "Ctrl+N")
        self.sample_action = self._action(
            file_menu, "Build the &sample collection", self.build_sample
        )
        file_menu.addSeparator()
        self._action(file_menu, "&Quit", self.close, "Ctrl+Q")

        index_menu = bar.addMenu("&Index")
        self.update_action = self._action(
            index_menu, "&Update from source", lambda: self._for_selected(self.update_index), "F5"
        )
        self.rebuild_action = self._action(
            index_menu, "&Rebuild", lambda: self._for_selected(self.rebuild_index), "Ctrl+R"
        )
        self._action(index_menu, "&Delete…", lambda: self._for_selected(self.delete_index))
        self._action(index_menu, "Show in &folder", self.index_panel.show_in_folder)
        index_menu.addSeparator()
        # folder watcher: the auto-update setting
        self.auto_update_action = self._action(
            index_menu, "Update folder indexes &automatically", self._on_auto_update_toggled
        )
        self.auto_update_action.setCheckable(True)
        self.auto_update_action.setChecked(self.settings.auto_update_folders)
        index_menu.addSeparator()
        self.cancel_action = self._action(index_menu, "&Cancel the build", self.cancel_build)
        self.cancel_action.setEnabled(False)

        search_menu = bar.addMenu("&Search")
        self._action(
            search_menu, "&Focus the query", self.search_panel.focus_query, ("Ctrl+L", "Ctrl+F")
        )
        self._action(
            search_menu,
            "&Next ranking function",
            lambda: self.search_panel.picker.step(1),
            "Ctrl+]",
        )
        self._action(
            search_menu,
            "&Previous ranking function",
            lambda: self.search_panel.picker.step(-1),
            "Ctrl+[",
        )
        self._action(
            search_menu, "&Reset parameters", self.search_panel.picker.params.reset, "Ctrl+0"
        )
        search_menu.addSeparator()
        ledger = self.search_panel.detail.ledger
        for action in (
            ledger.copy_text_action,
            ledger.copy_markdown_action,
            ledger.copy_json_action,
        ):
            search_menu.addAction(action)

        view_menu = bar.addMenu("&View")
        for i, name in enumerate(("&Search", "&Compare", "S&tatistics")):
            self._action(view_menu, name, lambda _=False, i=i: self.show_tab(i), f"Ctrl+{i + 1}")
        view_menu.addSeparator()
        toggle = self.index_dock.toggleViewAction()
        toggle.setText("&Index list")
        toggle.setShortcut(QKeySequence("Ctrl+I"))
        view_menu.addAction(toggle)

        help_menu = bar.addMenu("&Help")
        self._action(help_menu, "&Keyboard shortcuts", self.show_shortcuts, "F1")
        self._action(help_menu, "&About bm25desk", self.show_about)

    def add_tab(self, widget: QWidget, title: str) -> int:
        """Add a work tab (e.g. Evaluation) after the built-in ones; return its index."""
        return self.tabs.addTab(widget, title)

    def show_tab(self, i: int) -> None:
        """Show tab ``i`` (when an index is open)."""
        if self.stack.currentWidget() is self.tabs and 0 <= i < self.tabs.count():
            self.tabs.setCurrentIndex(i)

    # -- indexes ---------------------------------------------------------------------------------

    @Slot(str)
    def open_index(self, name: str, *, query: str | None = None, force: bool = False) -> None:
        """Open index ``name`` in the background, then search it (for ``query``, if given).

        Opening reads the manifest and builds the analyser, whose stemmer import can take
        seconds the first time: the window stays responsive meanwhile. An index already open
        (or opening) is not opened again unless ``force`` (after a rebuild).
        """
        store = self.store
        if not force and query is None:
            if self.opener.busy() and self._opening == name:
                return
            if not self.opener.busy() and self.searcher and self.searcher.index.name == name:
                return
        self._opening = name
        self._pending_query = query

        def work() -> Searcher:
            return Searcher(store.open(name))

        self.index_label.setText(f"Opening {name}…")
        self.opener.request(work)

    @Slot(object)
    def _on_opener_succeeded(self, searcher: Searcher) -> None:
        index = searcher.index
        name = index.name
        self.searcher = searcher
        query, self._pending_query = self._pending_query, None
        if query is not None:
            self.search_panel.query_edit.setText(query)
        self.search_panel.set_searcher(searcher)
        self.compare_panel.set_searcher(searcher)
        self.stats_panel.set_searcher(searcher)
        self.eval_panel.set_index(index, searcher)
        self.index_panel.set_open_index(name)
        self.stack.setCurrentWidget(self.tabs)
        self.settings.last_index = name
        self.setWindowTitle(f"{name} — bm25desk")
        self.index_label.setText(f"{name} · {index.n_docs:,} documents")
        for warning in index.warnings:
            self.message_bar.show_message(warning[:1].upper() + warning[1:], "warning")
        self._watch_folder(index)
        tab, self._pending_tab = self._pending_tab, None
        if tab is not None:
            self.show_tab(tab)
        self.index_opened.emit(name)

    @Slot(object)
    def _on_opener_failed(self, exc: BaseException) -> None:
        name = self._opening
        self._pending_query = None
        self.index_label.setText(
            f"{self.searcher.index.name} · {self.searcher.index.n_docs:,} documents"
            if self.searcher is not None
            else ""
        )
        action = (f"rebuild:{name}", "Rebuild it") if isinstance(exc, IndexCorruptError) else None
        self.message_bar.show_message(readable(exc), "error", action=action)
        self.index_panel.refresh()
        if self.searcher is None and not self.index_panel.names():
            self.stack.setCurrentWidget(self.welcome)

    @Slot(object)
    def _on_eval_panel_apply_parameters_requested(self, variant: Variant) -> None:
        self.search_panel.set_variant(variant)
        self.show_tab(self.tabs.indexOf(self.search_panel))

    @Slot(str, object)
    def _on_eval_panel_open_query_requested(self, text: str, relevant: frozenset[str]) -> None:
        self.search_panel.set_query(text, relevant)
        self.show_tab(self.tabs.indexOf(self.search_panel))

    def close_index(self) -> None:
        """Stop searching the open index."""
        self.searcher = None
        self._watch_folder(None)
        for panel in (self.search_panel, self.compare_panel, self.stats_panel):
            panel.set_searcher(None)
        self.eval_panel.set_index(None, None)
        self.index_label.setText("")
        self.setWindowTitle("bm25desk")

    @Slot()
    def new_index(self, source: Path | None = None) -> None:
        """Ask for a source and options, then build."""
        if self.build_job is not None:
            self.message_bar.show_message("Wait for the running build to finish.", "info")
            return
        dialog = NewIndexDialog(self.store, self)
        if isinstance(source, Path):
            dialog.set_source(source)
        if dialog.exec() == QDialog.DialogCode.Accepted:
            self.start_build(dialog.request())

    @Slot()
    def build_sample(self) -> None:
        """Build (or open) the bundled sample collection."""
        self.settings.sample_offered = True
        if self.store.exists(SAMPLE_NAME):
            self.open_index(
                SAMPLE_NAME, query=self.search_panel.query() or SAMPLE_QUERY, force=True
            )
            return
        self.start_build(sample_request())

    @Slot(str)
    def update_index(self, name: str) -> None:
        """Bring ``name`` up to date with its source (incremental for folders)."""
        self.start_build(BuildRequest(Path(), name, kind="update"))

    @Slot(str)
    def rebuild_index(self, name: str) -> None:
        """Build ``name`` again from its source with the same options."""
        info = self.store.info(name)
        if not info.source.get("path"):
            self.message_bar.show_message(
                f"The source of “{name}” is not recorded (its manifest is damaged): delete the "
                "index and build it again with New…",
                "error",
            )
            return
        self.start_build(rebuild_request(info))

    @Slot(str)
    def delete_index(self, name: str) -> None:
        """Delete ``name`` after confirmation."""
        if self.build_job is not None:
            self.message_bar.show_message("Wait for the running build to finish.", "info")
            return
        if not self.confirm(
            "Delete index",
            f"Delete the index “{name}”? The source files are not touched; you can build it again.",
        ):
            return
        if self.searcher is not None and self.searcher.index.name == name:
            self.close_index()
        store = self.store

        def work(_progress: ProgressFn, _cancel: CancelToken) -> str:
            store.delete(name)
            return name

        job = Job(work, f"delete {name}")
        job.signals.succeeded.connect(self._on_delete_succeeded)
        job.signals.failed.connect(self.show_error)
        self.runner.start(job, write=True)

    def start_build(self, request: BuildRequest) -> Job | None:
        """Build, rebuild or update in the background, with progress and Cancel."""
        if self.build_job is not None:
            self.message_bar.show_message("A build is already running.", "info")
            return None
        store = self.store
        previous = None
        if store.exists(request.name):
            info = store.info(request.name)
            previous = (info.n_docs, int(info.source.get("size", 0)))
        if request.kind == "update":
            info = store.info(request.name)
            source = Path(str(info.source.get("path", "")))
            fmt = str(info.source.get("format", ""))

            def work(progress: ProgressFn, cancel: CancelToken) -> BuildReport:
                return update_index(request.name, store=store, progress=progress, cancel=cancel)

            verb = "Updating"
        else:
            source, fmt = request.source, request.fmt or ""

            def work(progress: ProgressFn, cancel: CancelToken) -> BuildReport:
                return build_index(
                    request.source,
                    name=request.name,
                    fmt=request.fmt,
                    analyzer=request.make_analyzer(),
                    columns=request.columns,
                    store=store,
                    progress=progress,
                    cancel=cancel,
                    replace=True,  # the New… dialog warned that the name exists
                )

            verb = "Rebuilding" if request.kind == "rebuild" else "Building"
        job = Job(work, f"build {request.name}")
        job.signals.progressed.connect(self.build_progress.update_progress)
        job.signals.succeeded.connect(self._on_build_succeeded)
        job.signals.failed.connect(self._on_build_failed)
        job.signals.cancelled.connect(self._on_build_cancelled)
        job.signals.finished.connect(self._on_build_job_finished)
        self.build_job = job
        self._build_request = request
        self.message_bar.hide()
        self.build_progress.start(
            f"{verb} “{request.name}”…", estimate_docs_per_byte(source, fmt, previous)
        )
        self._set_building(True)
        self.runner.start(job, write=True)
        return job

    @Slot()
    def cancel_build(self) -> None:
        """Ask the running build to stop (the previous index stays as it was)."""
        if self.build_job is not None:
            self.build_job.cancel.set()
            self.build_progress.cancelling()

    def _set_building(self, building: bool) -> None:
        self.index_panel.set_busy(building)
        self.welcome.set_busy(building)
        self.cancel_action.setEnabled(building)
        for action in (
            self.new_action,
            self.sample_action,
            self.update_action,
            self.rebuild_action,
        ):
            action.setEnabled(not building)

    @Slot(object)
    def _on_build_succeeded(self, report: BuildReport) -> None:
        request = self._build_request
        self.last_report = report
        self.index_panel.refresh()
        action = (
            ("skipped", f"Show the {len(report.skipped):,} skipped") if report.skipped else None
        )
        self.message_bar.show_message(
            report.summary(), "info", action=action, timeout_ms=0 if report.skipped else 12000
        )
        current = self.searcher.index.name if self.searcher is not None else ""
        if request is not None and (request.kind == "build" or report.name == current):
            query = self.search_panel.query()
            if report.name == SAMPLE_NAME and not query:
                query = SAMPLE_QUERY
            self.open_index(report.name, query=query, force=True)
        self.build_finished.emit(report)

    @Slot(object)
    def _on_build_failed(self, exc: BaseException) -> None:
        name = self._build_request.name if self._build_request else "the index"
        self.message_bar.show_message(
            f"Could not build “{name}”: {readable(exc)} "
            "Any previous index of that name is unchanged.",
            "error",
        )
        self.index_panel.refresh()
        self.build_finished.emit(None)

    @Slot()
    def _on_build_cancelled(self) -> None:
        name = self._build_request.name if self._build_request else ""
        self.message_bar.show_message(
            f"Build of “{name}” cancelled. Any previous index of that name is unchanged.",
            "info",
            timeout_ms=10000,
        )
        self.index_panel.refresh()
        self.build_finished.emit(None)

    @Slot()
    def _on_build_job_finished(self) -> None:
        self.build_job = None
        self._build_request = None
        self.build_progress.hide()
        self._set_building(False)

    @Slot(object)
    def _on_delete_succeeded(self, name: str) -> None:
        self.message_bar.show_message(f"Deleted the index “{name}”.", "info", timeout_ms=8000)
        self.index_panel.refresh()
        if self.searcher is None:
            names = self.index_panel.names()
            if names:
                self.open_index(names[0])
            else:
                self.stack.setCurrentWidget(self.welcome)
                self.setWindowTitle("bm25desk")

    def _for_selected(self, fn) -> None:
        name = self.index_panel.current_name() or (
            self.searcher.index.name if self.searcher is not None else ""
        )
        if name:
            fn(name)

    # -- staying current: the folder watcher (issue 6) -------------------------------------------

    def _watch_folder(self, index) -> None:
        """Watch the folder of ``index`` if it is a folder index; stop watching any other."""
        source = index.source if index is not None else {}
        watcher = self.folder_watcher
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
            watcher.changes_found.disconnect(self._on_folder_changes_found)
            watcher.deleteLater()
            self.folder_watcher = None
        self.changes_label.hide()
        self._auto_updated_for = None
        if index is None or source.get("kind") != "folder" or not source.get("path"):
            return
        watcher = FolderWatcher(self.runner, self.store, index.name, source["path"], self)
        watcher.changes_found.connect(self._on_folder_changes_found)
        self.folder_watcher = watcher
        watcher.start()

    @Slot(object)
    def _on_folder_changes_found(self, changes) -> None:
        watcher = self.folder_watcher
        if watcher is None:
            return
        name = watcher.name
        if not changes.count:
            self.changes_label.hide()
            self._auto_updated_for = None
            return
        n = changes.count
        self.changes_label.setText(
            f'{n:,} file{"s" if n != 1 else ""} changed · <a href="update:{name}">Update</a>'
        )
        self.changes_label.setToolTip(
            f"In the folder of “{name}”: {len(changes.added):,} new, "
            f"{len(changes.changed):,} changed, {len(changes.removed):,} deleted"
        )
        self.changes_label.show()
        if (
            self.settings.auto_update_folders
            and self.build_job is None
            and changes != self._auto_updated_for  # never loop on files an update cannot index
        ):
            self._auto_updated_for = changes
            self.update_index(name)

    @Slot(str)
    def _on_changes_label_link_activated(self, link: str) -> None:
        kind, _, name = link.partition(":")
        if kind == "update" and name:
            self.update_index(name)

    @Slot(bool)
    def _on_auto_update_toggled(self, checked: bool) -> None:
        self.settings.auto_update_folders = checked
        watcher = self.folder_watcher
        if checked and watcher is not None and watcher.last.count:
            self._on_folder_changes_found(watcher.last)

    # -- messages --------------------------------------------------------------------------------

    @Slot(object)
    def show_error(self, exc: BaseException) -> None:
        """Show an error as a readable message (never a traceback)."""
        self.message_bar.show_message(readable(exc), "error")

    @Slot(str)
    def _on_message_bar_action_requested(self, action: str) -> None:
        kind, _, arg = action.partition(":")
        if kind == "skipped" and self.last_report is not None:
            SkipReportDialog(self.last_report, self).exec()
        elif kind == "update" and arg:
            self.message_bar.hide()
            self.update_index(arg)
        elif kind == "rebuild" and arg:
            self.message_bar.hide()
            try:
                self.rebuild_index(arg)
            except (StoreError, OSError) as exc:
                self.show_error(exc)

    def _confirm(self, title: str, text: str) -> bool:
        answer = QMessageBox.question(self, title, text)
        return answer == QMessageBox.StandardButton.Yes

    @Slot()
    def show_shortcuts(self) -> None:
        """List the keyboard shortcuts."""
        rows = "".join(
            f"<tr><td><b>{k}</b>&nbsp;&nbsp;</td><td>{v}</td></tr>" for k, v in SHORTCUTS
        )
        QMessageBox.information(self, "Keyboard shortcuts", f"<table>{rows}</table>")

    @Slot()
    def show_about(self) -> None:
        """Say what this is."""
        import bm25desk

        QMessageBox.about(
            self,
            "About bm25desk",
            f"<b>bm25desk {bm25desk.__version__}</b><br>Explore document collections with the "
            "BM25 family of ranking functions, and see why each document ranked where it did."
            f"<br><br>Settings: {self.settings.file_name}",
        )

    # -- panel wiring ----------------------------------------------------------------------------

    @Slot(object)
    def _on_search_panel_results_shown(self, outcome: object) -> None:
        self.compare_panel.set_query(outcome.result.analysis.parsed)  # type: ignore[attr-defined]

    @Slot()
    def _on_search_panel_query_cleared(self) -> None:
        self.compare_panel.set_query(None)

    @Slot(object)
    def _on_search_panel_variant_changed(self, variant: Variant) -> None:
        self.variant_label.setText(variant_summary(variant))

    @Slot(int)
    def _on_tabs_current_changed(self, index: int) -> None:
        self.compare_panel.set_active(self.tabs.widget(index) is self.compare_panel)
        self.stats_panel.set_active(self.tabs.widget(index) is self.stats_panel)

    # -- drag and drop ---------------------------------------------------------------------------

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        """Accept a dropped file or folder (QWidget.dragEnterEvent)."""
        if dropped_path(event) is not None and self.build_job is None:
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        """Open the New-index dialog for a dropped file or folder (QWidget.dropEvent)."""
        path = dropped_path(event)
        if path is not None:
            event.acceptProposedAction()
            self.new_index(path)

    # -- settings --------------------------------------------------------------------------------

    def _splitters(self) -> dict[str, object]:
        return {
            "search": self.search_panel.splitter,
            "detail": self.search_panel.detail.splitter,
            "detail_right": self.search_panel.detail.right,
            "compare": self.compare_panel.splitter,
            "stats": self.stats_panel.splitter,
        }

    def _restore(self) -> None:
        s = self.settings
        geometry = s.layout("geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        state = s.layout("state")
        if state is not None:
            self.restoreState(state)
        for key, splitter in self._splitters().items():
            data = s.layout(f"splitter/{key}")
            if data is not None:
                splitter.restoreState(data)  # type: ignore[attr-defined]
        header = s.layout("results_header")
        if header is not None:
            self.search_panel.view.horizontalHeader().restoreState(header)
        picker = self.search_panel.picker
        for cls_key in [picker.combo.itemData(i) for i in range(picker.combo.count())]:
            params = s.params(str(cls_key))
            if params:
                picker._params[str(cls_key)] = params
        picker.set_key(s.variant, s.params(s.variant))
        self.variant_label.setText(variant_summary(picker.variant()))
        for which, pick in (("a", self.compare_panel.picker_a), ("b", self.compare_panel.picker_b)):
            saved = s.value(f"compare/{which}")
            if isinstance(saved, str) and saved:
                try:
                    data = json.loads(saved)
                    pick.set_variant(get_variant(data["key"], **data.get("params", {})))
                except (ValueError, KeyError, TypeError, VariantError):
                    pass
        names = self.store.names()
        last = s.last_index
        target = last if last in names else (names[0] if names else "")
        if target:
            try:
                self._pending_tab = int(s.value("session/tab", 0))
            except (TypeError, ValueError):
                self._pending_tab = None
            self.open_index(target, query=s.last_query)
        else:
            # Nothing to open: import the stemmers now, while the user reads the start page.
            self.runner.run(_warm_up, name="warm-up")
            self.stack.setCurrentWidget(self.welcome)
            if not s.sample_offered:
                self.welcome.sample_button.setFocus()
                s.sample_offered = True

    def save_settings(self) -> None:
        """Remember the index, variant, parameters, query and layout."""
        s = self.settings
        s.set_layout("geometry", self.saveGeometry())
        s.set_layout("state", self.saveState())
        for key, splitter in self._splitters().items():
            s.set_layout(f"splitter/{key}", splitter.saveState())  # type: ignore[attr-defined]
        s.set_layout("results_header", self.search_panel.view.horizontalHeader().saveState())
        picker = self.search_panel.picker
        s.variant = picker.variant().key
        for key, values in picker.remembered().items():
            s.set_params(key, values)
        for which, pick in (("a", self.compare_panel.picker_a), ("b", self.compare_panel.picker_b)):
            v = pick.variant()
            s.set_value(f"compare/{which}", json.dumps({"key": v.key, "params": v.values()}))
        if self.searcher is not None:
            s.last_index = self.searcher.index.name
        s.last_query = self.search_panel.query()
        s.set_value("session/tab", self.tabs.currentIndex())
        s.sync()

    # -- closing ---------------------------------------------------------------------------------

    def closeEvent(self, event: QCloseEvent) -> None:
        """Save settings, cancel running work and wait for it (QWidget.closeEvent)."""
        self.save_settings()
        self._watch_folder(None)
        if self.runner.jobs:
            self.build_progress.cancelling()
            self.statusBar().showMessage("Stopping background work…")
        self.runner.cancel_all()
        self.search_panel.debounce.stop()
        self.runner.wait()
        event.accept()

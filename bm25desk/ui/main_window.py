"""The main window: index list, Search / Compare / Statistics / Evaluation / Terms tabs, menus.

It assembles the feature panels and the parts in :mod:`bm25desk.ui.window` (menus, opening
indexes, builds, the folder notice, the session) and passes the open index between them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent, QShowEvent
from PySide6.QtWidgets import (
    QApplication,
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
    IndexStore,
    Searcher,
    StoreError,
)
from bm25desk.engine.progress import CancelToken, ProgressFn
from bm25desk.ui.common.elided_label import StatusBarLabel
from bm25desk.ui.common.icons import app_icon
from bm25desk.ui.common.jobs import Job, JobRunner
from bm25desk.ui.common.messages import MessageBar, readable
from bm25desk.ui.common.settings import Settings
from bm25desk.ui.common.variant_picker import variant_summary
from bm25desk.ui.compare.panel import ComparePanel
from bm25desk.ui.evaluation.panel import EvalPanel
from bm25desk.ui.indexes.build_progress import BuildProgress
from bm25desk.ui.indexes.build_request import BuildRequest
from bm25desk.ui.indexes.index_picker import IndexPicker
from bm25desk.ui.indexes.manager_dialog import IndexManagerDialog
from bm25desk.ui.indexes.new_index_dialog import dropped_path
from bm25desk.ui.indexes.panel import IndexPanel
from bm25desk.ui.indexes.skip_report_dialog import SkipReportDialog
from bm25desk.ui.indexes.welcome_page import WelcomePage
from bm25desk.ui.search.panel import SearchPanel
from bm25desk.ui.statistics.panel import StatsPanel
from bm25desk.ui.terms.panel import TermsPanel
from bm25desk.ui.window import about, session
from bm25desk.ui.window.builds import Builds
from bm25desk.ui.window.facets import FacetWiring
from bm25desk.ui.window.folder_notice import FolderNotice
from bm25desk.ui.window.index_actions import IndexActions
from bm25desk.ui.window.index_switching import IndexSwitcher
from bm25desk.ui.window.look_inside import LookInside
from bm25desk.ui.window.menus import make_menus
from bm25desk.ui.window.panel_wiring import PanelWiring
from bm25desk.ui.window.screen_fit import ScreenFit

log = logging.getLogger(__name__)


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
        self.confirm = self._confirm  # replaced in tests: no modal dialogs there
        self.message_bar = MessageBar()
        self.message_bar.action_requested.connect(self._on_message_bar_action_requested)
        self.build_progress = BuildProgress()
        self._make_parts()
        self._make_panels()
        self._make_central()
        self._make_index_manager()
        self._make_status_bar()
        self.wiring = PanelWiring(self)
        self.facets = FacetWiring(self)
        self.look_inside = LookInside(self)
        self.menu_actions = make_menus(self)
        self.new_action = self.menu_actions.new
        self.menu_actions.auto_update.setChecked(self.settings.auto_update_folders)
        self.folder_notice.set_auto_update(self.settings.auto_update_folders)
        self.screen_fit = ScreenFit(self)
        self.screen_fit.fit(1360, 900)
        self.refresh_indexes()
        self._restore()

    # -- construction ----------------------------------------------------------------------------

    def _make_parts(self) -> None:
        self.switcher = IndexSwitcher(self)
        self.switcher.opened.connect(self.index_opened)
        self.builds = Builds(self.runner, self.store, self.build_progress, self)
        self.builds.busy_changed.connect(self._on_builds_busy_changed)
        self.index_actions = IndexActions(self, self.builds)
        self.index_actions.build_finished.connect(self.build_finished)
        self.changes_label = QLabel()
        self.folder_notice = FolderNotice(self.runner, self.store, self.changes_label, self)
        self.folder_notice.can_update = lambda: not self.builds.jobs.busy()
        self.folder_notice.update_requested.connect(self.update_index)

    def _make_panels(self) -> None:
        self.welcome = WelcomePage()
        self.welcome.sample_requested.connect(self.build_sample)
        self.welcome.new_requested.connect(self.new_index)
        self.search_panel = SearchPanel(self.runner)
        self.search_panel.failed.connect(self.show_error)
        self.compare_panel = ComparePanel(self.runner)
        self.compare_panel.jobs.failed.connect(self.show_error)
        self.compare_panel.delta_jobs.failed.connect(self.show_error)
        self.stats_panel = StatsPanel(self.runner)
        self.stats_panel.stats_jobs.failed.connect(self.show_error)
        self.stats_panel.lookup_jobs.failed.connect(self.show_error)
        self.eval_panel = EvalPanel(self.runner)
        self.terms_panel = TermsPanel(self.runner)

    def _make_central(self) -> None:
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.search_panel, "Search")
        self.tabs.addTab(self.compare_panel, "Compare")
        self.tabs.addTab(self.stats_panel, "Statistics")
        self.tabs.addTab(self.eval_panel, "Evaluation")
        self.tabs.addTab(self.terms_panel, "Terms")
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

    def _make_index_manager(self) -> None:
        self.index_panel = IndexPanel(self.store)
        self.index_panel.open_requested.connect(self.open_index)
        self.index_panel.new_requested.connect(self.new_index)
        self.index_panel.update_requested.connect(self.update_index)
        self.index_panel.rebuild_requested.connect(self.rebuild_index)
        self.index_panel.delete_requested.connect(self.delete_index)
        self.index_manager = IndexManagerDialog(self.index_panel, self)
        self.index_picker = IndexPicker()
        self.index_picker.open_requested.connect(self.open_index)
        self.index_picker.manage_requested.connect(self.show_index_manager)
        self.index_picker.list_requested.connect(self.refresh_indexes)
        self.tabs.setCornerWidget(self.index_picker, Qt.Corner.TopRightCorner)

    def refresh_indexes(self) -> None:
        """Re-read the list of indexes (the manager's table and the picker)."""
        self.index_panel.refresh()
        self.index_picker.set_indexes(self.index_panel.infos(), self.switcher.current)

    @Slot()
    def show_index_manager(self) -> None:
        """Show the index manager (every index, with Update, Rebuild, Delete)."""
        self.refresh_indexes()
        self.index_manager.show()
        self.index_manager.raise_()
        self.index_manager.activateWindow()
        self.index_panel.view.setFocus()  # arrows, Enter and Delete act on the list at once

    def _make_status_bar(self) -> None:
        self.index_label = self.switcher.label
        self.variant_label = StatusBarLabel(share=0.35)
        status = self.statusBar()
        status.addPermanentWidget(self.changes_label)
        status.addPermanentWidget(self.variant_label)
        status.addPermanentWidget(self.index_label)

    def showEvent(self, event: QShowEvent) -> None:
        """Make the first-shown window fit the screen, frame included (QWidget.showEvent)."""
        super().showEvent(event)
        self.screen_fit.shown()

    # -- state -----------------------------------------------------------------------------------

    @property
    def searcher(self) -> Searcher | None:
        """Return the searcher of the open index (None: no index is open)."""
        return self.switcher.searcher

    @property
    def build_job(self) -> Job | None:
        """Return the running build (None when idle)."""
        return self.builds.job

    @property
    def folder_watcher(self) -> object:
        """Return the watcher of the open folder index (None when none is watched)."""
        return self.folder_notice.watcher

    def add_tab(self, widget: QWidget, title: str) -> int:
        """Add a work tab after the built-in ones; return its index."""
        return self.tabs.addTab(widget, title)

    def show_tab(self, i: int) -> None:
        """Show tab ``i`` (when an index is open)."""
        if self.stack.currentWidget() is self.tabs and 0 <= i < self.tabs.count():
            self.tabs.setCurrentIndex(i)

    def for_selected(self, fn: Callable[[str], object]) -> None:
        """Call ``fn`` with the selected index's name (else the open index's)."""
        selected = self.index_panel.current_name() if self.index_manager.isVisible() else ""
        name = selected or self.switcher.current
        if name:
            fn(name)

    # -- opening and closing indexes (see IndexSwitcher) ------------------------------------------

    @Slot(str)
    def open_index(self, name: str, *, query: str | None = None, force: bool = False) -> None:
        """Open index ``name`` in the background, then search it (for ``query``, if given)."""
        self.switcher.open(name, query=query, force=force)

    def close_index(self) -> None:
        """Stop searching the open index."""
        self.switcher.close()

    # -- building, updating, deleting (see IndexActions) -----------------------------------------

    @Slot()
    def new_index(self, source: Path | None = None) -> None:
        """Ask for a source and options, then build."""
        self.index_actions.new(source)

    @Slot()
    def build_sample(self) -> None:
        """Build (or open) the bundled sample collection."""
        self.index_actions.sample()

    @Slot(str)
    def update_index(self, name: str) -> None:
        """Bring ``name`` up to date with its source (incremental for folders)."""
        self.index_actions.start(BuildRequest(Path(), name, kind="update"))

    @Slot(str)
    def rebuild_index(self, name: str) -> None:
        """Build ``name`` again from its source with the same options."""
        self.index_actions.rebuild(name)

    @Slot(str)
    def delete_index(self, name: str) -> None:
        """Delete ``name`` after confirmation."""
        self.index_actions.delete(name)

    def start_build(self, request: BuildRequest) -> Job | None:
        """Build, rebuild or update in the background, with progress and Cancel."""
        return self.index_actions.start(request)

    @Slot()
    def cancel_build(self) -> None:
        """Ask the running build to stop (the previous index stays as it was)."""
        self.builds.cancel()

    @property
    def last_report(self) -> BuildReport | None:
        """Return the report of the last build that succeeded."""
        return self.index_actions.last_report

    @Slot(bool)
    def _on_builds_busy_changed(self, building: bool) -> None:
        had = QApplication.focusWidget()
        self.index_panel.set_busy(building)
        self.welcome.set_busy(building)
        self.menu_actions.set_building(building)
        cancel = self.build_progress.cancel_button
        if building and had is not cancel and QApplication.focusWidget() is cancel:
            self._refocus_off_cancel()

    def _refocus_off_cancel(self) -> None:
        """Take the focus from Cancel where disabling the clicked button moved it.

        Qt hands the focus of a button disabled for the build to the next one, the build's
        Cancel: a space typed next (a query begun while the sample builds) cancelled the build.
        """
        page = self.stack.currentWidget()
        if page is self.tabs and self.tabs.currentWidget() is self.search_panel:
            self.search_panel.focus_query()
        elif page is not None:
            page.setFocus(Qt.FocusReason.OtherFocusReason)

    def show_start_page(self) -> None:
        """Show the start page (no index left to open)."""
        self.stack.setCurrentWidget(self.welcome)
        self.setWindowTitle("bm25desk")

    @Slot(bool)
    def set_auto_update(self, checked: bool) -> None:
        """Update folder indexes as soon as their folder changes (remembered)."""
        self.settings.auto_update_folders = checked
        self.folder_notice.set_auto_update(checked)

    # -- messages --------------------------------------------------------------------------------

    @Slot(object)
    def show_error(self, exc: BaseException) -> None:
        """Show an error as a readable message (never a traceback)."""
        self.message_bar.show_message(readable(exc), "error", owner=self.switcher.current)

    @Slot(str)
    def _on_message_bar_action_requested(self, action: str) -> None:
        kind, _, arg = action.partition(":")
        if kind == "skipped" and self.last_report is not None:
            SkipReportDialog(self.last_report, self).exec()
        elif kind == "cancel-export":
            self.look_inside.exporter.cancel()
        elif kind == "build-empty":
            self.message_bar.hide()
            self.index_actions.build_empty()
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
        about.show_shortcuts(self)

    @Slot()
    def show_about(self) -> None:
        """Say what this is."""
        about.show_about(self, self.settings.file_name)

    # -- drag and drop ---------------------------------------------------------------------------

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        """Accept a dropped file or folder (QWidget.dragEnterEvent)."""
        if dropped_path(event) is not None and not self.builds.jobs.busy():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        """Open the New-index dialog for a dropped file or folder (QWidget.dropEvent)."""
        path = dropped_path(event)
        if path is not None:
            event.acceptProposedAction()
            self.new_index(path)

    # -- settings and closing --------------------------------------------------------------------

    def _restore(self) -> None:
        s = self.settings
        session.restore_layout(self, s)
        session.restore_variants(self, s)
        self.variant_label.set_full_text(variant_summary(self.search_panel.picker.variant()))
        names = self.store.names()
        target = s.last_index if s.last_index in names else (names[0] if names else "")
        if target:
            self.switcher.pending_tab = session.saved_tab(s)
            self.open_index(target, query=s.last_query)
            return
        # Nothing to open: import the stemmers now, while the user reads the start page.
        self.runner.run(_warm_up, name="warm-up")
        self.stack.setCurrentWidget(self.welcome)
        if not s.sample_offered:
            self.welcome.sample_button.setFocus()
            s.sample_offered = True

    def save_settings(self) -> None:
        """Remember the index, variant, parameters, query and layout."""
        session.save(self, self.settings)

    def closeEvent(self, event: QCloseEvent) -> None:
        """Save settings, cancel running work and wait for it (QWidget.closeEvent)."""
        self.save_settings()
        self.folder_notice.watch(None)
        if self.runner.jobs:
            self.build_progress.cancelling()
            self.statusBar().showMessage("Stopping background work…")
        self.runner.cancel_all()
        self.search_panel.debounce.stop()
        self.runner.wait()
        event.accept()

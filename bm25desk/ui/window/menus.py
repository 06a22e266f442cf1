"""The main window's menus and keyboard shortcuts (and the list of them shown by F1)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu

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
    ("Ctrl+1 … Ctrl+5", "Search / Compare / Statistics / Evaluation / Terms tab"),
    ("Ctrl+E", "Export the results (or, on the Terms tab, the term list)"),
    ("Ctrl+N", "New index"),
    ("F5", "Update the selected index from its source"),
    ("Ctrl+R", "Rebuild the selected index"),
    ("Ctrl+I", "Indexes: open, update, rebuild or delete one"),
    ("Enter / Delete (in Indexes)", "Open / delete the selected index"),
    ("F1", "This list"),
    ("Ctrl+Q", "Quit"),
)
"""(keys, what they do), as listed by Help → Keyboard shortcuts."""


@dataclass(frozen=True, slots=True)
class Actions:
    """The actions the window enables and disables, or checks."""

    new: QAction
    sample: QAction
    update: QAction
    rebuild: QAction
    cancel: QAction
    auto_update: QAction
    add_docs: QAction
    remove_docs: QAction

    def set_building(self, building: bool) -> None:
        """Disable what would start another build while one runs; enable its Cancel."""
        self.cancel.setEnabled(building)
        starts = (self.new, self.sample, self.update, self.rebuild, self.add_docs, self.remove_docs)
        for action in starts:
            action.setEnabled(not building)


def add_action(
    menu: QMenu,
    text: str,
    slot: Callable[..., Any],
    shortcut: str | tuple[str, ...] = "",
) -> QAction:
    """Add an action calling ``slot`` to ``menu``, with one or more shortcuts."""
    action = QAction(text, menu.parent())
    if shortcut:
        keys = (shortcut,) if isinstance(shortcut, str) else shortcut
        action.setShortcuts([QKeySequence(k) for k in keys])
    action.triggered.connect(slot)
    menu.addAction(action)
    return action


def make_menus(w: Any) -> Actions:
    """Build the menu bar of the main window ``w``; return the actions it toggles."""
    bar = w.menuBar()
    file_menu = bar.addMenu("&File")
    new = add_action(file_menu, "&New index…", w.new_index, "Ctrl+N")
    sample = add_action(file_menu, "Build the &sample collection", w.build_sample)
    file_menu.addSeparator()
    look = w.look_inside
    add_action(file_menu, "&Export…", look.export_current, "Ctrl+E")
    add_action(file_menu, "Export the &results…", look.export_results)
    add_action(file_menu, "Export the &ledger…", look.export_ledger)
    add_action(file_menu, "Export the &term list…", w.terms_panel.export_terms)
    file_menu.addSeparator()
    add_action(file_menu, "&Quit", w.close, "Ctrl+Q")
    index_menu = bar.addMenu("&Index")
    update = add_action(
        index_menu, "&Update from source", lambda: w.for_selected(w.update_index), "F5"
    )
    rebuild = add_action(index_menu, "&Rebuild", lambda: w.for_selected(w.rebuild_index), "Ctrl+R")
    add_action(index_menu, "&Delete…", lambda: w.for_selected(w.delete_index))
    index_menu.addSeparator()
    actions = w.index_actions
    add_docs = add_action(
        index_menu, "Add &documents from a file…", lambda: w.for_selected(actions.add_documents)
    )
    remove_docs = add_action(
        index_menu, "Re&move documents…", lambda: w.for_selected(actions.remove_documents)
    )
    index_menu.addSeparator()
    add_action(index_menu, "Show in &folder", w.index_panel.show_in_folder)
    index_menu.addSeparator()
    auto_update = add_action(index_menu, "Update folder indexes &automatically", w.set_auto_update)
    auto_update.setCheckable(True)
    index_menu.addSeparator()
    cancel = add_action(index_menu, "&Cancel the build", w.cancel_build)
    cancel.setEnabled(False)
    _make_search_menu(w, bar.addMenu("&Search"))
    _make_view_menu(w, bar.addMenu("&View"))
    help_menu = bar.addMenu("&Help")
    add_action(help_menu, "&Keyboard shortcuts", w.show_shortcuts, "F1")
    add_action(help_menu, "&About bm25desk", w.show_about)
    return Actions(new, sample, update, rebuild, cancel, auto_update, add_docs, remove_docs)


def _make_search_menu(w: Any, menu: QMenu) -> None:
    panel = w.search_panel
    add_action(menu, "&Focus the query", panel.focus_query, ("Ctrl+L", "Ctrl+F"))
    add_action(menu, "&Next ranking function", lambda: panel.picker.step(1), "Ctrl+]")
    add_action(menu, "&Previous ranking function", lambda: panel.picker.step(-1), "Ctrl+[")
    add_action(menu, "&Reset parameters", panel.picker.params.reset, "Ctrl+0")
    menu.addSeparator()
    ledger = panel.detail.ledger
    for action in (ledger.copy_text_action, ledger.copy_markdown_action, ledger.copy_json_action):
        menu.addAction(action)


def _make_view_menu(w: Any, menu: QMenu) -> None:
    for i, name in enumerate(("&Search", "&Compare", "S&tatistics", "&Evaluation", "Te&rms")):
        add_action(menu, name, lambda _=False, i=i: w.show_tab(i), f"Ctrl+{i + 1}")
    menu.addSeparator()
    menu.addAction(w.facets.toggle_action)
    add_action(menu, "&Indexes…", w.show_index_manager, "Ctrl+I")

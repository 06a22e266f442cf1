"""A tab that computes nothing while hidden and catches up when it is shown."""

from __future__ import annotations


class LoadsWhenShown:
    """Mixin for a tab panel: :meth:`refresh` calls made while hidden wait until it is shown.

    The panel's ``refresh`` starts with ``if self.deferred(): return``; the window calls
    :meth:`set_active` when the current tab changes.
    """

    _active = False
    _dirty = False

    def set_active(self, active: bool) -> None:
        """Load only while the tab is visible (catch up when it is shown)."""
        self._active = active
        if active and self._dirty:
            self.refresh()

    def refresh(self) -> None:
        """Recompute what the tab shows (see :meth:`deferred`)."""
        raise NotImplementedError

    def deferred(self) -> bool:
        """Return True, remembering to refresh when shown, if the tab is hidden now."""
        if not self._active:
            self._dirty = True
            return True
        self._dirty = False
        return False

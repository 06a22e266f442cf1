"""The PySide6 front end of bm25desk. Imports the engine; the engine never imports it."""

from bm25desk.ui.common import qt_fixes

qt_fixes.apply()

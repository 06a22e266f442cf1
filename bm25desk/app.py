"""QApplication bootstrap: organisation and application names, data dir, MainWindow, exec()."""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
import traceback
from types import TracebackType

import bm25desk
from bm25desk import logfile, paths

log = logging.getLogger("bm25desk")


def _parse(args: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bm25desk", description="The bm25desk desktop app.")
    parser.add_argument("--data-dir", help="keep indexes and settings in this folder")
    parser.add_argument("--self-test", action="store_true", help="check the installation and exit")
    return parser.parse_args(args)


def _setup_logging() -> list[logging.Handler]:
    """Log bm25desk's messages to stderr and the log file (:mod:`bm25desk.logfile`)."""
    return logfile.setup()


def main(args: list[str] | None = None) -> int:
    """Run the desktop app; return its exit status."""
    opts = _parse(sys.argv[1:] if args is None else args)
    if opts.data_dir:
        paths.set_data_dir(opts.data_dir)
    if opts.self_test:
        try:
            from bm25desk.selftest import run_self_test
        except ImportError:
            print("bm25desk --self-test is not available in this build.")  # noqa: T201
            return 1
        return run_self_test()
    handlers = _setup_logging()

    from PySide6.QtCore import QCoreApplication
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtWidgets import QApplication

    from bm25desk.ui.main_window import MainWindow

    QCoreApplication.setOrganizationName("bm25desk")
    QCoreApplication.setApplicationName("bm25desk")
    QCoreApplication.setApplicationVersion(bm25desk.__version__)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    QGuiApplication.setDesktopFileName("bm25desk")
    # Collect reference cycles only on the GUI thread (on a timer): a collection triggered on a
    # worker thread could destroy Qt objects (plot items) there and crash the process.
    from pyqtgraph.util.garbage_collector import GarbageCollector

    gc_on_gui_thread = GarbageCollector(interval=1.0)
    window = MainWindow()

    def excepthook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        """Log unexpected errors and show them as a message, not a traceback."""
        log.error("unexpected error:\n%s", "".join(traceback.format_exception(kind, exc, tb)))
        with contextlib.suppress(RuntimeError):  # the window may be gone
            window.show_error(exc)

    sys.excepthook = excepthook
    window.show()
    try:
        return int(app.exec())
    finally:
        gc_on_gui_thread.timer.stop()
        sys.excepthook = sys.__excepthook__
        for handler in handlers:
            log.removeHandler(handler)
            handler.close()

"""The log file: where tracebacks go when a message says the details are in the log.

The log lives in the data directory (``<data dir>/bm25desk.log``). When that cannot be written (the
data directory is a file, a read-only place, a full disk), it goes to the platform's user log
directory, and failing that to the temporary directory, so a message that points to the log always
points to a file that holds the details. The file is rotated at 1 MB (two old files are kept).
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import tempfile
import time
from pathlib import Path

import platformdirs

from bm25desk import paths

LOG_NAME = "bm25desk.log"
MAX_BYTES = 1_000_000
BACKUPS = 2

_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
log = logging.getLogger("bm25desk")


def _candidates() -> list[Path]:
    places = [paths.data_dir(), Path(platformdirs.user_log_dir(paths.APP_NAME, appauthor=False))]
    user = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    places.append(Path(tempfile.gettempdir()) / f"{paths.APP_NAME}-{user}")
    return [p / LOG_NAME for p in places]


def _writable(path: Path) -> bool:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8"):
            pass
    except OSError:
        return False
    return True


def log_path() -> Path:
    """Return the log file to use now: the first place of the three that can be written.

    Returns
    -------
    Path
        ``<data dir>/bm25desk.log``, else the user log directory's, else the temporary
        directory's (which is writable on any working system).
    """
    places = _candidates()
    for path in places:
        if _writable(path):
            return path
    return places[-1]


def setup(*, stderr: bool = True) -> list[logging.Handler]:
    """Send bm25desk's log records (INFO and above) to the log file, and to stderr if asked.

    Returns
    -------
    list of logging.Handler
        The handlers added, for the caller to remove and close when it finishes.
    """
    handlers: list[logging.Handler] = [
        logging.handlers.RotatingFileHandler(
            log_path(), maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8", delay=True
        )
    ]
    if stderr:
        handlers.append(logging.StreamHandler())
    formatter = logging.Formatter(_FORMAT)
    for handler in handlers:
        handler.setFormatter(formatter)
        log.addHandler(handler)
    log.setLevel(logging.INFO)
    return handlers


def record(text: str, *, source: str = "bm25desk") -> Path:
    """Append an error report (a traceback, say) to the log file; return the file's path.

    Written straight to the file, whether or not :func:`setup` ran, so that the message naming
    the path is true in the app, the command line and the tests alike.
    """
    path = log_path()
    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
    try:
        with path.open("a", encoding="utf-8") as fh:
            fh.write(f"{stamp} ERROR {source}: {text.rstrip()}\n")
    except OSError:
        pass  # the last fallback could not be written either: nothing better is possible
    return path

"""Advisory file locks: the per-index writer lock and the lock files of live readers.

Locks are ``flock`` locks on small files, so the operating system releases them when the holder
dies (even by SIGKILL): a lock file whose lock can be taken belongs to nobody. A writer lock file
holds its owner's process id, for the "being updated by process N" message; it is removed by its
owner on release (while still locked, and a waiter checks that the file it locked is still the
one at that path, so removal never lets two writers in).
"""

from __future__ import annotations

import os
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: msvcrt byte-range locks instead
    fcntl = None  # type: ignore[assignment]
    import msvcrt


class IndexBusyError(RuntimeError):
    """Another process holds the writer lock of an index."""


def try_lock(fd: int) -> bool:
    """Take an exclusive lock on open file ``fd`` without waiting; return whether it was taken."""
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        else:  # pragma: no cover
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
    except OSError:
        return False
    return True


def is_locked(path: Path) -> bool:
    """Return whether a live process holds the lock of the file at ``path`` (False if gone)."""
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return False
    try:
        return not try_lock(fd)
    finally:
        os.close(fd)  # closing drops a lock taken just now


class WriterLock:
    """The exclusive writer lock of one index name: ``<root>/.lock-<name>``.

    Use as a context manager; raises :class:`IndexBusyError` at once when another live process
    holds it.
    """

    def __init__(self, root: Path, name: str) -> None:
        self.root = root
        self.name = name
        self.path = root / f".lock-{name}"
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock or raise :class:`IndexBusyError` naming the holder's process id."""
        self.root.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            if not try_lock(fd):
                holder = _read_pid(fd)
                os.close(fd)
                who = f"process {holder}" if holder else "another process"
                raise IndexBusyError(
                    f"index {self.name!r} is being updated by {who}; try again when it has finished"
                )
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(self.path))
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)  # the previous holder removed this file after we opened it: retry
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd

    def release(self) -> None:
        """Remove the lock file and drop the lock."""
        if self._fd is None:
            return
        try:
            self.path.unlink(missing_ok=True)
        finally:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> WriterLock:
        """Acquire the lock."""
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        """Release the lock."""
        self.release()


def _read_pid(fd: int) -> int:
    try:
        return int(os.pread(fd, 32, 0).decode().strip() or 0)
    except (OSError, ValueError):
        return 0

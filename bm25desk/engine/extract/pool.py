"""Rich-format extraction in worker processes: a memory limit, a hard timeout, and reuse.

PDF, Word, OpenDocument, EPUB and mail parsers are large libraries fed untrusted files. Each
extraction runs in a worker process of a :class:`WorkerPool`, which

- limits the worker's address space to what it holds when idle plus
  :data:`~bm25desk.engine.extract.limits.MEMORY_LIMIT` while it extracts (:mod:`.worker`), so a
  file that needs more is skipped ("needs more than 512 MB to extract") instead of exhausting the
  machine;
- kills the worker when an extraction runs past
  :data:`~bm25desk.engine.extract.limits.TIME_LIMIT` (the extractors check the same deadline
  cooperatively, so usually they stop on their own first): nothing outlives its time limit;
- replaces a worker that died or was killed, and keeps the others: starting a Python process
  costs a large part of a second, which a folder of thousands of PDFs must not pay per file.

Each worker is handed the next file before it has finished the current one, so it never waits for
this process to be scheduled between two files (on a busy machine that wait was half the time).

Workers are fresh interpreters (``python -c`` with a socket; multiprocessing's "spawn" in a frozen
app or on Windows): safe beside GUI threads, and they do not import the caller's main module. The
memory limit needs ``resource.setrlimit`` and ``/proc`` (Linux; elsewhere only the time limit).
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing
import multiprocessing.connection
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Protocol

from bm25desk.engine.extract import limits as _limits
from bm25desk.engine.extract.common import ExtractError
from bm25desk.engine.extract.limits import Body, Limits
from bm25desk.engine.extract.worker import serve

__all__ = ["IDLE_EXIT", "WORKERS", "Ticket", "WorkerPool", "run_limited"]

WORKERS = max(1, min(4, os.cpu_count() or 1))
"""Worker processes a folder read extracts with at most (each within the memory limit)."""

IDLE_EXIT = 60.0
"""Seconds an idle worker of the shared pool (:func:`run_limited`) waits for work, then exits."""

_DEPTH = 2  # extractions handed to one worker at a time: the one it runs and the next
_KILL_GRACE = 1.0  # seconds past the time limit before a kill: the worker's own check comes first
_START_TIMEOUT = 120.0  # seconds a new worker may take to start (imports on a slow, busy machine)
_POLL = 0.1  # seconds between cancel checks while waiting for a result
_REQUEUES = 3  # times an extraction is handed to a new worker when its worker retired before it


class _Process(Protocol):
    """What the pool needs of a worker process (``multiprocessing.Process`` or :class:`_Popen`)."""

    @property
    def pid(self) -> int | None: ...

    @property
    def exitcode(self) -> int | None: ...

    def is_alive(self) -> bool: ...

    def kill(self) -> None: ...

    def join(self, timeout: float | None = None) -> None: ...


class _Popen:
    """A worker started as ``python -c``, seen through the ``multiprocessing.Process`` interface."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self._popen = popen

    @property
    def pid(self) -> int | None:
        return self._popen.pid

    @property
    def exitcode(self) -> int | None:
        return self._popen.poll()

    def is_alive(self) -> bool:
        return self._popen.poll() is None

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self._popen.kill()

    def join(self, timeout: float | None = None) -> None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._popen.wait(timeout)


def _start(idle_exit: float | None) -> tuple[_Process, Connection]:
    """Start a worker process; return it and the pool's end of its connection.

    On POSIX it is a plain ``python -c`` with a socket: it imports only what extraction needs, not
    the caller's main module (so a script without an ``if __name__ == "__main__":`` guard still
    works). A frozen app, or Windows, starts it with multiprocessing's "spawn".
    """
    if os.name == "posix" and not getattr(sys, "frozen", False):
        mine, theirs = socket.socketpair()
        paths = [p or os.getcwd() for p in sys.path]  # bodies of tests and plug-ins travel by name
        # The worker needs bm25desk.engine.extract only: the engine package is registered without
        # running its __init__ (numpy, indexes, scoring), which saves ~0.6 s and 15 MB a worker.
        code = (
            f"import importlib.util, sys; sys.path[:0] = {paths!r}; "
            "spec = importlib.util.find_spec('bm25desk.engine'); "
            "sys.modules['bm25desk.engine'] = importlib.util.module_from_spec(spec); "
            "from bm25desk.engine.extract.worker import serve_socket; "
            f"serve_socket({theirs.fileno()}, {idle_exit!r})"
        )
        try:
            popen = subprocess.Popen(
                [sys.executable, "-c", code],
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
            )
        except BaseException:
            mine.close()
            raise
        finally:
            theirs.close()
        return _Popen(popen), Connection(mine.detach())
    ctx = multiprocessing.get_context("spawn")
    conn, child = ctx.Pipe()
    proc = ctx.Process(target=serve, args=(child, idle_exit), daemon=True, name="bm25desk-extract")
    proc.start()
    child.close()
    return proc, conn


class Ticket:
    """One extraction submitted to a :class:`WorkerPool`; :meth:`WorkerPool.result` redeems it."""

    __slots__ = ("body", "limits", "outcome", "path", "requeues")

    def __init__(self, body: Body, path: Path, limits: Limits) -> None:
        self.body = body
        self.path = path
        self.limits = limits
        self.outcome: tuple[str, Any] | None = None
        self.requeues = 0


class _Worker:
    """The pool's side of one worker process: its connection and the extractions handed to it."""

    def __init__(self, idle_exit: float | None) -> None:
        self.proc, self.conn = _start(idle_exit)
        self.ready = False
        self.started = time.monotonic()
        self.in_flight: deque[Ticket] = deque()
        self.head_since = math.inf  # when the first extraction in flight started (about)

    @property
    def kill_at(self) -> float:
        """When the extraction it runs is out of time (or, while it starts, when that is)."""
        if not self.ready:
            return self.started + _START_TIMEOUT
        if not self.in_flight:
            return math.inf
        return self.head_since + self.in_flight[0].limits.seconds + _KILL_GRACE

    def send(self, ticket: Ticket) -> bool:
        """Hand ``ticket`` to this worker; False when the worker is gone."""
        try:
            self.conn.send((ticket.body, str(ticket.path), ticket.limits))
        except (OSError, ValueError):
            return False
        if not self.in_flight:
            self.head_since = time.monotonic()
        self.in_flight.append(ticket)
        return True

    def answered(self, outcome: tuple[str, Any]) -> None:
        """Record the answer for the first extraction in flight; the next one starts now."""
        self.in_flight.popleft().outcome = outcome
        self.head_since = time.monotonic()

    def stop(self, *, kill: bool) -> None:
        """End the process (politely when idle) and reap it."""
        if not kill and self.proc.is_alive():
            with contextlib.suppress(OSError, ValueError):
                self.conn.send(None)
            self.proc.join(1.0)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(5.0)
        self.conn.close()


class WorkerPool:
    """Worker processes that run :data:`~.limits.Body` extractions within limits, file after file.

    Not thread-safe: one thread submits and redeems (:func:`run_limited` serialises its callers).

    Parameters
    ----------
    size
        Worker processes at most; they are started when work arrives.
    idle_exit
        Seconds an idle worker waits for work before it exits (None: until the pool is closed).
    """

    def __init__(self, size: int = 1, *, idle_exit: float | None = None) -> None:
        self.size = max(1, size)
        self._idle_exit = idle_exit
        self._workers: list[_Worker] = []
        self._queue: deque[Ticket] = deque()
        self._failed_starts = 0

    def __enter__(self) -> WorkerPool:
        """Return the pool (``with WorkerPool() as pool``)."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Stop the workers (:meth:`close`)."""
        self.close()

    def submit(self, body: Body, path: Path, limits: Limits | None = None) -> Ticket:
        """Queue an extraction of ``path`` (limits: those set now) and return its ticket."""
        ticket = Ticket(body, path, limits if limits is not None else _limits.current())
        self._queue.append(ticket)
        self._dispatch()
        return ticket

    def result(self, ticket: Ticket, cancel: Any = None) -> tuple[str, str]:
        """Wait for ``ticket``'s extraction and return ``(title, text)``.

        Parameters
        ----------
        ticket
            From :meth:`submit`.
        cancel
            A :class:`~bm25desk.engine.progress.CancelToken` checked while waiting, or None.

        Raises
        ------
        ExtractError
            When the extractor skipped the file, ran out of time or memory, or its worker died.
        Exception
            What the extractor raised otherwise (``OSError`` for an unreadable file ...).
        """
        while ticket.outcome is None:
            if cancel is not None:
                cancel.check()
            self._dispatch()
            self._wait(_POLL if cancel is not None else None)
        return _redeem(ticket)

    def run(self, body: Body, path: Path) -> tuple[str, str]:
        """Extract one file and wait for it (:meth:`submit` + :meth:`result`)."""
        return self.result(self.submit(body, path))

    def close(self) -> None:
        """Stop every worker (killing busy ones); queued extractions are dropped."""
        self._queue.clear()
        for worker in self._workers:
            worker.stop(kill=bool(worker.in_flight))
        self._workers.clear()

    @property
    def pids(self) -> list[int]:
        """Return the process ids of the live workers (for tests and diagnostics)."""
        return [w.proc.pid for w in self._workers if w.proc.pid is not None]

    def _dispatch(self) -> None:
        while self._queue:
            ready = [w for w in self._workers if w.ready and len(w.in_flight) < _DEPTH]
            if not ready:
                break
            worker = min(ready, key=lambda w: len(w.in_flight))
            ticket = self._queue.popleft()
            if not worker.send(ticket):
                self._queue.appendleft(ticket)
                self._died(worker)
        starting = sum(not w.ready for w in self._workers)
        while len(self._queue) > starting * _DEPTH and len(self._workers) < self.size:
            try:
                self._workers.append(_Worker(self._idle_exit))
            except OSError as exc:  # no interpreter to start (an embedded Python ...)
                self._fail_queue(f"could not start an extraction process ({exc.strerror or exc})")
                return
            starting += 1

    def _wait(self, longest: float | None) -> None:
        """Wait for an answer, a worker's death or a deadline, and handle what happened."""
        watched = [w for w in self._workers if w.in_flight or not w.ready]
        if not watched:
            return
        timeout = max(0.0, min(w.kill_at for w in watched) - time.monotonic())
        if longest is not None:
            timeout = min(timeout, longest)
        # A worker that dies closes its end of the connection, which wakes this wait (EOF).
        ready = multiprocessing.connection.wait([w.conn for w in watched], timeout)
        for worker in watched:
            if worker.conn in ready:
                self._receive(worker)
        now = time.monotonic()
        for worker in list(self._workers):
            if now < worker.kill_at:
                continue
            if worker.ready:
                late = worker.in_flight.popleft()
                late.outcome = ("skip", _limits.timed_out(late.limits.seconds))
            self._died(worker, killed=True)

    def _receive(self, worker: _Worker) -> None:
        try:
            message = worker.conn.recv()
        except (EOFError, OSError):
            self._died(worker)
            return
        if message == "ready":
            worker.ready = True
            self._failed_starts = 0
        elif worker.in_flight:
            worker.answered(message)

    def _fail_queue(self, reason: str) -> None:
        for waiting in self._queue:
            waiting.outcome = ("skip", reason)
        self._queue.clear()

    def _died(self, worker: _Worker, *, killed: bool = False) -> None:
        """Take a worker out (killing it if needed); hand on or fail what was in flight."""
        if worker in self._workers:
            self._workers.remove(worker)
        if not killed:
            worker.proc.join(1.0)  # its connection closed: let it finish exiting, for its code
        worker.stop(kill=True)
        code = worker.proc.exitcode
        if not worker.ready:
            self._failed_starts += 1
            if self._failed_starts >= 2:  # do not start workers forever: fail what waits instead
                self._fail_queue(f"could not start an extraction process ({_exit_reason(code)})")
            return
        if not killed and code != 0 and worker.in_flight:  # it crashed on the extraction it ran
            worker.in_flight.popleft().outcome = ("crash", code)
        # What it had not started (it retired, idled out, or was killed) goes to another worker.
        for ticket in reversed(worker.in_flight):
            ticket.requeues += 1
            if ticket.requeues > _REQUEUES:
                ticket.outcome = ("crash", code)
            else:
                self._queue.appendleft(ticket)
        worker.in_flight.clear()


def _redeem(ticket: Ticket) -> tuple[str, str]:
    assert ticket.outcome is not None
    kind, value = ticket.outcome
    if kind == "ok":
        title, text = value
        return str(title), str(text)
    if kind == "skip":
        raise ExtractError(value)
    if kind == "memory":
        raise ExtractError(_limits.needs_memory(ticket.limits.memory))
    if kind == "crash":
        raise ExtractError(f"the extractor crashed ({_exit_reason(value)})")
    assert isinstance(value, BaseException)
    raise value


def _exit_reason(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


# --------------------------------------------------------------------------------------------------
# One file at a time: the shared pool

_shared: WorkerPool | None = None
_shared_lock = threading.Lock()


def run_limited(body: Body, path: Path) -> tuple[str, str]:
    """Run ``body`` on the file in a worker process, within the limits set now.

    Callers are served one at a time by a shared one-worker pool whose worker exits after
    :data:`IDLE_EXIT` seconds without work; a folder read uses its own :class:`WorkerPool`.

    Parameters
    ----------
    body
        ``body(stream, deadline) -> (title, text)``, a module-level function.
    path
        The file.

    Returns
    -------
    tuple[str, str]
        What ``body`` returned.

    Raises
    ------
    ExtractError
        When the file is too large, extraction times out or runs out of memory, the worker dies,
        or ``body`` raises it.
    OSError
        When the file cannot be read.
    """
    global _shared
    size = path.stat().st_size
    if size > _limits.SIZE_LIMIT:
        raise ExtractError(_limits.too_large(size, _limits.SIZE_LIMIT))
    with _shared_lock:
        if _shared is None:
            _shared = WorkerPool(1, idle_exit=IDLE_EXIT)
        return _shared.run(body, path)

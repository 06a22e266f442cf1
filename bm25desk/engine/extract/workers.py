"""Rich-format extraction in worker processes: a memory limit, a hard timeout, and reuse.

PDF, Word, OpenDocument, EPUB and mail parsers are large libraries fed untrusted files. Each
extraction runs in a worker process of a :class:`WorkerPool`, which

- limits the worker's address space (``RLIMIT_AS``) to what it holds when idle plus
  :data:`~bm25desk.engine.extract.limits.MEMORY_LIMIT` while it extracts, so a file that needs more
  is skipped ("needs more than 512 MB to extract") instead of exhausting the machine;
- kills the worker when the extraction runs past
  :data:`~bm25desk.engine.extract.limits.TIME_LIMIT` (the extractors check the same deadline
  cooperatively, so usually they stop on their own first); nothing outlives its time limit;
- replaces a worker that died or was killed, and keeps the others: starting a Python process costs
  about a quarter of a second, which a folder of thousands of PDFs must not pay per file.

Workers are started with "spawn" (safe beside GUI threads, and the way a frozen app can start them;
the script that uses the engine must guard its entry point with ``if __name__ == "__main__":``).
The memory limit needs ``resource.setrlimit`` (Linux; elsewhere only the time limit applies).
"""

from __future__ import annotations

import contextlib
import importlib
import math
import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
import time
import warnings
from collections import deque
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import IO, Any

from bm25desk.engine.extract import limits as _limits
from bm25desk.engine.extract.common import ExtractError
from bm25desk.engine.extract.limits import Deadline, Limits

try:
    import resource
except ImportError:  # pragma: no cover - Windows has no resource module
    resource = None  # type: ignore[assignment]

__all__ = [
    "CHECK_EVERY",
    "WORKERS",
    "Body",
    "BytesSource",
    "Ticket",
    "WorkerPool",
    "missing_library",
    "run_limited",
]

BytesSource = IO[bytes]
Body = Callable[[BytesSource, Deadline], tuple[str, str]]
"""``body(stream, deadline) -> (title, text)``: an extractor's work on the opened file. It runs in a
worker process, so it must be a module-level function (it travels by name)."""

CHECK_EVERY = 64
"""Paragraphs (or table cells, or XML elements / 64) between an extractor's deadline checks."""

WORKERS = max(1, min(4, os.cpu_count() or 1))
"""Worker processes a folder read extracts with at most (each within the memory limit)."""

IDLE_EXIT = 60.0
"""Seconds an idle worker of the shared pool (:func:`run_limited`) waits for work, then exits."""

_KILL_GRACE = 1.0  # seconds past the time limit before a kill: the worker's own check comes first
_START_TIMEOUT = 120.0  # seconds a new worker may take to start (imports on a slow, busy machine)
_POLL = 0.1  # seconds between cancel checks while waiting for a result
_PRELOAD = ("bm25desk.engine.extract.registry", "pypdf", "docx")  # imported before the baseline


def missing_library(fmt: str, package: str) -> ExtractError:
    """Return the skip reason for a format whose library is not installed."""
    return ExtractError(f"{fmt} support is not installed (pip install {package})")


# --------------------------------------------------------------------------------------------------
# The worker process


def _address_space() -> int | None:
    """Bytes of this process's address space (VmSize), or None where that cannot be read."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def _limit_memory(limit: int | None) -> None:
    """Set the soft address-space limit (None: back to the hard limit)."""
    if resource is None:  # pragma: no cover - Windows
        return
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    soft = hard if limit is None else limit
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _run_job(body: Body, path: str, limits: Limits, baseline: int | None) -> tuple[Any, bool]:
    """Run one extraction; return (the reply for the pool, whether this worker should retire)."""
    if baseline is not None:
        _limit_memory(baseline + limits.memory)
    try:
        with open(path, "rb") as stream:
            reply: Any = ("ok", body(stream, Deadline(limits.seconds, limits)))
    except MemoryError:
        reply = ("memory", None)
    except ExtractError as exc:
        reply = ("skip", str(exc))
    except Exception as exc:  # handed to the caller, who decides what a failure means
        reply = ("error", exc)
    finally:
        _limit_memory(None)
    if reply[0] == "memory":
        return reply, True
    # A worker that kept much of what a large file needed gives the next file less room: retire it.
    size = _address_space()
    grown = baseline is not None and size is not None and size > baseline + limits.memory // 2
    return reply, grown


def _serve(conn: Connection, idle_exit: float | None) -> None:
    """Run extractions sent over ``conn`` until told to stop, the caller is gone or it idles."""
    # Ctrl-C in a terminal reaches the whole process group; the caller decides what stops.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    warnings.simplefilter("ignore")  # malformed files make parsers warn; failures are skip reasons
    for name in _PRELOAD:  # what every extraction needs is part of the baseline, not of its budget
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    baseline = _address_space() if resource is not None else None
    conn.send("ready")
    while True:
        try:
            if idle_exit is not None and not conn.poll(idle_exit):
                return
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        body, path, limits = job
        reply, retire = _run_job(body, path, limits, baseline)
        try:
            conn.send(reply)
        except (EOFError, OSError):
            return
        except Exception as exc:  # an exception that cannot be pickled: send what it said
            conn.send(("error", RuntimeError(f"{type(reply[1]).__name__}: {reply[1]}: {exc}")))
        if retire:
            return


# --------------------------------------------------------------------------------------------------
# The pool


class Ticket:
    """One extraction submitted to a :class:`WorkerPool`; :meth:`WorkerPool.result` redeems it."""

    __slots__ = ("body", "limits", "outcome", "path", "requeued")

    def __init__(self, body: Body, path: Path, limits: Limits) -> None:
        self.body = body
        self.path = path
        self.limits = limits
        self.outcome: tuple[str, Any] | None = None
        self.requeued = False


class _Worker:
    """The pool's side of one worker process."""

    def __init__(self, ctx: Any, idle_exit: float | None) -> None:
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(
            target=_serve, args=(child, idle_exit), daemon=True, name="bm25desk-extract"
        )
        self.proc.start()
        child.close()
        self.ready = False
        self.started = time.monotonic()
        self.ticket: Ticket | None = None
        self.kill_at = math.inf

    def send(self, ticket: Ticket) -> bool:
        """Hand ``ticket`` to this worker; False when the worker is gone."""
        try:
            self.conn.send((ticket.body, str(ticket.path), ticket.limits))
        except (OSError, ValueError):
            return False
        self.ticket = ticket
        self.kill_at = time.monotonic() + ticket.limits.seconds + _KILL_GRACE
        return True

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
    """Worker processes that run :data:`Body` extractions within the limits, reused across files.

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
        self._ctx = multiprocessing.get_context("spawn")
        self._workers: list[_Worker] = []
        self._queue: deque[Ticket] = deque()
        self._failed_starts = 0

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
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
            worker.stop(kill=worker.ticket is not None)
        self._workers.clear()

    @property
    def pids(self) -> list[int]:
        """Return the process ids of the live workers (for tests and diagnostics)."""
        return [w.proc.pid for w in self._workers if w.proc.pid is not None]

    def _dispatch(self) -> None:
        while self._queue:
            idle = next((w for w in self._workers if w.ready and w.ticket is None), None)
            if idle is None:
                break
            ticket = self._queue.popleft()
            if not idle.send(ticket):
                self._queue.appendleft(ticket)
                self._retire(idle)
        starting = sum(not w.ready for w in self._workers)
        while len(self._queue) > starting and len(self._workers) < self.size:
            self._workers.append(_Worker(self._ctx, self._idle_exit))
            starting += 1

    def _wait(self, longest: float | None) -> None:
        """Wait for a reply, a worker's death or a deadline, and handle what happened."""
        now = time.monotonic()
        watched = [w for w in self._workers if w.ticket is not None or not w.ready]
        if not watched:
            return
        ends = [w.kill_at if w.ready else w.started + _START_TIMEOUT for w in watched]
        timeout = max(0.0, min(ends) - now)
        if longest is not None:
            timeout = min(timeout, longest)
        objects: list[Any] = [w.conn for w in watched] + [w.proc.sentinel for w in watched]
        ready = multiprocessing.connection.wait(objects, timeout)
        for worker in watched:
            if worker.conn in ready:
                self._receive(worker)
            elif worker.proc.sentinel in ready:
                self._died(worker)
        now = time.monotonic()
        for worker in list(self._workers):
            if worker.ticket is not None and now >= worker.kill_at:
                worker.ticket.outcome = ("skip", _limits.timed_out(worker.ticket.limits.seconds))
                worker.ticket = None
                self._retire(worker, kill=True)
            elif not worker.ready and now >= worker.started + _START_TIMEOUT:
                self._died(worker)

    def _receive(self, worker: _Worker) -> None:
        try:
            message = worker.conn.recv()
        except (EOFError, OSError):
            self._died(worker)
            return
        if message == "ready":
            worker.ready = True
            self._failed_starts = 0
            return
        ticket, worker.ticket = worker.ticket, None
        worker.kill_at = math.inf
        if ticket is not None:
            ticket.outcome = message

    def _died(self, worker: _Worker) -> None:
        worker.proc.join(1.0)
        code = worker.proc.exitcode
        ticket = worker.ticket
        if not worker.ready:
            self._failed_starts += 1
            if self._failed_starts >= 2:  # do not start workers forever: fail what waits instead
                reason = f"could not start an extraction process (exit code {code})"
                for waiting in self._queue:
                    waiting.outcome = ("skip", reason)
                self._queue.clear()
        elif ticket is not None:
            if code == 0 and not ticket.requeued:
                # It ended (idle too long) just as the ticket was sent: give it to another one.
                ticket.requeued = True
                self._queue.appendleft(ticket)
            else:
                ticket.outcome = ("crash", code)
        worker.ticket = None
        self._retire(worker, kill=True)

    def _retire(self, worker: _Worker, *, kill: bool = False) -> None:
        if worker in self._workers:
            self._workers.remove(worker)
        worker.stop(kill=kill)


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

"""The worker process's side of isolated extraction: run jobs within an address-space limit.

A worker receives ``(body, path, limits)`` jobs over a connection and answers each with
``("ok", (title, text))``, ``("skip", reason)``, ``("memory", None)`` or ``("error", exception)``,
in order. While a job runs, its address space is limited (``RLIMIT_AS``) to what the idle worker
held plus the job's memory budget; a worker that came near that budget retires after answering, so
every job starts with the whole budget. See :mod:`.pool` for the caller's side.
"""

from __future__ import annotations

import contextlib
import importlib
import signal
import warnings
from multiprocessing.connection import Connection
from typing import Any

from bm25desk.engine.extract.common import ExtractError
from bm25desk.engine.extract.limits import Body, Deadline, Limits

try:
    import resource
except ImportError:  # pragma: no cover - Windows has no resource module
    resource = None  # type: ignore[assignment]

__all__ = ["serve", "serve_socket"]

_PRELOAD = ("bm25desk.engine.extract.registry", "pypdf", "docx")  # imported before the baseline


def _address_space(field: str = "VmSize") -> int | None:
    """Bytes of this process's address space now (VmSize) or at its peak (VmPeak), or None."""
    try:
        with open("/proc/self/status", "rb") as fh:
            for line in fh:
                if line.startswith(field.encode() + b":"):
                    return int(line.split()[1]) * 1024  # the kernel reports kB
    except (OSError, ValueError, IndexError):
        pass
    return None


class _MemoryLimit:
    """The soft ``RLIMIT_AS`` of this process: set for a job, then back to what it was."""

    def __init__(self) -> None:
        self.baseline = _address_space() if resource is not None else None
        self._initial = resource.getrlimit(resource.RLIMIT_AS) if resource is not None else None

    def apply(self, budget: int) -> None:
        """Allow this process ``budget`` bytes of address space beyond its idle baseline."""
        if self.baseline is None or self._initial is None:
            return
        soft, hard = self._initial
        limit = self.baseline + budget
        for cap in (soft, hard):
            if cap != resource.RLIM_INFINITY:
                limit = min(limit, cap)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard))

    def lift(self) -> None:
        """Restore the limit the process started with."""
        if self._initial is not None:
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(resource.RLIMIT_AS, self._initial)

    def heavy(self, budget: int) -> bool:
        """Whether this process's peak passed half of ``budget`` over its baseline."""
        peak = _address_space("VmPeak")
        return self.baseline is not None and peak is not None and peak > self.baseline + budget // 2


def _run_job(body: Body, path: str, limits: Limits, memory: _MemoryLimit) -> tuple[Any, bool]:
    """Run one extraction; return (the reply for the pool, whether this worker should retire).

    Parsers do not all say "out of memory" when the limit stops them (lxml reports an "unknown
    error"): a failure of an extraction that took more than half the budget is put down to memory.
    Every worker starts its jobs below that mark, because one that passed it retires.
    """
    memory.apply(limits.memory)
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
        memory.lift()
    heavy = memory.heavy(limits.memory)
    timed_out = reply[0] == "skip" and str(reply[1]).startswith("timed out")
    if heavy and reply[0] in ("skip", "error") and not timed_out:
        reply = ("memory", None)
    return reply, heavy or reply[0] == "memory"


def serve(conn: Connection, idle_exit: float | None) -> None:
    """Run the jobs sent over ``conn`` until told to stop, the caller is gone, or it idles.

    Parameters
    ----------
    conn
        The connection to the pool.
    idle_exit
        Seconds without a job after which the worker exits (None: never).
    """
    # Ctrl-C in a terminal reaches the whole process group; the caller decides what stops.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    warnings.simplefilter("ignore")  # malformed files make parsers warn; failures are skip reasons
    for name in _PRELOAD:  # what every extraction needs is part of the baseline, not of its budget
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    memory = _MemoryLimit()
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
        reply, retire = _run_job(body, path, limits, memory)
        try:
            conn.send(reply)
        except (EOFError, OSError):
            return
        except Exception as exc:  # an exception that cannot be pickled: send what it said
            conn.send(("error", RuntimeError(f"{type(reply[1]).__name__}: {reply[1]}: {exc}")))
        if retire:
            return


def serve_socket(fd: int, idle_exit: float | None) -> None:
    """Entry point of a worker started as ``python -c``: serve on the inherited socket ``fd``."""
    serve(Connection(fd), idle_exit)

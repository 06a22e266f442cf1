"""Skip policy: print every skipped test with its reason and fail CI on a skip nobody allowed.

A test may skip for one of three kinds of reasons, and the summary at the end of the run says
which:

- **allowed**: the environment cannot run it and nothing can be done about that here (a root
  user reads a ``chmod 000`` file; the compiled extensions are switched off on purpose in CI's
  pure-Python run). Each allowed reason is listed in :data:`ALLOWED` with why.
- **optional data**: the test carries a marker from :data:`OPTIONAL_DATA` (a collection whose
  licence keeps it out of the repository), the data is not beside the clone, and the skip reason
  says so ("optional data ..."). Reported by name.
- **unexpected**: anything else. With ``--strict-skips`` or ``CI`` set to a true value in the
  environment, one unexpected skip makes the run fail (exit status 1), even if every test passed.

The hooks are imported into ``tests/conftest.py``; this module holds no tests.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

import pytest

OPTIONAL_DATA: dict[str, str] = {
    "scifact": "BEIR SciFact (CC BY-NC 2.0, not shipped) from ../shared/data/scifact",
}
"""Marker → the optional data set it needs (the markers are declared in pyproject.toml)."""


def _extensions_off() -> bool:
    return os.environ.get("BM25DESK_NO_EXTENSIONS", "") not in ("", "0")


ALLOWED: tuple[tuple[re.Pattern[str], str, bool], ...] = (
    (
        re.compile(r"needs a POSIX user without root rights"),
        "root reads a chmod 000 file, so the unreadable-file case cannot be made",
        hasattr(os, "geteuid") and os.geteuid() == 0,
    ),
    (
        re.compile(r"the C kernel is not loaded"),
        "BM25DESK_NO_EXTENSIONS=1: the pure-Python run tests the numpy path instead",
        _extensions_off(),
    ),
)
"""(reason pattern, why it is acceptable, whether it is acceptable in this environment)."""


@dataclass(frozen=True, slots=True)
class Skip:
    """One skipped test: its id, the reason pytest gave, and how the policy classifies it."""

    nodeid: str
    reason: str
    kind: str  # allowed | optional data | unexpected
    why: str


_SKIPS: list[Skip] = []


def _reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr = report.longrepr
    # (path, line, "Skipped: reason") for skips; the text of the report otherwise.
    text = str(longrepr[2]) if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return text.removeprefix("Skipped: ")


def classify(reason: str, markers: set[str]) -> tuple[str, str]:
    """Return ``(kind, why)`` for a skip with ``reason`` of a test carrying ``markers``."""
    for marker, data in OPTIONAL_DATA.items():
        if marker in markers and reason.startswith("optional data"):
            return "optional data", data
    for pattern, why, applies in ALLOWED:
        if applies and pattern.search(reason):
            return "allowed", why
    return "unexpected", "not in the allowed list (tests/skip_policy.py)"


def _record(report: pytest.TestReport | pytest.CollectReport) -> None:
    if not report.skipped or hasattr(report, "wasxfail"):
        return
    reason = _reason(report)
    markers = set(getattr(report, "keywords", {}) or {})
    kind, why = classify(reason, markers)
    _SKIPS.append(Skip(report.nodeid, reason, kind, why))


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add ``--strict-skips``: fail the run on a skip that is neither allowed nor optional."""
    parser.addoption(
        "--strict-skips",
        action="store_true",
        default=False,
        help="fail when a test skips for a reason not allowed in tests/skip_policy.py "
        "(on by default when the CI environment variable is true)",
    )


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Record a skipped test (setup-time skips and skips inside the test alike)."""
    _record(report)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    """Record a module skipped at collection (``importorskip`` at module level)."""
    _record(report)


def _strict(config: pytest.Config) -> bool:
    ci = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")
    return bool(config.getoption("--strict-skips")) or ci


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Turn a green run with unexpected skips into a failed one (strict mode only)."""
    unexpected = [s for s in _SKIPS if s.kind == "unexpected"]
    if unexpected and _strict(session.config) and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Print the skip summary: every skipped test by kind, with its reason."""
    tr = terminalreporter
    counts = {k: sum(s.kind == k for s in _SKIPS) for k in ("allowed", "optional data")}
    unexpected = [s for s in _SKIPS if s.kind == "unexpected"]
    tr.write_sep("-", "skip summary")
    tr.write_line(
        f"{len(_SKIPS)} skipped: {counts['allowed']} allowed, {counts['optional data']} "
        f"need optional data, {len(unexpected)} unexpected"
    )
    for s in sorted(_SKIPS, key=lambda s: (s.kind, s.nodeid)):
        tr.write_line(f"  {s.kind:<13} {s.nodeid}: {s.reason}  [{s.why}]")
    if unexpected and _strict(tr.config):
        tr.write_line(
            f"FAILED: {len(unexpected)} test(s) skipped for a reason that is not allowed "
            "(fix the test or its data, or allow the reason in tests/skip_policy.py)",
            red=True,
            bold=True,
        )

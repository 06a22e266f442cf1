"""``bm25desk --self-test``: prove that an installation or a bundle works, leaving no trace.

The self-test runs in a temporary data directory, which it deletes afterwards, and checks:

1. which compiled paths are in use: the top-k kernel (C, or the numpy fallback) and the bulk
   tokenizer (C, or the Python fallback). A bundle must have both; a source install without a C
   compiler reports the fallback (searches are 10–100× slower) without failing, unless
   ``BM25DESK_REQUIRE_EXTENSIONS=1`` asks for both (CI does);
2. the bundled sample collection (CISI) builds into an index;
3. a search returns hits under every registered variant, and the explanation of the top hit sums to
   its score and equals the score the ranking gave;
4. every document format has a working extractor (a tiny PDF, DOCX, ODT, EPUB, e-mail, mbox,
   HTML, Markdown and text file, made on the spot, are indexed and each found by its own word);
5. the desktop UI starts: a ``QApplication`` (offscreen unless a platform is chosen) and the main
   window are constructed, then closed. A UI that is not there yet is reported, not an error.

It prints one line per check and returns 0 when all pass, 1 otherwise. This module imports Qt only
inside the UI check, so it runs on machines without a display and from the headless CLI.
``python -m bm25desk.selftest --extensions`` checks only the compiled paths (exit 1 unless both
are loaded): CI's loud check that a compile regression cannot pass unnoticed.
"""

from __future__ import annotations

import importlib
import importlib.resources
import math
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import bm25desk
from bm25desk import paths
from bm25desk.selftest_files import FORMAT_FILES

__all__ = ["SAMPLE_QUERY", "run_self_test", "sample_path"]

SAMPLE_QUERY = "library classification systems"
"""The query run under every variant (CISI is about library and information science)."""

SAMPLE_NAME = "sample-cisi"
_KEEP: list[object] = []  # the QApplication the UI check created, if it created one
_REL_TOL = 1e-9  # explanation vs ranking score: the same float64 code, so equal up to rounding


@dataclass(frozen=True, slots=True)
class Check:
    """The outcome of one check: ``ok`` None means "not applicable here" (reported, not failed)."""

    name: str
    ok: bool | None
    detail: str
    seconds: float


class CheckFailed(Exception):
    """A check's failure, with a one-line message for the report."""


def sample_path() -> importlib.resources.abc.Traversable:
    """Return the bundled CISI collection (``bm25desk/data/sample/CISI.ALL``) as a resource."""
    return importlib.resources.files("bm25desk").joinpath("data", "sample", "CISI.ALL")


def _frozen() -> bool:
    return bool(getattr(sys, "frozen", False))


@contextmanager
def _temporary_data_dir() -> Iterator[Path]:
    """Point :mod:`bm25desk.paths` (and child processes) at a fresh directory; restore after."""
    tmp = Path(tempfile.mkdtemp(prefix="bm25desk-selftest-"))
    previous_override: Path | None = getattr(paths, "_override", None)
    previous_env = os.environ.get("BM25DESK_DATA_DIR")
    paths.set_data_dir(tmp)
    os.environ["BM25DESK_DATA_DIR"] = str(tmp)
    try:
        yield tmp
    finally:
        paths.set_data_dir(previous_override)
        if previous_env is None:
            os.environ.pop("BM25DESK_DATA_DIR", None)
        else:
            os.environ["BM25DESK_DATA_DIR"] = previous_env
        shutil.rmtree(tmp, ignore_errors=True)


# --------------------------------------------------------------------------------------------------
# 1: the compiled paths

_EXTENSIONS = {
    "kernel": ("bm25desk.engine.scoring._topk", "C", "numpy"),
    "tokenizer": ("bm25desk.engine.analysis._tokens", "C", "Python"),
    "codec": ("bm25desk.engine.index._blocks", "C", "Python"),
    "id table": ("bm25desk.engine.readers._seen", "C", "Python"),
}
"""The compiled modules: the ranking kernel, the tokenizer, the postings codec (block decoding,
lexicon look-up) and the build's id and term tables."""


def extension_status() -> dict[str, tuple[bool, str]]:
    """Return, per compiled path, whether it is in use and a description (the fallback's reason).

    Returns
    -------
    dict
        ``{"kernel": (in_use, text), "tokenizer": ..., "codec": ..., "id table": ...}``, e.g.
        ``(True, "C")`` or ``(False, "numpy (No module named 'bm25desk.engine.scoring._topk')")``.
    """
    from bm25desk.engine import native
    from bm25desk.engine.analysis.analyzer import HAVE_TOKENIZER
    from bm25desk.engine.index import blocks
    from bm25desk.engine.readers import document
    from bm25desk.engine.scoring.topk import HAVE_KERNEL

    in_use = {
        "kernel": HAVE_KERNEL,
        "tokenizer": HAVE_TOKENIZER,
        "codec": blocks._blocks is not None,
        "id table": document._seen is not None,
    }
    status: dict[str, tuple[bool, str]] = {}
    for name, (module, compiled, fallback) in _EXTENSIONS.items():
        if in_use[name]:
            status[name] = (True, compiled)
            continue
        if native.switched_off():
            why = f"switched off by {native.SWITCH}"
        else:
            try:
                importlib.import_module(module)
                why = "the module loads, but the engine does not use it"
            except ImportError as exc:
                why = f"not built or not loadable: {exc}"
        status[name] = (False, f"{fallback} ({why})")
    return status


def _extensions_required() -> bool:
    return _frozen() or os.environ.get("BM25DESK_REQUIRE_EXTENSIONS", "") not in ("", "0")


def _check_extensions(state: dict[str, object]) -> str:
    status = extension_status()
    text = ", ".join(f"{name}: {desc}" for name, (_, desc) in status.items())
    if all(ok for ok, _ in status.values()):
        return text
    if _extensions_required():
        raise CheckFailed(f"{text} — the compiled extensions are required here")
    raise _NotApplicable(f"{text} — searches and builds are slower than with the extensions")


# --------------------------------------------------------------------------------------------------
# 2 + 3: the sample collection, a search and explanations under every variant


def _check_sample(state: dict[str, object]) -> str:
    from bm25desk.engine import IndexStore, build_index

    resource = sample_path()
    if not resource.is_file():
        raise CheckFailed(f"the sample collection is missing from the installation ({resource})")
    with importlib.resources.as_file(resource) as path:
        report = build_index(path, name=SAMPLE_NAME, fmt="smart", store=IndexStore())
    if report.indexed == 0 or report.n_docs != report.indexed:
        raise CheckFailed(f"sample built badly: {report.summary()}")
    from bm25desk.engine.analysis.analyzer import HAVE_TOKENIZER

    state["store"] = IndexStore()
    tokenizer = "C tokenizer" if HAVE_TOKENIZER else "Python tokenizer"
    return f"{report.n_docs:,} documents, {report.n_terms:,} terms ({path.name}; {tokenizer})"


def _check_search(state: dict[str, object]) -> str:
    from bm25desk.engine import IndexStore, Searcher, all_variants

    store = state.get("store")
    if not isinstance(store, IndexStore):
        raise CheckFailed("skipped: the sample index was not built")
    searcher = Searcher(store.open(SAMPLE_NAME))
    worst = 0.0
    variants = all_variants()
    for variant in variants:
        result = searcher.search(SAMPLE_QUERY, variant, k=10)
        if not result.hits:
            raise CheckFailed(f"{variant!r}: no hits for {SAMPLE_QUERY!r}")
        top = result.hits[0]
        if not all(math.isfinite(h.score) for h in result.hits):
            raise CheckFailed(f"{variant!r}: a score is not finite")
        explanation = searcher.explain(SAMPLE_QUERY, top.docid, variant)
        parts = explanation.parts_sum
        for label, value in (("explained score", explanation.score), ("sum of parts", parts)):
            if not math.isclose(value, top.score, rel_tol=_REL_TOL, abs_tol=1e-12):
                raise CheckFailed(
                    f"{variant!r}: {label} {value!r} differs from the ranking score "
                    f"{top.score!r} of {top.docid!r}"
                )
        worst = max(worst, abs(parts - top.score))
    from bm25desk.engine.scoring.topk import HAVE_KERNEL

    kernel = "C kernel" if HAVE_KERNEL else "numpy path"
    return (
        f"{SAMPLE_QUERY!r} under {len(variants)} variants ({kernel}); every top hit's "
        f"explanation sums to its score (largest difference {worst:.1e})"
    )


# --------------------------------------------------------------------------------------------------
# 4: formats


def _check_formats(state: dict[str, object]) -> str:
    from bm25desk.engine.readers import corpus

    with tempfile.TemporaryDirectory(prefix="bm25desk-formats-") as tmp:
        folder = Path(tmp)
        words: dict[str, str] = {}
        for n, (name, make) in enumerate(FORMAT_FILES.items()):
            word = f"selftestword{n}"
            data = make(word)
            (folder / name).write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
            words[name] = word
        report = corpus.ReadReport()
        docs = {d.docid: d for d in corpus.read_folder(folder, report=report)}
        problems = [f"{Path(s.where).name}: {s.reason}" for s in report.skipped]
        for name, word in words.items():
            doc = docs.get(name)
            if doc is not None and word not in doc.text:
                problems.append(f"{name}: its text lacks {word!r}")
            if doc is not None and "hiddenword" in doc.text:
                problems.append(f"{name}: script text was extracted")
    if problems:
        raise CheckFailed("; ".join(problems))
    return " ".join(sorted(Path(n).suffix[1:] for n in words))


# --------------------------------------------------------------------------------------------------
# 5: the desktop UI


def _check_ui(state: dict[str, object]) -> str:
    # Qt aborts the process when it cannot reach a display; a self-test never shows a window, so
    # it runs offscreen unless the user chose a platform.
    platform_env = os.environ.get("QT_QPA_PLATFORM")
    if platform_env is None:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    try:
        return _construct_main_window()
    finally:
        if platform_env is None:
            os.environ.pop("QT_QPA_PLATFORM", None)


def _construct_main_window() -> str:
    try:
        from PySide6 import __version__ as pyside_version
        from PySide6.QtWidgets import QApplication
    except ImportError as exc:
        if _frozen():
            raise CheckFailed(f"PySide6 is missing from the bundle ({exc})") from exc
        raise _NotApplicable(f"not checked: PySide6 is not installed ({exc})") from exc
    app = QApplication.instance()
    if app is None:
        # Kept for the life of the process: Qt allows one application object, and it must
        # outlive every widget made later (the test suite's, for instance).
        app = QApplication(["bm25desk", "--self-test"])
        _KEEP.append(app)
    qt_platform = QApplication.platformName() if isinstance(app, QApplication) else "?"
    try:
        module = importlib.import_module("bm25desk.ui.main_window")
    except ModuleNotFoundError as exc:
        if exc.name in ("bm25desk.ui", "bm25desk.ui.main_window"):
            raise _NotApplicable(
                f"QApplication ok (PySide6 {pyside_version}, {qt_platform}); "
                "no main window in this build (bm25desk.ui.main_window is missing)"
            ) from exc
        raise
    window_class = getattr(module, "MainWindow", None)
    if window_class is None:
        raise _NotApplicable(
            f"QApplication ok (PySide6 {pyside_version}, {qt_platform}); "
            "bm25desk.ui.main_window has no MainWindow"
        )
    window = window_class()
    try:
        title = window.windowTitle()
        QApplication.processEvents()
    finally:
        window.close()
        window.deleteLater()
        QApplication.processEvents()
    plots = sys.modules.get("pyqtgraph")
    plots_note = f", pyqtgraph {getattr(plots, '__version__', '?')}" if plots is not None else ""
    qt = f"PySide6 {pyside_version} ({qt_platform}{plots_note})"
    return f"{qt}; main window {title!r} constructed"


class _NotApplicable(Exception):
    """A check that cannot run here (reported, never a failure)."""


# --------------------------------------------------------------------------------------------------
# Driver


_CHECKS: tuple[tuple[str, Callable[[dict[str, object]], str]], ...] = (
    ("compiled paths", _check_extensions),
    ("sample collection", _check_sample),
    ("search + explain", _check_search),
    ("document formats", _check_formats),
    ("desktop UI", _check_ui),
)


def _run_check(
    name: str, fn: Callable[[dict[str, object]], str], state: dict[str, object]
) -> Check:
    started = time.perf_counter()
    try:
        detail = fn(state)
        ok: bool | None = True
    except _NotApplicable as exc:
        detail, ok = str(exc), None
    except CheckFailed as exc:
        detail, ok = str(exc), False
    except Exception as exc:  # any crash is a failed check with its cause, never a traceback
        detail, ok = f"{type(exc).__name__}: {exc}", False
    return Check(name, ok, detail, time.perf_counter() - started)


def run_self_test(out: TextIO | None = None) -> int:
    """Run the self-test and print a short report.

    Parameters
    ----------
    out
        Where the report goes (default: standard output).

    Returns
    -------
    int
        0 when every applicable check passed, 1 otherwise: the process exit status.
    """
    out = out if out is not None else sys.stdout
    started = time.perf_counter()
    where = "bundle" if _frozen() else "source"
    out.write(
        f"bm25desk {bm25desk.__version__} self-test ({where}; Python {platform.python_version()}, "
        f"{platform.system()} {platform.machine()})\n"
    )
    checks: list[Check] = []
    with _temporary_data_dir() as tmp:
        out.write(f"data dir: {tmp} (temporary, deleted afterwards)\n")
        out.flush()
        state: dict[str, object] = {}
        for name, fn in _CHECKS:
            check = _run_check(name, fn, state)
            checks.append(check)
            mark = {True: "ok  ", False: "FAIL", None: "--  "}[check.ok]
            out.write(f"{mark}  {name:<18} {check.detail}  [{check.seconds:.1f} s]\n")
            out.flush()
    failed = [c for c in checks if c.ok is False]
    seconds = time.perf_counter() - started
    if failed:
        names = ", ".join(c.name for c in failed)
        out.write(
            f"self-test FAILED ({len(failed)} of {len(checks)}: {names}) in {seconds:.1f} s\n"
        )
        return 1
    out.write(f"self-test passed in {seconds:.1f} s\n")
    return 0


def check_extensions(out: TextIO | None = None) -> int:
    """Print which compiled paths are in use; return 0 when all of them are, 1 otherwise."""
    out = out if out is not None else sys.stdout
    status = extension_status()
    for name, (ok, desc) in status.items():
        out.write(f"{'ok  ' if ok else 'FAIL'}  {name:<10} {desc}\n")
    if all(ok for ok, _ in status.values()):
        out.write("compiled extensions: all loaded\n")
        return 0
    out.write(
        "compiled extensions MISSING: bm25desk runs, but on its slow fallback paths "
        "(reinstall with a C compiler: pip install -e . --no-deps)\n"
    )
    return 1


def main(argv: list[str] | None = None) -> int:
    """``python -m bm25desk.selftest [--extensions]``: the whole self-test, or only the paths."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--extensions"]:
        return check_extensions()
    if args:
        sys.stderr.write("usage: python -m bm25desk.selftest [--extensions]\n")
        return 2
    return run_self_test()


if __name__ == "__main__":  # ``python -m bm25desk.selftest``
    raise SystemExit(main())

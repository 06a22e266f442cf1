"""Before the desktop app starts: say plainly what is missing when no window can be opened.

Without a display Qt aborts the process with a message about its "xcb" plugin that does not say
what is wrong; with a display but without some of the X11 libraries Qt's xcb plugin needs, it
aborts with the same message. :func:`problem` finds both cases before Qt is imported: no
``DISPLAY``/``WAYLAND_DISPLAY`` (and no ``QT_QPA_PLATFORM`` chosen), or a plugin whose libraries
the system lacks (listed by ``ldd``, with the Debian/Ubuntu packages that provide them).
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

_NOT_FOUND = re.compile(r"^\s*(\S+)\s*=>\s*not found", re.M)
_SONAME = re.compile(r"^(lib[\w.+-]*?)\.so\.(\d+)")
_PACKAGE_EXCEPTIONS = {"libglib-2.0.so.0": "libglib2.0-0"}


def debian_package(soname: str) -> str:
    """Return the Debian/Ubuntu package of ``soname`` (``libxcb-icccm.so.4`` → ``libxcb-icccm4``).

    Debian names a library package after its soname: the name and its version, with a hyphen
    between them when the name ends in a digit (``libX11.so.6`` → ``libx11-6``).
    """
    if soname in _PACKAGE_EXCEPTIONS:
        return _PACKAGE_EXCEPTIONS[soname]
    match = _SONAME.match(soname)
    if match is None:
        return soname
    name, version = match.group(1).lower(), match.group(2)
    return f"{name}-{version}" if name[-1].isdigit() else f"{name}{version}"


def xcb_plugin() -> Path | None:
    """Return Qt's xcb platform plugin of the installed PySide6 (or the bundle's), if found."""
    roots: list[Path] = []
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        roots.append(Path(bundle) / "PySide6")
    spec = importlib.util.find_spec("PySide6")  # finds the package without importing it
    if spec is not None and spec.submodule_search_locations:
        roots.extend(Path(p) for p in spec.submodule_search_locations)
    for root in roots:
        for sub in ("Qt/plugins/platforms", "plugins/platforms"):
            plugin = root / sub / "libqxcb.so"
            if plugin.is_file():
                return plugin
    return None


def missing_libraries(plugin: Path) -> list[str]:
    """Return the shared libraries ``plugin`` needs that the system cannot find (empty if none).

    The plugin is first loaded in-process (cheap, and what Qt will do anyway); only when that fails
    does ``ldd`` list every missing library (the loader's error names only the first).
    """
    try:
        ctypes.CDLL(str(plugin))
    except OSError as exc:
        first = str(exc).split(":", 1)[0].strip()
    else:
        return []
    ldd = shutil.which("ldd")
    if ldd is not None:
        try:
            out = subprocess.run(
                [ldd, str(plugin)], capture_output=True, text=True, timeout=20, check=False
            ).stdout
        except (OSError, subprocess.SubprocessError):
            out = ""
        found = list(dict.fromkeys(_NOT_FOUND.findall(out)))
        if found:
            return found
    return [first] if first else [str(plugin)]


def problem(environ: dict[str, str] | None = None) -> str | None:
    """Return why the desktop app cannot open a window here, in one line; None when it can.

    Parameters
    ----------
    environ
        The environment to judge (default: this process's).
    """
    env = os.environ if environ is None else environ
    if not sys.platform.startswith("linux"):
        return None  # Windows and macOS always have their platform plugin's display
    chosen = env.get("QT_QPA_PLATFORM", "")
    if chosen and not chosen.startswith("xcb"):
        return None  # offscreen, wayland, vnc ...: the user chose; Qt reports its own errors
    if not chosen and not env.get("DISPLAY") and not env.get("WAYLAND_DISPLAY"):
        return (
            "no display: neither DISPLAY nor WAYLAND_DISPLAY is set, so the desktop app cannot "
            "open a window. Start it from a desktop session, use the command line "
            "(bm25desk --help), or set QT_QPA_PLATFORM=offscreen to run with no visible window."
        )
    if env.get("WAYLAND_DISPLAY") and not chosen:
        return None  # Qt uses its Wayland plugin (no X11 libraries involved)
    plugin = xcb_plugin()
    if plugin is None:
        return None  # no plugin where we look: let Qt say what it finds
    missing = missing_libraries(plugin)
    if not missing:
        return None
    packages = " ".join(dict.fromkeys(debian_package(lib) for lib in missing))
    return (
        f"cannot open a window: Qt's X11 plugin needs {', '.join(missing)}, which this system "
        f"lacks. On Debian/Ubuntu: sudo apt-get install {packages} (or use the command line, "
        "bm25desk --help)."
    )

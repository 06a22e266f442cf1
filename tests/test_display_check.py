"""Starting the app where no window can open: a clear message, not Qt's abort about "xcb"."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bm25desk import display


@pytest.fixture
def linux(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "linux")


@pytest.mark.parametrize(
    ("soname", "package"),
    [
        ("libxcb-icccm.so.4", "libxcb-icccm4"),
        ("libxcb-keysyms.so.1", "libxcb-keysyms1"),
        ("libxcb-cursor.so.0", "libxcb-cursor0"),
        ("libxcb-render-util.so.0", "libxcb-render-util0"),
        ("libxkbcommon-x11.so.0", "libxkbcommon-x11-0"),
        ("libX11-xcb.so.1", "libx11-xcb1"),
        ("libX11.so.6", "libx11-6"),
        ("libdbus-1.so.3", "libdbus-1-3"),
        ("libglib-2.0.so.0", "libglib2.0-0"),
    ],
)
def test_debian_package(soname: str, package: str) -> None:
    assert display.debian_package(soname) == package


def test_no_display(linux: None) -> None:
    why = display.problem({})
    assert why is not None
    assert why.startswith("no display: neither DISPLAY nor WAYLAND_DISPLAY is set")
    assert "QT_QPA_PLATFORM=offscreen" in why


@pytest.mark.parametrize(
    "env",
    [
        {"QT_QPA_PLATFORM": "offscreen"},
        {"WAYLAND_DISPLAY": "wayland-0"},
        {"QT_QPA_PLATFORM": "vnc"},
    ],
)
def test_a_chosen_or_wayland_platform_is_left_to_qt(linux: None, env: dict[str, str]) -> None:
    assert display.problem(env) is None


def test_missing_xcb_libraries_are_named(
    linux: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    plugin = tmp_path / "libqxcb.so"
    plugin.write_bytes(b"not really a library")
    ldd_output = (
        "\tlibxcb-cursor.so.0 => /lib/x86_64-linux-gnu/libxcb-cursor.so.0 (0x1)\n"
        "\tlibxcb-icccm.so.4 => not found\n"
        "\tlibxcb-keysyms.so.1 => not found\n"
        "\tlibxcb-icccm.so.4 => not found\n"
    )
    monkeypatch.setattr(display, "xcb_plugin", lambda: plugin)
    monkeypatch.setattr(display.shutil, "which", lambda name: "/usr/bin/ldd")
    monkeypatch.setattr(
        display.subprocess,
        "run",
        lambda *a, **k: subprocess.CompletedProcess(a, 0, stdout=ldd_output, stderr=""),
    )
    assert display.missing_libraries(plugin) == ["libxcb-icccm.so.4", "libxcb-keysyms.so.1"]
    why = display.problem({"DISPLAY": ":0"})
    assert why == (
        "cannot open a window: Qt's X11 plugin needs libxcb-icccm.so.4, libxcb-keysyms.so.1, "
        "which this system lacks. On Debian/Ubuntu: sudo apt-get install libxcb-icccm4 "
        "libxcb-keysyms1 (or use the command line, bm25desk --help)."
    )


def test_without_ldd_the_loader_names_the_first(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    plugin = tmp_path / "libqxcb.so"
    plugin.write_bytes(b"")

    def cdll(path: str) -> None:
        raise OSError("libxcb-icccm.so.4: cannot open shared object file: No such file")

    monkeypatch.setattr(display.ctypes, "CDLL", cdll)
    monkeypatch.setattr(display.shutil, "which", lambda name: None)
    assert display.missing_libraries(plugin) == ["libxcb-icccm.so.4"]


def test_a_loadable_plugin_needs_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(display.ctypes, "CDLL", lambda path: object())
    assert display.missing_libraries(tmp_path / "libqxcb.so") == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="X11/Wayland are Linux's")
def test_the_app_says_so_without_a_display(tmp_path: Path) -> None:
    """The real entry point, with no display: exit 2 and one line, before Qt is imported."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.pop("QT_QPA_PLATFORM", None)
    env["BM25DESK_DATA_DIR"] = str(tmp_path)
    code = "import sys; from bm25desk import launcher; r = launcher.main([]); "
    code += "print('PySide6' in sys.modules); sys.exit(r)"
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2
    assert proc.stdout == "False\n"
    assert proc.stderr.startswith("bm25desk: no display: neither DISPLAY nor WAYLAND_DISPLAY")
    assert proc.stderr.count("\n") == 1

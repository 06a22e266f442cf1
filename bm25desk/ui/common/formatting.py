"""Numbers and times as people read them (sizes, local timestamps, counted words)."""

from __future__ import annotations

from datetime import datetime


def human_size(n: int) -> str:
    """Return a byte count as ``12.3 MB``."""
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    return f"{size:.1f} TB"  # pragma: no cover


def human_time(iso: str) -> str:
    """Return an ISO timestamp as local ``2024-05-01 14:03`` (or the text as it is)."""
    try:
        return datetime.fromisoformat(iso).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return iso


def plural(n: int, word: str, many: str | None = None) -> str:
    """Return ``1 query`` / ``2 queries``: the count with the word in the right number."""
    return f"{n:,} {word if n == 1 else (many or word + 's')}"

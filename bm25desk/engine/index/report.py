"""What a build or an update did, as shown by the CLI and the app (:class:`BuildReport`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from bm25desk.engine.readers.corpus import Skip


@dataclass(frozen=True, slots=True)
class BuildReport:
    """What a build or update did.

    ``note`` says how an update went about it when that is not obvious: a corpus file that grew
    had only its new records appended, or was rebuilt, and why (see :mod:`~.grown`).
    """

    name: str
    read: int
    indexed: int
    skipped: tuple[Skip, ...]
    seconds: float
    n_docs: int
    n_terms: int
    added: int = 0
    changed: int = 0
    removed: int = 0
    rebuilt: bool = True
    skip_reasons: dict[str, int] = field(default_factory=dict)
    note: str = ""

    def summary(self) -> str:
        """Return a one-paragraph human summary."""
        if self.rebuilt:
            head = f"Indexed {self.indexed:,} of {self.read:,} records into {self.name!r}"
        else:
            head = (
                f"Updated {self.name!r}: {self.added:,} new, {self.changed:,} changed, "
                f"{self.removed:,} removed"
            )
        rate = self.indexed / self.seconds if self.seconds > 0 else 0.0
        text = (
            f"{head} in {self.seconds:.1f} s ({rate:,.0f} docs/s); "
            f"{self.n_docs:,} documents, {self.n_terms:,} terms."
        )
        if self.skipped:
            reasons = "; ".join(f"{n} × {r}" for r, n in self.skip_reasons.items())
            text += f" Skipped {len(self.skipped):,}: {reasons}."
        if self.note:
            text += f" {self.note}"
        return text


def reason_counts(skipped: Iterable[Skip]) -> dict[str, int]:
    """Count skipped records by the head of their reason, most frequent first."""
    counts: dict[str, int] = {}
    for s in skipped:
        key = s.reason.split(":")[0].split(" (")[0]
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))

"""Snippets of the rows a ranking left blank, cut in the background right after it is shown.

Cutting a snippet analyses up to 20,000 characters of a document; a ranking shows at once with the
first rows' snippets (:data:`~bm25desk.ui.search.work.SNIPPETS_FIRST`) and the others follow.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Slot

from bm25desk.engine import Searcher
from bm25desk.ui.common.jobs import JobRunner
from bm25desk.ui.common.latest_only import LatestOnly
from bm25desk.ui.search.results_model import ResultsModel
from bm25desk.ui.search.work import SearchOutcome, Snippet, cut_snippets


class SnippetFiller(QObject):
    """Fills ``model``'s blank snippets for the ranking on screen (``current()``) only."""

    def __init__(
        self,
        runner: JobRunner,
        model: ResultsModel,
        current: Callable[[], SearchOutcome | None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.model = model
        self.current = current
        self.jobs = LatestOnly(runner, "snippets", self)
        self.jobs.succeeded.connect(self._on_jobs_succeeded)

    def fill(self, searcher: Searcher | None, outcome: SearchOutcome) -> None:
        """Cut the snippets ``outcome`` left blank (nothing to do: forget earlier requests)."""
        if not outcome.pending or searcher is None:
            self.jobs.invalidate()
            return
        index, pending = searcher.index, outcome.pending
        terms = frozenset(outcome.result.analysis.terms)
        self.jobs.request(lambda: (outcome, cut_snippets(index, pending, terms)))

    def cancel(self) -> None:
        """Forget the snippets being cut (another index, or no ranking)."""
        self.jobs.invalidate()

    @Slot(object)
    def _on_jobs_succeeded(self, payload: tuple[SearchOutcome, dict[int, Snippet]]) -> None:
        outcome, snippets = payload
        if outcome is self.current():  # not a ranking replaced meanwhile
            self.model.set_snippets(snippets)

"""Parameter sweeps (sweeps.py): grids, the best cell, bad grids."""

from __future__ import annotations

import json

import numpy as np
import pytest
from evalkit import JUDGED, QUERIES

from bm25desk.engine.scoring.variants import get_variant
from bm25desk.evaluation.data import EvalInputError
from bm25desk.evaluation.experiments import run_experiment
from bm25desk.evaluation.sweeps import sweep


class TestSweep:
    def test_grid_and_best(self, searcher):
        grid = {"k1": [0.5, 1.0, 2.0], "b": [0.0, 0.75]}
        res = sweep(searcher, QUERIES, JUDGED, get_variant("lucene"), grid, ["nDCG@10", "RR@10"])
        assert res.axes == ("k1", "b")
        assert res.values == ((0.5, 1.0, 2.0), (0.0, 0.75))
        assert res.grids["nDCG@10"].shape == (3, 2)
        assert res.experiment.k == 10  # the largest cutoff
        g = res.grids["nDCG@10"]
        best = res.best["nDCG@10"]
        assert best.value == g.max()
        assert g[best.index] == g.max()
        assert best.index == np.unravel_index(np.argmax(g), g.shape)
        assert repr(best.variant) == repr(get_variant("lucene", **best.params))
        expected_edge = tuple(
            a for a, i, n in zip(res.axes, best.index, (3, 2), strict=True) if i in (0, n - 1)
        )
        assert res.on_edge("nDCG@10") == expected_edge
        cell = res.cell((1, 1))
        assert cell.params == {"k1": 1.0, "b": 0.75}
        # each cell equals an experiment run with that configuration alone
        alone = run_experiment(searcher, QUERIES, JUDGED, [cell.variant], ["nDCG@10"], k=10)
        assert alone.configs[0].aggregate["nDCG@10"] == pytest.approx(g[1, 1])
        data = json.loads(json.dumps(res.as_dict()))
        assert data["axes"] == {"k1": [0.5, 1.0, 2.0], "b": [0.0, 0.75]}
        assert data["best"]["nDCG@10"]["value"] == pytest.approx(best.value)

    def test_delta_axis(self, searcher):
        res = sweep(
            searcher,
            QUERIES,
            JUDGED,
            get_variant("bm25l"),
            {"k1": [1.2], "b": [0.75], "delta": [0.0, 0.5, 1.0]},
            "AP",
        )
        assert res.grids["AP"].shape == (1, 1, 3)
        assert res.experiment.k == 1000  # AP has no cutoff

    def test_bad_grids(self, searcher):
        v = get_variant("lucene")
        with pytest.raises(EvalInputError, match="no parameter 'delta'"):
            sweep(searcher, QUERIES, JUDGED, v, {"delta": [0.5]})
        with pytest.raises(EvalInputError, match="outside"):
            sweep(searcher, QUERIES, JUDGED, v, {"b": [1.5]})
        with pytest.raises(EvalInputError, match="empty"):
            sweep(searcher, QUERIES, JUDGED, v, {})
        with pytest.raises(EvalInputError, match="no values"):
            sweep(searcher, QUERIES, JUDGED, v, {"k1": []})

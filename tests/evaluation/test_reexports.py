"""The paths the evaluation had before the split keep every public name (issue 12's rule)."""

from __future__ import annotations

import importlib

import pytest


def _names(text: str) -> list[str]:
    return text.split()


# What bm25desk.evaluation.topics and .evaluate exported before the split (their __all__).
OLD_TOPICS = _names(
    "QRELS_FORMATS QUERY_FORMATS EvalInputError Qrels Queries Query Ranking Run "
    "detect_qrels_format detect_queries_format format_run parse_qrels parse_queries parse_run "
    "read_qrels read_queries read_run write_run"
)
OLD_EVALUATE = [
    *OLD_TOPICS,
    *_names(
        "DEFAULT_METRICS ConfigResult EvalOptions EvalResult ExperimentResult IndexSummary "
        "PairedTest SearcherLike SweepCell SweepResult compare_to_baseline evaluate_run "
        "export_experiment metric_cutoff paired_test parse_metrics run_card run_experiment "
        "run_file_stem sweep variant_params write_per_query_csv"
    ),
]
OLD_CLI = ["add_eval_commands", "cmd_eval", "cmd_sweep", "parse_range"]


@pytest.mark.parametrize(
    ("module", "names"),
    [
        ("bm25desk.evaluation.evaluate", OLD_EVALUATE),
        ("bm25desk.evaluation.topics", OLD_TOPICS),
        ("bm25desk.evaluation.cli", OLD_CLI),
    ],
)
def test_old_paths_keep_their_names(module, names):
    mod = importlib.import_module(module)
    missing = [n for n in names if not hasattr(mod, n)]
    assert missing == []
    assert set(names) <= set(mod.__all__)


def test_the_old_paths_hand_out_the_same_objects():
    from bm25desk.evaluation import evaluate, topics
    from bm25desk.evaluation.data import Qrels
    from bm25desk.evaluation.experiments import run_experiment
    from bm25desk.evaluation.qrels import read_qrels

    assert evaluate.run_experiment is run_experiment
    assert evaluate.Qrels is topics.Qrels is Qrels
    assert topics.read_qrels is read_qrels

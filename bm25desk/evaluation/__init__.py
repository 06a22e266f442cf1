"""Evaluation over the engine: topics, qrels, runs, metrics (ir_measures), experiments, sweeps."""

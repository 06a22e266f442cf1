"""Evaluation over the engine: read topics and judgements, run variants, measure, compare, export.

The modules, by concern (each imports only those above it in this list, and the engine):

- ``data`` — queries, judgements, ranked lists and the input error; ``textio`` — files as text;
- ``detect`` — which format a file is in, from its content; ``glasgow`` — the NPL, LISA and TIME
  layouts; ``queries``, ``qrels``, ``runs`` — the readers (and the run writer);
- ``interfaces`` — what is needed of the engine; ``configs`` — variant names and parameters;
  ``jsonsafe`` — JSON-ready numbers;
- ``metrics`` — ir_measures, the conventions, one run's values; ``results`` — what an experiment
  produced; ``checks`` — notes, hints and refusals about inputs and outcomes;
- ``experiments`` — search and evaluate; ``significance``, ``sweeps``, ``export`` — on top of it;
- ``cli`` (with ``cli_inputs`` and ``cli_output``) — the ``eval`` and ``sweep`` commands.

``evaluate`` and ``topics`` re-export the public names from the paths they had before the split.
"""

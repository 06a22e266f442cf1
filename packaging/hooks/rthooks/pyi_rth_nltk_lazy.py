"""Run-time hook for nltk in the bm25desk bundle: deliberately does nothing at start-up.

PyInstaller's contributed nltk hook runs ``import nltk`` before the app starts, only to add the
bundle's ``nltk_data`` folder to ``nltk.data.path``. The bundle has no ``nltk_data`` (the
stemmers and the Treebank tokenizer need none, and nothing calls ``nltk.download()``), and
importing nltk's package root takes about a second, so this hook takes that hook's place and
leaves nltk to be imported when the engine first needs a stemmer.
"""

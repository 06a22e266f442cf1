"""The PySide6 front end of bm25desk. Imports the engine; the engine never imports it."""

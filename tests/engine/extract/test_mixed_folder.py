"""A folder index that mixes every format: each found by its unique word, invisible text never.

The fixtures live in ``tests/data/formats/mixed`` (made by ``tests/data/formats/make_fixtures.py``;
committed, so these tests need neither reportlab nor network). Each readable fixture holds a word
that no other one holds.
"""

from __future__ import annotations

import pytest
from extract_helpers import MIXED

from bm25desk.engine import BuildReport, IndexStore, Searcher, build_index
from bm25desk.engine.extract import registry
from bm25desk.engine.extract.registry import FORMAT_EXTRACTORS

# Relative path → (a word only this document holds, the title the index should show).
UNIQUE: dict[str, tuple[str, str]] = {
    "notes.txt": ("quillfeather", "Field notes, spring"),
    "readme.md": ("marshglow", "Garden log"),
    "guide.rst": ("thistlecrown", "Bird ringing guide"),
    "web/page.html": ("lanternfish", "Night fishing on the estuary"),
    "papers/report.pdf": ("xylocarp", "Coastal Erosion: Annual Report"),
    "papers/survey.docx": ("vorpalhedge", "Wetland Survey Methods"),
    "papers/minutes.odt": ("tundrabloom", "Allotment Committee Minutes"),
    "books/lighthouse.epub": ("mirthwater", "The Lighthouse Keeper"),
    "mail/letter.eml": ("quokkaberry", "Quarterly figures and the field notes"),
    "mail/archive.mbox": ("fjordlinnet", "archive.mbox"),
}


# Words found only where they may be found: in a heading, a table, an attachment, a 2nd message.
ALSO_FOUND = {
    "glimmerfen": "papers/survey.docx",  # a Heading 1
    "bittern": "papers/survey.docx",  # a table cell
    "compost": "papers/minutes.odt",  # a table cell
    "landlord": "papers/minutes.odt",  # a footnote
    "saffronkite": "mail/letter.eml",  # text attachment
    "cobaltmoth": "mail/letter.eml",  # PDF attachment
    "emberquill": "mail/archive.mbox",  # second message
}


# Words that are in the files but are not text a reader sees: they must not be indexed.
NEVER_FOUND = [
    "scriptonlyzebra",  # HTML <script>
    "styleonlyokapi",  # HTML <style>
    "commentonlyheron",  # HTML comment
    "noscriptonlyvole",  # HTML <noscript>
    "jsonldonlymarmot",  # JSON-LD <script>
    "deletedonlybadger",  # ODT tracked deletion
    "cssonlyibis",  # EPUB stylesheet
    "secretwalrus",  # the encrypted PDF
]


FAILURES = {
    "failures/locked.pdf": "encrypted PDF",
    "failures/broken.docx": "damaged archive",
    "failures/scan.pdf": "no text (scanned PDF?)",
}


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Searcher, BuildReport]:
    store = IndexStore(tmp_path_factory.mktemp("store"))
    report = build_index(MIXED, name="mixed", store=store)
    return Searcher(store.open("mixed")), report


def test_registered_extensions() -> None:
    for ext in (".pdf", ".docx", ".odt", ".epub", ".eml", ".mbox"):
        assert registry.register_builtin()[ext] is FORMAT_EXTRACTORS[ext]


def test_every_format_is_found_by_its_unique_word(mixed: tuple[Searcher, BuildReport]) -> None:
    searcher, _ = mixed
    for rel, (word, title) in UNIQUE.items():
        result = searcher.search(word)
        assert [h.docid for h in result.hits] == [rel], word
        assert result.hits[0].title == title
    for word, rel in ALSO_FOUND.items():
        assert [h.docid for h in searcher.search(word).hits] == [rel], word


def test_invisible_text_is_not_indexed(mixed: tuple[Searcher, BuildReport]) -> None:
    searcher, _ = mixed
    for word in NEVER_FOUND:
        result = searcher.search(word)
        assert result.n_matches == 0, word


def test_failures_are_skipped_and_listed(mixed: tuple[Searcher, BuildReport]) -> None:
    _, report = mixed
    assert report.indexed == len(UNIQUE)
    skipped = {s.where: s.reason for s in report.skipped}
    for rel, reason in FAILURES.items():
        assert skipped[str(MIXED / rel)].startswith(reason), skipped
    assert set(skipped) == {str(MIXED / rel) for rel in FAILURES}
    summary = report.summary()
    assert "encrypted PDF" in summary
    assert "damaged archive" in summary

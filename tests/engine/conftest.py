"""Engine fixtures: a tiny inline corpus (as a TSV file and as a folder), a private data dir and
index store, quick in-process index builds, and real collections: CISI (shipped inside the package)
and, when it is beside the clone, SciFact (optional data: tests that need it carry the ``scifact``
marker).

Nothing here imports Qt. Tests never touch the real user data dir: ``data_dir`` points
``BM25DESK_DATA_DIR`` at a temporary directory.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from unittest import mock

import numpy as np
import pytest

import bm25desk
from bm25desk import paths
from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.index.build import build_index, commit, write_segments
from bm25desk.engine.index.reader import Index
from bm25desk.engine.index.store import IndexStore
from bm25desk.engine.readers.corpus import Document

SAMPLE = Path(bm25desk.__file__).resolve().parent / "data" / "sample"
"""The CISI collection the package ships (``bm25desk/data/sample``): always there."""

CISI_ALL = SAMPLE / "CISI.ALL"
CISI_QRY = SAMPLE / "CISI.QRY"

OPTIONAL_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
"""``../shared/data`` beside the repository, where the optional SciFact collection may be."""

SCIFACT_CORPUS = OPTIONAL_DATA / "scifact" / "corpus.jsonl"

# (docid, title, body). Chosen for the query-syntax tests: "quick brown fox" is a phrase of tiny-4
# only; "dog" is in the titles of tiny-2 only ("dogs" in tiny-1's title is another word unstemmed);
# "cat" is in tiny-1 and tiny-5, "cats" in tiny-3.
TINY_DOCS: tuple[tuple[str, str, str], ...] = (
    ("tiny-1", "Cats and dogs", "The cat sat on the mat. A dog barked at the cat."),
    ("tiny-2", "Dog training", "Training a dog takes patience; the dog learns tricks."),
    ("tiny-3", "Bird watching", "Watching birds in the garden at dawn. No cats here."),
    ("tiny-4", "The quick brown fox", "The quick brown fox jumps over the lazy dog."),
    ("tiny-5", "Fish", "Goldfish swim in the bowl while the cat watches."),
    ("tiny-6", "Mat weaving", "Weaving a mat from reeds: the mat lasts for years."),
)


def require_optional(path: Path) -> Path:
    """Return ``path`` of optional data, or skip (the test must carry its data's marker)."""
    if not path.exists():
        pytest.skip(f"optional data not found: {path}")
    return path


# -- the tiny corpus ---------------------------------------------------------------------------


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the app's data dir at a fresh temporary directory (never the real user dir)."""
    root = tmp_path / "data"
    monkeypatch.setenv("BM25DESK_DATA_DIR", str(root))
    monkeypatch.setattr(paths, "_override", None)
    return root


@pytest.fixture
def store(data_dir: Path) -> IndexStore:
    """Return the index store of the temporary data dir."""
    s = IndexStore()
    assert s.root == data_dir.resolve() / "indexes"
    return s


@pytest.fixture
def tiny_tsv(tmp_path: Path) -> Path:
    """Write the tiny corpus as an MS MARCO documents TSV (docid, url, title, body)."""
    path = tmp_path / "tiny.tsv"
    lines = [f"{d}\thttps://example.org/{d}\t{t}\t{b}" for d, t, b in TINY_DOCS]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_folder(root: Path, files: dict[str, str], start_mtime: float = 1_600_000_000.0) -> None:
    """Write ``files`` (relative path → text) under ``root`` with distinct, fixed mtimes."""
    for i, (rel, text) in enumerate(sorted(files.items())):
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        os.utime(p, (start_mtime + i, start_mtime + i))


@pytest.fixture
def tiny_docs() -> tuple[tuple[str, str, str], ...]:
    """The tiny corpus as (docid, title, body)."""
    return TINY_DOCS


@pytest.fixture
def folder_writer() -> Callable[..., None]:
    """Return :func:`write_folder` (tests cannot import from conftest)."""
    return write_folder


@pytest.fixture
def tiny_folder(tmp_path: Path) -> Path:
    """Write the tiny corpus as a folder of .txt files (first line = title), one per document."""
    root = tmp_path / "tiny-folder"
    write_folder(root, {f"{d}.txt": f"{t}\n{b}\n" for d, t, b in TINY_DOCS})
    return root


@pytest.fixture
def tiny_index(store: IndexStore, tiny_tsv: Path) -> Index:
    """Build the tiny TSV corpus (default analyser) and open it."""
    build_index(tiny_tsv, name="tiny", store=store)
    return store.open("tiny")


# -- quick in-process builds (no reader, no store): for hypothesis and hand-computed corpora ----

IndexFactory = Callable[..., Index]


@pytest.fixture(scope="session")
def make_index(tmp_path_factory: pytest.TempPathFactory) -> IndexFactory:
    """Return ``make(texts, analyzer=None, docids=None, titles=None, ...) -> Index``.

    ``fields`` and ``meta`` give each document's (name, value) pairs (reserved terms);
    ``max_postings`` makes segments that small (several segments, merged lexicon).

    Documents are analysed and committed exactly as ``build_index`` does (``write_segments`` +
    ``commit``), in the given order, into a fresh directory. Session-scoped so that hypothesis
    tests can use it.
    """
    base = tmp_path_factory.mktemp("made")
    counter = itertools.count()

    def make(
        texts: Sequence[str],
        analyzer: Analyzer | None = None,
        docids: Sequence[str] | None = None,
        titles: Sequence[str] | None = None,
        fields: Sequence[tuple[tuple[str, str], ...]] | None = None,
        meta: Sequence[tuple[tuple[str, str], ...]] | None = None,
        max_postings: int | None = None,
    ) -> Index:
        analyzer = analyzer or Analyzer()
        ids = list(docids) if docids is not None else [f"d{i}" for i in range(len(texts))]
        heads = list(titles) if titles is not None else [""] * len(texts)
        extra = list(fields) if fields is not None else [()] * len(texts)
        metas = list(meta) if meta is not None else [()] * len(texts)
        directory = base / f"ix-{next(counter)}"
        directory.mkdir()
        docs: Iterable[Document] = (
            Document(docid=i, text=t, title=h, fields=f, meta=m)
            for i, t, h, f, m in zip(ids, texts, heads, extra, metas, strict=True)
        )
        # No fsync for these throw-away indexes: it is most of their build time.
        with mock.patch("os.fsync"):
            names, _ = write_segments(
                directory, iter(docs), analyzer, None, max_postings=max_postings
            )
            commit(
                directory,
                name=directory.name,
                analyzer=analyzer,
                source={"kind": "memory"},
                segments=[(n, None) for n in names],
            )
        return Index(directory)

    return make


@pytest.fixture(scope="session")
def make_segmented(tmp_path_factory: pytest.TempPathFactory) -> IndexFactory:
    """Return ``make(groups, deleted=(), titles=False, document=None) -> Index``: one segment
    per group of texts.

    ``deleted[i]`` lists local docnos of group ``i`` to mark deleted; documents are ``d0``,
    ``d1``... in order (titled ``title <n>`` with ``titles``), or ``document(position, text)``
    when given (titles, fields). Analysed and committed as ``build_index`` does.
    """
    base = tmp_path_factory.mktemp("segmented")
    counter = itertools.count()

    def make(
        groups: Sequence[Sequence[str]],
        deleted: Sequence[Sequence[int]] = (),
        titles: bool = False,
        document: Callable[[int, str], Document] | None = None,
    ) -> Index:
        directory = base / f"ix-{next(counter)}"
        directory.mkdir()
        analyzer = Analyzer()
        segments: list[tuple[str, str | None]] = []
        n = 0
        with mock.patch("os.fsync"):
            for g, texts in enumerate(groups):
                make_doc = document or (
                    lambda i, t: Document(
                        docid=f"d{i}", text=t, title=f"title {i}" if titles else ""
                    )
                )
                docs = (make_doc(n + i, t) for i, t in enumerate(texts))
                names, _ = write_segments(directory, iter(docs), analyzer, None)
                assert len(names) == 1
                n += len(texts)
                dele = None
                if g < len(deleted) and len(deleted[g]):
                    mask = np.zeros(len(texts), dtype=bool)
                    mask[list(deleted[g])] = True
                    dele = f"del-{g}.npy"
                    np.save(directory / dele, mask, allow_pickle=False)
                segments.append((names[0], dele))
            commit(
                directory,
                name=directory.name,
                analyzer=analyzer,
                source={"kind": "memory"},
                segments=segments,
            )
        return Index(directory)

    return make


# -- the real collections ------------------------------------------------------------------------


@pytest.fixture(scope="session")
def cisi_store(tmp_path_factory: pytest.TempPathFactory) -> IndexStore:
    """A session-wide store for the (expensive-ish) CISI builds and the synthetic corpus."""
    return IndexStore(tmp_path_factory.mktemp("cisi-store"))


@pytest.fixture(scope="session")
def synth_tsv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A deterministic 2,000-passage MS MARCO passages TSV (id, text) with a Zipf-like vocabulary:
    big enough for memory-mapped arrays, several flushes and mid-read cancellation."""
    import random

    rng = random.Random(20240601)
    vocab = [f"w{i}" for i in range(600)]
    weights = [1.0 / (i + 1) for i in range(len(vocab))]
    path = tmp_path_factory.mktemp("synth") / "passages.tsv"
    lines = [
        f"s{i}\t" + " ".join(rng.choices(vocab, weights, k=rng.randint(3, 60))) for i in range(2000)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def synth_index(cisi_store: IndexStore, synth_tsv: Path) -> Index:
    """The synthetic corpus built with the default analyser."""
    build_index(synth_tsv, name="synth", store=cisi_store)
    return cisi_store.open("synth")


@pytest.fixture(scope="session")
def cisi_index(cisi_store: IndexStore) -> Index:
    """CISI.ALL with the default analyser (word tokens, lowercase, no stop list, no stemmer)."""
    build_index(CISI_ALL, name="cisi", store=cisi_store)
    return cisi_store.open("cisi")


@pytest.fixture(scope="session")
def cisi_ws_index(cisi_store: IndexStore) -> Index:
    """CISI.ALL with the whitespace tokenizer and case kept (rank_bm25's ``text.split()``)."""
    analyzer = Analyzer(tokenizer="whitespace", lowercase=False)
    build_index(CISI_ALL, name="cisi-ws", store=cisi_store, analyzer=analyzer)
    return cisi_store.open("cisi-ws")


@pytest.fixture(scope="session")
def cisi_queries() -> list[tuple[str, str]]:
    """CISI.QRY's (query id, .W text) pairs, in file order."""
    path = CISI_QRY
    out: list[tuple[str, str]] = []
    qid, field, buf = "", "", []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith("."):
            if field == ".W" and qid:
                out.append((qid, " ".join(buf).strip()))
            if line.startswith(".I"):
                qid = line[2:].strip()
            field, buf = line[:2], []
        elif field == ".W":
            buf.append(line)
    if field == ".W" and qid:
        out.append((qid, " ".join(buf).strip()))
    assert len(out) > 50
    return out


@pytest.fixture(scope="session")
def cisi_texts() -> list[str]:
    """The text of every CISI document as the SMART reader gives it (title, authors, abstract)."""
    from bm25desk.engine.readers.corpus import read_corpus

    return [d.text for d in read_corpus(CISI_ALL, "smart")]


@pytest.fixture(scope="session")
def scifact_texts() -> list[str]:
    """The text of the first 300 SciFact documents as the BEIR reader gives it (optional data)."""
    from bm25desk.engine.readers.corpus import read_corpus

    path = require_optional(SCIFACT_CORPUS)
    return [d.text for d in itertools.islice(read_corpus(path, "beir"), 300)]

"""One adapter per engine, all with the same interface, on the same corpus and tokens.

Every engine indexes the same text (a document's title, a newline, then its body — the BEIR
convention bm25desk's readers follow; urls are not indexed) and analyses it the same way:
lowercased ``\\w+`` words, no stop words, no stemming. bm25desk, tantivy (a regex tokenizer plus
its lowercase filter), whoosh (``RegexTokenizer(r"\\w+") | LowercaseFilter()``) and bm25s
(``token_pattern=r"(?u)\\b\\w+\\b"``) do so with their own tokenizers; rank_bm25 has none and gets
:func:`ref_tokens`. So top-10s are comparable, and each engine's can be checked against a
brute-force ranking of its own formula on the same statistics (see ``verify.py``).

"Pre-tokenised" input is the corpus written once as space-separated tokens in the same layout:
bm25desk and tantivy and whoosh read it with a whitespace tokenizer (none of their public APIs
takes token lists from Python without a per-token cost), bm25s and rank_bm25 get token lists.

Interface (:class:`Engine`): ``build(corpus, index_dir, pretok)`` (reading the input is part of
it), ``open(index_dir)``, ``search(query, k)`` → ``[(doc position, score)]``, ``set_params(k1, b)``
(how a parameter change is applied: ``"query"`` time, ``"reindex"`` or unsupported). Document
positions are 0-based in corpus order; scores are the engine's own.
"""

from __future__ import annotations

import json
import os
import pickle
import re
import shutil
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

K1, B = 1.2, 0.75
RERANK_K1, RERANK_B = 0.9, 0.4  # BEIR/Anserini's defaults: a realistic "slider moved" setting

_WORD = re.compile(r"\w+")


def ref_tokens(text: str) -> list[str]:
    """The reference analysis: ``\\w+`` runs, each lowercased (bm25desk's ``word`` analyser)."""
    return [t.lower() for t in _WORD.findall(text)]


# -- corpus ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Corpus:
    """A prepared benchmark corpus (see ``run.py``): the raw file, its pre-tokenised twin, sizes.

    ``layout`` is ``passages`` (``id<TAB>text``), ``documents``
    (``docid<TAB>url<TAB>title<TAB>body``) or ``beir`` (``corpus.jsonl``). The pre-tokenised file
    is always TSV: ``id<TAB>tokens`` for passages, ``id<TAB>-<TAB>title tokens<TAB>body tokens``
    otherwise.
    """

    name: str
    layout: str
    raw: str
    pretok: str
    n_docs: int
    n_tokens: int

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=1), encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> Corpus:
        return cls(**json.loads(path.read_text(encoding="utf-8")))

    @property
    def bm25desk_format(self) -> str:
        return {"passages": "msmarco-passages", "documents": "msmarco-docs", "beir": "beir"}[
            self.layout
        ]

    @property
    def pretok_format(self) -> str:
        return "msmarco-passages" if self.layout == "passages" else "msmarco-docs"


def _blank(s: str) -> bool:
    return not s.strip()


def read_parts(corpus: Corpus) -> Iterator[tuple[str, str, str]]:
    """Yield ``(docid, title, body)`` of every document (title empty for passages).

    Skips what bm25desk's readers skip on these files (blank documents; later duplicates of an
    id), so every engine indexes exactly the same documents in the same order.
    """
    seen: set[str] = set()
    path = corpus.raw
    if corpus.layout == "beir":
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    continue
                rec = json.loads(line)
                docid = str(rec.get("_id", "")).strip()
                title = " ".join(str(rec.get("title") or "").split())
                body = str(rec.get("text") or "")
                if not docid or (_blank(title) and _blank(body)) or docid in seen:
                    continue
                seen.add(docid)
                yield docid, title, body
        return
    with open(path, encoding="utf-8", errors="replace", newline="\n") as fh:
        for line in fh:
            line = line.rstrip("\n").rstrip("\r")
            if corpus.layout == "passages":
                docid, _, body = line.partition("\t")
                title = ""
            else:
                parts = line.split("\t")
                if len(parts) != 4:
                    continue
                docid, _url, title, body = parts
                title = " ".join(title.split())
            docid = docid.strip()
            if not docid or (_blank(title) and _blank(body)) or docid in seen:
                continue
            seen.add(docid)
            yield docid, title, body


def read_raw(corpus: Corpus) -> Iterator[tuple[str, str]]:
    """Yield ``(docid, text)``: text = title + newline + body (as bm25desk's readers make it)."""
    for docid, title, body in read_parts(corpus):
        yield docid, (f"{title}\n{body}" if title and body else (title or body))


def read_pretok(corpus: Corpus) -> Iterator[tuple[str, str]]:
    """Yield ``(docid, space-separated tokens)`` from the pre-tokenised file."""
    with open(corpus.pretok, encoding="utf-8", newline="\n") as fh:
        if corpus.layout == "passages":
            for line in fh:
                docid, _, toks = line.rstrip("\n").partition("\t")
                yield docid, toks
        else:
            for line in fh:
                docid, _, title, body = line.rstrip("\n").split("\t")
                yield docid, f"{title} {body}" if title else body


def dir_size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


# -- engines --------------------------------------------------------------------------------------


class Engine:
    """The common interface (see the module docstring)."""

    name: ClassVar[str]
    formula: ClassVar[str]  # the oracle formula its scores follow (verify.py)
    reparam: ClassVar[str]  # "query" (any parameters at query time), "reindex" or "no"
    pretok_note: ClassVar[str] = ""
    persist_note: ClassVar[str] = ""
    k1: float = K1
    b: float = B

    def version(self) -> str:
        raise NotImplementedError

    def build(self, corpus: Corpus, index_dir: Path, pretok: bool) -> dict[str, Any]:
        raise NotImplementedError

    def open(self, index_dir: Path, corpus: Corpus) -> None:
        raise NotImplementedError

    def search(self, query: str, k: int = 10) -> list[tuple[int, float]]:
        raise NotImplementedError

    def set_params(self, k1: float, b: float) -> None:
        """Apply new parameters (engines with ``reparam == "query"``)."""
        raise NotImplementedError


class Bm25desk(Engine):
    """bm25desk through its public API; parameters are a new variant instance (no rebuild)."""

    name = "bm25desk"
    formula = "lucene"
    reparam = "query"
    pretok_note = "pre-tokenised TSV, whitespace analyser"

    def version(self) -> str:
        import bm25desk
        import bm25desk.engine  # the library import, timed apart from opening

        return str(bm25desk.__version__)

    def _variant(self) -> Any:
        from bm25desk.engine import get_variant

        return get_variant("lucene", k1=self.k1, b=self.b)

    def build(self, corpus: Corpus, index_dir: Path, pretok: bool) -> dict[str, Any]:
        from bm25desk.engine import IndexStore, build_index
        from bm25desk.engine.analysis.analyzer import Analyzer

        if pretok:
            analyzer = Analyzer(tokenizer="whitespace", lowercase=False)
            src, fmt = corpus.pretok, corpus.pretok_format
        else:
            analyzer = Analyzer(tokenizer="word", lowercase=True)
            src, fmt = corpus.raw, corpus.bm25desk_format
        report = build_index(  # workers=None: one process per core, as the CLI and the app do
            src, name="bench", fmt=fmt, analyzer=analyzer, store=IndexStore(index_dir), workers=None
        )
        return {"n_docs": report.n_docs, "n_terms": report.n_terms, "skipped": len(report.skipped)}

    def open(self, index_dir: Path, corpus: Corpus) -> None:
        from bm25desk.engine import IndexStore, Searcher

        self.searcher = Searcher(IndexStore(index_dir).open("bench"))
        self.variant = self._variant()

    explain = False
    """Also build per-term explanations and count the matches (what the app shows)."""

    def search(self, query: str, k: int = 10) -> list[tuple[int, float]]:
        res = self.searcher.search(
            query,
            self.variant,
            k=k,
            syntax=False,
            contributions=self.explain,
            count=self.explain,
        )
        hits = res.hits
        if hasattr(hits, "docnos"):  # the engine's lazy hits: whole columns, no Hit objects
            return list(zip(hits.docnos.tolist(), hits.scores.tolist(), strict=True))
        return [(h.docno, h.score) for h in hits]

    def set_params(self, k1: float, b: float) -> None:
        self.k1, self.b = k1, b
        self.variant = self._variant()


class Bm25s(Engine):
    """bm25s: weights precomputed at index time (a parameter change means re-indexing)."""

    name = "bm25s-numpy"
    formula = "bm25s"
    reparam = "reindex"
    backend = "numpy"
    pretok_note = "token lists"

    def version(self) -> str:
        import bm25s

        return str(bm25s.__version__)

    def _new(self) -> Any:
        import bm25s

        return bm25s.BM25(k1=self.k1, b=self.b, method="lucene", backend=self.backend)

    def build(self, corpus: Corpus, index_dir: Path, pretok: bool) -> dict[str, Any]:
        import bm25s

        if pretok:
            tokens: Any = [t.split() for _, t in read_pretok(corpus)]
        else:
            texts = [t for _, t in read_raw(corpus)]
            tokens = bm25s.tokenize(
                texts,
                lower=True,
                token_pattern=r"(?u)\b\w+\b",
                stopwords=None,
                show_progress=False,
            )
            del texts
        retriever = self._new()
        retriever.index(tokens, show_progress=False)
        retriever.save(str(index_dir), show_progress=False)
        self.retriever = retriever
        self._tokens = tokens
        return {"n_docs": int(retriever.scores["num_docs"]), "n_terms": len(retriever.vocab_dict)}

    def reindex(self, k1: float, b: float) -> float:
        """Rebuild the score matrix for new parameters from the tokens in memory; return seconds."""
        self.k1, self.b = k1, b
        started = time.perf_counter()
        retriever = self._new()
        retriever.index(self._tokens, show_progress=False)
        self.retriever = retriever
        return time.perf_counter() - started

    def open(self, index_dir: Path, corpus: Corpus) -> None:
        import bm25s

        self.retriever = bm25s.BM25.load(str(index_dir), mmap=True, show_progress=False)
        if self.retriever.backend != self.backend:  # the saved params carry the backend
            self.retriever.backend = self.backend
            if self.backend == "numba":
                self.retriever.activate_numba_scorer()

    def search(self, query: str, k: int = 10) -> list[tuple[int, float]]:
        r = self.retriever
        vocab = r.vocab_dict
        ids = [vocab[t] for t in dict.fromkeys(ref_tokens(query)) if t in vocab]
        if not ids:
            return []
        docs, scores = r.retrieve([ids], k=k, show_progress=False, n_threads=1)
        return [(int(d), float(s)) for d, s in zip(docs[0], scores[0], strict=True) if s > 0]


class Bm25sNumba(Bm25s):
    name = "bm25s-numba"
    backend = "numba"


class Tantivy(Engine):
    """tantivy (Python bindings): BM25 with k1 = 1.2, b = 0.75 compiled in; block-max WAND."""

    name = "tantivy"
    formula = "tantivy"
    reparam = "no"
    pretok_note = "pre-tokenised TSV, whitespace tokenizer"
    heap = 512 << 20

    def version(self) -> str:
        from importlib.metadata import version

        return version("tantivy")

    def _schema(self, pretok: bool) -> Any:
        import tantivy

        sb = tantivy.SchemaBuilder()
        sb.add_unsigned_field("docno", stored=False, fast=True)
        sb.add_text_field(
            "body", stored=False, tokenizer_name="ws" if pretok else "words", index_option="freq"
        )
        return sb.build()

    def _register(self, index: Any) -> None:
        import tantivy

        index.register_tokenizer(
            "words",
            tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.regex(r"\w+"))
            .filter(tantivy.Filter.lowercase())
            .build(),
        )
        index.register_tokenizer(
            "ws", tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build()
        )

    def build(self, corpus: Corpus, index_dir: Path, pretok: bool) -> dict[str, Any]:
        import tantivy

        index_dir.mkdir(parents=True, exist_ok=True)
        index = tantivy.Index(self._schema(pretok), path=str(index_dir))
        self._register(index)
        writer = index.writer(self.heap, 0)  # 0: tantivy picks the thread count (both cores)
        source = read_pretok(corpus) if pretok else read_raw(corpus)
        Document = tantivy.Document
        for i, (_, text) in enumerate(source):
            doc = Document()
            doc.add_unsigned("docno", i)
            doc.add_text("body", text)
            writer.add_document(doc)
        writer.commit()
        writer.wait_merging_threads()
        index.reload()
        return {"n_docs": index.searcher().num_docs, "segments": index.searcher().num_segments}

    def open(self, index_dir: Path, corpus: Corpus) -> None:
        import tantivy

        self.index = tantivy.Index.open(str(index_dir))
        self._register(self.index)
        self.searcher = self.index.searcher()
        self.schema = self.index.schema
        self.Query, self.Occur = tantivy.Query, tantivy.Occur

    def search(self, query: str, k: int = 10) -> list[tuple[int, float]]:
        terms = list(dict.fromkeys(ref_tokens(query)))
        if not terms:
            return []
        tq = self.Query.term_query
        q = self.Query.boolean_query(
            [(self.Occur.Should, tq(self.schema, "body", t, index_option="freq")) for t in terms]
        )
        res = self.searcher.search(q, k, count=False)  # count=True would disable block-max WAND
        hits = res.hits
        if not hits:
            return []
        docnos = self.searcher.fast_field_values("docno", [a for _, a in hits])
        return [(int(d), float(s)) for (s, _), d in zip(hits, docnos, strict=True)]


class Whoosh(Engine):
    """whoosh 2.7 BM25F (its own idf, one-byte lengths); parameters at query time."""

    name = "whoosh"
    formula = "whoosh"
    reparam = "query"
    pretok_note = "pre-tokenised TSV, space tokenizer"

    def version(self) -> str:
        import whoosh

        return str(whoosh.versionstring())

    def build(self, corpus: Corpus, index_dir: Path, pretok: bool) -> dict[str, Any]:
        from whoosh import index
        from whoosh.analysis import LowercaseFilter, RegexTokenizer, SpaceSeparatedTokenizer
        from whoosh.fields import STORED, TEXT, Schema

        analyzer = (
            SpaceSeparatedTokenizer() if pretok else RegexTokenizer(r"\w+") | LowercaseFilter()
        )
        schema = Schema(docno=STORED(), body=TEXT(analyzer=analyzer, phrase=False))
        index_dir.mkdir(parents=True, exist_ok=True)
        ix = index.create_in(str(index_dir), schema)
        writer = ix.writer(limitmb=1024)
        source = read_pretok(corpus) if pretok else read_raw(corpus)
        for i, (_, text) in enumerate(source):
            writer.add_document(docno=i, body=text)
        writer.commit()
        return {"n_docs": ix.doc_count()}

    def open(self, index_dir: Path, corpus: Corpus) -> None:
        from whoosh import index

        self.ix = index.open_dir(str(index_dir))
        self._searcher()

    def _searcher(self) -> None:
        from whoosh.scoring import BM25F

        self.searcher = self.ix.searcher(weighting=BM25F(B=self.b, K1=self.k1))

    def search(self, query: str, k: int = 10) -> list[tuple[int, float]]:
        from whoosh.query import Or, Term

        terms = list(dict.fromkeys(ref_tokens(query)))
        if not terms:
            return []
        hits = self.searcher.search(Or([Term("body", t) for t in terms]), limit=k)
        return [(int(h["docno"]), float(h.score)) for h in hits]

    def set_params(self, k1: float, b: float) -> None:
        self.k1, self.b = k1, b
        self._searcher()


class RankBM25(Engine):
    """rank_bm25 ``BM25Okapi``: dense Python scoring; persisted with pickle (it has no format)."""

    name = "rank_bm25"
    formula = "okapi"
    reparam = "query"
    pretok_note = "token lists"
    persist_note = "pickle"

    def version(self) -> str:
        from importlib.metadata import version

        return version("rank-bm25")

    def build(self, corpus: Corpus, index_dir: Path, pretok: bool) -> dict[str, Any]:
        from rank_bm25 import BM25Okapi

        if pretok:
            tokens: Iterator[list[str]] = (t.split() for _, t in read_pretok(corpus))
        else:
            tokens = (ref_tokens(t) for _, t in read_raw(corpus))
        self.bm25 = BM25Okapi(tokens, k1=self.k1, b=self.b, epsilon=0.25)
        index_dir.mkdir(parents=True, exist_ok=True)
        with open(index_dir / "bm25.pickle", "wb") as fh:
            pickle.dump(self.bm25, fh, protocol=pickle.HIGHEST_PROTOCOL)
        return {"n_docs": self.bm25.corpus_size, "n_terms": len(self.bm25.idf)}

    def open(self, index_dir: Path, corpus: Corpus) -> None:
        with open(index_dir / "bm25.pickle", "rb") as fh:
            self.bm25 = pickle.load(fh)  # our own file, written by build()

    def search(self, query: str, k: int = 10) -> list[tuple[int, float]]:
        terms = list(dict.fromkeys(ref_tokens(query)))
        scores = self.bm25.get_scores(terms)
        k = min(k, scores.size)
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.lexsort((top, -scores[top]))]
        return [(int(d), float(scores[d])) for d in top if scores[d] != 0.0]

    def set_params(self, k1: float, b: float) -> None:
        self.k1 = self.bm25.k1 = k1
        self.b = self.bm25.b = b


ENGINES: dict[str, type[Engine]] = {
    e.name: e for e in (Bm25desk, Bm25s, Bm25sNumba, Tantivy, Whoosh, RankBM25)
}


def make(name: str) -> Engine:
    return ENGINES[name]()


def clean(path: Path) -> None:
    if path.exists():
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    os.sync()

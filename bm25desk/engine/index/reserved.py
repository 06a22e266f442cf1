r"""Reserved terms: fields and metadata carried in the ordinary postings under a ``\x1f`` prefix.

A document's separately indexed fields (title, file name, headings, chosen columns) and its
metadata (file type, folder, year, declared columns) are stored as extra postings of terms no
analyzer can produce — ``\x1f`` is whitespace to every tokenizer, so no user term contains it.
Riding in the normal postings, they are written, merged, edited, appended, checked and built by
Spark/Dask exactly like body terms, without a second storage format. They are *not* counted in
document lengths, N's vocabulary size, the term browser or suggestions (:func:`reserved_bounds`).

The three shapes (each part after the prefix separated by ``\x1f``):

- ``field_term(f, t)``  — term ``t`` in field ``f``; tf = occurrences in that field;
- ``field_length_term(f)`` — one posting per document with a non-empty field ``f``; tf = the
  field's length in terms (a per-document integer that merges like any posting);
- ``meta_term(k, v)`` — the document has value ``v`` for metadata key ``k`` (tf 1).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

PREFIX = "\x1f"
_FIELD = PREFIX + "f" + PREFIX
_LENGTH = PREFIX + "l" + PREFIX
_META = PREFIX + "m" + PREFIX

__all__ = [
    "PREFIX",
    "field_length_term",
    "field_prefix",
    "field_term",
    "is_reserved",
    "meta_prefix",
    "meta_term",
    "reserved_bounds",
    "reserved_postings",
]


def _check_name(kind: str, name: str) -> str:
    if not name or PREFIX in name:
        raise ValueError(f"a {kind} name must be non-empty and must not contain \\x1f: {name!r}")
    return name


def field_prefix(field: str) -> str:
    """Return the prefix shared by every term of ``field``."""
    return _FIELD + _check_name("field", field) + PREFIX


def field_term(field: str, term: str) -> str:
    """Return the reserved term for ``term`` occurring in ``field``."""
    return field_prefix(field) + term


def field_length_term(field: str) -> str:
    """Return the reserved term whose tf is each document's length in ``field``."""
    return _LENGTH + _check_name("field", field)


def meta_prefix(key: str) -> str:
    """Return the prefix shared by every value of metadata ``key``."""
    return _META + _check_name("metadata key", key) + PREFIX


def meta_term(key: str, value: str) -> str:
    """Return the reserved term for metadata ``key`` having ``value`` (a keyword, kept as is)."""
    return meta_prefix(key) + value.replace(PREFIX, " ")


def is_reserved(term: str) -> bool:
    """Return whether ``term`` is a reserved (field or metadata) term."""
    return term.startswith(PREFIX)


def reserved_postings(
    fields: Iterable[tuple[str, str]],
    meta: Iterable[tuple[str, str]],
    terms_of: Callable[[str], list[str]],
) -> dict[str, int]:
    """Return one document's reserved terms with their tfs.

    ``fields`` are (field, text) pairs analysed with ``terms_of`` (the index's analyzer); a field
    named twice adds up. ``meta`` are (key, value) pairs, each value one keyword.
    """
    out: dict[str, int] = {}
    lengths: Counter[str] = Counter()
    for field, text in fields:
        terms = terms_of(text)
        if not terms:
            continue
        prefix = field_prefix(field)
        lengths[field] += len(terms)
        for term, tf in Counter(terms).items():
            key = prefix + term
            out[key] = out.get(key, 0) + tf
    for field, length in lengths.items():
        out[field_length_term(field)] = length
    for key, value in meta:
        out[meta_term(key, value)] = 1
    return out


def reserved_bounds(term_bytes: Callable[[int], bytes], n: int) -> tuple[int, int]:
    """Return the id range ``[lo, hi)`` of the reserved terms in a lexicon sorted by UTF-8 bytes.

    Every reserved term starts with byte 0x1f, so they are contiguous: ids below ``lo`` start
    with a smaller byte, ids from ``hi`` on with a larger one.
    """

    def lower_bound(key: bytes) -> int:
        lo, hi = 0, n
        while lo < hi:
            mid = (lo + hi) // 2
            if term_bytes(mid) < key:
                lo = mid + 1
            else:
                hi = mid
        return lo

    return lower_bound(b"\x1f"), lower_bound(b"\x20")

"""Filters: which documents a search may return, by file type, folder, modified date and metadata.

A :class:`Filters` value is turned into a boolean mask over the index's document slots by
:func:`filter_mask` (cached per index generation and filters). The ranking takes the mask as its
allowed set, beside the query's own constraints, so a filtered top k is exactly the unfiltered
ranking restricted to the filtered documents: N, df and the average length stay the whole
collection's (:data:`FILTERED_NOTE` says so in the explanation).

Rules: several values of one key are alternatives (OR); different keys must all hold (AND). A
folder includes its subfolders. ``modified_from`` / ``modified_to`` are whole local days, both
included, on each document's modification time (documents without one — corpus-file records —
never pass a date filter). Types and folders are the ``type`` and ``folder`` metadata that
folder documents carry (:func:`~bm25desk.engine.readers.folder.file_fields_and_meta`); ``where``
tests any metadata key, such as a column declared with ``--meta-column``.
"""

from __future__ import annotations

import datetime as dt
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from bm25desk.engine.index.reader import Index
from bm25desk.engine.index.reserved import PREFIX, meta_prefix, meta_term

__all__ = [
    "FILTERED_NOTE",
    "FilterError",
    "Filters",
    "filter_mask",
    "filtered_allowed",
    "index_cache",
    "meta_keys",
    "mtimes",
    "values_of",
]

FILTERED_NOTE = "filtered: N, df and Lavg are the collection's (filters only restrict the hits)"
"""The explanation's note on every term while filters are on."""

_META_ROOT = PREFIX + "m" + PREFIX  # what every metadata term starts with (reserved.py)
_CACHED = 32  # filter masks kept per index


class FilterError(ValueError):
    """Filters that cannot be applied (unknown key, from after to ...); the message is one line."""


@dataclass(frozen=True, slots=True)
class Filters:
    """What a search may return; empty fields filter nothing. Immutable and hashable.

    Build it with :meth:`of` (any iterables, a mapping for ``where``); the constructor takes the
    normalised tuples. Values are normalised on creation: types lower case without a leading dot,
    folders as relative POSIX paths (``.`` is the root), ``where`` grouped by key, everything
    sorted and without repeats.

    Parameters
    ----------
    types
        File types (extensions): ``pdf``, ``md`` ...
    folders
        Folders relative to the indexed root; each includes its subfolders.
    modified_from, modified_to
        First and last local day of the modification time, both included.
    where
        ``(key, (value, ...))`` pairs: the metadata key has one of the values.
    """

    types: tuple[str, ...] = ()
    folders: tuple[str, ...] = ()
    modified_from: dt.date | None = None
    modified_to: dt.date | None = None
    where: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def __post_init__(self) -> None:
        """Normalise the values and check the date range."""
        norm = object.__setattr__
        norm(self, "types", _sorted(t.strip().lstrip(".").lower() for t in self.types))
        norm(self, "folders", _sorted(_folder(f) for f in self.folders))
        grouped: dict[str, set[str]] = {}
        for key, values in self.where:
            if not key or PREFIX in key:
                raise FilterError(f"bad metadata key {key!r}")
            grouped.setdefault(key, set()).update(v.strip() for v in values if v.strip())
        norm(self, "where", tuple((k, tuple(sorted(grouped[k]))) for k in sorted(grouped)))
        lo, hi = self.modified_from, self.modified_to
        if lo is not None and hi is not None and lo > hi:
            raise FilterError(f"the modified range is empty: {lo.isoformat()} is after {hi}")

    @classmethod
    def of(
        cls,
        *,
        types: Iterable[str] = (),
        folders: Iterable[str] = (),
        modified_from: dt.date | str | None = None,
        modified_to: dt.date | str | None = None,
        where: Mapping[str, Iterable[str]] | Iterable[tuple[str, str]] = (),
    ) -> Filters:
        """Return filters from friendly values.

        Dates may be ``YYYY-MM-DD`` text; ``where`` a mapping of key → values (or one value),
        or ``(key, value)`` pairs.

        Raises
        ------
        FilterError
            For a date that is not ``YYYY-MM-DD``, a bad key or an empty date range.
        """
        pairs: list[tuple[str, tuple[str, ...]]]
        if isinstance(where, Mapping):
            pairs = [(k, tuple([v] if isinstance(v, str) else v)) for k, v in where.items()]
        else:
            pairs = [(k, (v,)) for k, v in where]
        return cls(
            tuple(types),
            tuple(folders),
            _date(modified_from, "modified since"),
            _date(modified_to, "modified until"),
            tuple(pairs),
        )

    def __bool__(self) -> bool:
        """Return whether anything is filtered."""
        return bool(
            self.types
            or self.folders
            or self.where
            or self.modified_from is not None
            or self.modified_to is not None
        )

    def without(self, dimension: str) -> Filters:
        """Return these filters without one dimension (what that dimension's facet counts under).

        ``dimension`` is ``type``, ``folder``, ``year`` (the date range too) or a ``where`` key.
        """
        if dimension == "type":
            return _replace(self, types=(), where=self._where_without("type"))
        if dimension == "folder":
            return _replace(self, folders=(), where=self._where_without("folder"))
        if dimension == "year":
            return _replace(
                self, modified_from=None, modified_to=None, where=self._where_without("year")
            )
        return _replace(self, where=self._where_without(dimension))

    def _where_without(self, key: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
        return tuple((k, v) for k, v in self.where if k != key)

    def as_dict(self) -> dict[str, Any]:
        """Return the JSON shape (the CLI's ``filters`` object)."""
        return {
            "types": list(self.types),
            "folders": list(self.folders),
            "modified_from": self.modified_from.isoformat() if self.modified_from else None,
            "modified_to": self.modified_to.isoformat() if self.modified_to else None,
            "where": {k: list(v) for k, v in self.where},
        }


def _sorted(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted({v for v in values if v}))


def _folder(folder: str) -> str:
    """Return a folder as the index records it: POSIX, relative, ``.`` for the root."""
    parts = [p for p in folder.replace("\\", "/").split("/") if p and p != "."]
    return "/".join(parts) or "."


def _date(value: dt.date | str | None, what: str) -> dt.date | None:
    if value is None or isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(value.strip())
    except ValueError:
        raise FilterError(f"{what}: {value!r} is not a date (YYYY-MM-DD)") from None


def _replace(filters: Filters, **changes: Any) -> Filters:
    fields = {
        "types": filters.types,
        "folders": filters.folders,
        "modified_from": filters.modified_from,
        "modified_to": filters.modified_to,
        "where": filters.where,
    }
    return Filters(**{**fields, **changes})


# -- per-index data, built once and kept while the index object lives -----------------------------


class _IndexCache:
    """What filters and facets keep of one opened index (one generation)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.masks: OrderedDict[Filters, Any] = OrderedDict()
        self.keys: tuple[str, ...] | None = None
        self.mtimes: Any = None
        self.facets: dict[str, Any] = {}  # facets.py: key -> (values, docnos, ordinals)


_CACHES: weakref.WeakKeyDictionary[Index, _IndexCache] = weakref.WeakKeyDictionary()
_CACHES_LOCK = threading.Lock()


def index_cache(index: Index) -> _IndexCache:
    """Return the filter/facet cache of ``index`` (made on first use)."""
    with _CACHES_LOCK:
        cache = _CACHES.get(index)
        if cache is None:
            cache = _CACHES[index] = _IndexCache()
        return cache


def meta_keys(index: Index) -> tuple[str, ...]:
    """Return the index's metadata keys: those its manifest declares, then any others found."""
    cache = index_cache(index)
    if cache.keys is None:
        declared = [k for k in index.source.get("meta_keys", []) if isinstance(k, str)]
        ids, _, _ = index.reserved_table(_META_ROOT)
        found = {index.term_name(int(i))[len(_META_ROOT) :].split(PREFIX, 1)[0] for i in ids}
        cache.keys = tuple(dict.fromkeys([*declared, *sorted(found)]))
    return cache.keys


def mtimes(index: Index) -> Any:
    """Return every document slot's modification time (0 where there is none), cached."""
    cache = index_cache(index)
    if cache.mtimes is None:
        parts = [np.asarray(s.mtime, dtype=np.float64) for s in index.segments]
        cache.mtimes = np.concatenate(parts) if parts else np.zeros(0, dtype=np.float64)
    return cache.mtimes


def values_of(index: Index, key: str) -> list[str]:
    """Return the values metadata ``key`` has in live documents, in byte order."""
    prefix = meta_prefix(key)
    ids, _, _ = index.reserved_table(prefix)
    return [index.term_name(int(i))[len(prefix) :] for i in ids]


# -- the mask ------------------------------------------------------------------------------------


def filter_mask(index: Index, filters: Filters) -> Any:
    """Return the read-only boolean mask (by docno) of the live documents passing ``filters``.

    Cached per (index generation, filters): the same filters over the same opened index cost
    one dictionary lookup.

    Raises
    ------
    FilterError
        For a key the index has no metadata for (``--type`` on a corpus-file index, an unknown
        ``where`` key), or a date range on an index whose documents have no modification times.
    """
    cache = index_cache(index)
    with cache.lock:
        mask = cache.masks.get(filters)
        if mask is not None:
            cache.masks.move_to_end(filters)
            return mask
    mask = _compute(index, filters)
    mask.setflags(write=False)
    with cache.lock:
        cache.masks[filters] = mask
        while len(cache.masks) > _CACHED:
            cache.masks.popitem(last=False)
    return mask


def _compute(index: Index, filters: Filters) -> Any:
    n = index.n_slots
    live = index.live
    ok = np.ones(n, dtype=bool) if live is None else np.array(live, dtype=bool)
    known = meta_keys(index)

    def require(key: str, what: str, hint: str = "") -> None:
        if key not in known:
            have = ", ".join(known) or "none"
            raise FilterError(f"index {index.name!r} has no {what} (metadata keys: {have}){hint}")

    folder_hint = "; folder indexes have them (rebuild one built before filters existed)"
    if filters.types:
        require("type", "file types", folder_hint)
        ok &= _any_value(index, "type", filters.types)
    if filters.folders:
        require("folder", "folders", folder_hint)
        ok &= _folders(index, filters.folders)
    for key, values in filters.where:
        require(key, f"metadata key {key!r}")
        ok &= _any_value(index, key, values)
    if filters.modified_from is not None or filters.modified_to is not None:
        ok &= _dates(index, filters.modified_from, filters.modified_to)
    return ok


def _any_value(index: Index, key: str, values: Iterable[str]) -> Any:
    m = np.zeros(index.n_slots, dtype=bool)
    for value in values:
        m[index.postings(meta_term(key, value))[0]] = True
    return m


def _folders(index: Index, folders: tuple[str, ...]) -> Any:
    """Documents in any of ``folders`` or their subfolders (``.`` is every folder)."""
    every = values_of(index, "folder")
    chosen = [v for v in every if any(f == "." or v == f or v.startswith(f + "/") for f in folders)]
    return _any_value(index, "folder", chosen)


def _dates(index: Index, first: dt.date | None, last: dt.date | None) -> Any:
    times = mtimes(index)
    if not bool((times > 0).any()):
        raise FilterError(
            f"the documents of index {index.name!r} have no modification dates "
            "(only folder documents do)"
        )
    ok = times > 0
    if first is not None:
        ok &= times >= _local_midnight(first)
    if last is not None:
        ok &= times < _local_midnight(last + dt.timedelta(days=1))
    return ok


def _local_midnight(day: dt.date) -> float:
    """Return the timestamp of ``day``'s start in local time."""
    return dt.datetime.combine(day, dt.time()).timestamp()


def filtered_allowed(index: Index, constraints: Any, filters: Filters | None) -> Any:
    """Return the ranking's allowed mask: the query's constraint mask (or None) and the filters'.

    None when neither restricts anything; never a cached array the caller could change.
    """
    if not filters:
        return constraints
    mask = filter_mask(index, filters)
    return mask.copy() if constraints is None else constraints & mask

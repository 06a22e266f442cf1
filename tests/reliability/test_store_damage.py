"""Every file of an index damaged in every way: exit 3 with "rebuild it", and check reports it.

The index has two segments, a deletion file, a merged lexicon, a skip list and the generation's
manifest copy (a folder built as version A, then updated to version B). Every file is truncated,
zeroed, deleted, extended and bit-flipped at several offsets; arrays are replaced by crafted ones
(wrong dtype, shape and values — with the manifest's checksums left stale, and re-hashed so that
only the structural checks stand between them and the C kernel); the manifest is crafted too.
``search`` must exit 3 with a one-line "rebuild it" (or, for the files a search never reads,
answer exactly as before) and never print a traceback; ``check`` must exit 3.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from store_versions import VERSION_A, VERSION_B, write_version

from bm25desk.engine import IndexStore, build_index, update_index
from bm25desk.engine.index.integrity import file_checksum
from bm25desk.engine.index.manifest import manifest_checksum

pytestmark = pytest.mark.slow

NOT_SEARCHED = ("skipped-", "manifest-")  # a search never reads these: same answer is fine


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pristine")
    folder = root / "docs"
    write_version(folder, VERSION_A)
    (folder / "bin.txt").write_bytes(b"\x00\x01\x02" * 50)  # a skipped file: a skip list
    store = IndexStore(root / "data" / "indexes")
    build_index(folder, name="victim", store=store)
    write_version(folder, VERSION_B)
    (folder / "bin.txt").write_bytes(b"\x00\x01\x02" * 50)
    update_index("victim", store=store)
    path = store.path("victim")
    m = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    assert len(m["segments"]) == 2
    assert any(e["deleted"] for e in m["segments"])
    assert m["lexicon"]
    assert m["skips"]
    return path


def _files(index_dir: Path) -> list[str]:
    return sorted(
        p.relative_to(index_dir).as_posix()
        for p in index_dir.rglob("*")
        if p.is_file() and not p.relative_to(index_dir).parts[0].startswith(".")
    )


def _flip(offset: Callable[[int], int]) -> Callable[[bytes], bytes | None]:
    def damage(data: bytes) -> bytes | None:
        if not data:
            return None
        out = bytearray(data)
        out[min(offset(len(data)), len(data) - 1)] ^= 0x04
        return bytes(out)

    return damage


BYTE_DAMAGE: dict[str, Callable[[bytes], bytes | None]] = {
    "truncated to half": lambda d: d[: len(d) // 2],
    "truncated to nothing": lambda d: b"",
    "zeroed": lambda d: bytes(len(d)),
    "one byte appended": lambda d: d + b"\x01",
    "bit flipped at 0": _flip(lambda n: 0),
    "bit flipped at 60": _flip(lambda n: 60),
    "bit flipped in the middle": _flip(lambda n: n // 2),
    "bit flipped at the end": _flip(lambda n: n - 1),
}


def _reference(cli, data: Path) -> dict[str, str]:
    out = {}
    for q in ("apple red banana cherry wine w3",):
        code, text, err = cli(
            "search", "victim", q, "-k", "1000", "--json", "--data-dir", str(data)
        )
        assert code == 0, err
        out[q] = json.dumps([(h["docid"], h["score"]) for h in json.loads(text)["hits"]])
    return out


def _verdict(
    cli, data: Path, reference: dict[str, str], rel: str, same_ok: bool = False
) -> tuple[bool, str]:
    """Return (search refused as damaged, what went wrong if anything).

    ``same_ok``: an exactly equal answer is fine too (a crafted but consistent index).
    """
    refused = False
    for q, expected in reference.items():
        code, text, err = cli(
            "search", "victim", q, "-k", "1000", "--json", "--data-dir", str(data)
        )
        if "Traceback" in err or "Traceback" in text:
            return False, f"traceback: {err[-300:]}"
        if code == 3:
            if "rebuild it" not in err or err.count("\n") != 1:
                return False, f"exit 3 without a one-line 'rebuild it': {err!r}"
            refused = True
            continue
        got = json.dumps([(h["docid"], h["score"]) for h in json.loads(text)["hits"]])
        if got != expected or not (same_ok or rel.startswith(NOT_SEARCHED)):
            return (
                False,
                f"exit {code} and {'a different' if got != expected else 'the same'} answer",
            )
    code, _, err = cli("check", "victim", "--data-dir", str(data))
    if code != 3 and not (same_ok and not refused):
        return False, f"check exited {code}: {err!r}"
    return refused, ""


def _fresh_copy(pristine: Path, tmp: Path) -> tuple[Path, Path]:
    data = tmp / "data"
    target = data / "indexes" / "victim"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(pristine, target, ignore=shutil.ignore_patterns(".*"))
    return data, target


def _rehash(index_dir: Path, rels: list[str]) -> None:
    """Make the manifest agree with crafted files (an attacker's or a buggy writer's view)."""
    path = index_dir / "manifest.json"
    m = json.loads(path.read_text(encoding="utf-8"))
    for rel in rels:
        p = index_dir / rel
        m["files"][rel] = {"size": p.stat().st_size, "xxh3": file_checksum(p)}
    m["checksum"] = manifest_checksum(m)
    path.write_text(json.dumps(m), encoding="utf-8")


def _segments(index_dir: Path) -> list[str]:
    m = json.loads((index_dir / "manifest.json").read_text(encoding="utf-8"))
    return [e["name"] for e in m["segments"]]


CRAFTED: dict[str, Callable[[Path, str], list[str]]] = {}


def crafted(name: str):
    def register(fn):
        CRAFTED[name] = fn
        return fn

    return register


def _save(index_dir: Path, rel: str, arr: np.ndarray) -> list[str]:
    np.save(index_dir / rel, arr, allow_pickle=False)
    return [rel]


def _bytes(index_dir: Path, rel: str, change: Callable[[bytearray], None]) -> list[str]:
    data = bytearray((index_dir / rel).read_bytes())
    change(data)
    (index_dir / rel).write_bytes(bytes(data))
    return [rel]


@crafted("block last docnos shifted past the segment")
def _(d: Path, s: str) -> list[str]:
    return _save(d, f"{s}/blk_last.npy", np.load(d / f"{s}/blk_last.npy") + 10_000)


@crafted("block last docno negative")
def _(d: Path, s: str) -> list[str]:
    a = np.load(d / f"{s}/blk_last.npy")
    a[len(a) // 2] = -5
    return _save(d, f"{s}/blk_last.npy", a)


@crafted("block offsets out of order")
def _(d: Path, s: str) -> list[str]:
    return _save(d, f"{s}/blk_off.npy", np.load(d / f"{s}/blk_off.npy")[::-1].copy())


@crafted("block offsets as int32")
def _(d: Path, s: str) -> list[str]:
    return _save(d, f"{s}/blk_off.npy", np.load(d / f"{s}/blk_off.npy").astype(np.int32))


@crafted("block last docnos as a 2-d array")
def _(d: Path, s: str) -> list[str]:
    a = np.load(d / f"{s}/blk_last.npy")
    return _save(d, f"{s}/blk_last.npy", np.stack([a, a]))


@crafted("blocks zeroed")
def _(d: Path, s: str) -> list[str]:
    return _bytes(d, f"{s}/blocks.bin", lambda b: b.__setitem__(slice(None), bytes(len(b))))


@crafted("a block's bit width over 32")
def _(d: Path, s: str) -> list[str]:
    return _bytes(d, f"{s}/blocks.bin", lambda b: b.__setitem__(1, 40))


@crafted("a block's frontier names tf 0")
def _(d: Path, s: str) -> list[str]:
    # the first block holds at least one posting, so at least one frontier entry (at byte 3)
    return _bytes(d, f"{s}/blocks.bin", lambda b: b.__setitem__(3, 0))


@crafted("block pointers off by one")
def _(d: Path, s: str) -> list[str]:
    a = np.load(d / f"{s}/bptr.npy")
    a[1] += 1
    return _save(d, f"{s}/bptr.npy", a)


@crafted("text frames out of order")
def _(d: Path, s: str) -> list[str]:
    return _save(d, f"{s}/text.zoff.npy", np.load(d / f"{s}/text.zoff.npy")[::-1].copy())


@crafted("text frame past the file")
def _(d: Path, s: str) -> list[str]:
    a = np.load(d / f"{s}/text.zoff.npy")
    a[-1] += 50
    return _save(d, f"{s}/text.zoff.npy", a)


@crafted("ptr decreasing")
def _(d: Path, s: str) -> list[str]:
    a = np.load(d / f"{s}/ptr.npy")
    a[1], a[2] = a[2] + 3, a[1]
    return _save(d, f"{s}/ptr.npy", a)


@crafted("ptr end past the postings")
def _(d: Path, s: str) -> list[str]:
    a = np.load(d / f"{s}/ptr.npy")
    a[-1] += 100
    return _save(d, f"{s}/ptr.npy", a)


@crafted("ptr wrapping past 2**32 (narrow, uint32)")
def _(d: Path, s: str) -> list[str]:
    a = np.load(d / f"{s}/ptr.npy")
    assert a.dtype == np.uint32  # format 4 stores it narrow
    a[1] = np.iinfo(np.uint32).max
    return _save(d, f"{s}/ptr.npy", a)


@crafted("block offsets wrapping past 2**32 (narrow, uint32)")
def _(d: Path, s: str) -> list[str]:
    a = np.load(d / f"{s}/blk_off.npy")
    assert a.dtype == np.uint32
    a[len(a) // 2] = np.iinfo(np.uint32).max
    return _save(d, f"{s}/blk_off.npy", a)


def _retyped(name: str, dtype: type[np.generic]) -> Callable[[Path, str], list[str]]:
    def craft(d: Path, s: str) -> list[str]:
        return _save(d, f"{s}/{name}", np.load(d / f"{s}/{name}").astype(dtype))

    return craft


for _name, _dtype in (
    ("bptr.npy", np.uint16),
    ("cf.npy", np.int32),
    ("terms.off.npy", np.uint8),
    ("docid.off.npy", np.float64),
):
    crafted(f"{_name} as {np.dtype(_dtype).name}")(_retyped(_name, _dtype))


@crafted("narrow arrays in a segment claiming format 3")
def _(d: Path, s: str) -> list[str]:
    meta = json.loads((d / f"{s}/meta.json").read_text(encoding="utf-8"))
    meta["format"] = 3  # format 3 wrote every offset and count as int64
    (d / f"{s}/meta.json").write_text(json.dumps(meta), encoding="utf-8")
    return [f"{s}/meta.json"]


@crafted("doclen negative")
def _(d: Path, s: str) -> list[str]:
    a = np.load(d / f"{s}/doclen.npy")
    a[0] = -a[0] - 1
    return _save(d, f"{s}/doclen.npy", a)


@crafted("doclen doubled")
def _(d: Path, s: str) -> list[str]:
    return _save(d, f"{s}/doclen.npy", np.load(d / f"{s}/doclen.npy") * 2)


@crafted("docid_order not a permutation")
def _(d: Path, s: str) -> list[str]:
    return _save(d, f"{s}/docid_order.npy", np.zeros_like(np.load(d / f"{s}/docid_order.npy")))


@crafted("text offsets past the blob")
def _(d: Path, s: str) -> list[str]:
    a = np.load(d / f"{s}/text.off.npy")
    a[1] = a[-1] + 50
    return _save(d, f"{s}/text.off.npy", a)


@crafted("terms out of order")
def _(d: Path, s: str) -> list[str]:
    data = (d / f"{s}/terms.bin").read_bytes()
    (d / f"{s}/terms.bin").write_bytes(data[::-1])
    return [f"{s}/terms.bin"]


@crafted("object array")
def _(d: Path, s: str) -> list[str]:
    with open(d / f"{s}/cf.npy", "wb") as fh:
        np.save(fh, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    return [f"{s}/cf.npy"]


@crafted("meta.json lies about nnz")
def _(d: Path, s: str) -> list[str]:
    meta = json.loads((d / f"{s}/meta.json").read_text(encoding="utf-8"))
    meta["nnz"] += 1
    (d / f"{s}/meta.json").write_text(json.dumps(meta), encoding="utf-8")
    return [f"{s}/meta.json"]


def _edit_manifest(d: Path, change: Callable[[dict], None], rehash: bool) -> None:
    path = d / "manifest.json"
    m = json.loads(path.read_text(encoding="utf-8"))
    change(m)
    if rehash:
        m["checksum"] = manifest_checksum(m)
    path.write_text(json.dumps(m), encoding="utf-8")


MANIFESTS: dict[str, Callable[[dict], None]] = {
    "n_docs + 1": lambda m: m["stats"].update(n_docs=m["stats"]["n_docs"] + 1),
    "total_len - 1": lambda m: m["stats"].update(total_len=m["stats"]["total_len"] - 1),
    "n_terms + 1": lambda m: m["stats"].update(n_terms=m["stats"]["n_terms"] + 1),
    "segments swapped": lambda m: m["segments"].reverse(),
    "segment outside the index": lambda m: m["segments"][0].update(name="../../etc"),
    "deletion file dropped": lambda m: [e.update(deleted=None) for e in m["segments"]],
    "lexicon dropped": lambda m: m.update(lexicon=None),
    "lexicon outside": lambda m: m.update(lexicon="/etc"),
    "format as text": lambda m: m.update(format="2"),
    "generation negative": lambda m: m.update(generation=-1),
    "a file's checksum removed": lambda m: m["files"].pop(sorted(m["files"])[0]),
    "checksums removed": lambda m: m.pop("files"),
    "stats as a list": lambda m: m.update(stats=[1, 2]),
    "n_docs as text": lambda m: m["stats"].update(n_docs="7"),
}


def test_every_file_damaged_every_way(pristine: Path, tmp_path: Path, cli) -> None:
    data, target = _fresh_copy(pristine, tmp_path)
    reference = _reference(cli, data)
    failures: list[str] = []
    cases = 0
    for rel in _files(pristine):
        original = (pristine / rel).read_bytes()
        for kind, damage in [*BYTE_DAMAGE.items(), ("deleted", None)]:
            data, target = _fresh_copy(pristine, tmp_path)
            if damage is None:
                (target / rel).unlink()
            else:
                damaged = damage(original)
                if damaged is None or damaged == original:
                    continue
                (target / rel).write_bytes(damaged)
            cases += 1
            _, problem = _verdict(cli, data, reference, rel)
            if problem:
                failures.append(f"{rel} {kind}: {problem}")
    for seg_index in (0, 1):
        for kind, craft in CRAFTED.items():
            for rehash in (False, True):
                data, target = _fresh_copy(pristine, tmp_path)
                seg = _segments(target)[seg_index]
                rels = craft(target, seg)
                if rehash:
                    _rehash(target, rels)
                cases += 1
                refused, problem = _verdict(cli, data, reference, seg)
                if problem or not refused:
                    failures.append(f"{seg} {kind} (rehashed={rehash}): {problem or 'answered'}")
    for kind, change in MANIFESTS.items():
        for rehash in (False, True):
            data, target = _fresh_copy(pristine, tmp_path)
            _edit_manifest(target, change, rehash)
            cases += 1
            refused, problem = _verdict(cli, data, reference, "manifest.json", same_ok=rehash)
            if problem or not (refused or rehash):
                failures.append(f"manifest {kind} (rehashed={rehash}): {problem or 'answered'}")
    print(f"\n{cases} damage cases, {len(failures)} failed")
    assert cases > 500
    assert not failures, "\n".join(failures[:40])

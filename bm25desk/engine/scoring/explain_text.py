"""An explanation as text: JSON for programs, a Lucene-style tree for the terminal, Markdown."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from bm25desk.engine.scoring.formulas import fmt
from bm25desk.engine.scoring.results import variant_dict

if TYPE_CHECKING:
    from bm25desk.engine.scoring.explain import Explanation, TermExplanation


def as_dict(e: Explanation) -> dict[str, Any]:
    """Return a JSON-ready dict (the CLI's ``explain --json`` shape)."""
    return {
        "docid": e.docid,
        "docno": e.docno,
        "title": e.title,
        "score": e.score,
        "rank": e.rank,
        "matches": e.matches,
        "reason": e.reason,
        "length": e.length,
        "avgdl": e.avgdl,
        "documents": e.n_docs,
        "variant": variant_dict(e.variant),
        "contributions": [
            {
                "term": t.term,
                "surface": t.surface,
                "status": t.status,
                "qtf": t.qtf,
                "tf": t.tf,
                "df": t.df,
                "cf": t.cf,
                "idf": t.idf,
                "idf_formula": t.idf_text,
                "tf_part": t.tf_part,
                "tf_formula": t.tf_text,
                "weight": t.weight,
                "share": t.share,
                "notes": list(t.notes),
            }
            for t in e.terms
        ],
    }


def as_json(e: Explanation) -> str:
    """Return :func:`as_dict` as indented JSON."""
    return json.dumps(as_dict(e), indent=2, ensure_ascii=False)


def as_text(e: Explanation) -> str:
    """Return a Lucene-style indented tree (``score = sum of: …``)."""
    v = e.variant
    lines = [
        f"{fmt(e.score)} = score of {e.docid!r} under {v!r}, sum of:"
        + ("" if e.matches else f"   [not a match: {e.reason}]")
    ]
    for t in e.terms:
        if t.status == "matched":
            lines.append(
                f"  {fmt(t.weight)} = weight of {t.term!r} ({t.share:.1%}), "
                f"qtf · idf · tf part = {t.qtf} · {fmt(t.idf)} · {fmt(t.tf_part)}"
            )
            lines.append(f"    {fmt(t.idf)} = idf = {t.idf_text}   (df {t.df}, N {e.n_docs})")
            lines.append(
                f"    {fmt(t.tf_part)} = tf part = {t.tf_text}   "
                f"(tf {t.tf}, L {e.length}, Lavg {fmt(e.avgdl)})"
            )
            lines.extend(f"    note: {n}" for n in t.notes)
        else:
            lines.append(f"  0 = {_status_text(t)}")
    lines.append(f"  check: parts sum to {fmt(e.parts_sum)} (score {fmt(e.score)})")
    return "\n".join(lines)


def as_markdown(e: Explanation) -> str:
    """Return the ledger as a Markdown table."""
    head = (
        f"**{e.docid}** — score {fmt(e.score)} under `{e.variant!r}` "
        f"(L = {e.length}, Lavg = {fmt(e.avgdl)}, N = {e.n_docs})\n\n"
        "| term | status | qtf | tf | df | idf | tf part | weight | share |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|---:|\n"
    )
    rows = [
        f"| {t.surface} → {t.term or '—'} | {t.status} | {t.qtf} | {t.tf} | {t.df} | "
        f"{fmt(t.idf)} | {fmt(t.tf_part)} | {fmt(t.weight)} | {t.share:.1%} |"
        for t in e.terms
    ]
    return head + "\n".join(rows) + f"\n\nSum of parts: {fmt(e.parts_sum)}\n"


def _status_text(t: TermExplanation) -> str:
    return {
        "unmatched": f"{t.term!r} does not occur in this document (df {t.df})",
        "unknown": f"{t.surface!r} → {t.term!r} occurs in no document",
        "stop": f"{t.surface!r} is a stop word (not scored)",
        "short": f"{t.surface!r} is shorter than the minimum length (not scored)",
        "prohibited": f"{t.surface!r} is prohibited (-), not scored",
    }.get(t.status, t.status)

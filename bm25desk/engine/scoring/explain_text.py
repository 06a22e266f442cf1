"""An explanation as text: JSON for programs, a Lucene-style tree for the terminal, Markdown.

A variant is named for people by :meth:`~bm25desk.engine.scoring.variant.Variant.display_name`
(its label and key, with its parameters); JSON also keeps the key and parameter values.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from bm25desk.engine.scoring.formulas import fmt
from bm25desk.engine.scoring.results import variant_dict

if TYPE_CHECKING:
    from bm25desk.engine.scoring.constraints import ConstraintCheck
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
        "variant": {"name": e.variant.display_name(), **variant_dict(e.variant)},
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
                "plain": t.plain,
                **(_fields_dict(t) if t.fields else {}),
            }
            for t in e.terms
        ],
        "constraints": [c.as_dict() for c in e.constraints],
    }


def as_json(e: Explanation) -> str:
    """Return :func:`as_dict` as indented JSON."""
    return json.dumps(as_dict(e), indent=2, ensure_ascii=False)


def as_text(e: Explanation) -> str:
    """Return a Lucene-style indented tree (``score = sum of: …``)."""
    lines = [
        f"{fmt(e.score)} = score of {e.docid!r} under {e.variant.display_with_params()}, sum of:"
        + ("" if e.matches else f"   [not a match: {e.reason}]")
    ]
    for t in e.terms:
        if t.status == "matched":
            lines.append(
                f"  {fmt(t.weight)} = weight of {t.term!r} ({t.share:.1%}), "
                f"qtf · idf · tf part = {t.qtf} · {fmt(t.idf)} · {fmt(t.tf_part)}"
            )
            lines.append(f"    {fmt(t.idf)} = idf = {t.idf_text}   (df {t.df}, N {e.n_docs})")
            if t.fields:
                lines.append(f"    {fmt(t.tf_part)} = tf part = {t.tf_text}")
                lines.extend(f"    {line}" for line in fields_sentences(t))
            else:
                lines.append(
                    f"    {fmt(t.tf_part)} = tf part = {t.tf_text}   "
                    f"(tf {t.tf}, L {e.length}, Lavg {fmt(e.avgdl)})"
                )
            lines.extend(f"    note: {n}" for n in t.notes)
            if t.plain:
                lines.append(f"    in plain words: {t.plain}")
        else:
            lines.append(f"  0 = {_status_text(t)}")
            if t.plain and t.status == "unmatched":
                lines.append(f"    in plain words: {t.plain}")
    lines.append(f"  check: parts sum to {fmt(e.parts_sum)} (score {fmt(e.score)})")
    lines.extend(f"  {_constraint_text(c)}" for c in e.constraints)
    return "\n".join(lines)


def as_markdown(e: Explanation) -> str:
    """Return the ledger as a Markdown table."""
    head = (
        f"**{e.docid}** — score {fmt(e.score)} under {e.variant.display_with_params()} "
        f"(L = {e.length}, Lavg = {fmt(e.avgdl)}, N = {e.n_docs})\n\n"
        "| term | status | qtf | tf | df | idf | tf part | weight | share |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|---:|\n"
    )
    rows = [
        f"| {t.surface} → {t.term or '—'} | {t.status} | {t.qtf} | {t.tf} | {t.df} | "
        f"{fmt(t.idf)} | {fmt(t.tf_part)} | {fmt(t.weight)} | {t.share:.1%} |"
        for t in e.terms
    ]
    text = head + "\n".join(rows) + f"\n\nSum of parts: {fmt(e.parts_sum)}\n"
    plain = [f"- {t.surface}: {t.plain}" for t in e.terms if t.plain]
    if plain:
        text += "\nIn plain words:\n\n" + "\n".join(plain) + "\n"
    if e.constraints:
        text += "\nConstraints:\n\n" + "\n".join(f"- {_constraint_text(c)}" for c in e.constraints)
        text += "\n"
    return text


def _fields_dict(t: TermExplanation) -> dict[str, Any]:
    """Return bm25f's per-field part of a ledger row: the fields and the pseudo-tf."""
    return {"fields": [f.as_dict() for f in t.fields], "pseudo_tf": t.pseudo_tf}


def fields_sentences(t: TermExplanation) -> list[str]:
    """Return bm25f's ledger for one term in plain sentences: each field, then the sum."""
    out = []
    for f in t.fields:
        if f.tf == 0:
            out.append(f"in the {f.field} field: {t.term!r} does not occur (adds nothing).")
            continue
        out.append(
            f"in the {f.field} field: {f.tf} occurrence{'s' if f.tf != 1 else ''} in "
            f"{fmt(f.length)} terms (average {fmt(f.avg_length)}); weight {fmt(f.weight)} and "
            f"b {fmt(f.b)} make it {f.text()} = {fmt(f.part)}."
        )
    shares = " + ".join(fmt(f.part) for f in t.fields if f.tf > 0)
    out.append(
        f"the fields add up to the pseudo-tf t̃f = {shares} = {fmt(t.pseudo_tf)}, which "
        f"saturates once to the tf part {fmt(t.tf_part)}; times qtf · idf that is "
        f"{fmt(t.weight)}."
    )
    return out


def _constraint_text(c: ConstraintCheck) -> str:
    """Return one constraint line: ``constraint "a b" (phrase): holds — the words occur …``."""
    con = c.constraint
    pairs = ", ".join(
        w if a is None else (w if w == a else f"{w} → {a}")
        for w, a in zip(con.words, con.analysed, strict=True)
    )
    verdict = "holds" if c.held else "fails"
    return f"constraint {con.label} ({con.kind}; {pairs}): {verdict}, {c.reason}"


def _status_text(t: TermExplanation) -> str:
    return {
        "unmatched": f"{t.term!r} does not occur in this document (df {t.df})",
        "unknown": f"{t.surface!r} → {t.term!r} occurs in no document",
        "stop": f"{t.surface!r} is a stop word (not scored)",
        "short": f"{t.surface!r} is shorter than the minimum length (not scored)",
        "prohibited": f"{t.surface!r} is prohibited (-), not scored",
    }.get(t.status, t.status)

"""Every formula text bm25desk shows, evaluated numerically against the code (docs/scoring.md).

Two kinds of text are shown to people, and both are checked here so that text and code cannot
drift apart:

- the symbolic formulas of ``bm25desk variants --json`` (``idf = ln((N − df + 0.5)/(df + 0.5))``,
  ``tf part = tf·(k1+1)/(tf + k1·(1 − b + b·L/Lavg))`` ...), evaluated with the exact N, df, tf,
  L, Lavg and parameters of a term in a document, must give the weight the code computes (to
  float64 rounding);
- the ledger's formulas with the numbers filled in (``ln((1460 − 12 + 0.5)/(12 + 0.5)) = 4.75``,
  ``... = 1.21,  where c = 2/(1 − 0.75 + 0.75·50/62.3)``), every side of every ``=`` evaluated,
  must agree with each other and with the code's idf and tf part (to the 6 significant digits the
  numbers are printed with).

The texts are parsed by a tiny arithmetic evaluator over Python's ``ast`` (numbers, + − · / ^,
ln, log10, log2, max, min, and the symbols of docs/scoring.md): no ``eval``. Only public API is
used (the CLI's JSON, :meth:`Searcher.explain`, :meth:`Searcher.weight`), so the test survives
any reorganisation of the scoring modules.
"""

from __future__ import annotations

import ast
import functools
import json
import math
import operator
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import pytest

from bm25desk import cli
from bm25desk.engine import Feedback, Index, Searcher, get_variant

# -- a safe evaluator for the formula texts --------------------------------------------------------


def _ln(x: float) -> float:
    # ln(x) → −∞ as x → 0⁺; tfldp's floor max(0, 1 + ln(1 + ln(c + δ))) is 0 where the inner
    # ln(1 + ·) is undefined (docs/scoring.md), which −∞ for x ≤ 0 expresses.
    return math.log(x) if x > 0 else -math.inf


_FUNCTIONS: dict[str, Callable[..., float]] = {
    "ln": _ln,
    "log10": math.log10,
    "log2": math.log2,
    "max": max,
    "min": min,
}
_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}
# Symbols as the texts write them → identifiers (longest first: "tf'" before "tf").
_SYMBOLS = (
    ("t̃f", "tft"),
    ("mean idf", "mean_idf"),
    ("k1*", "k1s"),
    ("tf'", "tfp"),
    ("df₂", "df2"),
    ("G¹", "G1"),
    ("δ", "delta"),
    ("ε", "epsilon"),
)


class UnknownSymbol(KeyError):
    """The text names a symbol the test did not provide."""


def to_python(text: str) -> str:
    """Rewrite formula notation as a Python expression (for ``ast.parse`` only)."""
    expr = text.strip()
    for symbol, name in _SYMBOLS:
        expr = expr.replace(symbol, name)
    expr = expr.replace("−", "-").replace("·", "*").replace("×", "*").replace("^", "**")
    expr = expr.replace("[", "(").replace("]", ")")
    return re.sub(r"\)\s*\(", ")*(", expr)  # "(a)(b)": implicit multiplication (RSJ)


def evaluate(text: str, env: dict[str, float] | None = None) -> float:
    """Evaluate arithmetic formula ``text`` with symbols from ``env``."""
    env = env or {}

    def walk(node: ast.AST) -> float:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return float(node.value)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            return _BINARY[type(node.op)](walk(node.left), walk(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            value = walk(node.operand)
            return -value if isinstance(node.op, ast.USub) else value
        if isinstance(node, ast.Name):
            if node.id not in env:
                raise UnknownSymbol(node.id)
            return float(env[node.id])
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in _FUNCTIONS
            and not node.keywords
        ):
            return float(_FUNCTIONS[node.func.id](*(walk(a) for a in node.args)))
        raise ValueError(f"not arithmetic: {ast.dump(node)} in {text!r}")

    return walk(_parse(text))


@functools.lru_cache(maxsize=4096)
def _parse(text: str) -> ast.Expression:
    return ast.parse(to_python(text), mode="eval")


def test_the_evaluator_is_arithmetic_only() -> None:
    assert evaluate("ln[(1 + 0.5)(4 − 1)] / 2") == pytest.approx(math.log(4.5) / 2)
    assert evaluate("tf'/(k1 + tf')", {"tfp": 2.0, "k1": 1.2}) == pytest.approx(2 / 3.2)
    assert evaluate("max(0, 1 + ln(1 + ln(c + δ)))", {"c": 0.1, "delta": 0.0}) == 0.0
    for bad in ("__import__('os')", "(1).real", "{1: 2}", "'text'", "ln(x=1)", "1 if 1 else 2"):
        with pytest.raises((ValueError, SyntaxError)):
            evaluate(bad)
    with pytest.raises(UnknownSymbol):
        evaluate("N + 1")


def split_top(text: str, sep: str = ",") -> list[str]:
    """Split ``text`` at ``sep`` outside parentheses, brackets and braces."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if depth == 0 and text.startswith(sep, i):
            parts.append(text[start:i])
            start = i + len(sep)
    parts.append(text[start:])
    return [p.strip() for p in parts]


_SET_COUNT = re.compile(r"^\|\{d : (.+) (≥|>) (.+)\}\|$")


def evaluate_symbolic(
    text: str, env: dict[str, float], postings: Postings, fields: Fields = ()
) -> float:
    """Evaluate a formula as ``bm25desk variants`` writes it (definitions, prose, fallbacks).

    ``main, name = definition, ...``: definitions are evaluated first (a set count
    ``|{d : expr ≥ x}|`` over the term's postings); ``or Y where negative`` is a fallback for a
    negative main value; ``k1* fitted per term`` needs ``k1*`` in ``env``; a ``label = `` before
    the main formula and a parenthesised remark after it are dropped.
    """
    main, *rest = split_top(text)
    env = dict(env)
    fallback = None
    for piece in rest:
        if piece.startswith("or ") and piece.endswith(" where negative"):
            fallback = piece.removeprefix("or ").removesuffix(" where negative")
        elif piece == "k1* fitted per term":
            assert "k1s" in env
        else:
            name, eq, definition = piece.partition(" = ")
            assert eq, f"cannot read {piece!r} of {text!r}"
            env[to_python(name)] = _definition(definition, env, postings, fields)
    label, eq, formula = main.partition(" = ")
    formula = formula if eq else label
    formula = re.sub(r"\s*\([a-z ]+\)$", "", formula)  # "1 (presence only)"
    value = evaluate(formula, env)
    if fallback is not None and value < 0:
        value = evaluate(fallback, env)
    return value


def _definition(text: str, env: dict[str, float], postings: Postings, fields: Fields) -> float:
    if text.startswith("Σ_f "):  # bm25f's pseudo-tf: the term per field, summed
        term = text.removeprefix("Σ_f ").replace("_f", "")
        return sum(evaluate(term, f) for f in fields if f["tf"] > 0)
    match = _SET_COUNT.match(text)
    if match is None:
        return evaluate(text, env)
    lhs, op, rhs = match.groups()
    bound = evaluate(rhs, env)
    count = 0
    for tf, length in zip(*postings, strict=True):
        value = evaluate(lhs, {**env, "tf": float(tf), "L": float(length)})
        count += value >= bound if op == "≥" else value > bound
    return float(count)


def check_filled(text: str, expected: float, env: dict[str, float]) -> None:
    """Check a ledger text with numbers filled in: every ``=`` side equals ``expected``.

    ``A = B < 0 → label = C = D`` (okapi's floor): each stage's sides agree, a ``< 0`` claim holds,
    and the last stage ends at ``expected``. ``..., where c = E``: E equals ``env["c"]``.
    """
    main, _, where = text.partition(",  where ")
    if where:
        name, _, definition = where.partition(" = ")
        _close(evaluate(definition, env), env[to_python(name)], text)
    stages = main.split(" → ")
    for n, stage in enumerate(stages):
        values = []
        for side in stage.split(" = "):
            claim = side.endswith(" < 0")
            try:
                value = evaluate(side.removesuffix(" < 0"), env)
            except UnknownSymbol:
                continue  # a symbolic label with no number the test knows
            if claim:
                assert value < 0, text
            values.append(value)
        assert values, text
        for value in values[1:]:
            _close(value, values[0], text)
        if n == len(stages) - 1:
            _close(values[-1], expected, text)


def _close(got: float, want: float, text: str) -> None:
    # The texts print 6 significant digits; inputs like Lavg are rounded, so allow a little more.
    assert math.isclose(got, want, rel_tol=2e-5, abs_tol=2e-6), f"{text!r}: {got!r} ≠ {want!r}"


# -- the collections and the cases -----------------------------------------------------------------

Postings = tuple[np.ndarray, np.ndarray]  # (tf, L) of every live document containing the term
Fields = Sequence[dict[str, float]]  # bm25f: w, b, tf, L, Lavg of each scored field


@pytest.fixture(scope="module")
def formulas() -> dict[str, dict[str, Any]]:
    """``bm25desk variants --json``: what users are shown, keyed by variant."""
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main(["variants", "--json"]) == 0
    return {v["key"]: v for v in json.loads(out.getvalue())}


@pytest.fixture(scope="module")
def small(make_index: Any) -> Index:
    """Five short documents: terms in most documents give okapi a negative mean idf, BM25Adpt a
    negative G¹ and the teaching weights negative idfs; one long document puts tfldp at its floor
    for δ = 0."""
    texts = [
        "apple apple pear",
        "apple pear plum",
        "apple pear",
        "apple plum plum plum cherry",
        "apple " + "filler " * 40 + "cherry",
    ]
    return make_index(texts)


def _param_sets(spec: dict[str, Any]) -> list[dict[str, float]]:
    """The defaults, and every parameter moved to another value in its range (δ, b to 0 too)."""
    sets: list[dict[str, float]] = [{}]
    alt = {"k1": 0.9, "b": 0.4, "delta": 0.25, "epsilon": 0.5}
    alt.update(w_text=0.5, b_text=0.4, w_title=3.0, b_title=0.9)  # bm25f
    sets.append({p["name"]: alt[p["name"]] for p in spec["parameters"]})
    zero = ("b", "delta", "b_text", "b_title")
    sets.append({p["name"]: 0.0 for p in spec["parameters"] if p["name"] in zero})
    return sets


def _mean_idf(index: Index) -> float:
    """The mean raw Robertson idf over the vocabulary (docs/scoring.md, okapi)."""
    n = index.n_docs
    dfs = np.array([index.postings(t)[0].size for t in index.vocabulary()], dtype=np.float64)
    return float(np.mean(np.log((n - dfs + 0.5) / (dfs + 0.5))))


def _cases(index: Index, queries: list[str], docs_per_term: int) -> Iterator[tuple[str, str]]:
    """(query, docid): for every query term, a few documents that contain it, and one that not."""
    searcher = Searcher(index)
    for query in queries:
        for term in searcher.parse(query).terms:
            docnos, tfs = index.postings(term)
            if docnos.size == 0:
                continue
            picks = {0, docnos.size // 2, docnos.size - 1, int(np.argmax(tfs))}
            for i in sorted(picks)[:docs_per_term]:
                yield query, index.doc(int(docnos[i])).docid
        yield query, index.doc(0).docid


def _check_collection(
    index: Index,
    queries: list[str],
    formulas: dict[str, dict[str, Any]],
    docs_per_term: int = 4,
    feedback: Feedback | None = None,
) -> int:
    """Check every formula shown on ``index``; return how many (term, document) rows it checked."""
    searcher = Searcher(index)
    base = {"N": float(index.n_docs), "mean_idf": _mean_idf(index)}
    doclen = np.asarray(index.doclen)
    checked = 0
    cases = list(dict.fromkeys(_cases(index, queries, docs_per_term)))
    for key, spec in formulas.items():
        for params in _param_sets(spec):
            variant = get_variant(key, **params)
            values = {**base, **{k: float(v) for k, v in variant.values().items()}}
            for query, docid in cases:
                expl = searcher.explain(query, docid, variant, feedback=feedback).as_dict()
                for row in expl["contributions"]:
                    if row["status"] not in ("matched", "unmatched"):
                        continue
                    term = row["term"]
                    docnos, tfs = index.postings(term)
                    postings = (tfs, doclen[docnos])
                    env = {**values, "df": float(row["df"]), "Lavg": float(expl["avgdl"])}
                    weight = searcher.weight(term, variant, feedback)
                    assert weight is not None
                    if weight.k1 is not None:
                        env["k1s"] = weight.k1
                    _check_idf(spec, row, env, postings, feedback)
                    if row["status"] == "matched":
                        env.update(tf=float(row["tf"]), L=float(expl["length"]))
                        norm = 1 - env.get("b", 0.0) + env.get("b", 0.0) * env["L"] / env["Lavg"]
                        env["c"] = env["tfp"] = env["tf"] / norm
                        fields = _fields_env(row)
                        if fields:  # bm25f: the pseudo-tf, summed here from the field lines
                            env["tft"] = sum(
                                f["w"] * f["tf"] / (1 - f["b"] + f["b"] * f["L"] / f["Lavg"])
                                for f in fields
                                if f["tf"] > 0
                            )
                        got = evaluate_symbolic(spec["tf"], env, postings, fields)
                        _close(got, row["tf_part"], key)
                        check_filled(row["tf_formula"], row["tf_part"], env)
                        checked += 1
    return checked


def _fields_env(row: dict[str, Any]) -> list[dict[str, float]]:
    """Return a bm25f ledger row's fields as formula symbols (empty for other variants)."""
    return [
        {"w": f["weight"], "b": f["b"], "tf": f["tf"], "L": f["length"], "Lavg": f["avg_length"]}
        for f in row.get("fields", ())
    ]


def _check_idf(
    spec: dict[str, Any],
    row: dict[str, Any],
    env: dict[str, float],
    postings: Postings,
    feedback: Feedback | None,
) -> None:
    text = row["idf_formula"]
    if feedback is None:
        _close(evaluate_symbolic(spec["idf"], env, postings), row["idf"], spec["idf"])
        check_filled(text, row["idf"], env)
        return
    # "RSJ (R = 2 marked relevant, r = 1 contain it): ln[...] = value"
    match = re.match(r"^RSJ \(R = (\d+) marked relevant, r = (\d+) contain it\): (.+)$", text)
    assert match is not None, text
    big_r, r, formula = int(match.group(1)), int(match.group(2)), match.group(3)
    assert big_r == len(feedback.relevant)
    assert formula.startswith(f"ln[({r} + 0.5)")
    rsj = "ln[(r + 0.5)(N − R − df + r + 0.5) / ((df − r + 0.5)(R − r + 0.5))]"  # scoring.md
    _close(evaluate(rsj, {**env, "r": r, "R": big_r}), row["idf"], text)
    check_filled(formula, row["idf"], env)


# -- the tests -------------------------------------------------------------------------------------


def test_every_variant_is_checked(formulas: dict[str, dict[str, Any]]) -> None:
    from bm25desk.engine import all_variants

    assert set(formulas) == {v.key for v in all_variants()}


def test_formula_texts_on_a_small_collection(
    small: Index, formulas: dict[str, dict[str, Any]]
) -> None:
    searcher = Searcher(small)
    okapi = searcher.explain("apple pear", "d0", get_variant("okapi")).terms
    assert all(t.idf < 0 for t in okapi)  # ε times a negative mean idf (docs/scoring.md)
    adpt = searcher.weight("apple", get_variant("bm25adpt"))
    assert adpt is not None
    assert adpt.idf < 0  # G¹ < 0
    floor = searcher.explain("cherry", "d4", get_variant("tfldp", delta=0.0)).terms[0]
    assert floor.tf_part == 0.0
    queries = ["apple pear", "plum cherry apple", "pear pear filler"]
    assert _check_collection(small, queries, formulas) > 100


def test_formula_texts_on_cisi(cisi_index: Index, formulas: dict[str, dict[str, Any]]) -> None:
    queries = [
        "library classification systems",
        "the use of citation indexes in science",
        "computerized information retrieval evaluation",
    ]
    assert _check_collection(cisi_index, queries, formulas, docs_per_term=2) > 500


def test_relevance_feedback_texts(small: Index, formulas: dict[str, dict[str, Any]]) -> None:
    feedback = Feedback(frozenset({0, 3}))
    assert _check_collection(small, ["apple plum", "cherry pear"], formulas, 2, feedback) > 50

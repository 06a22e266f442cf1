"""Issue 10, explaining the hard cases in words: ties marked and their order said, BM25Adpt's k1*
in a plain sentence, a phrase as one chip and its constraint in the ledger, "did you mean" with
words of the index (not stems). Each failed before."""

from __future__ import annotations

from PySide6.QtCore import Qt

from bm25desk.engine import TIE_RULE, get_variant
from bm25desk.ui.search.results_model import Column

TIP = Qt.ItemDataRole.ToolTipRole


def test_ties_are_marked_and_their_order_said(qtbot, panel, shown) -> None:
    panel.set_variant(get_variant("bim"))  # presence only: documents tie
    with qtbot.waitSignal(panel.results_shown) as blocker:
        panel.set_query("fruit trees")
    hits = blocker.args[0].result.hits
    tied = [i for i, h in enumerate(hits) if h.tie_group is not None]
    assert tied, "BIM should tie documents that contain the same query terms"
    row = tied[0]
    rank = panel.model.index(row, Column.RANK)
    assert rank.data() == f"={hits[row].rank}"
    assert rank.data(Qt.ItemDataRole.BackgroundRole) is not None
    tip = shown(rank.data(TIP))
    assert "Tied: ranks" in tip
    assert TIE_RULE in tip
    untied = [i for i, h in enumerate(hits) if h.tie_group is None]
    if untied:
        assert panel.model.index(untied[0], Column.RANK).data() == str(hits[untied[0]].rank)


def test_bm25adpt_says_in_words_why_k1_is_what_it_is(qtbot, panel) -> None:
    panel.set_variant(get_variant("bm25adpt"))
    with qtbot.waitSignal(panel.results_shown):
        panel.set_query("apple fruit")
    qtbot.waitUntil(lambda: panel.detail.outcome() is not None, timeout=5000)
    ledger = panel.detail.ledger
    texts = []
    for r in range(ledger.model.rowCount()):
        ledger.view.selectRow(r)
        texts.append(ledger.formulas.text())
    worded = [t for t in texts if "in plain words," in t]
    assert worded
    assert all(t.index("in plain words,") < t.index("idf =") for t in worded)  # words first


def test_a_phrase_is_one_chip_and_the_ledger_says_whether_it_held(qtbot, panel, shown) -> None:
    with qtbot.waitSignal(panel.results_shown):
        panel.set_query('"apple trees" orchard -pests')
    chips = panel.chips.text()
    assert "“apple trees”" in chips  # one chip for the phrase...
    assert "“apple" not in chips.replace("“apple trees”", "")  # ...not one per word
    assert "appl" in shown(chips)  # with each word's term inside
    assert "tree" in shown(chips)
    qtbot.waitUntil(lambda: panel.detail.outcome() is not None, timeout=5000)
    constraints = panel.detail.ledger.constraints
    assert constraints.isVisible()
    text = shown(constraints.text())
    assert '"apple trees"' in text
    assert "✓" in text
    assert "−pests" in text or "-pests" in text
    assert "together" in shown(constraints.toolTip())


def test_did_you_mean_offers_words_not_stems(qtbot, panel) -> None:
    with qtbot.waitSignal(panel.results_shown) as blocker:
        panel.set_query("aple cidr")
    offered = [o for _term, options in blocker.args[0].suggestions for o in options]
    assert "apple" in offered or "apples" in offered
    assert "appl" not in offered  # surface words, as typed by people
    assert "cider" in offered
    with qtbot.waitSignal(panel.results_shown):
        panel.chips.suggestion_chosen.emit("cidr", "cider")
    assert panel.query() == "aple cider"

"""Text from documents shown as text: never read as HTML by a label or a tooltip (issue 16.7).

Qt shows a string as rich text when it merely looks like HTML (``Qt.mightBeRichText``): a document
titled ``<img src=file:///etc/passwd>`` would load that file into a tooltip. Tooltips that show
document content (titles, snippets, paths, ids, reasons) go through :func:`plain_tooltip`; labels
that show it are plain-text labels (:class:`~bm25desk.ui.common.elided_label.ElidedLabel`,
:func:`~bm25desk.ui.common.widgets.text_label`) or escape it with :func:`html.escape`.
"""

from __future__ import annotations

from html import escape

_PRE = "<p style='white-space:pre-wrap'>"


def plain_tooltip(text: str | None) -> str | None:
    """Return ``text`` as a tooltip that shows it literally (line breaks kept); None stays None."""
    if text is None or text == "":
        return text
    return f"{_PRE}{escape(text, quote=False)}</p>"


def is_plain_tooltip(tip: object) -> bool:
    """Return whether ``tip`` was made by :func:`plain_tooltip` (for tests)."""
    return isinstance(tip, str) and tip.startswith(_PRE)

"""Tests for the e-mail (EML) and mailbox (mbox) extractors."""

from __future__ import annotations

from pathlib import Path

import pytest
from extract_helpers import MIXED, extract

from bm25desk.engine.extract import mail
from bm25desk.engine.extract.common import ExtractError


def test_eml_headers_body_and_attachments() -> None:
    title, text = extract("mail/letter.eml")
    assert title == "Quarterly figures and the field notes"
    assert "From: Ana Lima <ana@example.org>" in text
    assert "To: Ben Okafor <ben@example.org>" in text
    assert "Date: Wed, 01 May 2024 12:00:00 +0000" in text
    assert text.count("quokkaberry") == 1  # the plain body, not also its HTML alternative
    assert "Attachment: field-notes.txt\nCounted at the north gate: saffronkite" in text
    assert "Attachment: summary.pdf\n" in text
    assert "cobaltmoth" in text
    assert "Attachment: crates.png" in text


def test_eml_html_only_body_and_unreadable_attachment(tmp_path: Path) -> None:
    from email.message import EmailMessage

    msg = EmailMessage()
    msg["Subject"] = "Newsletter"
    msg.set_content(
        "<html><head><style>.x{}</style></head><body><p>Hello <i>readers</i></p>"
        "<script>hiddenscript()</script></body></html>",
        subtype="html",
    )
    msg.add_attachment(
        (MIXED / "failures/locked.pdf").read_bytes(),
        maintype="application",
        subtype="pdf",
        filename="locked.pdf",
    )
    path = tmp_path / "news.eml"
    path.write_bytes(msg.as_bytes())
    title, text = mail.extract_eml(path)
    assert title == "Newsletter"
    assert "Hello readers" in text
    assert "hiddenscript" not in text
    assert "Attachment: locked.pdf (not indexed: encrypted PDF" in text


def test_mbox_one_document_and_per_message_view(tmp_path: Path) -> None:
    title, text = extract("mail/archive.mbox")
    assert title == ""  # the folder reader names it after the file
    assert text.index("fjordlinnet") < text.index("emberquill")
    assert "\nFrom now on, book ahead." in text  # the mboxrd ">From " quoting is undone
    messages = list(mail.iter_mbox(MIXED / "mail/archive.mbox"))
    assert [(k, t) for k, t, _ in messages] == [
        ("ferry-1@example.org", "Ferry times"),
        ("ferry-2@example.org", "Re: Ferry times"),
    ]
    bad = tmp_path / "not.mbox"
    bad.write_text("Dear diary,\nFrom today on I write daily.\n")
    with pytest.raises(ExtractError, match=r"^not an mbox file"):
        mail.extract_mbox(bad)

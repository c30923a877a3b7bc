"""Responses `input_file` -> Anthropic `document` blocks (issue 24 "Files across vendors";
docs/anthropic.md "Files"), checked against the anthropic SDK's `DocumentBlockParam`."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.support.vendor_types import assert_anthropic_document, assert_anthropic_request
from tests.translators.bodies import assistant, body, function, function_call, function_output, user
from tests.translators.files import DOCX_B64, NOTES, NOTES_B64, PDF_B64, inline, pdf, url, user_with
from translators import translate_request
from translators.families.claude.models import lookup

MODEL = "claude-sonnet-4-5"


def anthropic(request_body, capabilities=None):
    translation = translate_request(request_body, "anthropic", MODEL, capabilities=capabilities)
    assert_anthropic_request(translation.body)
    return translation


def test_a_pdf_becomes_a_base64_document_titled_with_its_filename():
    translation = anthropic(body(user_with(pdf("Q3 report.pdf"))))
    document = translation.body["messages"][0]["content"][1]
    assert document == {"type": "document", "title": "Q3 report.pdf", "cache_control": {"type": "ephemeral"},
                        "source": {"type": "base64", "media_type": "application/pdf", "data": PDF_B64}}
    assert_anthropic_document(document)
    assert translation.dropped == []


def test_a_file_url_becomes_a_url_source():
    translation = anthropic(body(user_with(url("https://example.com/paper.pdf")), user("thanks")))
    document = translation.body["messages"][0]["content"][1]
    assert document == {"type": "document", "source": {"type": "url", "url": "https://example.com/paper.pdf"}}
    assert_anthropic_document(document)


def test_a_text_file_becomes_a_plain_text_source_with_its_decoded_text():
    translation = anthropic(body(user_with(inline("text/markdown", NOTES_B64, "notes.md")), user("ok")))
    document = translation.body["messages"][0]["content"][1]
    assert document == {"type": "document", "title": "notes.md",
                        "source": {"type": "text", "media_type": "text/plain", "data": NOTES}}
    assert_anthropic_document(document)


@pytest.mark.parametrize(("part", "why"), [
    (inline("application/vnd.openxmlformats-officedocument.wordprocessingml.document", DOCX_B64, "a.docx"),
     "Anthropic reads PDF and plain-text documents"),
    (url("https://example.com/a.docx"), "Anthropic fetches only PDFs by URL"),
    (inline("text/plain", "//79/Q=="), "not UTF-8 text"),
])
def test_a_file_claude_cannot_read_is_reported_dropped_with_why(part, why):
    translation = anthropic(body(user_with(part)))
    assert translation.body["messages"][0]["content"] == [
        {"type": "text", "text": "Summarize the attached file.", "cache_control": {"type": "ephemeral"}}]
    assert translation.dropped == ["input[0].content[1]"]
    assert any(note.startswith("input[0].content[1]: ") and why in note for note in translation.notes)


def test_a_tool_output_pdf_goes_into_the_tool_result():
    translation = anthropic(body(
        user("fetch it"), function_call("c1", "fetch"),
        function_output("c1", [{"type": "input_text", "text": "fetched"}, pdf("a.pdf")]),
        tools=[function("fetch")]))
    result = translation.body["messages"][2]["content"][0]
    assert result["type"] == "tool_result"
    assert result["content"][1] == {"type": "document", "title": "a.pdf", "source": {
        "type": "base64", "media_type": "application/pdf", "data": PDF_B64}}
    assert translation.dropped == []


@pytest.mark.parametrize(("reads", "kinds", "dropped"), [(True, ["text", "document"], []),
                                                         (False, ["text"], ["input[0].content[1]"])])
def test_documents_go_only_to_a_model_that_reads_them(reads, kinds, dropped):
    caps = replace(lookup(MODEL), pdf_input=reads)  # as the vendor's models endpoint may say
    translation = anthropic(body(user_with(pdf())), capabilities=caps)
    assert [b["type"] for b in translation.body["messages"][0]["content"]] == kinds
    assert translation.dropped == dropped


def test_a_file_in_an_assistant_message_is_reported_dropped():
    turn = assistant("here it is")
    turn["content"].append(pdf())
    translation = anthropic(body(user_with(pdf()), turn, user("thanks")))
    assert [b["type"] for b in translation.body["messages"][0]["content"]] == ["text", "document"]
    assert [b["type"] for b in translation.body["messages"][1]["content"]] == ["text"]
    assert translation.dropped == ["input[1].content[1]"]

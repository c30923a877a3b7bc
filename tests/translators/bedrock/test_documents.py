"""Responses `input_file` -> Converse `document` blocks (issue 24 "Files across vendors";
docs/bedrock.md "Files"): a valid, unique name per document, the format from the media type,
checked against botocore's Bedrock Runtime service model."""

from __future__ import annotations

import re
from dataclasses import replace

import botocore.session
import pytest

from tests.support.vendor_types import assert_converse_request
from tests.translators.bedrock.support import CLAUDE, NOVA, assistant, bedrock, call, output, request, user
from tests.translators.files import DOCX_B64, NOTES_B64, PDF_B64, inline, pdf, url, user_with
from translators import translate_request
from translators.bedrock.documents import base_name
from translators.bedrock.models import capabilities

NAME_RULE = re.compile(r"(?=.{1,200}$)[A-Za-z0-9()\[\]-]+( [A-Za-z0-9()\[\]-]+)*")
"""DocumentBlock.name: letters, digits, hyphens, parentheses, square brackets and single spaces
(the service model's documentation of the member)."""


def converse(items, model=CLAUDE):
    translation = bedrock(request(items), model)
    assert_converse_request(translation.body, model)
    return translation


def documents(body):
    return [b["document"] for m in body["messages"] for b in m["content"] if "document" in b] + [
        b["document"] for m in body["messages"] for r in m["content"] if "toolResult" in r
        for b in r["toolResult"]["content"] if "document" in b]


def test_a_pdf_becomes_a_document_block_of_its_bytes_named_after_the_file():
    translation = converse([user_with(pdf("Q3 report.final.pdf"))])
    assert translation.body["messages"][0]["content"][:2] == [
        {"text": "Summarize the attached file."},
        {"document": {"format": "pdf", "name": "Q3 report-final", "source": {"bytes": PDF_B64}}}]
    assert translation.dropped == []


@pytest.mark.parametrize(("filename", "name"), [
    ("Résumé (v2)_draft.docx", "Resume (v2)-draft"),
    ("a   b\t[1].pdf", "a b [1]"),
    ("notes...md", "notes"),
    ("报告.pdf", "document"),
    (None, "document"),
    ("x" * 300 + ".pdf", "x" * 192),
])
def test_a_name_keeps_to_the_characters_converse_allows(filename, name):
    assert base_name(filename) == name
    assert NAME_RULE.fullmatch(name)


def test_the_name_rule_is_the_service_models():
    shape = botocore.session.get_session().get_service_model("bedrock-runtime").shape_for("DocumentBlock")
    name = shape.members["name"]
    assert (name.metadata["min"], name.metadata["max"]) == (1, 200)
    for allowed in ("Alphanumeric characters", "no more than one in a row", "Hyphens", "Parentheses",
                    "Square brackets"):
        assert allowed in name.documentation


def test_two_documents_with_one_name_get_distinct_names():
    translation = converse([user_with(pdf("a.pdf"), pdf("A.pdf"), pdf(None), pdf(None)), assistant("ok"),
                            user_with(pdf("a.pdf"))])
    assert [d["name"] for d in documents(translation.body)] == [
        "a", "A (2)", "document", "document (2)", "a (3)"]


@pytest.mark.parametrize(("part", "fmt"), [
    (inline("text/markdown", NOTES_B64, "notes.md"), "md"),
    (inline("text/csv", NOTES_B64), "csv"),
    (inline("application/vnd.openxmlformats-officedocument.wordprocessingml.document", DOCX_B64), "docx"),
    (inline("application/octet-stream", DOCX_B64, "letter.docx"), "docx"),
    (inline("application/json", NOTES_B64, "data.json"), "txt"),
])
def test_the_format_comes_from_the_media_type_else_the_extension(part, fmt):
    translation = converse([user_with(part)])
    assert documents(translation.body)[0]["format"] == fmt


def test_an_s3_url_becomes_an_s3_location():
    translation = converse([user_with(url("s3://my-bucket/papers/a.pdf"))], model=NOVA)
    assert documents(translation.body) == [
        {"format": "pdf", "name": "document", "source": {"s3Location": {"uri": "s3://my-bucket/papers/a.pdf"}}}]


@pytest.mark.parametrize(("part", "why"), [
    (url("https://example.com/a.pdf"), "Converse fetches no http(s) URL"),
    (inline("image/svg+xml", NOTES_B64, "a.svg"), "the file is image/svg+xml"),
    (inline("application/zip", DOCX_B64), "the file is application/zip"),
])
def test_a_file_converse_cannot_take_is_reported_dropped_with_why(part, why):
    translation = converse([user_with(part)])
    assert documents(translation.body) == []
    assert translation.dropped == ["input[0].content[1]"]
    assert any(n.startswith("input[0].content[1]: ") and why in n for n in translation.notes)


def test_a_tool_output_pdf_goes_into_the_tool_result():
    translation = converse([user("fetch"), call("c1"), output("c1", [{"type": "input_text", "text": "got it"},
                                                                     pdf("a.pdf")])])
    result = translation.body["messages"][2]["content"][0]["toolResult"]
    assert result["content"] == [{"text": "got it"},
                                 {"document": {"format": "pdf", "name": "a", "source": {"bytes": PDF_B64}}}]


def test_a_document_in_an_assistant_turn_is_reported_dropped():
    turn = assistant("here")
    turn["content"].append(pdf())
    translation = converse([user_with(pdf("mine.pdf")), turn, user("thanks")])
    assert [d["name"] for d in documents(translation.body)] == ["mine"]  # the user's only
    assert translation.dropped == ["input[1].content[1]"]


@pytest.mark.parametrize(("reads", "count", "dropped"), [(True, 1, []), (False, 0, ["input[0].content[1]"])])
def test_documents_go_only_to_a_model_that_reads_them(reads, count, dropped):
    caps = replace(capabilities(CLAUDE), pdf_input=reads)  # as a vendor may publish for a model
    translation = translate_request(request([user_with(pdf())]), "bedrock", CLAUDE, capabilities=caps)
    assert len(documents(translation.body)) == count
    assert translation.dropped == dropped


def test_a_model_the_table_does_not_know_is_sent_its_documents():
    assert documents(converse([user_with(pdf())], model="us.amazon.nova-pro-v1:0").body)

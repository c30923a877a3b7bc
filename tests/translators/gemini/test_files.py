"""Responses `input_file` -> Gemini `inlineData` / `fileData` parts (issue 24 "Files across
vendors"; docs/gemini.md "Files"), checked against google-genai's `Part` and `FunctionResponse`."""

from __future__ import annotations

import base64
import json
from dataclasses import replace

import pytest
from google.genai import types

from tests.translators.bodies import assistant, body, function, function_call, function_output, user
from tests.translators.files import (
    DOCX_B64,
    NOTES,
    NOTES_B64,
    PDF_B64,
    PDF_BYTES,
    inline,
    pdf,
    url,
    user_with,
)
from translators import translate_request
from translators.gemini.models import capabilities

GEMINI_3 = "gemini-3-pro-preview"
GEMINI_25 = "gemini-2.5-flash"


def gemini(request_body, model=GEMINI_3, caps=None):
    translation = translate_request(request_body, "gemini", model, capabilities=caps)
    for content in translation.body["contents"]:
        types.Content.model_validate_json(json.dumps(content))  # the SDK's strict types take it
    return translation


def test_a_pdf_becomes_inline_data_with_its_mime_type():
    translation = gemini(body(user_with(pdf("report.pdf"))))
    part = translation.body["contents"][0]["parts"][1]
    assert part == {"inlineData": {"mimeType": "application/pdf", "data": PDF_B64}}
    assert types.Part.model_validate_json(json.dumps(part)).inline_data.data == PDF_BYTES


def test_the_filename_has_no_place_the_model_reads_and_is_reported():
    translation = gemini(body(user_with(pdf("report.pdf"))))
    assert translation.dropped == ["input[0].content[1].filename"]
    assert gemini(body(user_with(pdf(None)))).dropped == []


def test_a_file_url_becomes_file_data_with_the_type_its_name_implies():
    translation = gemini(body(user_with(url("https://example.com/paper.pdf"))))
    assert translation.body["contents"][0]["parts"][1] == {
        "fileData": {"fileUri": "https://example.com/paper.pdf", "mimeType": "application/pdf"}}


def test_a_text_file_keeps_its_text_type():
    translation = gemini(body(user_with(inline("text/markdown", NOTES_B64))))
    assert translation.body["contents"][0]["parts"][1] == {
        "inlineData": {"mimeType": "text/markdown", "data": NOTES_B64}}


@pytest.mark.parametrize("part", [
    inline("application/vnd.openxmlformats-officedocument.wordprocessingml.document", DOCX_B64),
    url("https://example.com/download"),
])
def test_a_file_gemini_cannot_read_is_reported_dropped_with_why(part):
    translation = gemini(body(user_with(part)))
    assert translation.body["contents"][0]["parts"] == [{"text": "Summarize the attached file."}]
    assert translation.dropped == ["input[0].content[1]"]
    assert any(n.startswith("input[0].content[1]: Gemini reads PDF") for n in translation.notes)


@pytest.mark.parametrize(("reads", "count", "dropped"), [(True, 2, []), (False, 1, ["input[0].content[1]"])])
def test_documents_go_only_to_a_model_that_reads_them(reads, count, dropped):
    caps = replace(capabilities(GEMINI_3), pdf_input=reads)
    translation = gemini(body(user_with(pdf(None))), caps=caps)
    assert len(translation.body["contents"][0]["parts"]) == count
    assert translation.dropped == dropped


def test_a_file_in_a_model_turn_is_reported_dropped():
    turn = assistant("here")
    turn["content"].append(pdf(None))
    translation = gemini(body(user_with(pdf(None)), turn, user("thanks")))
    assert "inlineData" in translation.body["contents"][0]["parts"][1]
    assert translation.body["contents"][1]["parts"] == [{"text": "here"}]
    assert translation.dropped == ["input[1].content[1]"]


def _tool_round(*output_parts):
    return body(user("fetch it"), function_call("c1", "fetch"), function_output("c1", list(output_parts)),
                tools=[function("fetch")])


def test_a_tool_output_pdf_goes_into_the_function_response_parts_on_gemini_3():
    translation = gemini(_tool_round({"type": "input_text", "text": "fetched"}, pdf(None)))
    response = translation.body["contents"][2]["parts"][0]["functionResponse"]
    assert response["response"] == {"output": "fetched"}
    assert response["parts"] == [{"inlineData": {"mimeType": "application/pdf", "data": PDF_B64}}]
    sdk = types.FunctionResponse.model_validate_json(json.dumps(response))
    assert sdk.parts[0].inline_data.data == PDF_BYTES
    assert translation.dropped == []


def test_a_tool_output_text_file_joins_the_response_text():
    translation = gemini(_tool_round({"type": "input_text", "text": "fetched"},
                                     inline("text/plain", NOTES_B64, "notes.txt")))
    response = translation.body["contents"][2]["parts"][0]["functionResponse"]
    assert response["response"] == {"output": f"fetched\n{NOTES}"}
    assert "parts" not in response
    assert translation.dropped == ["input[2].output[1].filename"]


@pytest.mark.parametrize(("model", "parts", "dropped"), [(GEMINI_3, 1, []),
                                                        (GEMINI_25, 0, ["input[2].output[0]"])])
def test_only_gemini_3_takes_a_tool_output_pdf(model, parts, dropped):
    translation = gemini(_tool_round(pdf(None)), model=model)
    response = translation.body["contents"][2]["parts"][0]["functionResponse"]
    assert len(response.get("parts", [])) == parts
    assert translation.dropped == dropped


def test_a_tool_output_office_file_is_reported_dropped_with_why():
    docx = inline("application/vnd.openxmlformats-officedocument.wordprocessingml.document", DOCX_B64)
    translation = gemini(_tool_round(docx))
    assert "parts" not in translation.body["contents"][2]["parts"][0]["functionResponse"]
    assert translation.dropped == ["input[2].output[0]"]
    assert any("a Gemini function response takes PDF files" in n for n in translation.notes)


def test_the_inline_bytes_are_the_files_bytes():
    translation = gemini(body(user_with(inline("text/markdown", NOTES_B64))))
    data = translation.body["contents"][0]["parts"][1]["inlineData"]["data"]
    assert base64.b64decode(data).decode() == NOTES

"""Responses `input_file` parts -> IR documents (issue 24 "Files across vendors"; docs/responses.md
"Files"): every field of the part read or reported, a file that cannot be read refused with a
Responses-shaped 400."""

from __future__ import annotations

import base64

import pytest

from tests.translators.bodies import body, decoded, function_call, function_output
from translators import MalformedRequest, translate_request
from translators.ir.request import Document, Message, Text, ToolResult

PDF_BYTES = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"
PDF_B64 = base64.b64encode(PDF_BYTES).decode()
PDF_URL = f"data:application/pdf;base64,{PDF_B64}"


def file_message(*parts: dict, text: str = "read this") -> dict:
    return {"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": text}, *parts]}


def test_a_pdf_data_url_becomes_a_document_with_its_type_name_and_decoded_size():
    request, report = decoded(body(file_message(
        {"type": "input_file", "file_data": PDF_URL, "filename": "report.pdf"})))
    assert request.items == [Message(role="user", origin="input[0]", parts=[
        Text(text="read this"),
        Document(media_type="application/pdf", data=PDF_B64, size=len(PDF_BYTES), filename="report.pdf",
                 origin="input[0].content[1]")])]
    assert report.dropped == [] and report.notes == []


def test_a_file_url_becomes_a_document_whose_type_its_name_implies():
    request, _ = decoded(body(file_message(
        {"type": "input_file", "file_url": "https://example.com/papers/attention.pdf?v=2"})))
    assert request.items[0].parts[1] == Document(
        media_type="application/pdf", url="https://example.com/papers/attention.pdf?v=2",
        origin="input[0].content[1]")


def test_the_filename_names_the_type_of_bare_base64_data():
    request, _ = decoded(body(file_message(
        {"type": "input_file", "file_data": base64.b64encode(b"a,b\n1,2\n").decode(), "filename": "t.csv"})))
    document = request.items[0].parts[1]
    assert document.media_type == "text/csv" and document.size == 8
    assert document.decoded_text() == "a,b\n1,2\n"


def test_without_a_type_or_a_name_the_document_has_no_media_type():
    request, _ = decoded(body(file_message({"type": "input_file", "file_data": "AAAA"})))
    assert request.items[0].parts[1].media_type is None


def test_a_file_id_is_reported_dropped_with_a_note_on_openais_file_store():
    request, report = decoded(body(file_message({"type": "input_file", "file_id": "file-abc"})))
    assert request.items[0].parts == [Text(text="read this")]
    assert report.dropped == ["input[0].content[1]"]
    assert report.notes == ["input[0].content[1]: file_id names a file in OpenAI's file store, which no "
                            "other upstream can read; send the file itself as file_data (a base64 data "
                            "URL) or as file_url"]


def test_detail_and_unknown_keys_of_the_part_are_reported():
    _, report = decoded(body(file_message(
        {"type": "input_file", "file_data": PDF_URL, "detail": "high",
         "prompt_cache_breakpoint": {"mode": "explicit"}})))
    assert report.dropped == ["input[0].content[1].prompt_cache_breakpoint", "input[0].content[1].detail"]
    assert report.cosmetic == ["input[0].content[1].detail"]


def test_a_function_output_list_carries_its_files():
    request, _ = decoded(body(
        function_call("c1", "fetch"),
        function_output("c1", [{"type": "input_text", "text": "here"},
                               {"type": "input_file", "file_data": PDF_URL, "filename": "a.pdf"}])))
    result = request.items[1]
    assert isinstance(result, ToolResult)
    assert result.parts[1] == Document(media_type="application/pdf", data=PDF_B64, size=len(PDF_BYTES),
                                       filename="a.pdf", origin="input[1].output[1]")


def test_a_custom_tool_output_list_carries_its_files():
    request, _ = decoded(body(
        {"type": "custom_tool_call", "call_id": "c1", "name": "grab", "input": "x"},
        {"type": "custom_tool_call_output", "call_id": "c1",
         "output": [{"type": "input_file", "file_url": "https://example.com/a.pdf"}]}))
    assert request.items[1].parts == [Document(media_type="application/pdf", url="https://example.com/a.pdf",
                                               origin="input[1].output[0]")]


@pytest.mark.parametrize(("part", "param", "says"), [
    ({"file_data": "data:application/pdf,JVBERi0="}, "input[0].content[1].file_data", "base64 data URL"),
    ({"file_data": "data:application/pdf;base64"}, "input[0].content[1].file_data", "base64 data URL"),
    ({"file_data": "data:application/pdf;base64,JVBE Ri0="}, "input[0].content[1].file_data",
     "not valid base64"),
    ({"file_data": "data:application/pdf;base64,JVBERi0"}, "input[0].content[1].file_data",
     "not valid base64"),
    ({"file_data": 12}, "input[0].content[1].file_data", "must be a string"),
    ({"file_data": PDF_URL, "filename": ["a"]}, "input[0].content[1].filename", "must be a string"),
    ({}, "input[0].content[1]", "one of file_data, file_url or file_id"),
    ({"file_data": PDF_URL, "file_url": "https://example.com/a.pdf"}, "input[0].content[1]",
     "only one of file_data, file_url or file_id"),
])
def test_a_file_that_cannot_be_read_is_a_responses_shaped_400(part, param, says):
    request_body = body(file_message({"type": "input_file", **part}))
    with pytest.raises(MalformedRequest) as info:
        translate_request(request_body, "anthropic", "claude-sonnet-4-5")
    assert info.value.status == 400
    error = info.value.to_body()["error"]
    assert error["type"] == "invalid_request_error" and error["param"] == param
    assert says in error["message"]


def test_a_file_in_an_opening_developer_message_is_reported_dropped_from_the_system_prompt():
    request, report = decoded(body(
        {"type": "message", "role": "developer",
         "content": [{"type": "input_text", "text": "rules"}, {"type": "input_file", "file_data": PDF_URL}]},
        file_message({"type": "input_file", "file_data": PDF_URL})))
    assert request.system == ["rules"]
    assert request.items[0].parts[1].type == "document"  # the user's file is kept
    assert report.dropped == ["input[0].content[1]"]

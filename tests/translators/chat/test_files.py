"""Responses `input_file` on a Chat route (issue 24 "Files across vendors"; docs/chat.md "Files"):
dropped and reported, unless the route says its server takes OpenAI's `file` content part."""

from __future__ import annotations

from dataclasses import replace

from openai.types.chat import ChatCompletionContentPartParam
from pydantic import TypeAdapter

from tests.translators.bodies import body, function, function_call, function_output
from tests.translators.files import PDF_B64, PDF_DATA_URL, pdf, url, user_with
from translators import translate_request
from translators.chat import DIALECT
from translators.chat.models import capabilities

MODEL = "gpt-4.1"


def chat(request_body, file_parts=None):
    caps = capabilities(MODEL)
    if file_parts is not None:
        caps = replace(caps, extra={**caps.extra, "file_parts": file_parts})
    return translate_request(request_body, "chat", MODEL, capabilities=caps)


def test_by_default_a_file_is_reported_dropped_with_how_to_send_it():
    translation = chat(body(user_with(pdf())))
    assert translation.body["messages"][-1] == {"role": "user", "content": "Summarize the attached file."}
    assert translation.dropped == ["input[0].content[1]"]
    assert any(n.startswith("input[0].content[1]: this Chat route takes no files") for n in translation.notes)


def test_a_route_whose_server_takes_openai_file_parts_gets_one():
    translation = chat(body(user_with(pdf("report.pdf"))), file_parts="openai")
    part = translation.body["messages"][-1]["content"][1]
    assert part == {"type": "file", "file": {"file_data": PDF_DATA_URL, "filename": "report.pdf"}}
    TypeAdapter(ChatCompletionContentPartParam).validate_python(part)
    assert translation.dropped == []


def test_a_file_without_a_name_gets_one_made_of_its_type():
    translation = chat(body(user_with(pdf(None))), file_parts="openai")
    assert translation.body["messages"][-1]["content"][1]["file"] == {
        "file_data": f"data:application/pdf;base64,{PDF_B64}", "filename": "document.pdf"}


def test_a_file_url_has_no_place_in_openais_file_part():
    translation = chat(body(user_with(url("https://example.com/a.pdf"))), file_parts="openai")
    assert translation.body["messages"][-1]["content"] == "Summarize the attached file."
    assert translation.dropped == ["input[0].content[1]"]
    assert any("the file is a URL" in n for n in translation.notes)


def test_a_tool_output_file_is_reported_dropped():
    translation = chat(body(user_with(pdf()), function_call("c1", "fetch"),
                            function_output("c1", [{"type": "input_text", "text": "got"}, pdf()]),
                            tools=[function("fetch")]), file_parts="openai")
    assert translation.body["messages"][0]["content"][1]["type"] == "file"  # the user's goes
    assert translation.body["messages"][-1] == {"role": "tool", "tool_call_id": "c1", "content": "got"}
    assert translation.dropped == ["input[2].output[1]"]


def test_file_parts_is_a_chat_option_and_a_route_key_defaulting_to_drop():
    option = next(o for o in DIALECT.options if o.name == "gateway_chat_file_parts")
    assert (option.default, option.route_key) == ("drop", "file_parts")
    assert option.check is not None
    assert option.check("openai") is None
    assert option.check("yes") == "gateway_chat_file_parts 'yes': write one of drop, openai"

"""translators/wire/viewtext.py and each dialect's `read_request`: a file is shown by name, type and
size, never by its base64 (issue 24 "Files across vendors"; docs/responses.md "Files")."""

from __future__ import annotations

import base64

import pytest

from tests.translators.bodies import body, function, function_call, function_output
from tests.translators.files import pdf, url, user_with
from translators import translate_request
from translators.dialect import get
from translators.wire.viewtext import base64_size, brief_data, size

BIG = base64.b64encode(bytes(range(256)) * 48).decode()  # 12 KiB of bytes
BIG_PDF = {"type": "input_file", "file_data": f"data:application/pdf;base64,{BIG}",
           "filename": "Q3 report.pdf"}
TARGETS = {"anthropic": "claude-sonnet-4-5", "gemini": "gemini-3-pro-preview",
           "bedrock": "us.anthropic.claude-sonnet-4-20250514-v1:0"}


@pytest.mark.parametrize(("count", "shown"), [(0, "0 B"), (1023, "1023 B"), (1536, "1.5 KiB"),
                                               (5 * 1024 * 1024, "5.0 MiB")])
def test_a_size_reads_in_bytes_kib_or_mib(count, shown):
    assert size(count) == shown


@pytest.mark.parametrize("length", [1, 2, 3, 10, 12288])
def test_the_size_of_base64_is_that_of_its_decoded_bytes(length):
    assert base64_size(base64.b64encode(b"x" * length).decode()) == size(length)


def test_brief_data_shows_a_data_url_and_a_bytes_key_by_size_and_keeps_other_text():
    prose = "word " * 100
    value = {"input": [{"file_data": f"data:application/pdf;base64,{BIG}"}],
             "source": {"data": BIG, "other": BIG}, "bytes": BIG, "text": prose, "data": prose}
    shown = brief_data(value)
    assert shown["input"][0]["file_data"] == f"data:application/pdf;base64,<12.0 KiB of base64: {BIG[:24]}…>"
    assert shown["source"]["data"] == shown["bytes"] == f"<12.0 KiB of base64: {BIG[:24]}…>"
    assert shown["source"]["other"] == BIG  # not a file's bytes key: left whole
    assert shown["text"] == shown["data"] == prose  # not base64


def test_the_responses_view_names_the_files_of_a_message_and_of_a_tool_output():
    request = body(user_with(BIG_PDF, url("https://example.com/a.pdf")), function_call("c1", "f"),
                   function_output("c1", [pdf("x.pdf")]))
    items = get("responses").view.read_request(request).items
    assert items[0] == ("message/user+input_file(Q3 report.pdf; application/pdf; 12.0 KiB)"
                        "+input_file(https://example.com/a.pdf)")
    assert items[2].startswith("function_call_output+input_file(x.pdf; application/pdf; ")


@pytest.mark.parametrize(("dialect", "label"), [
    ("anthropic", "user[text,document(Q3 report.pdf; application/pdf; 12.0 KiB)]"),
    ("gemini", "user[text,inlineData(application/pdf; 12.0 KiB)]"),
    ("bedrock", "user[text,document(Q3 report; pdf; 12.0 KiB)]"),
])
def test_each_dialects_view_names_a_document_by_name_type_and_size(dialect, label):
    translation = translate_request(body(user_with(BIG_PDF), function_call("c1", "f"),
                                         function_output("c1", [BIG_PDF]), tools=[function("f")]),
                                    dialect, TARGETS[dialect])
    items = get(dialect).view.read_request(translation.body).items
    assert items[0] == label
    assert BIG[:100] not in "".join(items)
    assert any("+" in item for item in items[1:])  # the tool output's document is said too

"""Every Responses object and event the gateway writes, from every recorded upstream stream of
every dialect and from whole answers, is what strict clients accept: the openai SDK's own types
and the Open Responses document's rules (openresponses_rules.py; issue 24, "The Responses
object, whole"; docs/responses.md "Strict clients")."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.reliability.recorded import DECODER_DIALECTS, Recording, recordings_of, translation_for
from tests.support import conformance
from tests.translators.responses_client.openresponses_rules import (
    assert_valid_response,
    assert_valid_stream,
    resource_problems,
)
from translators import stream_translator, translate_response
from translators.core.ids import sequential_ids
from translators.core.report import Report
from translators.features.naming import ToolIndex, ToolRef
from translators.ir import events as ev
from translators.responses_client.stream import ResponsesEncoder

RECORDINGS = recordings_of(*DECODER_DIALECTS)
CLOCK = 1_700_000_000


def payloads(sse: bytes) -> list[dict[str, Any]]:
    """The JSON of every `data:` line (this module's own reading of the client's stream)."""
    return [json.loads(line[5:]) for line in sse.decode().splitlines() if line.startswith("data:")]


def streamed(recording: Recording, chunks: list[bytes]) -> list[dict[str, Any]]:
    translator = stream_translator(recording.dialect, translation_for(recording.dialect),
                                   new_id=sequential_ids(), clock=lambda: CLOCK)
    out = b"".join(translator.feed(chunk) for chunk in chunks) + translator.close()
    return payloads(out)


def in_pieces(data: bytes, size: int = 7) -> list[bytes]:
    return [data[i:i + size] for i in range(0, len(data), size)]


@pytest.mark.parametrize("recording", RECORDINGS, ids=lambda r: r.id)
@pytest.mark.parametrize("chunking", ["whole", "in_pieces"])
def test_every_event_of_a_translated_recording_is_valid_for_the_sdk_and_the_document(
        recording: Recording, chunking: str) -> None:
    data = recording.data
    events = streamed(recording, [data] if chunking == "whole" else in_pieces(data))
    assert_valid_stream(events)
    assert events[-1]["type"] == "response.completed", events[-1]


@pytest.mark.parametrize("recording", RECORDINGS, ids=lambda r: r.id)
def test_the_completed_response_has_a_completion_time_and_the_created_one_none(recording: Recording) -> None:
    events = streamed(recording, [recording.data])
    assert events[0]["response"]["completed_at"] is None
    assert events[0]["response"]["status"] == "in_progress"
    assert events[-1]["response"]["completed_at"] == CLOCK


@pytest.mark.parametrize("recording", RECORDINGS, ids=lambda r: r.id)
def test_every_function_call_has_an_arguments_delta_that_adds_up_to_its_arguments(
        recording: Recording) -> None:
    events = streamed(recording, [recording.data])
    for done in (e for e in events if e["type"] == "response.function_call_arguments.done"):
        deltas = [e["delta"] for e in events if e["type"] == "response.function_call_arguments.delta"
                  and e["item_id"] == done["item_id"]]
        assert deltas and "".join(deltas) == done["arguments"]


def _whole(dialect: str, body: dict[str, Any]) -> dict[str, Any]:
    translation = translation_for(dialect).model_copy(update={"stream": False})
    return translate_response(dialect, translation, json.dumps(body).encode(), new_id=sequential_ids(),
                              clock=lambda: CLOCK)


@pytest.mark.parametrize("dialect", DECODER_DIALECTS)
def test_a_whole_text_answer_is_a_valid_response_object(dialect: str) -> None:
    response = _whole(dialect, conformance.of(dialect).whole)
    assert_valid_response(response)
    assert response["status"] == "completed" and response["completed_at"] == CLOCK


@pytest.mark.parametrize("dialect", DECODER_DIALECTS)
def test_a_whole_tool_call_answer_is_a_valid_response_object(dialect: str) -> None:
    tool_call = conformance.of(dialect).whole_tool_call
    assert tool_call is not None, f"no whole tool-call answer for {dialect} (tests/support/conformance/)"
    response = _whole(dialect, tool_call)
    assert_valid_response(response)
    assert [(i["type"], i["name"], json.loads(i["arguments"])) for i in response["output"]] == [
        ("function_call", "get_weather", {"city": "Paris"})]


@pytest.mark.parametrize("dialect", DECODER_DIALECTS)
def test_a_failed_whole_answer_is_a_valid_response_object_without_completion_time(dialect: str) -> None:
    response = _whole(dialect, {"nothing": "a vendor would send"})
    assert response["status"] == "failed"
    assert response["completed_at"] is None
    assert resource_problems(response) == []


def test_the_rules_catch_an_object_missing_what_the_document_requires() -> None:
    """The checks themselves can fail: an object as the gateway wrote them before (issue 24)."""
    old = {"id": "resp_1", "object": "response", "created_at": 1, "status": "completed", "model": "m",
           "output": [], "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "error": None,
           "incomplete_details": None, "usage": None}
    problems = resource_problems(old)
    assert "ResponseResource.truncation: missing" in problems
    assert "ResponseResource.completed_at: missing" in problems
    with pytest.raises(AssertionError):
        assert_valid_response(old)


def _encoded(*stream: ev.Event) -> list[dict[str, Any]]:
    index = ToolIndex()
    index.add("get_weather", ToolRef(name="get_weather"))
    index.add("exec", ToolRef(name="exec", kind="custom"))
    encoder = ResponsesEncoder(model="gpt-5.5", tools=index, report=Report(), new_id=sequential_ids(),
                               clock=lambda: CLOCK)
    return payloads(encoder.encode(list(stream)) + encoder.finish())


@pytest.mark.parametrize(("name", "arguments", "delta_type", "sent"), [
    ("get_weather", '{"city":"Paris"}', "response.function_call_arguments.delta", '{"city":"Paris"}'),
    ("get_weather", None, "response.function_call_arguments.delta", "{}"),
    ("exec", json.dumps({"input": "ls -l"}), "response.custom_tool_call_input.delta", "ls -l"),
])
def test_a_tool_call_given_whole_gets_one_delta_with_all_of_it_before_its_done(
        name: str, arguments: str | None, delta_type: str, sent: str) -> None:
    """Gemini gives a call's arguments whole, never in pieces; clients that follow the deltas
    (and the Open Responses compliance suite) still get them in one delta."""
    events = _encoded(ev.ToolCallStarted(0, "call_1", name), ev.ToolCallDone(0, arguments),
                      ev.Finished("tool_calls"))
    assert_valid_stream(events)
    kinds = [e["type"] for e in events]
    done_type = delta_type.replace(".delta", ".done")
    assert kinds.count(delta_type) == 1 and kinds.index(delta_type) < kinds.index(done_type)
    assert next(e["delta"] for e in events if e["type"] == delta_type) == sent


def test_a_call_whose_arguments_were_streamed_gets_no_extra_delta() -> None:
    events = _encoded(ev.ToolCallStarted(0, "call_1", "get_weather"), ev.ToolCallDelta(0, '{"city":'),
                      ev.ToolCallDelta(0, '"Paris"}'), ev.ToolCallDone(0), ev.Finished("tool_calls"))
    assert [e["delta"] for e in events if e["type"] == "response.function_call_arguments.delta"] == [
        '{"city":', '"Paris"}']

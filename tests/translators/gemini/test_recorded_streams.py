"""Every recorded Gemini stream, in every chunking, through the whole stream translator."""

from __future__ import annotations

import base64
import functools
import json

import pytest

from tests.translators.gemini.support import (
    RECORDED,
    recorded,
    recorded_chunks,
    tools_for_recordings,
    translation,
)
from tests.translators.streamcheck import (
    assert_chunking_invariant,
    assert_valid_responses_stream,
    at_both_depths,
    done_items,
    run,
    terminal,
)
from translators.features import vendor_state

TRANSLATION = translation(tools=tools_for_recordings())


@functools.cache
def _responses(name: str) -> list[dict]:
    return assert_valid_responses_stream(run("gemini", TRANSLATION, [recorded(name)]))


def _parts(name: str) -> list[dict]:
    return [p for c in recorded_chunks(name) for p in c["candidates"][0]["content"]["parts"]]


@pytest.mark.parametrize("name", RECORDED)
@at_both_depths
def test_recorded_stream_is_chunking_invariant_valid_and_ends_once(name: str) -> None:
    payloads = assert_valid_responses_stream(assert_chunking_invariant("gemini", TRANSLATION, recorded(name)))
    assert terminal(payloads)["type"] == "response.completed"


@pytest.mark.parametrize("name", RECORDED)
def test_recorded_stream_reports_the_last_usage_metadata(name: str) -> None:
    last = recorded_chunks(name)[-1]["usageMetadata"]
    usage = terminal(_responses(name))["response"]["usage"]
    thoughts = last.get("thoughtsTokenCount", 0)
    assert usage["input_tokens"] == last["promptTokenCount"]
    assert usage["output_tokens"] == last["candidatesTokenCount"] + thoughts
    assert usage["output_tokens_details"]["reasoning_tokens"] == thoughts
    assert usage["total_tokens"] == last["totalTokenCount"]


@pytest.mark.parametrize("name", RECORDED)
def test_recorded_calls_become_function_calls_with_their_arguments(name: str) -> None:
    calls = [p["functionCall"] for p in _parts(name) if "functionCall" in p and p["functionCall"].get("name")]
    items = [i for i in done_items(_responses(name)) if i["type"] == "function_call"]
    assert [i["name"] for i in items] == [c["name"] for c in calls]
    for item, call in zip(items, calls, strict=True):
        if "args" in call or not call.get("willContinue"):
            assert json.loads(item["arguments"]) == call.get("args", {})
    if calls:
        assert terminal(_responses(name))["response"]["status"] == "completed"


@pytest.mark.parametrize("name", RECORDED)
def test_recorded_thought_signatures_are_carried_verbatim_in_reasoning_items(name: str) -> None:
    signatures = [p["thoughtSignature"] for p in _parts(name) if "thoughtSignature" in p]
    states = [vendor_state.decode(i["encrypted_content"]) for i in done_items(_responses(name))
              if i["type"] == "reasoning" and i.get("encrypted_content")]
    assert [s.signature for s in states if s] == signatures
    for signature in signatures:
        base64.b64decode(signature, validate=True)  # still the standard base64 Gemini sent


def test_recorded_call_id_from_gemini_is_the_call_id() -> None:
    name = "json_array_function_call_with_id.json"
    ids = [p["functionCall"]["id"] for p in _parts(name) if "functionCall" in p]
    items = [i for i in done_items(_responses(name)) if i["type"] == "function_call"]
    assert [i["call_id"] for i in items] == ids


def test_recorded_signature_names_the_call_it_belongs_to() -> None:
    items = done_items(_responses("sse_function_call_thought_signature.sse"))
    reasoning, call = items
    assert vendor_state.decode(reasoning["encrypted_content"]).call_ids == [call["call_id"]]


def test_recorded_text_answer_streams_its_text() -> None:
    name = "sse_text_after_function_response.sse"
    expected = "".join(p.get("text", "") for p in _parts(name))
    messages = [i for i in done_items(_responses(name)) if i["type"] == "message"]
    assert [m["content"][0]["text"] for m in messages] == [expected]


def test_recorded_trailing_signature_follows_the_text_it_signed() -> None:
    items = done_items(_responses("text_with_trailing_signature_part.jsonl"))
    assert [i["type"] for i in items] == ["message", "reasoning"]
    assert vendor_state.decode(items[1]["encrypted_content"]).call_ids == []


def test_recorded_vertex_thought_becomes_the_reasoning_summary_holding_the_first_signature() -> None:
    name = "vertex_thought_then_streamed_args.jsonl"
    thought = "".join(p["text"] for p in _parts(name) if p.get("thought"))
    items = done_items(_responses(name))
    assert items[0]["type"] == "reasoning"
    assert items[0]["summary"][0]["text"] == thought
    first_call = next(i for i in items if i["type"] == "function_call")
    assert vendor_state.decode(items[0]["encrypted_content"]).call_ids == [first_call["call_id"]]


def test_recorded_vertex_streamed_arguments_are_assembled() -> None:
    items = [i for i in done_items(_responses("vertex_thought_then_streamed_args.jsonl"))
             if i["type"] == "function_call"]
    assert [(i["name"], json.loads(i["arguments"])) for i in items] == [
        ("read_theme", {}), ("read_screen", {"id": "A"}), ("read_screen", {"id": "B"}),
        ("read_screen", {"id": "C"})]


def test_recorded_calls_without_ids_get_distinct_deterministic_call_ids() -> None:
    name = "vertex_thought_then_streamed_args.jsonl"
    first = [i["call_id"] for i in done_items(_responses(name)) if i["type"] == "function_call"]
    second = [i["call_id"] for i in done_items(_responses(name)) if i["type"] == "function_call"]
    assert first == second
    assert len(set(first)) == len(first)
    response_id = recorded_chunks(name)[0]["responseId"]
    assert all(response_id in call_id for call_id in first)

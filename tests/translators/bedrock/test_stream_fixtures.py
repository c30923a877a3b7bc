"""translators/bedrock/stream.py on the recorded ConverseStream bodies (tests/data/SOURCES.md "bedrock").

Expected values are read off the fixtures with botocore, never copied from our own output.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.translators.bedrock.frames import fixture, fixture_events
from tests.translators.bedrock.support import bedrock, plain
from tests.translators.streamcheck import (
    assert_chunking_invariant,
    assert_valid_responses_stream,
    at_both_depths,
    done_items,
    events,
    terminal,
)
from translators import Translation
from translators.features.vendor_state import decode as decode_state

FIXTURES = ["converse_stream_text.eventstream", "converse_stream_tool_use.eventstream",
            "converse_stream_reasoning.eventstream"]


def weather() -> Translation:
    tool = {"type": "function", "name": "get_temperature", "description": "Temperature",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}
    return bedrock({"model": "gpt-5.5", "stream": True, "input": "temperature in the capital of France?",
                    "tools": [tool]})


def deltas(name: str, key: str, index: int) -> str:
    out = []
    for kind, payload in fixture_events(name):
        if kind == "contentBlockDelta" and payload["contentBlockIndex"] == index and key in payload["delta"]:
            value = payload["delta"][key]
            out.append(value if isinstance(value, str) else value.get("text") or value.get("input") or "")
    return "".join(out)


def fixture_usage(name: str) -> dict[str, Any]:
    return next(p["usage"] for kind, p in fixture_events(name) if kind == "metadata")


@pytest.mark.parametrize("name", FIXTURES)
@at_both_depths
def test_recorded_stream_gives_the_same_bytes_whatever_the_chunking(name: str) -> None:
    assert_chunking_invariant("bedrock", weather(), fixture(name))


@pytest.mark.parametrize("name", FIXTURES)
def test_recorded_stream_is_a_valid_responses_stream_ending_once(name: str) -> None:
    payloads = assert_valid_responses_stream(assert_chunking_invariant("bedrock", weather(), fixture(name),
                                                                       every_split=False))
    assert terminal(payloads)["type"] == "response.completed"


def test_text_deltas_become_one_assistant_message() -> None:
    name = "converse_stream_text.eventstream"
    payloads = events(assert_chunking_invariant("bedrock", plain(), fixture(name), every_split=False))
    [message] = done_items(payloads)
    assert message["type"] == "message"
    assert message["content"][0]["text"] == deltas(name, "text", 0)


def test_usage_from_metadata_after_message_stop_reaches_completed() -> None:
    name = "converse_stream_text.eventstream"
    usage = fixture_usage(name)
    payloads = events(assert_chunking_invariant("bedrock", plain(), fixture(name), every_split=False))
    got = terminal(payloads)["response"]["usage"]
    assert (got["input_tokens"], got["output_tokens"]) == (usage["inputTokens"], usage["outputTokens"])
    assert got["total_tokens"] == usage["totalTokens"]


def test_tool_use_block_becomes_a_function_call_with_its_id_and_arguments() -> None:
    name = "converse_stream_tool_use.eventstream"
    start = next(p["start"]["toolUse"] for kind, p in fixture_events(name) if kind == "contentBlockStart")
    payloads = events(assert_chunking_invariant("bedrock", weather(), fixture(name), every_split=False))
    calls = [i for i in done_items(payloads) if i["type"] == "function_call"]
    assert [(c["name"], c["call_id"]) for c in calls] == [(start["name"], start["toolUseId"])]
    assert calls[0]["arguments"] == deltas(name, "toolUse", 1)


def test_text_before_a_tool_call_stays_a_message_before_it() -> None:
    name = "converse_stream_tool_use.eventstream"
    payloads = events(assert_chunking_invariant("bedrock", weather(), fixture(name), every_split=False))
    assert [i["type"] for i in done_items(payloads)] == ["message", "function_call"]
    assert done_items(payloads)[0]["content"][0]["text"] == deltas(name, "text", 0)


def test_reasoning_block_becomes_a_reasoning_item_carrying_text_and_signature() -> None:
    name = "converse_stream_reasoning.eventstream"
    signature = "".join(p["delta"]["reasoningContent"].get("signature", "")
                        for kind, p in fixture_events(name)
                        if kind == "contentBlockDelta" and "reasoningContent" in p["delta"])
    payloads = events(assert_chunking_invariant("bedrock", plain(), fixture(name), every_split=False))
    reasoning, message = done_items(payloads)
    state = decode_state(reasoning["encrypted_content"])
    assert state is not None and state.dialect == "bedrock"
    assert state.text == deltas(name, "reasoningContent", 0)
    assert state.signature == signature
    assert reasoning["summary"][0]["text"] == state.text
    assert message["content"][0]["text"] == deltas(name, "text", 1)

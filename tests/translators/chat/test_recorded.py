"""Every recorded Chat stream: chunking never changes the client's bytes, every event validates
against the openai SDK, exactly one terminal event, and the items mean what the upstream said."""

from __future__ import annotations

import json

import pytest

from tests.translators.chat.chatdata import function, recorded, recorded_chunks, translation
from tests.translators.streamcheck import (
    assert_chunking_invariant,
    assert_random_cuts_invariant,
    assert_valid_responses_stream,
    at_both_depths,
    done_items,
    run,
    terminal,
)
from translators.features import vendor_state

# (file, upstream model, tools the request declared)
RECORDED = {
    "tool_call_single.sse": ("gpt-4o-mini", [function("get_capital", country="string")]),
    "parallel_tool_calls.sse": ("gpt-4o", [function("get_country"), function("get_product_name")]),
    "tool_call_fragmented_args.sse": ("gpt-4o", [function("get_weather", city="string")]),
    "reasoning_content_stream.sse": ("deepseek-reasoner", None),
    "reasoning_then_tool_call.jsonl": ("deepseek-reasoner", [function("weather", location="string")]),
}
SMALL = [name for name in RECORDED if name != "reasoning_content_stream.sse"]


def _translation(name: str):
    model, tools = RECORDED[name]
    return translation(model, tools)


def _calls(chunks: list[dict]) -> dict[int, dict[str, str]]:
    """Tool calls as the recording states them, accumulated by index (docs/chat.md "Streaming")."""
    calls: dict[int, dict[str, str]] = {}
    for c in chunks:
        for choice in c["choices"]:
            for frag in choice["delta"].get("tool_calls") or []:
                call = calls.setdefault(frag["index"], {"id": "", "name": "", "arguments": ""})
                call["id"] = frag.get("id") or call["id"]
                call["name"] = frag.get("function", {}).get("name") or call["name"]
                call["arguments"] += frag.get("function", {}).get("arguments") or ""
    return calls


def _usage(chunks: list[dict]) -> dict:
    return next(c["usage"] for c in chunks if c.get("usage"))


@pytest.mark.parametrize("name", SMALL)
@at_both_depths
def test_recorded_stream_output_is_independent_of_chunking(name: str) -> None:
    assert_chunking_invariant("chat", _translation(name), recorded(name))


@at_both_depths
def test_long_reasoning_stream_output_is_independent_of_chunking() -> None:
    """67 KB: whole and 7-byte chunks, chunkings cut at seeded random points over the whole stream
    (every byte would take minutes), and in the exhaustive run 1-byte chunks too (1-byte feeding
    cuts at every position at once) and all 800 cut chunkings (streamcheck.py)."""
    name = "reasoning_content_stream.sse"
    trans = _translation(name)
    assert_chunking_invariant("chat", trans, recorded(name), every_split=False)
    assert_random_cuts_invariant("chat", trans, recorded(name), runs=800, cuts=16)


@pytest.mark.parametrize("name", list(RECORDED))
def test_recorded_stream_validates_and_ends_once(name: str) -> None:
    payloads = assert_valid_responses_stream(run("chat", _translation(name), [recorded(name)]))
    assert terminal(payloads)["type"] == "response.completed"


@pytest.mark.parametrize(
    "name",
    [
        "tool_call_single.sse",
        "parallel_tool_calls.sse",
        "tool_call_fragmented_args.sse",
        "reasoning_then_tool_call.jsonl",
    ],
)
def test_recorded_tool_calls_become_function_call_items(name: str) -> None:
    expected = _calls(recorded_chunks(name))
    payloads = assert_valid_responses_stream(run("chat", _translation(name), [recorded(name)]))
    calls = [i for i in done_items(payloads) if i["type"] == "function_call"]
    assert [(c["call_id"], c["name"], json.loads(c["arguments"])) for c in calls] == [
        (e["id"], e["name"], json.loads(e["arguments"])) for e in expected.values()
    ]


@pytest.mark.parametrize("name", list(RECORDED))
def test_recorded_usage_reaches_the_completed_response(name: str) -> None:
    usage = _usage(recorded_chunks(name))
    payloads = assert_valid_responses_stream(run("chat", _translation(name), [recorded(name)]))
    got = terminal(payloads)["response"]["usage"]
    assert got["input_tokens"] == usage["prompt_tokens"]
    assert got["output_tokens"] == usage["completion_tokens"]
    assert got["total_tokens"] == usage["total_tokens"]
    assert got["input_tokens_details"]["cached_tokens"] == usage["prompt_tokens_details"]["cached_tokens"]
    assert (
        got["output_tokens_details"]["reasoning_tokens"]
        == usage["completion_tokens_details"]["reasoning_tokens"]
    )


@pytest.mark.parametrize("name", ["reasoning_content_stream.sse", "reasoning_then_tool_call.jsonl"])
def test_recorded_reasoning_content_becomes_a_reasoning_item_carrying_it(name: str) -> None:
    chunks = recorded_chunks(name)
    reasoning = "".join(
        c["choices"][0]["delta"].get("reasoning_content") or "" for c in chunks if c["choices"]
    )
    payloads = assert_valid_responses_stream(run("chat", _translation(name), [recorded(name)]))
    item = done_items(payloads)[0]
    assert item["type"] == "reasoning"
    assert item["summary"] == [{"type": "summary_text", "text": reasoning}]
    state = vendor_state.decode(item["encrypted_content"])
    assert state is not None and state.dialect == "chat" and state.text == reasoning


def test_recorded_deepseek_answer_text_follows_its_reasoning() -> None:
    name = "reasoning_content_stream.sse"
    text = "".join(
        c["choices"][0]["delta"].get("content") or "" for c in recorded_chunks(name) if c["choices"]
    )
    payloads = assert_valid_responses_stream(run("chat", _translation(name), [recorded(name)]))
    items = done_items(payloads)
    assert [i["type"] for i in items] == ["reasoning", "message"]
    assert items[1]["content"][0]["text"] == text

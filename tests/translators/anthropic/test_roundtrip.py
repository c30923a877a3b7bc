"""Two turns through Anthropic: an upstream apply_patch call reaches Codex as a freeform call, and the
thinking that came with it is replayed byte-exact on the next turn (issue 2, "Done when")."""

from __future__ import annotations

import copy
import functools
import json

from tests.translators.bodies import (
    APPLY_PATCH_GRAMMAR,
    PATCH,
    additional_tools,
    body,
    custom,
    namespace,
    user,
)
from tests.translators.streamcheck import (
    assert_chunking_invariant,
    assert_valid_responses_stream,
    at_both_depths,
    done_items,
    run,
    sse,
)
from translators import translate_request

THINKING = 'The user wants hello.txt. I\'ll write a patch — quoting "world".\n'
SIGNATURE = "ErUBCkYIBBgCIkB/+/long=="


def first_request() -> dict:
    return body(
        additional_tools(namespace("functions", custom("apply_patch", "Edit files.", APPLY_PATCH_GRAMMAR))),
        user("create hello.txt"),
        reasoning={"effort": "medium"},
    )


def upstream_stream() -> bytes:
    arguments = json.dumps({"input": PATCH})
    fragments = ["", *[arguments[i : i + 9] for i in range(0, len(arguments), 9)]]
    return sse(
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-6",
                "content": [],
                "usage": {"input_tokens": 50, "output_tokens": 1},
            },
        },
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        },
        *[
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "thinking_delta", "thinking": piece},
            }
            for piece in (THINKING[:20], THINKING[20:])
        ],
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": SIGNATURE},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": "toolu_patch", "name": "apply_patch", "input": {}},
        },
        *[
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": f},
            }
            for f in fragments
        ],
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 90}},
        {"type": "message_stop"},
    )


@functools.cache
def client_stream() -> list[dict]:
    translation = translate_request(first_request(), "anthropic")
    assert translation.body["tools"][0]["input_schema"]["required"] == ["input"]
    return assert_valid_responses_stream(run("anthropic", translation, [upstream_stream()]))


@at_both_depths
def test_the_first_turn_gives_the_client_the_same_bytes_in_any_chunking():
    translation = translate_request(first_request(), "anthropic")
    assert assert_chunking_invariant("anthropic", translation, upstream_stream()) == run(
        "anthropic", translation, [upstream_stream()])


def test_an_upstream_apply_patch_tool_use_reaches_the_client_as_a_custom_tool_call_with_the_raw_patch():
    payloads = client_stream()
    call = done_items(payloads)[1]
    assert call == {
        "type": "custom_tool_call",
        "id": call["id"],
        "call_id": "toolu_patch",
        "name": "apply_patch",
        "input": PATCH,
        "status": "completed",
    }
    assert call["id"].startswith("ctc_")


def test_the_patch_streams_as_custom_tool_call_input_deltas_not_function_arguments():
    payloads = client_stream()
    kinds = [p["type"] for p in payloads]
    assert not any(k.startswith("response.function_call_arguments") for k in kinds)
    assert (
        "".join(p["delta"] for p in payloads if p["type"] == "response.custom_tool_call_input.delta") == PATCH
    )


def test_the_next_turn_replays_the_thinking_block_byte_exact_before_the_tool_use():
    reasoning, call = copy.deepcopy(done_items(client_stream()))
    follow_up = first_request()
    follow_up["input"] += [
        reasoning,
        call,
        {
            "type": "custom_tool_call_output",
            "call_id": call["call_id"],
            "output": "Exit code: 0\nSuccess. Updated the following files:\n",
        },
    ]
    translation = translate_request(follow_up, "anthropic")
    assistant, results = translation.body["messages"][1:]
    assert assistant == {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": THINKING, "signature": SIGNATURE},
            {"type": "tool_use", "id": "toolu_patch", "name": "apply_patch", "input": {"input": PATCH}},
        ],
    }
    assert results["content"][0]["tool_use_id"] == "toolu_patch"
    assert translation.body["thinking"]["type"] == "enabled"
    assert translation.dropped == []

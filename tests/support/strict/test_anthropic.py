"""The strict Anthropic fake refuses what the Messages API refuses, in its words
(tests/support/strict/anthropic.py)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.support.strict import Issued, anthropic

HEADERS = {"anthropic-version": "2023-06-01", "content-type": "application/json"}
SIG = "EqQBCkYIBxgCKkBsignedbyfake"


def base() -> dict[str, Any]:
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 4096,
        "stream": True,
        "messages": [{"role": "user", "content": "list the files"}],
        "tools": [
            {
                "name": "exec_command",
                "description": "run",
                "input_schema": {
                    "type": "object",
                    "properties": {"cmd": {"type": "string"}},
                    "required": ["cmd"],
                },
            }
        ],
    }


def tool_loop(thinking: bool = True) -> dict[str, Any]:
    body = base()
    assistant: list[dict[str, Any]] = [
        {"type": "tool_use", "id": "toolu_1", "name": "exec_command", "input": {"cmd": "ls"}}
    ]
    if thinking:
        assistant.insert(0, {"type": "thinking", "thinking": "Run ls.", "signature": SIG})
        body["thinking"] = {"type": "enabled", "budget_tokens": 2048}
    body["messages"] += [
        {"role": "assistant", "content": assistant},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"}]},
    ]
    return body


ISSUED = Issued(thinking={SIG: "Run ls."})


def refused(
    body: dict[str, Any], headers: dict[str, str] = HEADERS, path: str = "/v1/messages"
) -> str | None:
    answer = anthropic.check(path, headers, json.dumps(body).encode(), issued=ISSUED)
    if answer is None:
        return None
    status, answer_headers, raw = answer
    error = json.loads(raw)
    assert status == 400 and answer_headers["content-type"] == "application/json"
    assert error["type"] == "error" and error["error"]["type"] == "invalid_request_error"
    message: str = error["error"]["message"]
    return message


def test_valid_requests_pass() -> None:
    assert refused(base()) is None
    assert refused(tool_loop()) is None
    assert refused(tool_loop(thinking=False)) is None


def edit(
    change: Callable[[dict[str, Any]], Any], start: Callable[[], dict[str, Any]] = base
) -> dict[str, Any]:
    body = copy.deepcopy(start())
    change(body)
    return body


CASES: list[tuple[str, dict[str, Any], str]] = [
    (
        "max_tokens above the model's limit",
        edit(lambda b: b.update(max_tokens=128_000)),
        "max_tokens: 128000 > 64000, which is the maximum allowed number of output tokens for "
        "claude-sonnet-4-5",
    ),
    (
        "temperature and top_p together",
        edit(lambda b: b.update(temperature=0.5, top_p=0.9)),
        "`temperature` and `top_p` cannot both be specified for this model. Please use only one.",
    ),
    (
        "an unknown field",
        edit(lambda b: b.update(reasoning_effort="high")),
        "reasoning_effort: Extra inputs are not permitted",
    ),
    (
        "a mistyped field",
        edit(
            lambda b: b["messages"].append(
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "t", "name": "x", "input": "ls"}],
                }
            )
        ),
        "messages.1.content.0.tool_use.input: Input should be a valid dictionary",
    ),
    ("no messages", edit(lambda b: b.update(messages=[])), "messages: at least one message is required"),
    (
        "a tool name with a dot",
        edit(lambda b: b["tools"][0].update(name="shell.exec")),
        "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'",
    ),
    (
        "two tools of one name",
        edit(lambda b: b["tools"].append(copy.deepcopy(b["tools"][0]))),
        "tools: Tool names must be unique.",
    ),
    (
        "an input_schema that is not an object",
        edit(lambda b: b["tools"][0].update(input_schema={"type": "string"})),
        "tools.0.custom.input_schema.type: Input should be 'object'",
    ),
    (
        "an input_schema that is not JSON Schema",
        edit(lambda b: b["tools"][0]["input_schema"].update(required="cmd")),
        "tools.0.custom.input_schema: JSON schema is invalid. It must match JSON Schema draft 2020-12",
    ),
    (
        "a tool_use without its result",
        edit(lambda b: b["messages"].pop(), tool_loop),
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1.",
    ),
    (
        "text before the tool_result",
        edit(lambda b: b["messages"][2]["content"].insert(0, {"type": "text", "text": "x"}), tool_loop),
        "`tool_use` ids were found without `tool_result` blocks immediately after: toolu_1",
    ),
    (
        "a tool_result for no tool_use",
        edit(lambda b: b["messages"][2]["content"][0].update(tool_use_id="toolu_9"), tool_loop),
        "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9. Each "
        "`tool_result` block must have a corresponding `tool_use` block in the previous message.",
    ),
    (
        "thinking dropped from the tool-use turn",
        edit(lambda b: b["messages"][1]["content"].pop(0), tool_loop),
        "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When "
        "`thinking` is enabled, a final `assistant` message must start with a thinking block",
    ),
    (
        "a signature the API never issued",
        edit(lambda b: b["messages"][1]["content"][0].update(signature="forged"), tool_loop),
        "messages.1.content.0: Invalid `signature` in `thinking` block",
    ),
    (
        "thinking text changed under its signature",
        edit(lambda b: b["messages"][1]["content"][0].update(thinking="Run rm."), tool_loop),
        "messages.1.content.0: Invalid `signature` in `thinking` block",
    ),
    (
        "redacted thinking the API never issued",
        edit(
            lambda b: b["messages"][1]["content"].insert(0, {"type": "redacted_thinking", "data": "x"}),
            tool_loop,
        ),
        "messages.1.content.0: Invalid `data` in `redacted_thinking` block",
    ),
    (
        "a thinking budget under 1024",
        edit(lambda b: b.update(thinking={"type": "enabled", "budget_tokens": 512})),
        "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
    ),
    (
        "a thinking budget not below max_tokens",
        edit(lambda b: b.update(thinking={"type": "enabled", "budget_tokens": 4096})),
        "`max_tokens` must be greater than `thinking.budget_tokens`.",
    ),
    (
        "enabled thinking on an adaptive-only model",
        edit(
            lambda b: b.update(model="claude-opus-4-7", thinking={"type": "enabled", "budget_tokens": 2048})
        ),
        '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive"',
    ),
    (
        "temperature while thinking",
        edit(lambda b: b.update(temperature=0.2, thinking={"type": "adaptive"})),
        "temperature may only be set to 1 when thinking is enabled or in adaptive mode.",
    ),
    (
        "a forced tool while thinking",
        edit(lambda b: b.update(thinking={"type": "adaptive"}, tool_choice={"type": "any"})),
        "Thinking may not be enabled when tool_choice forces tool use.",
    ),
    (
        "thinking in a final assistant message without thinking",
        edit(
            lambda b: b["messages"].append(
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "Run ls.", "signature": SIG},
                        {"type": "text", "text": "I"},
                    ],
                }
            )
        ),
        "When thinking is disabled, an `assistant` message in the final position cannot contain `thinking`.",
    ),
]


@pytest.mark.parametrize(("body", "wording"), [(b, w) for _, b, w in CASES], ids=[c[0] for c in CASES])
def test_refused_with_the_apis_wording(body: dict[str, Any], wording: str) -> None:
    message = refused(body)
    assert message is not None and wording in message, message


def test_a_missing_version_header_is_refused() -> None:
    assert refused(base(), headers={}) == "anthropic-version: header is required"


def test_sampling_knobs_are_gone_in_the_2026_version() -> None:
    body = edit(lambda b: b.update(temperature=0.5))
    assert refused(body) is None
    assert (
        refused(body, headers={**HEADERS, "anthropic-version": "2026-10-21"})
        == "temperature: Extra inputs are not permitted"
    )


def test_beta_fields_pass_with_a_beta_header_only() -> None:
    body = edit(lambda b: b.update(context_management={"edits": [{"type": "clear_thinking_20251015"}]}))
    assert refused(body) == "context_management: Extra inputs are not permitted"
    assert refused(body, headers={**HEADERS, "anthropic-beta": "context-management-2025-06-27"}) is None


def test_a_token_count_takes_no_max_tokens() -> None:
    body = {k: v for k, v in base().items() if k not in ("max_tokens", "stream")}
    assert refused(body, path="/v1/messages/count_tokens") is None
    assert (
        refused({**body, "max_tokens": 5}, path="/v1/messages/count_tokens")
        == "max_tokens: Extra inputs are not permitted"
    )


def test_what_a_stream_hands_out_is_read_back() -> None:
    events = [
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        },
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Run "}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "ls."}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": SIG}},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "redacted_thinking", "data": "RED"},
        },
    ]
    stream = b"".join(
        b"event: %s\ndata: %s\n\n" % (e["type"].encode(), json.dumps(e).encode()) for e in events
    )
    found = anthropic.issued_in(stream)
    assert found.thinking == {SIG: "Run ls."} and found.redacted == {"RED"}


def test_empty_content_and_too_many_cache_breakpoints_are_refused() -> None:
    empty = edit(lambda b: b["messages"].insert(0, {"role": "user", "content": []}))
    assert refused(empty) == (
        "messages.0: all messages must have non-empty content except for the optional final assistant message"
    )
    blank = edit(lambda b: b["messages"][0].update(content=[{"type": "text", "text": ""}]))
    assert refused(blank) == "messages: text content blocks must be non-empty"
    marked = {"type": "ephemeral"}

    def five(body: dict[str, Any]) -> None:
        body["tools"][0]["cache_control"] = marked
        body["system"] = [{"type": "text", "text": "s", "cache_control": marked}]
        body["messages"][0]["content"] = [{"type": "text", "text": t, "cache_control": marked} for t in "abc"]

    assert refused(edit(five)) == "A maximum of 4 blocks with cache_control may be provided. Found 5."

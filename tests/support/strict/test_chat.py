"""The strict Chat Completions fake refuses what OpenAI, DeepSeek and an open-model server refuse, in
their words (tests/support/strict/chat.py)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.support.strict import chat


def base(model: str = "deepseek-chat") -> dict[str, Any]:
    return {
        "model": model,
        "stream": True,
        "max_tokens": 4096,
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "list files"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "exec_command", "arguments": '{"cmd":"ls"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "a.txt"},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "exec_command",
                    "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}},
                },
            }
        ],
    }


def refused(body: dict[str, Any], system_first: bool | None = None) -> dict[str, Any] | None:
    answer = chat.check("/chat/completions", {}, json.dumps(body).encode(), system_first=system_first)
    if answer is None:
        return None
    status, headers, raw = answer
    assert status == 400 and headers["content-type"] == "application/json"
    error: dict[str, Any] = json.loads(raw)["error"]
    assert set(error) == {"message", "type", "param", "code"}
    return error


def edit(change: Callable[[dict[str, Any]], Any], model: str = "deepseek-chat") -> dict[str, Any]:
    body = copy.deepcopy(base(model))
    change(body)
    return body


def test_valid_requests_pass() -> None:
    for model in ("deepseek-chat", "gpt-4o", "qwen3-coder"):
        assert refused(base(model)) is None, model


CASES: list[tuple[str, dict[str, Any], str]] = [
    (
        "deepseek-chat max_tokens above 8192",
        edit(lambda b: b.update(max_tokens=128_000)),
        "Invalid max_tokens value, the valid range of max_tokens is [1, 8192]",
    ),
    (
        "deepseek-reasoner max_tokens above 65536",
        edit(lambda b: b.update(max_tokens=128_000, model="deepseek-reasoner")),
        "Invalid max_tokens value, the valid range of max_tokens is [1, 65536]",
    ),
    (
        "gpt-4o max_tokens above its limit",
        edit(lambda b: b.update(max_tokens=100_000), "gpt-4o"),
        "max_tokens is too large: 100000. This model supports at most 16384 completion tokens, whereas you "
        "provided 100000.",
    ),
    (
        "max_tokens on a reasoning model",
        edit(lambda b: b.update(max_tokens=1000), "gpt-5.5"),
        "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' "
        "instead.",
    ),
    (
        "temperature on a reasoning model",
        edit(lambda b: (b.pop("max_tokens"), b.update(temperature=0.2)), "gpt-5.5"),
        "Unsupported value: 'temperature' does not support 0.2 with this model. Only the default (1) value "
        "is supported.",
    ),
    (
        "a system message after the conversation began",
        edit(lambda b: b["messages"].append({"role": "system", "content": "late"}), "qwen3-coder"),
        "System message must be at the beginning.",
    ),
    (
        "two system messages",
        edit(lambda b: b["messages"].insert(1, {"role": "system", "content": "more"}), "qwen3-coder"),
        "System message must be at the beginning.",
    ),
    (
        "a tool message answering no call",
        edit(lambda b: b["messages"][3].update(tool_call_id="call_9"), "gpt-4o"),
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with "
        "'tool_calls'.",
    ),
    (
        "a tool message after a user message",
        edit(lambda b: b["messages"].insert(3, {"role": "user", "content": "x"})),
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
        "'tool_call_id'. (insufficient tool messages following tool_calls message)",
    ),
    (
        "a call never answered",
        edit(lambda b: b["messages"].pop(), "gpt-4o"),
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
        "'tool_call_id'. The following tool_call_ids did not have response messages: call_1",
    ),
    (
        "129 tools",
        edit(lambda b: b.update(tools=[copy.deepcopy(b["tools"][0]) for _ in range(129)])),
        "Invalid 'tools': array too long. Expected an array with maximum length 128, but got an array with "
        "length 129 instead.",
    ),
    (
        "a function name with a dot",
        edit(lambda b: b["tools"][0]["function"].update(name="shell.exec")),
        "Invalid 'tools[0].function.name': string does not match pattern. Expected a string that matches "
        "the pattern '^[a-zA-Z0-9_-]+$'.",
    ),
    (
        "a function name of 65 characters",
        edit(lambda b: b["tools"][0]["function"].update(name="f" * 65)),
        "Invalid 'tools[0].function.name': string too long. Expected a string with maximum length 64, but "
        "got a string with length 65 instead.",
    ),
    (
        "a tool message without its call id",
        edit(lambda b: b["messages"][3].pop("tool_call_id"), "gpt-4o"),
        "Missing required parameter: 'messages[3].tool_call_id'.",
    ),
    (
        "no messages",
        edit(lambda b: b.update(messages=[])),
        "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array "
        "instead.",
    ),
    (
        "json_schema on DeepSeek",
        edit(
            lambda b: b.update(
                response_format={
                    "type": "json_schema",
                    "json_schema": {"name": "x", "schema": {"type": "object"}},
                }
            )
        ),
        "This response_format type is unavailable now",
    ),
    (
        "an image on DeepSeek",
        edit(
            lambda b: b["messages"][1].update(
                content=[{"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}}]
            )
        ),
        "messages[1]: unknown variant `image_url`, expected `text`",
    ),
    (
        "thinking mode without reasoning_content",
        edit(lambda b: b.update(model="deepseek-reasoner")),
        "The `reasoning_content` in the thinking mode must be passed back to the API.",
    ),
]


@pytest.mark.parametrize(("body", "wording"), [(b, w) for _, b, w in CASES], ids=[c[0] for c in CASES])
def test_refused_with_the_servers_wording(body: dict[str, Any], wording: str) -> None:
    error = refused(body)
    assert error is not None and wording in error["message"], error


def test_each_server_words_its_errors_its_own_way() -> None:
    late = {"role": "system", "content": "late"}
    vllm = refused(edit(lambda b: b["messages"].append(late), "qwen3-coder"))
    assert vllm is not None and (vllm["type"], vllm["code"]) == ("BadRequestError", 400)
    deepseek = refused(edit(lambda b: b.update(max_tokens=9000)))
    assert deepseek is not None and (deepseek["type"], deepseek["code"]) == ("invalid_request_error",) * 2


def test_the_late_system_switch() -> None:
    late = edit(lambda b: b["messages"].append({"role": "system", "content": "late"}), "gpt-4o")
    assert refused(late) is None  # OpenAI takes a system message anywhere
    assert refused(late, system_first=True) is not None
    qwen = edit(lambda b: b["messages"].append({"role": "system", "content": "late"}), "qwen3-coder")
    assert refused(qwen, system_first=False) is None
    assert refused(edit(lambda b: b["messages"].append({"role": "system", "content": "late"}))) is not None


def test_reasoning_content_passed_back_is_taken() -> None:
    body = edit(lambda b: b.update(model="deepseek-reasoner"))
    body["messages"][2]["reasoning_content"] = ""
    assert refused(body) is None


def test_openai_takes_four_stop_sequences_and_none_on_o3() -> None:
    five = refused(edit(lambda b: b.update(stop=list("abcde")), "gpt-4o"))
    assert five is not None and five["message"] == (
        "Invalid 'stop': array too long. Expected an array with maximum length 4, but got an array with "
        "length 5 instead."
    )
    o3 = refused(edit(lambda b: (b.pop("max_tokens"), b.update(stop=["x"])), "o3"))
    assert o3 is not None
    assert o3["message"] == "Unsupported parameter: 'stop' is not supported with this model."
    assert refused(edit(lambda b: b.update(stop=list("abcd")), "gpt-4o")) is None

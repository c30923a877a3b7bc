"""Bedrock Converse in the shared suites (docs/bedrock.md "Errors"): binary event-stream frames."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from tests.support.conformance import BodyReader, Conformance, Turns, json_error
from tests.translators.bedrock.frames import encode_frame


def _error(status: int, message: str) -> tuple[dict[str, str], bytes]:
    kind = {429: "ThrottlingException", 503: "ServiceUnavailableException",
            500: "InternalServerException"}.get(status, "ValidationException")
    return json_error({"message": message},
                      {"x-amzn-errortype": f"{kind}:http://internal.amazon.com/coral/com.amazon.bedrock/"})


def _wants_stream(path: str, body: Any) -> bool:
    return path.endswith("/converse-stream")


def _huge(base: list[bytes], size: int, piece: str) -> Iterator[bytes]:
    yield base[0]
    for _ in range(size // len(piece)):
        payload = json.dumps({"contentBlockIndex": 0, "delta": {"text": piece}, "p": "abc"}).encode()
        yield encode_frame({":event-type": "contentBlockDelta", ":content-type": "application/json",
                            ":message-type": "event"}, payload)
    yield from base[1:]


def _turns(body: dict[str, Any]) -> Turns:
    turns: Turns = []
    for message in body["messages"]:
        calls: list[tuple[str | None, str]] = []
        results: list[str | None] = []
        for block in message["content"]:
            if "toolUse" in block:
                calls.append((block["toolUse"]["toolUseId"], block["toolUse"]["name"]))
            elif "toolResult" in block:
                results.append(block["toolResult"]["toolUseId"])
        turns.append((message["role"], calls, results))
    return turns


def _chosen(body: dict[str, Any]) -> str | None:
    tool = ((body.get("toolConfig") or {}).get("toolChoice") or {}).get("tool")
    return tool.get("name") if tool else None


BODY = BodyReader(  # docs/bedrock.md "Request", "Tool names and ids"
    tool_name=re.compile(r"^[a-zA-Z0-9_-]{1,64}$"),
    call_id=re.compile(r"^[a-zA-Z0-9_.:-]{1,64}$"),
    # a `cachePoint` entry may close the tool list (docs/bedrock.md "Prompt caching")
    tool_names=lambda body: [t["toolSpec"]["name"] for t in (body.get("toolConfig") or {}).get("tools", [])
                             if "toolSpec" in t],
    chosen_tool=_chosen,
    turns=_turns,
    results_first=True,
)

CONFORMANCE = Conformance(
    dialect="bedrock",
    model="us.anthropic.claude-sonnet-4-6",
    key_env="AWS_BEARER_TOKEN_BEDROCK",
    key="ABSKReliabilityUPSTREAMbedrockToken0123456789",
    key_header=("authorization", "Bearer {key}"),
    is_mine=lambda path: path.startswith("/model/"),
    error=_error,
    whole={
        "output": {"message": {"role": "assistant", "content": [{"text": "Hello whole."}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 3, "outputTokens": 2, "totalTokens": 5},
        "metrics": {"latencyMs": 1},
    },
    whole_tool_call={"output": {"message": {"role": "assistant", "content": [
        {"toolUse": {"toolUseId": "tooluse_w1", "name": "get_weather", "input": {"city": "Paris"}}}]}},
        "stopReason": "tool_use", "usage": {"inputTokens": 9, "outputTokens": 5, "totalTokens": 14},
        "metrics": {"latencyMs": 1}},
    recordings=(
        "bedrock/converse_stream_reasoning.eventstream",
        "bedrock/converse_stream_text.eventstream",
        "bedrock/converse_stream_tool_use.eventstream",
    ),
    default_stream="converse_stream_text.eventstream",
    finish_marker=rb"messageStop",
    content_type="application/vnd.amazon.eventstream",
    wants_stream=_wants_stream,
    models=("us.anthropic.claude-sonnet-4-6", "amazon.nova-pro-v1:0", "meta.llama3-70b"),
    huge=_huge,
    body=BODY,
    unknown_event=encode_frame({":event-type": "mysteryEvent", ":content-type": "application/json",
                                ":message-type": "event"}, b'{"a": 1}'),
    reports_unknown=True,
)

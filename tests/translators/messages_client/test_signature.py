"""The upstream's reasoning state rides in a thinking block's `signature` and comes back on the
next turn byte for byte: the client sends the `Message` it accumulated, the decoder reads the
state, and the upstream gets its own reasoning back (DeepSeek `reasoning_content`, Gemini
`thoughtSignature`, Bedrock's signed reasoning). Anthropic's own signature stays Anthropic's."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.translators.bedrock.frames import fixture_events
from tests.translators.chat.chatdata import recorded_chunks
from tests.translators.messages_client.messages import body, decoded, user
from tests.translators.messages_client.recordings import raw, run, sse_events
from tests.translators.messages_client.sdk import validate_stream
from translators import dialect as dialects
from translators.core.report import Report
from translators.features import vendor_state
from translators.messages_client import signature


def _next_turn(name: str) -> tuple[dict[str, Any], list[Any]]:
    """The client's next request after this recorded answer: the accumulated `Message` sent back as
    the assistant turn (the SDK's own `to_param`), then the tools' results or a user message."""
    message, _ = validate_stream(run(name, [raw(name)])[0])
    content = [json.loads(block.model_dump_json(exclude_none=True)) for block in message.content]
    calls = [b for b in content if b["type"] == "tool_use"]
    after = (
        user(*[{"type": "tool_result", "tool_use_id": c["id"], "content": "ok"} for c in calls])
        if calls
        else user("more")
    )
    request = body(
        user("q"),
        {"role": message.to_param()["role"], "content": content},
        after,
        thinking={"type": "enabled", "budget_tokens": 2048},
        max_tokens=8000,
    )
    return request, content


def _upstream_body(request: dict[str, Any], target: str, model: str) -> dict[str, Any]:
    decoded_request, report = decoded(request)
    assert not report.dropped
    codec = dialects.get(target).codec
    assert codec is not None and codec.capabilities is not None
    upstream = Report()
    encoded = codec.encode_request(decoded_request, model, upstream, codec.capabilities(model))
    assert not upstream.dropped
    return encoded.body


def _signatures(content: list[dict[str, Any]]) -> list[str]:
    return [b["signature"] for b in content if b["type"] == "thinking"]


@pytest.mark.parametrize(
    "name",
    [
        "deepseek/reasoning_then_tool_call.jsonl",
        "gemini/sse_function_call_thought_signature.sse",
        "bedrock/converse_stream_reasoning.eventstream",
    ],
)
def test_the_gateways_signature_reads_back_into_the_state_that_writes_it_again_byte_for_byte(
    name: str,
) -> None:
    request, content = _next_turn(name)
    sent = _signatures(content)
    assert sent and all(vendor_state.is_ours(s) for s in sent)
    decoded_request, _ = decoded(request)
    states = [item.state for item in decoded_request.items if item.type == "reasoning"]
    assert [signature.write(state) for state in states] == sent


def test_deepseek_gets_its_reasoning_content_back() -> None:
    name = "deepseek/reasoning_then_tool_call.jsonl"
    request, _ = _next_turn(name)
    sent = _upstream_body(request, "chat", "deepseek-reasoner")
    recorded = "".join(
        choice["delta"].get("reasoning_content") or ""
        for chunk in recorded_chunks(name.split("/")[1])
        for choice in chunk.get("choices") or []
    )
    assert [m.get("reasoning_content") for m in sent["messages"] if m["role"] == "assistant"] == [recorded]


def test_gemini_gets_its_thought_signature_back_on_its_call() -> None:
    name = "gemini/sse_function_call_thought_signature.sse"
    request, _ = _next_turn(name)
    sent = _upstream_body(request, "gemini", "gemini-2.5-pro")
    recorded = [
        part["thoughtSignature"]
        for line in raw(name).decode().splitlines()
        if line.startswith("data: ")
        for candidate in json.loads(line[6:]).get("candidates", [])
        for part in candidate.get("content", {}).get("parts", [])
        if "thoughtSignature" in part
    ]
    model_parts = [p for c in sent["contents"] if c["role"] == "model" for p in c["parts"]]
    assert [p["thoughtSignature"] for p in model_parts if "thoughtSignature" in p] == recorded
    assert "functionCall" in next(p for p in model_parts if "thoughtSignature" in p)


def test_bedrock_gets_its_signed_reasoning_back() -> None:
    name = "bedrock/converse_stream_reasoning.eventstream"
    request, _ = _next_turn(name)
    sent = _upstream_body(request, "bedrock", "anthropic.claude-sonnet-4-5")
    deltas = [
        p["delta"]["reasoningContent"]
        for kind, p in fixture_events(name.split("/")[1])
        if kind == "contentBlockDelta" and "reasoningContent" in p.get("delta", {})
    ]
    text = "".join(d.get("text", "") for d in deltas)
    sig = "".join(d.get("signature", "") for d in deltas)
    reasoning = [
        b["reasoningContent"]["reasoningText"]
        for m in sent["messages"]
        if m["role"] == "assistant"
        for b in m["content"]
        if "reasoningContent" in b
    ]
    assert reasoning == [{"text": text, "signature": sig}]


def test_anthropics_own_signature_goes_to_the_client_and_back_to_anthropic_unchanged() -> None:
    name = "anthropic/thinking_then_text.sse"
    recorded = "".join(
        p["delta"]["signature"]
        for n, p in sse_events(raw(name))
        if n == "content_block_delta" and p["delta"]["type"] == "signature_delta"
    )
    request, content = _next_turn(name)
    assert _signatures(content) == [recorded]
    sent = _upstream_body(request, "anthropic", "claude-sonnet-4-5")
    assert [
        b["signature"]
        for m in sent["messages"]
        for b in m["content"]
        if isinstance(m["content"], list) and b.get("type") == "thinking"
    ] == [recorded]


@pytest.mark.parametrize(
    ("target", "model"),
    [("chat", "deepseek-reasoner"), ("gemini", "gemini-2.5-pro"), ("bedrock", "anthropic.claude-sonnet-4-5")],
)
def test_anthropics_own_signature_never_goes_to_another_upstream(target: str, model: str) -> None:
    request, content = _next_turn("anthropic/thinking_then_text.sse")
    decoded_request, _ = decoded(request)
    codec = dialects.get(target).codec
    assert codec is not None and codec.capabilities is not None
    encoded = codec.encode_request(decoded_request, model, Report(), codec.capabilities(model))
    assert _signatures(content)[0] not in json.dumps(encoded.body)

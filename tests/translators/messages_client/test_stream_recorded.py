"""Every upstream's recorded streams, through its own decoder and the Messages encoder: each event
validates against the anthropic SDK, the SDK's own accumulation builds a valid `Message` that
says what the upstream said, and the bytes never depend on how the upstream's stream was cut."""

from __future__ import annotations

import json
import random
import zlib

import pytest
from anthropic.lib.streaming._messages import accumulate_event

from tests.support.depth import at_both_depths, exhaustive
from tests.translators.chat.chatdata import recorded_chunks
from tests.translators.messages_client.recordings import raw, recordings, run, run_encoder, sse_events
from tests.translators.messages_client.sdk import event_adapter, validate_stream
from tests.translators.streamcheck import per_event, sized
from translators.messages_client import signature

RECORDINGS = recordings()


def test_every_upstream_has_recordings_here() -> None:
    assert {name.split("/")[0] for name in RECORDINGS} == {
        "anthropic",
        "deepseek",
        "openai_chat",
        "gemini",
        "bedrock",
        "openai_responses",
    }


@pytest.mark.parametrize("name", RECORDINGS)
def test_every_event_validates_and_accumulates_into_the_message_a_whole_answer_gets(name: str) -> None:
    out, _, encoder = run_encoder(name, [raw(name)])
    message, error = validate_stream(out)
    assert error is None and message is not None
    assert message.model == "claude-opus-5-5"
    assert message.stop_reason in ("end_turn", "tool_use")
    # the non-streamed answer is the message the stream accumulates to, its blocks in the order
    # the stream stopped them (what Claude Code keeps: docs/claude-code.md "A signature after the
    # text")
    streamed = message.model_dump(exclude_none=True)
    stops = [payload["index"] for event, payload in sse_events(out) if event == "content_block_stop"]
    streamed["content"] = [streamed["content"][index] for index in stops]
    assert streamed == type(message).model_validate(encoder.message()).model_dump(exclude_none=True)


@pytest.mark.parametrize("name", RECORDINGS)
def test_the_bytes_do_not_depend_on_how_the_upstream_stream_is_cut(name: str) -> None:
    data = raw(name)
    expected, _ = run(name, [data])
    assert run(name, per_event(data))[0] == expected
    assert run(name, sized(data, 7))[0] == expected
    assert run(name, sized(data, 1))[0] == expected
    rng = random.Random(zlib.crc32(data))
    for _ in range(10):
        points = sorted(rng.sample(range(1, len(data)), min(6, len(data) - 1)))
        chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
        assert run(name, chunks)[0] == expected, f"cut at bytes {points}"


def _sdk_message_of_the_recording(name: str):
    """The Message the SDK builds from Anthropic's own recorded stream: what the client would have
    got from Anthropic directly."""
    snapshot, buffers = None, {}
    for event_name, payload in sse_events(raw(name)):
        if event_name != "ping":
            snapshot = accumulate_event(
                event=event_adapter().validate_python(payload), current_snapshot=snapshot, json_bufs=buffers
            )
    return snapshot


_KEPT = ("text", "thinking", "redacted_thinking", "tool_use")


@pytest.mark.parametrize("name", [n for n in RECORDINGS if n.startswith("anthropic/")])
def test_an_anthropic_stream_gives_the_client_the_blocks_anthropic_sent(name: str) -> None:
    ours, _ = validate_stream(run(name, [raw(name)])[0])
    theirs = _sdk_message_of_the_recording(name)
    # server tool blocks run on Anthropic's side and are reported by the upstream decoder, not passed on
    expected = [b.model_dump(exclude_none=True) for b in theirs.content if b.type in _KEPT]
    got = [b.model_dump(exclude_none=True) for b in ours.content]
    for block in expected + got:
        block.pop("citations", None)
        block.pop("caller", None)
    assert got == expected
    assert ours.stop_reason == theirs.stop_reason
    assert (ours.usage.input_tokens, ours.usage.output_tokens) == (
        theirs.usage.input_tokens,
        theirs.usage.output_tokens,
    )
    assert ours.usage.cache_read_input_tokens == (theirs.usage.cache_read_input_tokens or 0)


@pytest.mark.parametrize("name", [n for n in RECORDINGS if n.startswith(("deepseek/", "openai_chat/"))])
def test_a_chat_stream_gives_the_client_its_reasoning_text_and_calls(name: str) -> None:
    ours, _ = validate_stream(run(name, [raw(name)])[0])
    chunks = recorded_chunks(name.split("/", 1)[1])
    deltas = [choice["delta"] for c in chunks for choice in c.get("choices") or []]
    reasoning = "".join(d.get("reasoning_content") or "" for d in deltas)
    said = "".join(d.get("content") or "" for d in deltas)
    calls: dict[int, str] = {}
    for d in deltas:
        for fragment in d.get("tool_calls") or []:
            calls[fragment["index"]] = calls.get(fragment["index"], "") + (
                fragment.get("function", {}).get("arguments") or ""
            )
    assert "".join(b.thinking for b in ours.content if b.type == "thinking") == reasoning
    assert "".join(b.text for b in ours.content if b.type == "text") == said
    assert [b.input for b in ours.content if b.type == "tool_use"] == [
        json.loads(a or "{}") for _, a in sorted(calls.items())
    ]
    usage = next(c["usage"] for c in chunks if c.get("usage"))
    assert ours.usage.output_tokens == usage["completion_tokens"]


THINKING = [
    "anthropic/thinking_prompt.sse",
    "anthropic/thinking_signature_text.jsonl",
    "anthropic/thinking_then_text.sse",
    "deepseek/reasoning_content_stream.sse",
    "deepseek/reasoning_then_tool_call.jsonl",
    "bedrock/converse_stream_reasoning.eventstream",
    "gemini/vertex_thought_then_streamed_args.jsonl",
]
"""The recordings with readable reasoning."""


@pytest.mark.parametrize("name", THINKING)
def test_omitted_display_sends_thinking_blocks_with_their_signature_and_no_text(name: str) -> None:
    shown, _ = validate_stream(run(name, [raw(name)])[0])
    hidden, _ = validate_stream(run(name, [raw(name)], show_thinking=False)[0])
    thinking = [b for b in hidden.content if b.type == "thinking"]
    assert thinking and all(b.thinking == "" for b in thinking)
    # the text hidden, the signature still carries the whole state: Anthropic's own signature
    # with its text goes in the gateway's format, so it comes back over the text it signed
    seen = [b for b in shown.content if b.type == "thinking"]
    assert [signature.read(b.signature, "") for b in thinking] == [signature.read(b.signature, b.thinking)
                                                                   for b in seen]
    assert [b.model_dump() for b in hidden.content if b.type != "thinking"] == [
        b.model_dump() for b in shown.content if b.type != "thinking"
    ]


SHORT = [name for name in RECORDINGS if len(raw(name)) < 8000]
"""Recordings short enough for the exhaustive run to cut at every byte."""


@pytest.mark.parametrize("name", SHORT)
@at_both_depths
def test_every_two_way_cut_gives_the_same_bytes(name: str, check_depth: str) -> None:
    """Every split point in the exhaustive run; a seeded sample of them by default
    (tests/support/depth.py)."""
    data = raw(name)
    expected, _ = run(name, [data])
    points = range(1, len(data))
    if not exhaustive():
        points = sorted(random.Random(zlib.crc32(data)).sample(points, min(40, len(points))))
    for at in points:
        assert run(name, [data[:at], data[at:]])[0] == expected, f"cut at byte {at}"

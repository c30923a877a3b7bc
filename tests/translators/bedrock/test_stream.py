"""translators/bedrock/stream.py: ConverseStream events -> IR, on frames built for each case."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.depth import examples
from tests.translators.bedrock.frames import encode_frame, event, exception, fixture, frame_offsets, text_turn
from tests.translators.bedrock.support import bedrock, plain
from tests.translators.streamcheck import (
    assert_chunking_invariant,
    assert_valid_responses_stream,
    at_both_depths,
    done_items,
    events,
    run,
    sized,
    terminal,
    whole,
)
from translators import Translation, stream_translator
from translators.bedrock.stream import BedrockDecoder
from translators.core.ids import sequential_ids
from translators.features.vendor_state import decode as decode_state
from translators.ir import events as ev


def respond(data: bytes, translation: Translation | None = None) -> list[dict[str, Any]]:
    """Client-side events for `data`, checked for chunking invariance and SDK validity."""
    return assert_valid_responses_stream(
        assert_chunking_invariant("bedrock", translation or plain(), data, every_split=False))


def dropped_after(data: bytes) -> list[str]:
    translator = stream_translator("bedrock", plain(), new_id=sequential_ids(), clock=lambda: 0)
    translator.feed(data)
    translator.close()
    return translator.report.dropped


def start() -> bytes:
    return event("messageStart", {"role": "assistant"})


def text(index: int, value: str) -> bytes:
    return event("contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": value}})


def stop_block(index: int) -> bytes:
    return event("contentBlockStop", {"contentBlockIndex": index})


def stop(reason: str) -> bytes:
    return event("messageStop", {"stopReason": reason})


def metadata(**usage: int) -> bytes:
    return event("metadata", {"usage": {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7, **usage},
                              "metrics": {"latencyMs": 1}})


# -- the finish waits for the usage --------------------------------------------------------------
def test_response_is_not_finished_at_message_stop_but_at_metadata() -> None:
    body = start() + text(0, "hi") + stop_block(0) + stop("end_turn")
    translator = stream_translator("bedrock", plain(), new_id=sequential_ids(), clock=lambda: 0)
    before = events(translator.feed(body))
    after = events(translator.feed(metadata()))
    assert "response.completed" not in [p["type"] for p in before]
    assert [p["type"] for p in after] == ["response.completed"]
    assert after[0]["response"]["usage"]["output_tokens"] == 4


def test_message_stop_without_metadata_completes_at_close() -> None:
    payloads = respond(start() + text(0, "hi") + stop_block(0) + stop("end_turn"))
    assert terminal(payloads)["type"] == "response.completed"
    assert terminal(payloads)["response"]["usage"] is None


def test_cache_reads_and_writes_count_as_input_and_are_detailed() -> None:
    payloads = respond(start() + text(0, "hi") + stop_block(0) + stop("end_turn")
                       + metadata(inputTokens=10, cacheReadInputTokens=300, cacheWriteInputTokens=50))
    usage = terminal(payloads)["response"]["usage"]
    assert usage["input_tokens"] == 10 + 300 + 50
    assert usage["input_tokens_details"]["cached_tokens"] == 300
    assert usage["input_tokens_details"]["cache_write_tokens"] == 50


@pytest.mark.parametrize(("reason", "kind", "detail"), [
    ("end_turn", "response.completed", None),
    ("stop_sequence", "response.completed", None),
    ("tool_use", "response.completed", None),
    ("max_tokens", "response.incomplete", "max_output_tokens"),
    ("guardrail_intervened", "response.incomplete", "content_filter"),
    ("content_filtered", "response.incomplete", "content_filter"),
    ("model_context_window_exceeded", "response.failed", "context_length_exceeded"),
    ("malformed_model_output", "response.failed", "server_error"),
    ("malformed_tool_use", "response.failed", "server_error"),
])
def test_stop_reason_decides_how_the_response_ends(reason: str, kind: str, detail: str | None) -> None:
    end = terminal(respond(start() + text(0, "x") + stop_block(0) + stop(reason) + metadata()))
    assert end["type"] == kind
    response = end["response"]
    error_code = (response["error"] or {}).get("code")
    assert (response["incomplete_details"] or {}).get("reason", error_code) == detail


def test_unknown_stop_reason_completes_and_is_noted() -> None:
    translator = stream_translator("bedrock", plain(), new_id=sequential_ids(), clock=lambda: 0)
    out = translator.feed(text_turn(stop="brand_new_reason")) + translator.close()
    assert terminal(events(out))["type"] == "response.completed"
    assert any("brand_new_reason" in note for note in translator.report.notes)


# -- blocks --------------------------------------------------------------------------------------
def test_text_block_opens_on_its_first_delta_without_a_start_event() -> None:
    payloads = respond(start() + text(0, "Hel") + text(0, "lo") + stop_block(0) + stop("end_turn")
                       + metadata())
    assert [i["content"][0]["text"] for i in done_items(payloads)] == ["Hello"]


def test_tool_input_fragments_are_joined_into_the_arguments() -> None:
    body = (start()
            + event("contentBlockStart", {"contentBlockIndex": 0,
                                          "start": {"toolUse": {"toolUseId": "tooluse_1", "name": "f"}}})
            + event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '{"a":'}}})
            + event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": " 1}"}}})
            + stop_block(0) + stop("tool_use") + metadata())
    [call] = done_items(respond(body))
    assert (call["call_id"], call["name"], call["arguments"]) == ("tooluse_1", "f", '{"a": 1}')


def test_tool_call_without_input_gets_an_empty_object() -> None:
    body = (start() + event("contentBlockStart", {"contentBlockIndex": 0,
                                                  "start": {"toolUse": {"toolUseId": "t", "name": "f"}}})
            + stop_block(0) + stop("tool_use") + metadata())
    [call] = done_items(respond(body))
    assert call["arguments"] == "{}"


def test_freeform_tool_call_returns_as_custom_tool_call_with_raw_input() -> None:
    tool = {"type": "custom", "name": "apply_patch", "description": "Patch files"}
    translation = bedrock({"model": "gpt-5.5", "stream": True, "input": "patch it", "tools": [tool]})
    patch = "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch"
    args = json.dumps({"input": patch})
    started = {"toolUse": {"toolUseId": "t1", "name": "apply_patch"}}
    body = (start() + event("contentBlockStart", {"contentBlockIndex": 0, "start": started})
            + event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": args[:20]}}})
            + event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": args[20:]}}})
            + stop_block(0) + stop("tool_use") + metadata())
    [call] = done_items(respond(body, translation))
    assert (call["type"], call["name"], call["input"]) == ("custom_tool_call", "apply_patch", patch)


def test_redacted_reasoning_is_carried_in_encrypted_content() -> None:
    body = (start()
            + event("contentBlockDelta", {"contentBlockIndex": 0,
                                          "delta": {"reasoningContent": {"redactedContent": "b3BhcXVl"}}})
            + stop_block(0) + text(1, "ok") + stop_block(1) + stop("end_turn") + metadata())
    reasoning, _ = done_items(respond(body))
    state = decode_state(reasoning["encrypted_content"])
    assert state is not None and (state.dialect, state.redacted) == ("bedrock", "b3BhcXVl")


def test_signature_split_over_deltas_is_joined() -> None:
    def reasoning(delta: dict[str, str]) -> bytes:
        return event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": delta}})

    body = (start() + reasoning({"text": "think"}) + reasoning({"signature": "AAA"})
            + reasoning({"signature": "BBB"}) + stop_block(0) + stop("end_turn") + metadata())
    [item] = done_items(respond(body))
    state = decode_state(item["encrypted_content"])
    assert state is not None and (state.text, state.signature) == ("think", "AAABBB")


# -- what has no Responses equivalent ------------------------------------------------------------
def test_unknown_event_type_is_reported_and_the_stream_goes_on() -> None:
    body = (start() + event("somethingNew", {"x": 1}) + text(0, "hi") + stop_block(0) + stop("end_turn")
            + metadata())
    assert terminal(respond(body))["type"] == "response.completed"
    assert "stream.somethingNew" in dropped_after(body)


def test_unknown_delta_kind_is_reported() -> None:
    body = (start() + text(0, "hi")
            + event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"citation": {"title": "t"}}})
            + stop_block(0) + stop("end_turn") + metadata())
    assert [i["content"][0]["text"] for i in done_items(respond(body))] == ["hi"]
    assert "stream.contentBlockDelta.citation" in dropped_after(body)


def test_server_side_block_is_reported_once_and_its_deltas_skipped() -> None:
    body = (start()
            + event("contentBlockStart", {"contentBlockIndex": 0,
                                          "start": {"toolResult": {"toolUseId": "s"}}})
            + event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolResult": [{"text": "x"}]}})
            + stop_block(0) + text(1, "done") + stop_block(1) + stop("end_turn") + metadata())
    assert [i["type"] for i in done_items(respond(body))] == ["message"]
    reported = [d for d in dropped_after(body) if d.startswith("stream.")]
    assert reported == ["stream.contentBlockStart.toolResult"]


# -- exceptions and broken streams -------------------------------------------------------------
def decoded_failure(data: bytes) -> ev.Failed:
    decoder = BedrockDecoder()
    failures = [e for e in decoder.feed(data) + decoder.close() if isinstance(e, ev.Failed)]
    assert len(failures) == 1, failures
    return failures[0]


@pytest.mark.parametrize(("exception_type", "payload", "code"), [
    ("throttlingException", {"message": "Too many requests, please wait before trying again."},
     "rate_limit_exceeded"),
    ("validationException", {"message": "Input is too long for requested model."}, "context_length_exceeded"),
    ("validationException", {"message": "messages.1.content: bad block"}, "invalid_request_error"),
    ("modelStreamErrorException", {"message": "Model error", "originalStatusCode": 400,
                                   "originalMessage": "prompt is too long: 210000 tokens > 200000 maximum"},
     "context_length_exceeded"),
    ("modelStreamErrorException", {"message": "Model error"}, "server_error"),
    ("modelTimeoutException", {"message": "Model took too long"}, "timeout"),
    ("internalServerException", {"message": "Internal error"}, "server_error"),
    ("serviceUnavailableException", {"message": "Service unavailable"}, "server_is_overloaded"),
])
def test_exception_frame_maps_its_type_and_message_to_a_failure_code(
        exception_type: str, payload: dict[str, Any], code: str) -> None:
    failure = decoded_failure(start() + text(0, "par") + exception(exception_type, payload))
    assert failure.code == code
    assert payload["message"] in failure.message and exception_type in failure.message


def test_exception_frame_ends_the_client_stream_with_one_response_failed() -> None:
    message = "Too many requests, please wait before trying again."
    payloads = respond(start() + text(0, "par") + exception("throttlingException", {"message": message}))
    end = terminal(payloads)
    assert (end["type"], end["response"]["error"]["code"]) == ("response.failed", "rate_limit_exceeded")
    assert message in end["response"]["error"]["message"]


def test_error_frame_with_headers_only_ends_with_response_failed() -> None:
    frame = encode_frame({":message-type": "error", ":error-code": "InternalFailure",
                          ":error-message": "stream broke"}, b"")
    end = terminal(respond(start() + frame))
    assert end["type"] == "response.failed"
    assert "stream broke" in end["response"]["error"]["message"]


def corrupt(data: bytes, at: int) -> bytes:
    out = bytearray(data)
    out[at] ^= 0xFF
    return bytes(out)


@pytest.mark.parametrize("where", ["prelude", "headers", "payload", "message_crc"])
@at_both_depths
def test_bad_crc_frame_ends_with_one_response_failed_whatever_the_chunking(where: str) -> None:
    good = start() + text(0, "kept")
    bad = text(0, " lost")
    offset = {"prelude": 1, "headers": 14, "payload": len(bad) - 8, "message_crc": len(bad) - 1}[where]
    data = good + corrupt(bad, offset) + stop_block(0) + stop("end_turn") + metadata()
    payloads = assert_valid_responses_stream(assert_chunking_invariant("bedrock", plain(), data))
    assert terminal(payloads)["type"] == "response.failed"
    assert [p["delta"] for p in payloads if p["type"] == "response.output_text.delta"] == ["kept"]
    assert decoded_failure(data).code == "upstream_protocol_error"


def test_payload_that_is_not_json_ends_with_response_failed() -> None:
    frame = encode_frame({":message-type": "event", ":event-type": "contentBlockDelta"}, b"{not json")
    data = start() + frame + stop("end_turn") + metadata()
    assert terminal(respond(data))["type"] == "response.failed"
    assert decoded_failure(data).code == "upstream_protocol_error"


def test_stream_cut_inside_a_frame_ends_with_one_response_failed() -> None:
    data = fixture("converse_stream_text.eventstream")
    cut = data[: frame_offsets(data)[5] + 10]
    end = terminal(respond(cut))
    assert end["type"] == "response.failed"
    assert "before messageStop" in end["response"]["error"]["message"]


def test_stream_cut_between_frames_before_message_stop_ends_with_response_failed() -> None:
    end = terminal(respond(start() + text(0, "hal")))
    assert end["type"] == "response.failed"


def test_stream_cut_inside_the_metadata_frame_still_completes() -> None:
    data = start() + text(0, "hi") + stop_block(0) + stop("end_turn") + metadata()
    end = terminal(respond(data[:-6]))
    assert end["type"] == "response.completed"


def test_decoder_gives_nothing_after_it_finished() -> None:
    decoder = BedrockDecoder()
    decoder.feed(text_turn())
    assert decoder.feed(text_turn()) == []
    assert decoder.close() == []


def test_close_is_idempotent() -> None:
    decoder = BedrockDecoder()
    decoder.feed(start())
    first = decoder.close()
    assert [type(e) for e in first] == [ev.Failed]
    assert decoder.close() == []


@at_both_depths
def test_any_damage_to_a_recorded_stream_ends_with_exactly_one_terminal_event() -> None:
    @settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        original = fixture("converse_stream_tool_use.eventstream")
        damaged = bytearray(original)
        for _ in range(data.draw(st.integers(1, 4))):
            damaged[data.draw(st.integers(0, len(damaged) - 1))] = data.draw(st.integers(0, 255))
        cut = data.draw(st.integers(0, len(damaged)))
        chunk = data.draw(st.integers(1, 64))
        pieces = sized(bytes(damaged[:cut]), chunk)
        decoder = BedrockDecoder()  # raises nothing at all: damage becomes a Failed event
        produced = [e for piece in pieces for e in decoder.feed(piece)] + decoder.close()
        assert sum(isinstance(e, ev.Finished | ev.Failed) for e in produced) == 1
        out = run("bedrock", plain(), pieces)
        assert out == run("bedrock", plain(), whole(b"".join(pieces)))
        assert_valid_responses_stream(out)

    check()


@at_both_depths
def test_well_framed_but_odd_payloads_never_escape_the_decoder() -> None:
    @settings(max_examples=examples(200), deadline=None)
    @given(frames=st.lists(st.tuples(
        st.sampled_from(["messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop",
                         "messageStop", "metadata", "other"]),
        st.recursive(st.none() | st.booleans() | st.integers(-2, 3) | st.text(max_size=5),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                         st.sampled_from(["contentBlockIndex", "delta", "start", "toolUse", "text",
                                          "input", "reasoningContent", "signature", "usage", "stopReason",
                                          "inputTokens"]),
                         inner, max_size=4), max_leaves=12)), max_size=8))
    def check(frames: list[tuple[str, Any]]) -> None:
        body = b"".join(encode_frame({":message-type": "event", ":event-type": name},
                                     json.dumps(payload).encode()) for name, payload in frames)
        decoder = BedrockDecoder()
        produced = decoder.feed(body) + decoder.close()
        assert sum(isinstance(e, ev.Finished | ev.Failed) for e in produced) == 1
        assert_valid_responses_stream(run("bedrock", plain(), whole(body)))

    check()

"""Gemini stream bytes -> events and -> Responses SSE (translators/gemini/stream.py)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.data import DATA
from tests.support import hostile_sse
from tests.support.depth import examples
from tests.translators.gemini.support import (
    call,
    chunk,
    decode,
    function_tool,
    json_array,
    of,
    sse,
    text,
    translation,
)
from tests.translators.streamcheck import (
    assert_chunking_invariant,
    assert_valid_responses_stream,
    at_both_depths,
    done_items,
    run,
    terminal,
    whole,
)
from translators.core.errors import UpstreamProtocolError
from translators.gemini.stream import GeminiDecoder
from translators.ir import events as ev

CHUNKS = (chunk(text("Ça va? 🦜 ")), chunk(call("lookup", {"q": "é"}, call_id="c1")),
          chunk(text(""), finish="STOP", usage={"promptTokenCount": 3, "candidatesTokenCount": 4}))
APPLY_PATCH = {"type": "custom", "name": "apply_patch", "description": "Edit files.",
               "format": {"type": "grammar", "syntax": "lark", "definition": "start: /.+/s"}}


def _translated(data: bytes, **kwargs: object) -> list[dict]:
    t = translation(tools=[function_tool("lookup")], **kwargs)  # type: ignore[arg-type]
    return assert_valid_responses_stream(assert_chunking_invariant("gemini", t, data))


def test_sse_and_json_array_framings_give_the_same_events() -> None:
    assert decode(sse(*CHUNKS)) == decode(json_array(*CHUNKS))


@at_both_depths
def test_json_array_stream_is_chunking_invariant_and_valid() -> None:
    assert terminal(_translated(json_array(*CHUNKS)))["response"]["status"] == "completed"


@at_both_depths
def test_sse_stream_is_chunking_invariant_and_valid() -> None:
    assert terminal(_translated(sse(*CHUNKS)))["response"]["status"] == "completed"


def test_leading_byte_order_mark_is_ignored() -> None:
    assert decode(b"\xef\xbb\xbf" + json_array(*CHUNKS)) == decode(json_array(*CHUNKS))


def test_whole_object_body_without_array_is_read() -> None:
    body = json.dumps(chunk(text("hi"), finish="STOP")).encode()
    assert [d.text for d in of(ev.TextDelta, decode(body))] == ["hi"]


def test_sse_event_holding_an_array_of_chunks_is_read() -> None:
    data = b"data: " + json.dumps([chunk(text("a")), chunk(text("b"), finish="STOP")]).encode() + b"\n\n"
    assert [d.text for d in of(ev.TextDelta, decode(data))] == ["a", "b"]


def test_response_completes_as_soon_as_the_finish_reason_arrives() -> None:
    decoder = GeminiDecoder("seed")
    events = decoder.feed(sse(*CHUNKS))
    assert isinstance(events[-1], ev.Finished)


def test_stream_cut_before_finish_reason_ends_with_one_failed_response() -> None:
    payloads = _translated(sse(*CHUNKS[:2]))
    assert terminal(payloads)["type"] == "response.failed"


def test_json_array_cut_inside_an_element_ends_with_one_failed_response() -> None:
    data = json_array(*CHUNKS)
    payloads = assert_valid_responses_stream(run("gemini", translation(), whole(data[: len(data) // 2])))
    assert terminal(payloads)["type"] == "response.failed"


def test_chunk_that_is_not_json_ends_the_decoded_stream_with_a_protocol_failure() -> None:
    decoder = GeminiDecoder("seed")
    events = decoder.feed(sse(CHUNKS[0]) + b"data: {not json\n\n")
    assert isinstance(events[-1], ev.Failed) and events[-1].code == "upstream_protocol_error"
    assert any(isinstance(e, ev.TextDelta) for e in events)
    assert decoder.feed(sse(CHUNKS[1])) == [] and decoder.close() == []


def test_chunk_that_is_not_json_ends_the_client_stream_with_one_failed_response() -> None:
    sent = [sse(CHUNKS[0]), b"data: {oops\n\n"]
    payloads = assert_valid_responses_stream(run("gemini", translation(), sent))
    assert terminal(payloads)["type"] == "response.failed"
    assert "not JSON" in terminal(payloads)["response"]["error"]["message"]


def test_error_element_in_the_array_fails_the_response_with_its_code() -> None:
    error = {"error": {"code": 503, "status": "UNAVAILABLE", "message": "The model is overloaded."}}
    payloads = _translated(json_array(CHUNKS[0], error))
    assert terminal(payloads)["response"]["error"]["code"] == "server_error"  # retried by Codex
    assert terminal(payloads)["response"]["error"]["message"].startswith("server_is_overloaded: ")


def test_close_is_idempotent() -> None:
    decoder = GeminiDecoder("seed")
    decoder.feed(sse(*CHUNKS[:1]))
    assert decoder.close() != []
    assert decoder.close() == []


def test_max_tokens_ends_the_response_incomplete() -> None:
    payloads = _translated(sse(chunk(text("par"), finish="MAX_TOKENS")))
    assert terminal(payloads)["type"] == "response.incomplete"
    assert terminal(payloads)["response"]["incomplete_details"]["reason"] == "max_output_tokens"


def test_thought_text_is_the_reasoning_summary_of_its_item() -> None:
    payloads = _translated(sse(chunk(text("Thinking hard", thought=True)), chunk(text("42"), finish="STOP")))
    reasoning, message = done_items(payloads)
    assert reasoning["summary"][0]["text"] == "Thinking hard"
    assert message["content"][0]["text"] == "42"


@at_both_depths
def test_call_to_a_freeform_tool_becomes_a_custom_tool_call_with_the_raw_input() -> None:
    patch = "*** Begin Patch\n*** Add File: a.txt\n+\"hi\"\n*** End Patch\n"
    t = translation(tools=[APPLY_PATCH])
    data = sse(chunk(call("apply_patch", {"input": patch})), chunk(text(""), finish="STOP"))
    item, = done_items(assert_valid_responses_stream(assert_chunking_invariant("gemini", t, data)))
    assert (item["type"], item["name"], item["input"]) == ("custom_tool_call", "apply_patch", patch)


def test_call_to_a_namespaced_tool_comes_back_with_its_namespace() -> None:
    namespace = {"type": "namespace", "name": "mcp__files", "description": "File tools.",
                 "tools": [function_tool("read")]}
    t = translation(tools=[namespace])
    wire = next(iter(t.tools.by_wire))
    sent = [sse(chunk(call(wire), finish="STOP"))]
    item, = done_items(assert_valid_responses_stream(run("gemini", t, sent)))
    assert (item["name"], item["namespace"]) == ("read", "mcp__files")


GEMINI_STREAMS = [hostile_sse.payloads_in((DATA / "gemini" / name).read_bytes())
                  for name in ("sse_function_call_gemini2.sse", "sse_function_call_thought_signature.sse",
                               "sse_text_after_function_response.sse")]


@at_both_depths
def test_only_the_protocol_error_escapes_the_decoder_on_hostile_payloads_in_well_formed_frames() -> None:
    reached: list[bool] = []

    @settings(max_examples=examples(300), deadline=None, derandomize=True, database=None)
    @given(st.data())
    def run_one(data: st.DataObject) -> None:
        body = data.draw(hostile_sse.sse_body(GEMINI_STREAMS, named=False))
        chunks = data.draw(hostile_sse.chunked(body))
        reached.append(hostile_sse.reached(hostile_sse.decoded(GeminiDecoder("seed"), chunks)))

    hostile_sse.assert_most_examples_reach_the_handlers(run_one, reached)


@at_both_depths
def test_only_the_protocol_error_escapes_the_decoder_on_any_json() -> None:
    @settings(max_examples=examples(200), deadline=None)
    @given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                            st.sampled_from(["candidates", "content", "parts", "text", "functionCall",
                                             "name", "args", "partialArgs", "jsonPath", "willContinue",
                                             "finishReason", "usageMetadata", "thoughtSignature", "thought",
                                             "error", "id"]),
                            inner, max_size=4), max_leaves=20))
    def check(value: object) -> None:
        decoder = GeminiDecoder("seed")
        try:
            decoder.feed(b"data: " + json.dumps(value).encode() + b"\n\n")
            decoder.close()
        except UpstreamProtocolError:
            pass

    check()

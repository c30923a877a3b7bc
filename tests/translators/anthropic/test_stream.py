"""Anthropic Messages SSE -> Responses SSE (issue 2, Build 4 and "Done when"; docs/anthropic.md
"Streaming")."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support import hostile_sse
from tests.support.depth import examples
from tests.translators.bodies import additional_tools, body, function, namespace, tool_search, user
from tests.translators.growth import SAME_COST_BOUND, slower
from tests.translators.streamcheck import (
    DATA,
    assert_chunking_invariant,
    assert_random_cuts_invariant,
    assert_valid_responses_stream,
    at_both_depths,
    done_items,
    events,
    fixture,
    per_event,
    run,
    sized,
    split_at,
    sse,
    terminal,
)
from translators import stream_translator, translate_request
from translators.core.ids import sequential_ids
from translators.features import vendor_state
from translators.wire.sse import MAX_EVENT_BYTES

RECORDED = sorted(p.relative_to(DATA).as_posix() for p in (DATA / "anthropic").iterdir())
LONG_NS, LONG_NAME = "mcp__a_rather_long_server_name_here", "a_rather_long_tool_name_as_well_x"


def translation():
    """A request declaring the tools the recordings call, plus a namespaced and a too-long one."""
    return translate_request(
        body(
            user("hi"),
            additional_tools(
                namespace(
                    "functions",
                    function("pelican_name_generator"),
                    function("get_exchange_rate"),
                    function("json"),
                ),
                namespace("clock", function("sleep")),
                namespace(LONG_NS, function(LONG_NAME)),
            ),
        ),
        "anthropic",
    )


def reference(data: bytes) -> tuple[list[dict], dict]:
    """What the recording says, read independently of the code under test: the output items
    (without ids) and the final usage in Responses terms."""
    blocks: dict[int, dict] = {}
    order: list[int] = []
    usage: dict = {}
    for block in data.decode().split("\n\n"):
        line = next((x for x in block.split("\n") if x.startswith("data:")), None)
        if line is None:
            continue
        event = json.loads(line[5:])
        if event["type"] == "content_block_start":
            blocks[event["index"]] = {**event["content_block"], "_json": ""}
            order.append(event["index"])
        elif event["type"] == "content_block_delta":
            b, d = blocks[event["index"]], event["delta"]
            b["text"] = b.get("text", "") + d.get("text", "")
            b["thinking"] = b.get("thinking", "") + d.get("thinking", "")
            b["signature"] = b.get("signature", "") + d.get("signature", "")
            b["_json"] += d.get("partial_json", "")
        elif event["type"] in ("message_start", "message_delta"):
            usage.update((event.get("message") or event).get("usage") or {})
    items = []
    for i in order:
        b = blocks[i]
        if b["type"] == "text":
            items.append({"type": "message", "text": b["text"]})
        elif b["type"] == "thinking":
            items.append(
                {
                    "type": "reasoning",
                    "summary": b["thinking"],
                    "signature": b["signature"],
                    "thinking": b["thinking"],
                }
            )
        elif b["type"] == "redacted_thinking":
            items.append({"type": "reasoning", "summary": "", "redacted": b["data"]})
        elif b["type"] == "tool_use":
            items.append(
                {
                    "type": "function_call",
                    "call_id": b["id"],
                    "name": b["name"],
                    "arguments": json.loads(b["_json"] or "{}"),
                }
            )
    cache = usage.get("cache_read_input_tokens", 0) + usage.get("cache_creation_input_tokens", 0)
    return items, {
        "input_tokens": usage["input_tokens"] + cache,
        "output_tokens": usage["output_tokens"],
        "total_tokens": usage["input_tokens"] + cache + usage["output_tokens"],
        "cached_tokens": usage.get("cache_read_input_tokens", 0),
    }


def seen(items: list[dict]) -> list[dict]:
    """Our output items in the reference's terms."""
    out = []
    for item in items:
        if item["type"] == "message":
            out.append({"type": "message", "text": item["content"][0]["text"]})
        elif item["type"] == "reasoning":
            state = vendor_state.decode(item["encrypted_content"])
            summary = item["summary"][0]["text"] if item["summary"] else ""
            if state.redacted:
                out.append({"type": "reasoning", "summary": summary, "redacted": state.redacted})
            else:
                out.append(
                    {
                        "type": "reasoning",
                        "summary": summary,
                        "signature": state.signature,
                        "thinking": state.text,
                    }
                )
        elif item["type"] == "function_call":
            out.append(
                {
                    "type": "function_call",
                    "call_id": item["call_id"],
                    "name": item["name"],
                    "arguments": json.loads(item["arguments"]),
                }
            )
    return out


# -- recorded streams -----------------------------------------------------------------------------

# Splitting at every byte runs the whole pipeline once per byte: a recording up to 6.5 KB is split in
# two (at every byte in the exhaustive run, at a seeded sample of points by default); a longer one is
# cut at seeded random points spread over all of it (streamcheck.py).
EVERY_SPLIT_UP_TO = 6500


@pytest.mark.parametrize("name", RECORDED)
@at_both_depths
def test_a_recorded_stream_gives_the_same_bytes_whole_in_7_byte_and_1_byte_chunks_and_split_anywhere(name):
    data = fixture(name)
    every = len(data) <= EVERY_SPLIT_UP_TO
    assert_chunking_invariant("anthropic", translation(), data, every_split=every)
    if not every:
        assert_random_cuts_invariant("anthropic", translation(), data, runs=1200, cuts=8)


@pytest.mark.parametrize("name", RECORDED)
def test_a_recorded_stream_validates_against_the_openai_sdk_and_ends_with_one_terminal_event(name):
    payloads = assert_valid_responses_stream(run("anthropic", translation(), [fixture(name)]))
    assert payloads[-1]["type"] == "response.completed"


@pytest.mark.parametrize("name", RECORDED)
def test_a_recorded_stream_gives_the_items_and_usage_it_records(name):
    data = fixture(name)
    items, usage = reference(data)
    payloads = events(run("anthropic", translation(), [data]))
    assert seen(done_items(payloads)) == items
    got = payloads[-1]["response"]["usage"]
    assert {
        "input_tokens": got["input_tokens"],
        "output_tokens": got["output_tokens"],
        "total_tokens": got["total_tokens"],
        "cached_tokens": got["input_tokens_details"]["cached_tokens"],
    } == usage


def test_a_multi_byte_character_split_between_chunks_arrives_whole():
    data = fixture("anthropic/text_after_tool_result.sse")
    eagle = data.index("🦅".encode())
    for cut in range(eagle + 1, eagle + 4):
        payloads = events(run("anthropic", translation(), split_at(data, cut)))
        assert done_items(payloads)[0]["content"][0]["text"].endswith("feathered friend! 🦅")


def test_server_tool_blocks_are_reported_and_not_forwarded():
    translator = stream_translator("anthropic", translation(), new_id=sequential_ids(), clock=lambda: 0)
    out = translator.feed(fixture("anthropic/text_server_tool_then_tool_use.sse")) + translator.close()
    assert [i["type"] for i in done_items(events(out))] == ["message", "message", "function_call"]
    assert translator.report.dropped == [
        "output.content_block.server_tool_use",
        "output.content_block.tool_search_tool_result",
    ]


def test_recorded_tool_calls_without_arguments_get_an_empty_object():
    items = done_items(
        events(run("anthropic", translation(), [fixture("anthropic/parallel_tool_use_no_args.sse")]))
    )
    assert [(i["name"], i["arguments"]) for i in items] == [("pelican_name_generator", "{}")] * 2


# -- every event type, hand-built (shapes from docs/anthropic.md "Streaming") -----------------------------


def start(input_tokens=10, cache_read=0, cache_write=0):
    return {
        "type": "message_start",
        "message": {
            "id": "msg_up",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-6",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": input_tokens,
                "cache_read_input_tokens": cache_read,
                "cache_creation_input_tokens": cache_write,
                "output_tokens": 1,
            },
        },
    }


def text_block(index, *pieces):
    return [
        {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
        *[
            {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": p}}
            for p in pieces
        ],
        {"type": "content_block_stop", "index": index},
    ]


def tool_block(index, call_id, name, *fragments):
    return [
        {
            "type": "content_block_start",
            "index": index,
            "content_block": {"type": "tool_use", "id": call_id, "name": name, "input": {}},
        },
        *[
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": f},
            }
            for f in fragments
        ],
        {"type": "content_block_stop", "index": index},
    ]


def end(stop_reason="end_turn", output_tokens=5):
    return [
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": output_tokens},
        },
        {"type": "message_stop"},
    ]


def translate(*payloads, raw: bytes = b"") -> tuple[list[dict], object]:
    translator = stream_translator("anthropic", translation(), new_id=sequential_ids(), clock=lambda: 0)
    out = translator.feed(sse(*payloads) + raw) + translator.close()
    return assert_valid_responses_stream(out), translator.report


def test_text_deltas_make_one_message():
    payloads, _ = translate(start(), *text_block(0, "Hel", "lo"), *end())
    assert [p["delta"] for p in payloads if p["type"] == "response.output_text.delta"] == ["Hel", "lo"]
    assert done_items(payloads)[0]["content"][0]["text"] == "Hello"


def test_input_json_deltas_are_the_function_call_arguments():
    payloads, _ = translate(
        start(), *tool_block(0, "toolu_1", "sleep", "", '{"sec', 'onds": 2}'), *end("tool_use")
    )
    deltas = [p["delta"] for p in payloads if p["type"] == "response.function_call_arguments.delta"]
    assert deltas == ['{"sec', 'onds": 2}']
    assert done_items(payloads)[0]["arguments"] == '{"seconds": 2}'


def test_a_call_whose_input_comes_whole_at_its_start_keeps_non_ascii_text_unescaped():
    start_block = {"type": "content_block_start", "index": 0,
                   "content_block": {"type": "tool_use", "id": "toolu_1", "name": "sleep",
                                     "input": {"note": "café ✓"}}}
    stop = {"type": "content_block_stop", "index": 0}
    payloads, _ = translate(start(), start_block, stop, *end("tool_use"))
    arguments = done_items(payloads)[0]["arguments"]
    assert "café ✓" in arguments
    assert json.loads(arguments) == {"note": "café ✓"}


def test_a_streamed_call_to_a_flattened_name_returns_with_namespace_and_name():
    payloads, _ = translate(start(), *tool_block(0, "toolu_1", "clock__sleep", "{}"), *end("tool_use"))
    item = done_items(payloads)[0]
    assert (item["namespace"], item["name"], item["call_id"]) == ("clock", "sleep", "toolu_1")


def test_a_streamed_call_to_a_cut_name_returns_with_namespace_and_original_name():
    wire = next(t["name"] for t in translation().body["tools"] if t["name"].startswith("mcp__a_rather"))
    assert len(wire) == 64 and wire != f"{LONG_NS}__{LONG_NAME}"
    payloads, _ = translate(start(), *tool_block(0, "toolu_1", wire, "{}"), *end("tool_use"))
    item = done_items(payloads)[0]
    assert (item["namespace"], item["name"]) == (LONG_NS, LONG_NAME)


def test_thinking_and_signature_deltas_make_a_reasoning_item_that_carries_both():
    payloads, _ = translate(
        start(),
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "Let me "},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "think."},
        },
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": ""}},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": "EqQBCg=="},
        },
        {"type": "content_block_stop", "index": 0},
        *text_block(1, "Answer."),
        *end(),
    )
    reasoning, message = done_items(payloads)
    assert reasoning["summary"] == [{"type": "summary_text", "text": "Let me think."}]
    state = vendor_state.decode(reasoning["encrypted_content"])
    assert (state.dialect, state.signature, state.text) == ("anthropic", "EqQBCg==", "Let me think.")
    assert message["content"][0]["text"] == "Answer."


def test_pings_anywhere_change_nothing():
    ping = {"type": "ping"}
    plain = sse(start(), *text_block(0, "a", "b"), *end())
    pinged = sse(
        ping, start(), ping, *text_block(0, "a")[:2], ping, *text_block(0, "a", "b")[2:], ping, *end(), ping
    )
    assert run("anthropic", translation(), [pinged]) == run("anthropic", translation(), [plain])


def test_usage_counts_cache_reads_and_writes_as_input():
    payloads, _ = translate(
        start(input_tokens=10, cache_read=1000, cache_write=200), *text_block(0, "x"), *end(output_tokens=7)
    )
    assert payloads[-1]["response"]["usage"] == {
        "input_tokens": 1210,
        "input_tokens_details": {"cached_tokens": 1000, "cache_write_tokens": 200},
        "output_tokens": 7,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 1217,
    }


def test_stop_reason_tool_use_completes_the_response_with_the_call():
    payloads, _ = translate(start(), *tool_block(0, "t", "sleep", "{}"), *end("tool_use"))
    assert payloads[-1]["type"] == "response.completed"
    assert payloads[-1]["response"]["status"] == "completed"
    output = payloads[-1]["response"]["output"]
    assert [(item["type"], item["name"]) for item in output] == [("function_call", "sleep")]


def test_stop_reason_max_tokens_is_incomplete():
    payloads, _ = translate(start(), *text_block(0, "cut"), *end("max_tokens"))
    assert payloads[-1]["type"] == "response.incomplete"
    assert payloads[-1]["response"]["incomplete_details"] == {"reason": "max_output_tokens"}


def test_stop_reason_refusal_is_incomplete_content_filter():
    payloads, _ = translate(start(), *end("refusal"))
    assert payloads[-1]["response"]["incomplete_details"] == {"reason": "content_filter"}


def test_stop_reason_model_context_window_exceeded_fails_with_context_length_exceeded():
    payloads, _ = translate(start(), *text_block(0, "x"), *end("model_context_window_exceeded"))
    assert payloads[-1]["type"] == "response.failed"
    assert payloads[-1]["response"]["error"]["code"] == "context_length_exceeded"


def test_stop_reason_pause_turn_completes_a_responses_answer_with_a_note():
    payloads, report = translate(start(), *text_block(0, "x"), *end("pause_turn"))
    assert payloads[-1]["type"] == "response.completed"
    assert any("pause_turn" in n for n in report.notes)


@pytest.mark.parametrize(
    ("error_type", "code"),
    [
        ("overloaded_error", "server_error"),  # not server_is_overloaded, which Codex never retries
        ("rate_limit_error", "rate_limit_exceeded"),
        ("api_error", "server_error"),
    ],
)
def test_a_mid_stream_error_event_fails_the_response_once(error_type, code):
    error = {"type": "error", "error": {"type": error_type, "message": "Overloaded"}}
    payloads, _ = translate(start(), *text_block(0, "partial")[:2], error)
    assert [p["type"] for p in payloads].count("response.failed") == 1
    assert payloads[-1]["response"]["error"]["code"] == code


def test_an_unknown_event_type_is_reported_dropped():
    payloads, report = translate(
        start(), {"type": "content_block_teleport", "index": 0}, *text_block(0, "x"), *end()
    )
    assert payloads[-1]["type"] == "response.completed"
    assert report.dropped == ["stream.content_block_teleport"]


def test_an_unknown_delta_type_is_reported_dropped():
    _, report = translate(
        start(),
        *text_block(0, "x")[:2],
        {"type": "content_block_delta", "index": 0, "delta": {"type": "future_delta", "future": {}}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "citations_delta", "citation": {
            "type": "char_location", "cited_text": "x", "document_index": 0, "start_char_index": 0,
            "end_char_index": 1}}},
        *text_block(0, "x")[2:],
        *end(),
    )
    # a citation of a document has no URL for a url_citation
    assert report.dropped == ["output.delta.future_delta", "output.citation.char_location"]


def test_a_stream_that_ends_without_message_stop_fails_once():
    payloads, _ = translate(start(), *text_block(0, "half")[:2])
    assert payloads[-1]["type"] == "response.failed"
    assert [p["type"] for p in payloads].count("response.failed") == 1


def test_an_event_that_is_not_json_fails_the_response_once():
    payloads, _ = translate(start(), raw=b"event: content_block_delta\ndata: {not json\n\n")
    assert payloads[-1]["type"] == "response.failed"
    assert "upstream_protocol_error" in payloads[-1]["response"]["error"]["message"]


def test_feeding_after_close_and_closing_twice_add_nothing():
    translator = stream_translator("anthropic", translation(), new_id=sequential_ids(), clock=lambda: 0)
    first = translator.feed(sse(start(), *text_block(0, "x"), *end())) + translator.close()
    assert events(first)[-1]["type"] == "response.completed"
    assert translator.close() == b""
    assert translator.feed(b"event: ping\ndata: {}\n\n") == b""


ANTHROPIC_STREAMS = [hostile_sse.payloads_in(fixture(f"anthropic/{name}"))
                     for name in ("thinking_then_text.sse", "text_server_tool_then_tool_use.sse",
                                  "parallel_tool_use_no_args.sse", "redacted_thinking.sse")]


@at_both_depths
def test_hostile_payloads_in_well_formed_frames_never_raise_and_end_with_exactly_one_terminal_event():
    from translators.anthropic.stream import AnthropicDecoder

    reached: list[bool] = []

    @settings(max_examples=examples(200), deadline=None, derandomize=True, database=None)
    @given(st.data())
    def run_one(data):
        body = data.draw(hostile_sse.sse_body(ANTHROPIC_STREAMS, named=True))
        chunks = data.draw(hostile_sse.chunked(body))
        reached.append(hostile_sse.reached(hostile_sse.decoded(AnthropicDecoder(), chunks)))
        kinds = [p["type"] for p in events(run("anthropic", translation(), chunks))]
        assert sum(k in ("response.completed", "response.failed", "response.incomplete") for k in kinds) == 1

    hostile_sse.assert_most_examples_reach_the_handlers(run_one, reached)


# -- robustness -----------------------------------------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
EVENT_TYPES = [
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
    "ping",
    "error",
]
BLOCK = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "thinking", "tool_use", "redacted_thinking", "x"])},
    optional={"text": JSON, "thinking": JSON, "id": JSON, "name": JSON, "input": JSON, "data": JSON},
)
DELTA = st.fixed_dictionaries(
    {"type": st.sampled_from(["text_delta", "input_json_delta", "thinking_delta", "signature_delta", "x"])},
    optional={"text": JSON, "partial_json": JSON, "thinking": JSON, "signature": JSON},
)
COUNT = st.one_of(st.integers(0, 10**6), JSON)
USAGE = st.fixed_dictionaries(
    {},
    optional={
        "input_tokens": COUNT,
        "output_tokens": COUNT,
        "cache_read_input_tokens": COUNT,
        "cache_creation_input_tokens": COUNT,
    },
)
MESSAGE_DELTA = st.fixed_dictionaries(
    {},
    optional={
        "stop_reason": st.one_of(
            st.sampled_from(["end_turn", "tool_use", "max_tokens", "refusal", "pause_turn"]), JSON
        )
    },
)
EVENT = st.fixed_dictionaries(
    {"type": st.sampled_from(EVENT_TYPES)},
    optional={
        "index": st.one_of(st.integers(0, 2), JSON),
        "content_block": st.one_of(BLOCK, JSON),
        "delta": st.one_of(DELTA, MESSAGE_DELTA, JSON),
        "usage": st.one_of(USAGE, JSON),
        "message": st.one_of(
            st.fixed_dictionaries({}, optional={"id": JSON, "model": JSON, "usage": USAGE}), JSON
        ),
        "error": st.one_of(st.fixed_dictionaries({}, optional={"type": JSON, "message": JSON}), JSON),
    },
)


@at_both_depths
def test_only_the_packages_own_error_type_escapes_the_decoder():
    from translators.anthropic.stream import AnthropicDecoder
    from translators.core.errors import TranslatorError

    @settings(max_examples=examples(300), deadline=None)
    @given(st.lists(EVENT, max_size=12))
    def check(stream):
        decoder = AnthropicDecoder()
        try:
            decoder.feed(sse(*stream))
            decoder.close()
        except TranslatorError:
            pass
        # and the whole translator turns whatever came into one clean terminal event, without
        # falling back on its catch-all for unexpected exceptions
        translator = stream_translator("anthropic", translation(), new_id=sequential_ids(), clock=lambda: 0)
        out = translator.feed(sse(*stream)) + translator.close()
        kinds = [p["type"] for p in events(out)]
        assert sum(k in ("response.completed", "response.failed", "response.incomplete") for k in kinds) == 1
        assert not any("gateway error" in note for note in translator.report.notes)

    check()


def test_a_usage_count_that_is_not_an_integer_fails_the_response_cleanly():
    # Regression: a string output_tokens reached the encoder, whose usage sum raised out of close().
    translator = stream_translator("anthropic", translation(), new_id=sequential_ids(), clock=lambda: 0)
    out = (
        translator.feed(sse({"type": "message_delta", "usage": {"output_tokens": "a"}})) + translator.close()
    )
    payloads = assert_valid_responses_stream(out)
    assert payloads[-1]["type"] == "response.failed"
    assert "malformed message_delta" in payloads[-1]["response"]["error"]["message"]


def test_an_upstream_call_to_tool_search_is_a_client_tool_search_call_without_argument_deltas():
    request = body(user("find a calendar tool"), tools=[tool_search()])
    translator = stream_translator(
        "anthropic", translate_request(request, "anthropic"), new_id=sequential_ids(), clock=lambda: 0
    )
    out = (
        translator.feed(
            sse(
                start(),
                *tool_block(0, "toolu_s", "tool_search", '{"query": "cal', 'endar"}'),
                *end("tool_use"),
            )
        )
        + translator.close()
    )
    payloads = assert_valid_responses_stream(out)
    assert not any("arguments" in p["type"] for p in payloads)
    (item,) = done_items(payloads)
    assert item["type"] == "tool_search_call"
    assert item["id"].startswith("tsc_")
    assert (item["execution"], item["call_id"], item["arguments"]) == (
        "client",
        "toolu_s",
        {"query": "calendar"},
    )


# -- one delta event per chunk, in compact JSON: the same stream as spaced JSON in one chunk --------


def compact(*payloads) -> bytes:
    """Frames exactly as Anthropic writes them: compact JSON, one event per write."""
    return b"".join(
        f"event: {p['type']}\ndata: {json.dumps(p, ensure_ascii=False, separators=(',', ':'))}\n\n".encode()
        for p in payloads
    )


MIXED = [start(), *text_block(0, "Hé\u2028", 'a "quoted" \\ path\n', "🦅"),
         *tool_block(1, "toolu_1", "sleep", '{"sec', 'onds": 2}'), *end("tool_use")]


def test_compact_one_event_chunks_give_the_same_stream_as_spaced_json_in_one_chunk():
    translation_ = translation()
    assert run("anthropic", translation_, per_event(compact(*MIXED))) == run(
        "anthropic", translation_, [sse(*MIXED)]
    )


def test_thinking_deltas_one_per_chunk_give_the_same_reasoning_item_as_one_chunk():
    def delta(kind, field, value):
        return {"type": "content_block_delta", "index": 0, "delta": {"type": kind, field: value}}

    payloads = [start(), {"type": "content_block_start", "index": 0,
                          "content_block": {"type": "thinking", "thinking": ""}},
                delta("thinking_delta", "thinking", "Let me "), delta("thinking_delta", "thinking", "think."),
                delta("signature_delta", "signature", "sig"), {"type": "content_block_stop", "index": 0},
                *end()]
    translation_ = translation()
    one_per_chunk = run("anthropic", translation_, per_event(compact(*payloads)))
    assert one_per_chunk == run("anthropic", translation_, [sse(*payloads)])
    reasoning = done_items(events(one_per_chunk))[0]
    assert vendor_state.decode(reasoning["encrypted_content"]).text == "Let me think."


def test_a_one_event_delta_for_a_block_that_never_started_is_ignored():
    stray = {"type": "content_block_delta", "index": 7, "delta": {"type": "text_delta", "text": "x"}}
    payloads = [start(), stray, *text_block(0, "ok"), *end()]
    out = run("anthropic", translation(), per_event(compact(*payloads)))
    assert [p["delta"] for p in events(out) if p["type"] == "response.output_text.delta"] == ["ok"]


def test_a_one_event_delta_whose_string_is_not_json_fails_the_response_as_not_json():
    bad = (b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
           b'"delta":{"type":"text_delta","text":"\\x"}}\n\n')
    chunks = [*per_event(compact(start(), text_block(0)[0])), bad, *per_event(compact(*end()))]
    payloads = events(run("anthropic", translation(), chunks))
    failed = [p for p in payloads if p["type"] == "response.failed"]
    assert len(failed) == 1
    assert "not JSON" in failed[0]["response"]["error"]["message"]


# -- bounds and cost (docs/design.md "Limits") ---------------------------------------------------

def _pieces(size: int, piece: int = 256) -> list[str]:
    """A JSON string value of `size` characters, as `input_json_delta` pieces."""
    value = json.dumps({"patch": "p" * size})
    return [value[i:i + piece] for i in range(0, len(value), piece)]


def test_a_long_tool_input_costs_about_what_the_same_text_costs():
    pieces = _pieces(1_600_000)
    tool = per_event(sse(start(), *tool_block(0, "toolu_1", "sleep", *pieces), *end("tool_use")))
    text = per_event(sse(start(), *text_block(0, *pieces), *end()))
    assert slower(lambda: run("anthropic", translation(), tool),
                  lambda: run("anthropic", translation(), text)) < SAME_COST_BOUND


def test_a_long_tool_input_in_pieces_is_the_whole_arguments():
    pieces = _pieces(100_000, piece=999)
    payloads, _ = translate(start(), *tool_block(0, "toolu_1", "sleep", *pieces), *end("tool_use"))
    assert done_items(payloads)[0]["arguments"] == "".join(pieces)


def test_an_event_past_the_bound_ends_the_stream_with_one_upstream_event_too_large():
    head = sse(start(), *text_block(0, "kept"))
    huge = b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":' \
           b'{"type":"text_delta","text":"' + b"h" * (MAX_EVENT_BYTES + 1)
    translator = stream_translator("anthropic", translation(), new_id=sequential_ids(), clock=lambda: 0)
    out = translator.feed(head) + b"".join(translator.feed(c) for c in sized(huge, 1 << 20))
    out += translator.feed(b'"}}\n\n' + sse(*end())) + translator.close()
    payloads = assert_valid_responses_stream(out)
    assert [p["type"] for p in payloads].count("response.failed") == 1
    # a code the openai SDK does not know travels in the message (translators/responses_client/stream.py)
    assert terminal(payloads)["response"]["error"]["message"].startswith("upstream_event_too_large: ")
    assert [p["delta"] for p in payloads if p["type"] == "response.output_text.delta"] == ["kept"]

"""ChatDecoder: Chat Completions chunks -> IR events (docs/chat.md "Streaming", "DeepSeek")."""

from __future__ import annotations

import json

import pytest

from tests.translators.chat.chatdata import (
    chunk,
    client_stream,
    decode,
    function,
    run_report,
    sse,
    text_stream,
    tool_call,
    translation,
)
from tests.translators.streamcheck import done_items, terminal
from translators.chat.stream import ChatDecoder
from translators.ir import events as ev


def test_content_deltas_become_one_message_with_the_whole_text() -> None:
    payloads = client_stream(text_stream("Hel", "lo", " there"))
    assert [p["delta"] for p in payloads if p["type"] == "response.output_text.delta"] == [
        "Hel",
        "lo",
        " there",
    ]
    assert done_items(payloads)[0]["content"][0]["text"] == "Hello there"


def test_first_fragment_of_an_index_starts_the_call_and_later_fragments_add_arguments() -> None:
    events = decode(
        sse(
            chunk({"tool_calls": [tool_call(0, "call_a", "f", "")]}),
            chunk({"tool_calls": [tool_call(0, arguments='{"x":')]}),
            chunk({"tool_calls": [tool_call(0, arguments="1}")]}),
            chunk(finish="tool_calls"),
        )
    )
    calls = [e for e in events if isinstance(e, ev.ToolCallStarted | ev.ToolCallDelta | ev.ToolCallDone)]
    assert calls == [
        ev.ToolCallStarted(("call", 0), "call_a", "f"),
        ev.ToolCallDelta(("call", 0), '{"x":'),
        ev.ToolCallDelta(("call", 0), "1}"),
        ev.ToolCallDone(("call", 0)),
    ]


def test_interleaved_fragments_are_accumulated_by_index_not_by_arrival() -> None:
    data = sse(
        chunk({"tool_calls": [tool_call(0, "call_a", "f", '{"a":'), tool_call(1, "call_b", "g", '{"b":')]}),
        chunk({"tool_calls": [tool_call(1, arguments="2}")]}),
        chunk({"tool_calls": [tool_call(0, arguments="1}")]}),
        chunk(finish="tool_calls"),
    )
    items = done_items(client_stream(data, translation(tools=[function("f"), function("g")])))
    assert [(i["name"], json.loads(i["arguments"])) for i in items] == [("f", {"a": 1}), ("g", {"b": 2})]


def test_arguments_sent_before_the_name_wait_for_the_name() -> None:
    events = decode(
        sse(
            chunk({"tool_calls": [{"index": 0, "id": "call_a", "function": {"arguments": '{"x":1}'}}]}),
            chunk({"tool_calls": [{"index": 0, "function": {"name": "f"}}]}),
            chunk(finish="tool_calls"),
        )
    )
    kinds = [type(e).__name__ for e in events if isinstance(e, ev.ToolCallStarted | ev.ToolCallDelta)]
    assert kinds == ["ToolCallStarted", "ToolCallDelta"]


def test_a_call_that_never_gets_a_name_is_reported_not_emitted() -> None:
    events = decode(
        sse(chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}), chunk(finish="stop"))
    )
    assert not any(isinstance(e, ev.ToolCallStarted) for e in events)
    assert any(isinstance(e, ev.Unknown) and "tool_calls[0]" in e.path for e in events)


def test_calls_without_index_are_told_apart_by_id() -> None:
    """Gemini's OpenAI-compatible layer sends whole calls and no `index`."""
    data = sse(
        chunk(
            {"tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}
        ),
        chunk(
            {"tool_calls": [{"id": "b", "type": "function", "function": {"name": "g", "arguments": "{}"}}]}
        ),
        chunk(finish="tool_calls"),
    )
    items = done_items(client_stream(data, translation(tools=[function("f"), function("g")])))
    assert [(i["call_id"], i["name"]) for i in items] == [("a", "f"), ("b", "g")]


def test_calls_to_a_freeform_tool_come_back_as_custom_tool_calls_with_raw_input() -> None:
    trans = translation("qwen3", tools=[{"type": "custom", "name": "apply_patch", "description": "patch"}])
    raw = '*** Begin Patch\n*** Add File: a.txt\n+"hi"\n*** End Patch\n'
    args = json.dumps({"input": raw})
    data = sse(
        chunk({"tool_calls": [tool_call(0, "call_p", "apply_patch", args[:15])]}),
        chunk({"tool_calls": [tool_call(0, arguments=args[15:])]}),
        chunk(finish="tool_calls"),
    )
    item = done_items(client_stream(data, trans))[0]
    assert (item["type"], item["name"], item["input"]) == ("custom_tool_call", "apply_patch", raw)


def test_native_custom_tool_call_stream_gives_the_raw_input() -> None:
    """OpenAI's own `{type: "custom", custom: {name, input}}` call shape, streamed in pieces."""
    trans = translation("gpt-5", tools=[{"type": "custom", "name": "apply_patch", "description": "patch"}])
    raw = 'line "one"\nline two\n'
    data = sse(
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_c",
                        "type": "custom",
                        "custom": {"name": "apply_patch", "input": raw[:7]},
                    }
                ]
            }
        ),
        chunk({"tool_calls": [{"index": 0, "custom": {"input": raw[7:]}}]}),
        chunk(finish="tool_calls"),
    )
    payloads = client_stream(data, trans)
    item = done_items(payloads)[0]
    assert (item["type"], item["call_id"], item["input"]) == ("custom_tool_call", "call_c", raw)
    live = "".join(p["delta"] for p in payloads if p["type"] == "response.custom_tool_call_input.delta")
    assert live == raw


def test_reasoning_content_streams_as_summary_deltas_before_the_answer() -> None:
    data = sse(
        chunk({"role": "assistant", "content": None, "reasoning_content": ""}),
        chunk({"content": None, "reasoning_content": "think "}),
        chunk({"content": None, "reasoning_content": "more"}),
        chunk({"content": "answer", "reasoning_content": None}),
        chunk(finish="stop"),
    )
    payloads = client_stream(data, translation("deepseek-reasoner"))
    deltas = [p["delta"] for p in payloads if p["type"] == "response.reasoning_summary_text.delta"]
    assert deltas == ["think ", "more"]
    assert [i["type"] for i in done_items(payloads)] == ["reasoning", "message"]


def test_reasoning_done_carries_the_full_reasoning_content_as_vendor_state() -> None:
    events = decode(
        sse(
            chunk({"reasoning_content": "a"}),
            chunk({"reasoning_content": "b"}),
            chunk({"content": "x"}),
            chunk(finish="stop"),
        )
    )
    done = next(e for e in events if isinstance(e, ev.ReasoningDone))
    assert done.state is not None and (done.state.dialect, done.state.text) == ("chat", "ab")


def test_reasoning_field_of_ollama_and_openrouter_is_read_as_reasoning() -> None:
    events = decode(sse(chunk({"reasoning": "hmm"}), chunk({"content": "x"}), chunk(finish="stop")))
    assert ev.ReasoningDelta(("reasoning", 0), "hmm") in events


def test_usage_in_a_separate_choiceless_chunk_is_counted() -> None:
    usage = {
        "prompt_tokens": 50,
        "completion_tokens": 7,
        "total_tokens": 57,
        "prompt_tokens_details": {"cached_tokens": 32},
        "completion_tokens_details": {"reasoning_tokens": 3},
    }
    data = sse(chunk({"content": "hi"}), chunk(finish="stop"), chunk(usage=usage, choices=False))
    got = terminal(client_stream(data))["response"]["usage"]
    assert (got["input_tokens"], got["output_tokens"], got["total_tokens"]) == (50, 7, 57)
    assert got["input_tokens_details"]["cached_tokens"] == 32
    assert got["output_tokens_details"]["reasoning_tokens"] == 3


def test_deepseek_cache_hit_tokens_count_as_cached_when_details_are_absent() -> None:
    usage = {
        "prompt_tokens": 40,
        "completion_tokens": 2,
        "total_tokens": 42,
        "prompt_cache_hit_tokens": 30,
        "prompt_cache_miss_tokens": 10,
    }
    data = sse(chunk({"content": "hi"}), chunk(finish="stop", usage=usage))
    assert terminal(client_stream(data))["response"]["usage"]["input_tokens_details"]["cached_tokens"] == 30


@pytest.mark.parametrize(
    ("finish", "terminal_type", "reason"),
    [
        ("stop", "response.completed", None),
        ("tool_calls", "response.completed", None),
        ("length", "response.incomplete", "max_output_tokens"),
        ("content_filter", "response.incomplete", "content_filter"),
    ],
)
def test_finish_reason_decides_how_the_response_ends(
    finish: str, terminal_type: str, reason: str | None
) -> None:
    end = terminal(client_stream(text_stream("partial", finish=finish)))
    assert end["type"] == terminal_type
    assert end["response"]["incomplete_details"] == ({"reason": reason} if reason else None)


def test_deepseek_insufficient_system_resource_fails_as_overloaded() -> None:
    end = terminal(client_stream(text_stream("x", finish="insufficient_system_resource")))
    assert (end["type"], end["response"]["error"]["code"]) == ("response.failed", "server_error")
    assert end["response"]["error"]["message"].startswith("server_is_overloaded: ")


def test_unknown_finish_reason_ends_the_turn_and_is_noted() -> None:
    payloads, report = run_report(text_stream("x", finish="eos"), translation())
    assert terminal(payloads)["type"] == "response.completed"
    assert any("'eos'" in note for note in report.notes)


def test_error_chunk_in_the_stream_fails_the_response() -> None:
    data = sse(
        chunk({"content": "par"}),
        {
            "error": {
                "message": "Rate limit reached, try again in 2s.",
                "type": "rate_limit_error",
                "code": "rate_limit_exceeded",
            }
        },
        done=False,
    )
    end = terminal(client_stream(data))
    assert end["type"] == "response.failed"
    assert end["response"]["error"]["code"] == "rate_limit_exceeded"
    assert "try again in 2s" in end["response"]["error"]["message"]


def test_context_overflow_error_chunk_is_context_length_exceeded() -> None:
    data = sse(
        {
            "object": "error",
            "message": "This model's maximum context length is 8192 tokens.",
            "type": "BadRequestError",
            "code": 400,
        },
        done=False,
    )
    assert terminal(client_stream(data))["response"]["error"]["code"] == "context_length_exceeded"


def test_stream_cut_before_a_finish_reason_fails_once() -> None:
    end = terminal(client_stream(sse(chunk({"content": "half"}), done=False)))
    assert end["type"] == "response.failed"


def test_stream_without_done_after_a_finish_reason_still_completes() -> None:
    data = sse(chunk({"content": "whole"}), chunk(finish="stop"), done=False)
    assert terminal(client_stream(data))["type"] == "response.completed"


def test_nothing_after_done_is_read() -> None:
    data = text_stream("a") + sse(chunk({"content": "late"}))
    assert done_items(client_stream(data))[0]["content"][0]["text"] == "a"


def test_malformed_json_chunk_ends_the_decoded_stream_with_a_protocol_failure() -> None:
    decoder = ChatDecoder()
    events = decoder.feed(sse(chunk({"content": "a"}), done=False) + b"data: {not json\n\n")
    assert isinstance(events[-1], ev.Failed) and events[-1].code == "upstream_protocol_error"
    assert [e.text for e in events if isinstance(e, ev.TextDelta)] == ["a"]
    assert decoder.feed(sse(chunk({"content": "late"}), done=False)) == [] and decoder.close() == []


def test_malformed_json_chunk_fails_the_client_stream_once() -> None:
    payloads = client_stream(b"data: {not json\n\n")
    end = terminal(payloads)
    assert [p["type"] for p in payloads].count("response.failed") == 1
    assert "upstream_protocol_error" in end["response"]["error"]["message"]


def test_unknown_delta_field_is_reported_dropped() -> None:
    _, report = run_report(
        sse(chunk({"content": "x", "audio": {"id": "a"}}), chunk(finish="stop")), translation()
    )
    assert "choices[0].delta.audio" in report.dropped


def test_extra_choices_are_reported_dropped() -> None:
    data = sse(
        {
            **chunk({"content": "a"}),
            "choices": [
                {"index": 0, "delta": {"content": "a"}, "finish_reason": None},
                {"index": 1, "delta": {"content": "b"}, "finish_reason": None},
            ],
        },
        chunk(finish="stop"),
    )
    payloads, report = run_report(data, translation())
    assert "choices[1]" in report.dropped
    assert done_items(payloads)[0]["content"][0]["text"] == "a"


def test_refusal_reaches_the_client_as_text_with_a_note() -> None:
    payloads, report = run_report(
        sse(chunk({"refusal": "I can't help"}), chunk(finish="stop")), translation()
    )
    assert done_items(payloads)[0]["content"][0]["text"] == "I can't help"
    assert any("refused" in note for note in report.notes)


def test_close_twice_adds_nothing() -> None:
    decoder = ChatDecoder()
    decoder.feed(text_stream("a"))
    decoder.close()
    assert decoder.close() == []


def test_content_after_the_finish_reason_is_reported_not_shown() -> None:
    data = sse(chunk({"content": "done"}), chunk(finish="stop"), chunk({"content": "stray"}))
    payloads, report = run_report(data, translation())
    assert [i["content"][0]["text"] for i in done_items(payloads)] == ["done"]
    assert "choices[0].delta after finish_reason" in report.dropped

"""translators/responses_client/stream.py: IR stream events -> the Responses SSE Codex and the
openai SDK accept (issue 2, Build 5; docs/codex.md "What Codex needs back", docs/responses.md
"Event order")."""

from __future__ import annotations

import json

from tests.translators.bodies import APPLY_PATCH_GRAMMAR, PATCH
from tests.translators.streamcheck import assert_valid_responses_stream, done_items, events
from translators.core.ids import sequential_ids
from translators.core.report import Report
from translators.features import vendor_state
from translators.features.naming import ToolIndex, ToolRef
from translators.ir import events as ev
from translators.ir.request import VendorState
from translators.responses_client.stream import MAX_OUTPUT_CHARS, ResponsesEncoder
from translators.wire.sse import encode_event


def tools() -> ToolIndex:
    index = ToolIndex()
    index.add("exec_command", ToolRef(name="exec_command"))
    index.add("clock__sleep", ToolRef(name="sleep", namespace="clock"))
    index.add(
        "apply_patch",
        ToolRef(name="apply_patch", kind="custom", syntax="lark", definition=APPLY_PATCH_GRAMMAR),
    )
    index.add("exec", ToolRef(name="exec", kind="custom"))
    index.add("tool_search", ToolRef(name="tool_search", kind="tool_search"))
    index.add("local_shell", ToolRef(name="local_shell", kind="local_shell"))
    return index


def encode(*stream: ev.Event, finish: bool = True) -> tuple[list[dict], Report]:
    report = Report()
    encoder = ResponsesEncoder(
        model="gpt-5.5", tools=tools(), report=report, new_id=sequential_ids(), clock=lambda: 1_700_000_000
    )
    out = encoder.encode(list(stream))
    if finish:
        out += encoder.finish()
    return assert_valid_responses_stream(out), report


def kinds(payloads: list[dict]) -> list[str]:
    return [p["type"] for p in payloads]


END = [ev.Finished("stop")]


def test_a_text_answer_is_the_full_event_sequence_numbered_from_zero():
    payloads, _ = encode(
        ev.Started(), ev.TextDelta(0, "Hel"), ev.TextDelta(0, "lo"), ev.TextDone(0), *END
    )
    assert kinds(payloads) == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert [p["sequence_number"] for p in payloads] == list(range(len(payloads)))
    assert done_items(payloads) == [
        {
            "type": "message",
            "id": "msg_2",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Hello", "annotations": []}],
        }
    ]


def test_the_completed_response_has_the_created_id_and_the_output():
    payloads, _ = encode(ev.TextDelta(0, "hi"), ev.TextDone(0), *END)
    response = payloads[-1]["response"]
    assert response["id"] == "resp_1"
    assert response["status"] == "completed"
    assert response["output"] == done_items(payloads)
    assert payloads[0]["response"]["id"] == response["id"]


def test_usage_counts_cached_and_reasoning_tokens_and_totals():
    payloads, _ = encode(
        ev.Usage(input_tokens=100, cached_tokens=60, cache_write_tokens=30, output_tokens=1),
        ev.TextDelta(0, "x"),
        ev.Usage(output_tokens=20, reasoning_tokens=5),
        *END,
    )
    assert payloads[-1]["response"]["usage"] == {
        "input_tokens": 100,
        "input_tokens_details": {"cached_tokens": 60, "cache_write_tokens": 30},
        "output_tokens": 20,
        "output_tokens_details": {"reasoning_tokens": 5},
        "total_tokens": 120,
    }


def test_without_any_usage_the_usage_is_null_not_partial():
    payloads, _ = encode(ev.TextDelta(0, "x"), *END)
    assert payloads[-1]["response"]["usage"] is None


def test_thinking_becomes_a_reasoning_item_whose_encrypted_content_carries_the_signature():
    state = VendorState(dialect="anthropic", signature="sig/+=", text="I think")
    payloads, _ = encode(
        ev.ReasoningDelta(0, "I "), ev.ReasoningDelta(0, "think"), ev.ReasoningDone(0, state), *END
    )
    assert kinds(payloads)[2:-1] == [
        "response.output_item.added",
        "response.reasoning_summary_part.added",
        "response.reasoning_summary_text.delta",
        "response.reasoning_summary_text.delta",
        "response.reasoning_summary_text.done",
        "response.reasoning_summary_part.done",
        "response.output_item.done",
    ]
    item = done_items(payloads)[0]
    assert item["summary"] == [{"type": "summary_text", "text": "I think"}]
    assert vendor_state.decode(item["encrypted_content"]) == state


def test_redacted_thinking_is_a_reasoning_item_with_only_encrypted_content():
    state = VendorState(dialect="anthropic", redacted="opaque")
    payloads, _ = encode(ev.ReasoningDone(0, state), *END)
    assert kinds(payloads)[2:-1] == ["response.output_item.added", "response.output_item.done"]
    item = done_items(payloads)[0]
    assert item["summary"] == []
    assert vendor_state.decode(item["encrypted_content"]) == state


def test_a_function_call_streams_its_arguments_under_the_clients_name():
    payloads, _ = encode(
        ev.ToolCallStarted(0, "toolu_1", "exec_command"),
        ev.ToolCallDelta(0, '{"cmd":'),
        ev.ToolCallDelta(0, '"ls"}'),
        ev.ToolCallDone(0),
        ev.Finished("tool_calls"),
    )
    assert kinds(payloads)[2:-1] == [
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
    ]
    assert done_items(payloads) == [
        {
            "type": "function_call",
            "id": "fc_2",
            "call_id": "toolu_1",
            "name": "exec_command",
            "arguments": '{"cmd":"ls"}',
            "status": "completed",
        }
    ]


def test_a_namespaced_call_returns_with_namespace_and_original_name():
    payloads, _ = encode(
        ev.ToolCallStarted(0, "toolu_1", "clock__sleep"), ev.ToolCallDone(0, '{"s":1}'), *END
    )
    item = done_items(payloads)[0]
    assert (item["name"], item["namespace"]) == ("sleep", "clock")
    added = next(p for p in payloads if p["type"] == "response.output_item.added")
    assert (added["item"]["name"], added["item"]["namespace"]) == ("sleep", "clock")


def test_a_call_with_no_arguments_gets_an_empty_object():
    payloads, _ = encode(ev.ToolCallStarted(0, "toolu_1", "exec_command"), ev.ToolCallDone(0), *END)
    assert done_items(payloads)[0]["arguments"] == "{}"


def test_a_freeform_call_comes_back_as_custom_tool_call_with_raw_text_deltas():
    arguments = json.dumps({"input": PATCH})
    fragments = [arguments[i : i + 5] for i in range(0, len(arguments), 5)]
    payloads, report = encode(
        ev.ToolCallStarted(0, "toolu_p", "apply_patch"),
        *[ev.ToolCallDelta(0, f) for f in fragments],
        ev.ToolCallDone(0),
        *END,
    )
    assert not any(k.startswith("response.function_call_arguments") for k in kinds(payloads))
    deltas = [p["delta"] for p in payloads if p["type"] == "response.custom_tool_call_input.delta"]
    assert "".join(deltas) == PATCH
    assert next(p for p in payloads if p["type"] == "response.custom_tool_call_input.done")["input"] == PATCH
    assert done_items(payloads) == [
        {
            "type": "custom_tool_call",
            "id": "ctc_2",
            "call_id": "toolu_p",
            "name": "apply_patch",
            "input": PATCH,
            "status": "completed",
        }
    ]
    assert report.notes == []


def test_freeform_arguments_that_do_not_parse_pass_through_verbatim():
    payloads, _ = encode(ev.ToolCallStarted(0, "t", "exec"), ev.ToolCallDone(0, "console.log(1)"), *END)
    assert done_items(payloads)[0]["input"] == "console.log(1)"


def test_a_grammar_mismatch_adds_a_note_and_never_alters_the_text():
    text = "rm -rf / # not a patch"
    payloads, report = encode(
        ev.ToolCallStarted(0, "t", "apply_patch"), ev.ToolCallDone(0, json.dumps({"input": text})), *END
    )
    assert done_items(payloads)[0]["input"] == text
    assert len(report.notes) == 1
    assert "apply_patch" in report.notes[0]


def test_a_tool_search_call_is_client_executed_with_object_arguments_and_no_deltas():
    payloads, _ = encode(
        ev.ToolCallStarted(0, "toolu_s", "tool_search"),
        ev.ToolCallDelta(0, '{"query":'),
        ev.ToolCallDelta(0, '"calendar","limit":2}'),
        ev.ToolCallDone(0),
        *END,
    )
    assert kinds(payloads)[2:-1] == ["response.output_item.added", "response.output_item.done"]
    item = done_items(payloads)[0]
    assert item == {
        "type": "tool_search_call",
        "id": "tsc_2",
        "call_id": "toolu_s",
        "execution": "client",
        "arguments": {"query": "calendar", "limit": 2},
        "status": "completed",
    }


def test_a_local_shell_call_carries_an_exec_action():
    payloads, _ = encode(
        ev.ToolCallStarted(0, "toolu_l", "local_shell"),
        ev.ToolCallDone(0, '{"command":["ls","-l"],"timeout_ms":5}'),
        *END,
    )
    item = done_items(payloads)[0]
    assert item["type"] == "local_shell_call"
    assert item["call_id"] == "toolu_l"
    # Regression: without `env` the item failed the SDK's LocalShellCallAction validation
    assert item["action"] == {"type": "exec", "command": ["ls", "-l"], "timeout_ms": 5, "env": {}}


def test_an_unknown_tool_name_comes_back_as_a_plain_function_call():
    payloads, _ = encode(ev.ToolCallStarted(0, "t", "not_declared"), ev.ToolCallDone(0, "{}"), *END)
    item = done_items(payloads)[0]
    assert (item["type"], item["name"]) == ("function_call", "not_declared")
    assert "namespace" not in item


def test_items_are_numbered_by_output_index_in_the_order_they_open():
    payloads, _ = encode(
        ev.ReasoningDone(0, VendorState(dialect="anthropic", redacted="r")),
        ev.TextDelta(1, "a"),
        ev.TextDone(1),
        ev.ToolCallStarted(2, "t", "exec_command"),
        ev.ToolCallDone(2, "{}"),
        *END,
    )
    assert [p["output_index"] for p in payloads if p["type"] == "response.output_item.done"] == [0, 1, 2]


def test_items_still_open_at_the_finish_are_completed_first():
    payloads, _ = encode(ev.TextDelta(0, "cut"), ev.Finished("stop"))
    assert kinds(payloads)[-2:] == ["response.output_item.done", "response.completed"]
    assert done_items(payloads)[0]["content"][0]["text"] == "cut"


def test_max_output_tokens_ends_the_response_as_incomplete():
    payloads, _ = encode(ev.TextDelta(0, "partial"), ev.Finished("max_output_tokens"))
    assert payloads[-1]["type"] == "response.incomplete"
    assert payloads[-1]["response"]["incomplete_details"] == {"reason": "max_output_tokens"}
    assert done_items(payloads)[0]["content"][0]["text"] == "partial"


def test_a_refusal_ends_the_response_as_incomplete_content_filter():
    payloads, _ = encode(ev.Finished("content_filter"))
    assert payloads[-1]["response"]["incomplete_details"] == {"reason": "content_filter"}


def test_a_context_window_finish_fails_with_context_length_exceeded():
    payloads, _ = encode(ev.Finished("context_length_exceeded"))
    assert payloads[-1]["type"] == "response.failed"
    assert payloads[-1]["response"]["error"]["code"] == "context_length_exceeded"


def test_a_rate_limit_failure_reaches_codex_with_its_message_as_it_is():
    payloads, _ = encode(ev.Failed("rate_limit_exceeded", "Slow down. Please try again in 1.5s."))
    error = payloads[-1]["response"]["error"]
    assert error == {"code": "rate_limit_exceeded", "message": "Slow down. Please try again in 1.5s."}


def test_an_overload_failure_reaches_codex_as_a_code_it_retries():
    # Codex 0.169 ends a turn on `server_is_overloaded` at once and retries `server_error` five times
    # (docs/codex.md "Errors and retries")
    payloads, _ = encode(ev.Failed("server_is_overloaded", "Overloaded"))
    error = payloads[-1]["response"]["error"]
    assert error == {"code": "server_error", "message": "server_is_overloaded: Overloaded"}


def test_a_code_neither_codex_nor_the_sdk_knows_is_sent_as_server_error_with_the_code_in_the_message():
    # Regression: `upstream_protocol_error` failed the openai SDK's ResponseError.code validation.
    payloads, _ = encode(ev.Failed("upstream_protocol_error", "garbage from upstream"))
    assert payloads[-1]["response"]["error"] == {
        "code": "server_error",
        "message": "upstream_protocol_error: garbage from upstream",
    }


def test_a_stream_that_never_finished_gets_exactly_one_failed_event():
    payloads, _ = encode(ev.TextDelta(0, "half"))
    assert kinds(payloads).count("response.failed") == 1
    assert payloads[-1]["response"]["error"]["code"] == "server_error"


def test_finishing_twice_emits_nothing_more():
    report = Report()
    encoder = ResponsesEncoder(
        model="m", tools=ToolIndex(), report=report, new_id=sequential_ids(), clock=lambda: 0
    )
    first = encoder.encode([ev.Finished("stop")]) + encoder.finish()
    assert encoder.finish() == b""
    assert encoder.encode([ev.TextDelta(0, "late")]) == b""
    assert [p["type"] for p in events(first)] == ["response.created", "response.in_progress",
                                                   "response.completed"]


def test_unknown_upstream_parts_are_reported_dropped_and_notes_kept():
    _, report = encode(ev.Unknown("output.content_block.server_tool_use"), ev.Note("paused"), *END)
    assert report.dropped == ["output.content_block.server_tool_use"]
    assert report.notes == ["paused"]


def test_created_at_comes_from_the_clock_and_the_model_is_the_clients():
    payloads, _ = encode(*END)
    assert payloads[0]["response"]["created_at"] == 1_700_000_000
    assert payloads[0]["response"]["model"] == "gpt-5.5"


def test_every_delta_event_is_byte_for_byte_what_the_general_event_writer_makes_of_its_payload():
    encoder = ResponsesEncoder(
        model="gpt-5.5", tools=tools(), report=Report(), new_id=sequential_ids(), clock=lambda: 1_700_000_000
    )
    tricky = 'é "q" \\ \n\t\x01 \u2028 🦅 \ud800'
    out = encoder.encode([
        ev.TextDelta(0, tricky), ev.TextDone(0),
        ev.ReasoningDelta(1, tricky), ev.ReasoningDone(1),
        ev.ToolCallStarted(2, "call_1", "exec_command"), ev.ToolCallDelta(2, tricky), ev.ToolCallDone(2),
        ev.ToolCallStarted(3, "call_2", "exec"), ev.ToolCallDelta(3, '{"input": "' + "x" * 40),
        ev.ToolCallDone(3), *END,
    ])
    frames = [f + b"\n\n" for f in out.split(b"\n\n") if f]
    deltas = [f for f in frames if f.split(b"\n")[0].endswith(b".delta")]
    assert {f.split(b"\n")[0] for f in deltas} == {
        b"event: response.output_text.delta", b"event: response.reasoning_summary_text.delta",
        b"event: response.function_call_arguments.delta", b"event: response.custom_tool_call_input.delta"}
    for frame in deltas:
        name, data = frame[len(b"event: "):-2].split(b"\ndata: ")
        assert frame == encode_event(name.decode(), json.loads(data))


def test_an_answer_past_the_output_bound_fails_once_and_holds_no_more() -> None:
    piece = "o" * (MAX_OUTPUT_CHARS // 4)
    deltas = [*[ev.TextDelta(0, piece)] * 4, ev.ReasoningDelta(1, "r"),
              ev.ToolCallStarted(2, "c", "exec_command"), ev.ToolCallDelta(2, "{}"), ev.TextDelta(0, "after")]
    payloads, _ = encode(ev.Started(), *deltas, *END)
    assert kinds(payloads).count("response.failed") == 1 and payloads[-1]["type"] == "response.failed"
    assert payloads[-1]["response"]["error"]["message"].startswith("upstream_output_too_large")
    text = sum(len(p["delta"]) for p in payloads if p["type"] == "response.output_text.delta")
    assert text == MAX_OUTPUT_CHARS


def test_a_giant_delta_is_written_as_the_json_module_writes_it() -> None:
    """The one-pass path for long deltas writes the same bytes as `json` with ensure_ascii=False,
    whatever the characters (control characters, quotes, non-ASCII, a lone surrogate)."""
    text = ("é\"\\\n\t\x00\x1f\u2028😀 " * 20_000) + "\ud800"
    encoder = ResponsesEncoder(model="m", tools=ToolIndex(), report=Report(), new_id=sequential_ids(),
                               clock=lambda: 0)
    out = encoder.encode([ev.Started(), ev.TextDelta(key=0, text=text[:-1]), ev.TextDelta(key=0, text=text)])
    deltas = [line[6:] for line in out.split(b"\n")
              if line.startswith(b"data: ") and json.loads(line[6:])["type"] == "response.output_text.delta"]
    for written, sent in zip(deltas, (text[:-1], text), strict=True):
        assert written == json.dumps(json.loads(written), ensure_ascii=False, separators=(",", ":")).encode(
            "utf-8", "backslashreplace")
        assert json.loads(written)["delta"] == sent


def test_an_upstream_keep_alive_writes_nothing_and_opens_no_response() -> None:
    """A Responses stream has no keep-alive event; Codex's idle timer counts events, so an SSE
    comment would keep nothing alive (docs/claude-code.md "Keep-alives")."""
    encoder = ResponsesEncoder(model="gpt-5.5", tools=tools(), report=Report(), new_id=sequential_ids(),
                               clock=lambda: 1_700_000_000)
    assert encoder.encode([ev.KeepAlive()]) == b""
    with_keep_alives, _ = encode(ev.Started(), ev.KeepAlive(), ev.TextDelta(0, "hi"), ev.KeepAlive(),
                                 ev.TextDone(0), ev.Finished("stop"))
    without, _ = encode(ev.Started(), ev.TextDelta(0, "hi"), ev.TextDone(0), ev.Finished("stop"))
    assert with_keep_alives == without


def test_a_stop_sequence_completes_the_response() -> None:
    payloads, _ = encode(ev.Started(), ev.TextDelta(0, "hi"), ev.TextDone(0),
                         ev.Finished("stop_sequence", "END"))
    assert kinds(payloads)[-1] == "response.completed"

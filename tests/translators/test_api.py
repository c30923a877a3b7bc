"""translators/api.py: the public contracts code outside the package relies on (issue 2, Build 7)."""

from __future__ import annotations

import json

import pytest

from tests.translators.bodies import body, function, user
from tests.translators.streamcheck import assert_valid_responses_stream, events, sse
from translators import (
    MalformedRequest,
    PassthroughTranslator,
    Refused,
    StreamTranslator,
    Translation,
    UpstreamError,
    stream_translator,
    translate_error,
    translate_request,
    translate_response,
)
from translators.core.ids import sequential_ids
from translators.core.report import Report
from translators.ir import events as ev
from translators.responses_client.stream import ResponsesEncoder


def test_translate_request_returns_path_body_dropped_and_notes():
    translation = translate_request(
        body(user("hi"), text={"verbosity": "low"}), "anthropic", "claude-sonnet-4-6"
    )
    assert isinstance(translation, Translation)
    assert translation.path == "/v1/messages"
    assert isinstance(translation.body, dict)
    assert translation.body["model"] == "claude-sonnet-4-6"
    assert translation.dropped == ["text.verbosity"]
    assert translation.notes == []
    assert (translation.target, translation.model, translation.client_model) == (
        "anthropic",
        "claude-sonnet-4-6",
        "gpt-5.5",
    )


def test_translate_request_keeps_the_clients_model_when_none_is_given():
    assert translate_request(body(user("hi")), "anthropic").model == "gpt-5.5"


def test_an_unknown_target_is_refused_with_a_responses_shaped_error():
    with pytest.raises(Refused) as info:
        translate_request(body(user("hi")), "carrier-pigeon")
    assert isinstance(info.value, MalformedRequest)
    assert info.value.to_body()["error"]["code"] == "unknown_dialect"


def test_a_refused_request_carries_the_error_the_client_should_get():
    with pytest.raises(Refused) as info:
        translate_request(body(user("hi"), {"type": "item_reference", "id": "msg_1"}), "anthropic")
    assert info.value.to_body() == {
        "error": {
            "type": "invalid_request_error",
            "code": "unsupported_feature",
            "message": info.value.message,
            "param": "input[1]",
        }
    }


def test_stream_translator_is_sans_io_feed_and_close():
    translation = translate_request(body(user("hi")), "anthropic")
    translator = stream_translator("anthropic", translation, new_id=sequential_ids(), clock=lambda: 0)
    assert isinstance(translator, StreamTranslator)
    out = translator.feed(
        sse({"type": "message_start", "message": {"id": "m", "usage": {"input_tokens": 1}}})
    )
    out += translator.feed(b"")
    out += translator.close()
    assert translator.finished
    assert [p["type"] for p in events(out)] == ["response.created", "response.in_progress", "response.failed"]


def test_the_responses_source_gets_a_passthrough_translator():
    translation = translate_request(body(user("hi")), "responses")
    assert isinstance(stream_translator("responses", translation), PassthroughTranslator)


class _Exploding:
    def feed(self, data: bytes) -> list[ev.Event]:
        raise RuntimeError("bug in a decoder")

    def close(self) -> list[ev.Event]:
        return []


def test_a_stream_translator_never_raises_and_ends_with_one_failure():
    report = Report()
    encoder = ResponsesEncoder(
        model="m",
        tools=Translation(target="anthropic", model="m", client_model="m", path="/", body={}).tools,
        report=report,
        new_id=sequential_ids(),
        clock=lambda: 0,
    )
    translator = StreamTranslator(_Exploding(), encoder, report)
    out = translator.feed(b"anything") + translator.feed(b"more") + translator.close()
    payloads = assert_valid_responses_stream(out)
    assert payloads[-1]["response"]["error"]["code"] == "server_error"
    assert any("bug in a decoder" in n for n in report.notes)


def test_a_lone_surrogate_from_upstream_does_not_break_the_stream():
    # Regression: `"\ud800"` in a text delta made the SSE encoder raise UnicodeEncodeError out of feed().
    translation = translate_request(body(user("hi")), "anthropic")
    translator = stream_translator("anthropic", translation, new_id=sequential_ids(), clock=lambda: 0)
    data = (
        sse(
            {"type": "message_start", "message": {"id": "m", "usage": {"input_tokens": 1}}},
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        )
        + b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"text_delta","text":"a\\ud800b"}}\n\n'
        + sse({"type": "content_block_stop", "index": 0}, {"type": "message_stop"})
    )
    out = translator.feed(data) + translator.close()
    out.decode("utf-8")  # the client always gets valid UTF-8
    payloads = events(out)
    assert payloads[-1]["type"] == "response.completed"
    assert payloads[-1]["response"]["output"][0]["content"][0]["text"] == "a\ud800b"


def test_translate_response_gives_the_responses_object():
    translation = translate_request(body(user("hi"), stream=False), "anthropic")
    data = json.dumps(
        {
            "id": "m",
            "type": "message",
            "role": "assistant",
            "content": [{"type": "text", "text": "hi"}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    ).encode()
    response = translate_response("anthropic", translation, data, new_id=sequential_ids(), clock=lambda: 0)
    assert response["object"] == "response"
    assert response["status"] == "completed"
    assert response["output"][0]["content"][0]["text"] == "hi"


def test_translate_response_passes_a_responses_answer_through():
    translation = translate_request(body(user("hi"), stream=False), "responses")
    assert translate_response("responses", translation, b'{"id": "resp_1", "output": []}') == {
        "id": "resp_1",
        "output": [],
    }


def test_translate_error_keeps_an_openai_error_body_as_it_is():
    upstream = {
        "error": {
            "type": "invalid_request_error",
            "code": "context_length_exceeded",
            "message": "too long",
            "param": None,
        }
    }
    error = translate_error("responses", 400, json.dumps(upstream).encode(), {"Retry-After": "3"})
    assert isinstance(error, UpstreamError)
    assert (error.status, error.body, error.headers) == (400, upstream, {"retry-after": "3"})


def test_translate_error_shapes_a_plain_text_responses_error():
    error = translate_error("responses", 503, b"upstream connect error")
    assert error.body["error"]["code"] == "server_is_overloaded"
    assert "upstream connect error" in error.body["error"]["message"]


def test_every_name_the_package_exports_exists():
    import translators

    assert [name for name in translators.__all__ if not hasattr(translators, name)] == []


def test_a_dialect_function_tool_named_like_a_namespace_is_still_found():
    translation = translate_request(body(user("hi"), tools=[function("clock__sleep")]), "anthropic")
    assert translation.tools.lookup("clock__sleep").namespace is None


def test_an_upstream_error_page_of_a_megabyte_reaches_the_client_cut_short() -> None:
    huge = json.dumps({"type": "error", "error": {"type": "api_error", "message": "x" * 1_000_000}})
    error = translate_error("anthropic", 502, huge.encode())
    assert error.status == 502
    assert len(error.body["error"]["message"]) < 5000


def test_an_absurdly_nested_whole_answer_ends_as_a_failed_response() -> None:
    translation = translate_request({"model": "m", "input": "hi"}, "anthropic")
    answer = translate_response("anthropic", translation, b"[" * 100_000 + b"]" * 100_000)
    assert answer["status"] == "failed"


_ANTHROPIC_HELLO = sse(
    {"type": "message_start", "message": {"id": "m", "usage": {"input_tokens": 1}}},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi"}},
    {"type": "content_block_stop", "index": 0},
    {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}},
    {"type": "message_stop"},
)


def test_every_response_object_repeats_the_clients_tool_choice_parallel_calls_and_tools() -> None:
    tools = [function("lookup")]
    choice = {"type": "function", "name": "lookup"}
    request = body(user("hi"), tools=tools, tool_choice=choice, parallel_tool_calls=False)
    translation = translate_request(request, "anthropic", "claude-sonnet-4-6")
    translator = stream_translator("anthropic", translation, new_id=sequential_ids(), clock=lambda: 0)
    payloads = assert_valid_responses_stream(translator.feed(_ANTHROPIC_HELLO) + translator.close())
    objects = [p["response"] for p in payloads if "response" in p]
    assert [p["type"] for p in payloads if "response" in p][-1] == "response.completed"
    for response in objects:
        assert (response["tool_choice"], response["parallel_tool_calls"], response["tools"]) == (
            choice, False, tools)


def test_a_request_without_those_fields_gets_the_responses_apis_defaults_back() -> None:
    translation = translate_request(body(user("hi")), "anthropic", "claude-sonnet-4-6")
    translator = stream_translator("anthropic", translation, new_id=sequential_ids(), clock=lambda: 0)
    completed = events(translator.feed(_ANTHROPIC_HELLO) + translator.close())[-1]["response"]
    echoed = (completed["tool_choice"], completed["parallel_tool_calls"], completed["tools"])
    assert echoed == ("auto", True, [])


def test_a_whole_answer_repeats_the_clients_tools_too() -> None:
    tools = [function("lookup")]
    translation = translate_request(body(user("hi"), tools=tools, stream=False, tool_choice="required"),
                                    "anthropic", "claude-sonnet-4-6")
    data = json.dumps({"id": "m", "type": "message", "role": "assistant",
                       "content": [{"type": "text", "text": "x"}], "stop_reason": "end_turn",
                       "usage": {"input_tokens": 1, "output_tokens": 1}}).encode()
    response = translate_response("anthropic", translation, data, new_id=sequential_ids(), clock=lambda: 0)
    assert (response["tool_choice"], response["tools"]) == ("required", tools)


# -- what a proxy holding back the opening events observes (docs/pools.md) ----------------------
_START = {"type": "message_start", "message": {"id": "m", "usage": {"input_tokens": 1}}}
_PING = {"type": "ping"}
_TEXT_OPEN = {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
_TEXT = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi"}}
_OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


def _anthropic_translator(client: str = "responses") -> StreamTranslator:
    request = body(user("hi")) if client == "responses" else {
        "model": "claude-sonnet-4-6", "max_tokens": 100, "stream": True,
        "messages": [{"role": "user", "content": "hi"}]}
    translation = translate_request(request, "anthropic", client=client)
    translator = stream_translator("anthropic", translation, new_id=sequential_ids(), clock=lambda: 0)
    assert isinstance(translator, StreamTranslator)
    return translator


@pytest.mark.parametrize("client", ["responses", "messages"])
def test_content_starts_with_the_first_event_of_the_answer_not_with_the_opening_ones(client: str) -> None:
    translator = _anthropic_translator(client)
    translator.feed(sse(_START, _PING, _TEXT_OPEN))
    assert not translator.content_started
    translator.feed(sse(_TEXT))
    assert translator.content_started and translator.early_failure is None


def test_an_error_event_before_any_content_is_an_early_failure() -> None:
    translator = _anthropic_translator()
    translator.feed(sse(_START, _PING, _OVERLOADED))
    assert not translator.content_started
    assert translator.early_failure is not None
    assert translator.early_failure.code == "server_is_overloaded"


def test_an_error_event_after_content_is_no_early_failure() -> None:
    translator = _anthropic_translator()
    translator.feed(sse(_START, _TEXT_OPEN, _TEXT, _OVERLOADED))
    assert translator.content_started and translator.early_failure is None


def test_progress_counts_events_but_not_keep_alives() -> None:
    translator = _anthropic_translator()
    translator.feed(sse(_START))
    before = translator.progress
    translator.feed(sse(_PING, _PING, _PING) + b": keep-alive\n\n")
    assert translator.progress == before > 0
    translator.feed(sse(_TEXT_OPEN, _TEXT))
    assert translator.progress > before


def test_a_stream_that_says_nothing_fails_early_with_the_code_retrying_cannot_help() -> None:
    translator = _anthropic_translator()
    translator.feed(sse(_PING))
    translator.close()
    assert translator.early_failure is not None and translator.early_failure.code == "invalid_prompt"
    assert not translator.content_started


def test_the_responses_passthrough_observes_the_same() -> None:
    translation = translate_request(body(user("hi")), "responses")
    translator = stream_translator("responses", translation)
    created = {"type": "response.created", "response": {"id": "r", "status": "in_progress"}}
    failed = {"type": "response.failed", "response": {"id": "r", "status": "failed",
                                                      "error": {"code": "server_error", "message": "boom"}}}
    translator.feed(sse(created, {"type": "keepalive"}))
    assert (translator.content_started, translator.progress) == (False, 1)
    translator.feed(sse(failed))
    assert translator.early_failure is not None
    assert (translator.early_failure.code, translator.early_failure.message) == ("server_error", "boom")

    answered = stream_translator("responses", translation)
    answered.feed(sse(created, {"type": "response.output_item.added", "item": {"type": "message"}}))
    assert answered.content_started and answered.early_failure is None


def test_a_passthrough_cut_before_content_fails_early() -> None:
    translator = stream_translator("responses", translate_request(body(user("hi")), "responses"))
    translator.feed(sse({"type": "response.created", "response": {"id": "r"}}))
    translator.close()
    assert translator.early_failure is not None and not translator.content_started

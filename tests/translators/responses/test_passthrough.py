"""translators/responses/passthrough.py: the Responses target (issue 2, Build 6)."""

from __future__ import annotations

import copy

from tests.translators.bodies import APPLY_PATCH_GRAMMAR, body, custom, function, namespace, user
from tests.translators.streamcheck import (
    assert_chunking_invariant,
    at_both_depths,
    codex_request,
    events,
    fixture,
    run,
    validate_event,
)
from translators import translate_request
from translators.features import vendor_state
from translators.ir.request import VendorState
from translators.wire.sse import SSEDecoder

OURS = vendor_state.encode(VendorState(dialect="anthropic", signature="sig", text="t"))


def test_a_body_with_nothing_to_change_goes_upstream_untouched():
    request = body(
        user("hi"),
        tools=[custom("apply_patch", definition=APPLY_PATCH_GRAMMAR)],
        store=False,
        text={"verbosity": "low"},
        service_tier="flex",
    )
    original = copy.deepcopy(request)
    translation = translate_request(request, "responses")
    assert translation.path == "/responses"
    assert translation.body == original
    assert translation.dropped == []


def test_custom_tools_and_namespaces_are_forwarded_verbatim():
    request = codex_request("request_lite_functions_namespace.json")
    translation = translate_request(request, "responses")
    assert translation.body["input"][0] == request["input"][0]
    assert translation.body["input"][0]["tools"][0]["tools"][3]["type"] == "custom"


def test_client_metadata_is_removed_and_nothing_else():
    request = body(user("hi"), client_metadata={"x-codex-installation-id": "i"}, prompt_cache_key="k")
    translation = translate_request(request, "responses")
    expected = {k: v for k, v in request.items() if k != "client_metadata"}
    assert translation.body == expected
    assert "client_metadata" in request  # the caller's dict is not modified


def test_a_model_override_replaces_the_model():
    translation = translate_request(body(user("hi")), "responses", "gpt-5.5-mini")
    assert translation.body["model"] == "gpt-5.5-mini"
    assert translation.client_model == "gpt-5.5"


def test_reasoning_state_written_for_another_vendor_is_stripped_and_reported():
    request = body(
        user("q"),
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "s"}], "encrypted_content": OURS},
        {"type": "reasoning", "summary": [], "encrypted_content": OURS},
        {"type": "reasoning", "summary": [], "encrypted_content": "gAAAA-openai"},
        tools=[namespace("clock", function("sleep"))],
    )
    translation = translate_request(request, "responses")
    assert translation.body["input"][1:] == [
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "s"}]},
        {"type": "reasoning", "summary": [], "encrypted_content": "gAAAA-openai"},
    ]
    assert translation.dropped == ["input[1].encrypted_content", "input[2].encrypted_content"]


def translation():
    return translate_request(body(user("hi")), "responses")


@at_both_depths
def test_a_recorded_codex_stream_passes_through_in_any_chunking():
    data = fixture("codex/answer_reasoning_commentary_patch_ok.sse")
    out = assert_chunking_invariant("responses", translation(), data)
    assert [p["type"] for p in events(out)] == [p["type"] for p in events(data)]
    assert events(out) == events(data)


def test_events_after_the_terminal_event_and_done_markers_are_not_forwarded():
    data = (
        b'data: {"type":"response.completed","response":{"id":"r"}}\n\n'
        b'data: {"type":"response.output_text.delta","delta":"late"}\n\ndata: [DONE]\n\n'
    )
    assert run("responses", translation(), [data]) == (
        b'event: response.completed\ndata: {"type":"response.completed","response":{"id":"r"}}\n\n'
    )


def test_a_stream_cut_before_its_terminal_event_ends_with_one_valid_failed_event():
    data = fixture("codex/answer_text_ok.sse")
    cut = data[: data.index(b"event: response.completed")]
    payloads = events(run("responses", translation(), [cut]))
    assert [p["type"] for p in payloads].count("response.failed") == 1
    assert payloads[-1]["type"] == "response.failed"
    # Regression: the synthesized event lacked sequence_number and most Response fields
    validate_event(payloads[-1])
    assert payloads[-1]["sequence_number"] == len(payloads) - 1
    assert payloads[-1]["response"]["id"] == payloads[0]["response"]["id"]


def test_a_multi_line_data_event_is_reframed_as_the_same_event():
    # Regression: the second data line lost its `data: ` prefix when the event was re-framed.
    data = b'event: response.completed\ndata: {"type":"response.completed",\ndata: "response":{"id":"r"}}\n\n'
    out = run("responses", translation(), [data])
    decoder = SSEDecoder()
    (event,) = decoder.feed(out) + decoder.close()
    assert event.event == "response.completed"
    assert event.data == '{"type":"response.completed",\n"response":{"id":"r"}}'

"""GenerateContentResponse chunks -> IR events (translators/gemini/chunks.py)."""

from __future__ import annotations

import json

import pytest

from tests.translators.gemini.support import call, chunk, of, read, text
from translators.core.errors import UpstreamProtocolError
from translators.gemini.chunks import FAILED
from translators.ir import events as ev

SIG = "c2lnbmF0dXJlLW9uZQ=="
SIG2 = "c2lnbmF0dXJlLXR3bw=="


def test_text_parts_stream_as_deltas_of_one_item_in_order() -> None:
    events = read(chunk(text("Hel")), chunk(text("lo")), chunk(text("!"), finish="STOP"))
    deltas = of(ev.TextDelta, events)
    assert "".join(d.text for d in deltas) == "Hello!"
    assert len({d.key for d in deltas}) == 1


def test_empty_text_part_without_signature_opens_no_item() -> None:
    events = read(chunk(call("f")), chunk(text(""), finish="STOP"))
    assert of(ev.TextDelta, events) == []


def test_thought_parts_become_reasoning_deltas() -> None:
    events = read(chunk(text("plan", thought=True)), chunk(text("answer"), finish="STOP"))
    assert [d.text for d in of(ev.ReasoningDelta, events)] == ["plan"]
    assert [d.text for d in of(ev.TextDelta, events)] == ["answer"]


def test_text_after_thoughts_closes_the_reasoning_item_first() -> None:
    events = read(chunk(text("plan", thought=True), text("answer"), finish="STOP"))
    done = events.index(of(ev.ReasoningDone, events)[0])
    assert done < events.index(of(ev.TextDelta, events)[0])


def test_whole_function_call_is_started_and_done_with_its_arguments() -> None:
    events = read(chunk(call("get_weather", {"city": "Paris", "days": 3}), finish="STOP"))
    started, = of(ev.ToolCallStarted, events)
    done, = of(ev.ToolCallDone, events)
    assert started.name == "get_weather"
    assert done.key == started.key
    assert json.loads(done.arguments or "") == {"city": "Paris", "days": 3}


def test_function_call_without_args_has_empty_object_arguments() -> None:
    events = read(chunk({"functionCall": {"name": "get_country"}}, finish="STOP"))
    assert of(ev.ToolCallDone, events)[0].arguments == "{}"


def test_function_call_id_from_gemini_is_the_call_id() -> None:
    events = read(chunk(call("f", call_id="c9bjmkfz"), finish="STOP"))
    assert of(ev.ToolCallStarted, events)[0].call_id == "c9bjmkfz"


def test_missing_call_ids_are_made_from_the_response_id_and_call_position() -> None:
    events = read(chunk(call("f"), call("g"), response_id="R1", finish="STOP"))
    ids = [s.call_id for s in of(ev.ToolCallStarted, events)]
    assert len(set(ids)) == 2
    assert all("R1" in i for i in ids)
    again = read(chunk(call("f"), call("g"), response_id="R1", finish="STOP"))
    assert ids == [s.call_id for s in of(ev.ToolCallStarted, again)]


def test_missing_call_ids_without_a_response_id_use_the_request_seed() -> None:
    bare = {"candidates": [{"content": {"parts": [call("f")]}, "finishReason": "STOP"}]}
    assert "turnseed" in of(ev.ToolCallStarted, read(bare, seed="turnseed"))[0].call_id


def test_function_call_without_a_name_is_a_protocol_error() -> None:
    with pytest.raises(UpstreamProtocolError):
        read(chunk({"functionCall": {"args": {}}}))


def test_call_signature_becomes_reasoning_state_naming_that_call() -> None:
    events = read(chunk(call("f", call_id="id1", signature=SIG), finish="STOP"))
    done, = of(ev.ReasoningDone, events)
    assert done.state is not None
    assert (done.state.dialect, done.state.signature, done.state.call_ids) == ("gemini", SIG, ["id1"])
    assert events.index(done) < events.index(of(ev.ToolCallStarted, events)[0])


def test_only_the_signed_call_of_a_parallel_set_gets_a_signature() -> None:
    events = read(chunk(call("f", call_id="a", signature=SIG), call("g", call_id="b"), finish="STOP"))
    states = [d.state for d in of(ev.ReasoningDone, events)]
    assert [(s.signature, s.call_ids) for s in states if s] == [(SIG, ["a"])]


def test_signature_closes_the_open_thought_item_it_belongs_to() -> None:
    events = read(chunk(text("plan", thought=True)),
                  chunk(call("f", call_id="a", signature=SIG), finish="STOP"))
    done, = of(ev.ReasoningDone, events)
    assert done.key == of(ev.ReasoningDelta, events)[0].key
    assert done.state is not None and done.state.call_ids == ["a"]


def test_text_signature_closes_the_message_then_follows_it() -> None:
    events = read(chunk(text("answer")), chunk(text("", thoughtSignature=SIG), finish="STOP"))
    text_done, = of(ev.TextDone, events)
    reasoning, = of(ev.ReasoningDone, events)
    assert events.index(text_done) < events.index(reasoning)
    assert reasoning.state is not None and (reasoning.state.signature, reasoning.state.call_ids) == (SIG, [])


def test_text_after_a_text_signature_opens_a_new_item() -> None:
    events = read(chunk(text("one", thoughtSignature=SIG), text("two"), finish="STOP"))
    assert len({d.key for d in of(ev.TextDelta, events)}) == 2


def test_text_before_a_call_is_closed_before_the_call_starts() -> None:
    events = read(chunk(text("Let me look."), call("f"), finish="STOP"))
    assert events.index(of(ev.TextDone, events)[0]) < events.index(of(ev.ToolCallStarted, events)[0])


def test_stop_after_calls_finishes_as_tool_calls() -> None:
    assert of(ev.Finished, read(chunk(call("f")), chunk(text(""), finish="STOP")))[0].reason == "tool_calls"


def test_stop_without_calls_finishes_as_stop() -> None:
    assert of(ev.Finished, read(chunk(text("hi"), finish="STOP")))[0].reason == "stop"


def test_max_tokens_finishes_as_max_output_tokens() -> None:
    assert of(ev.Finished, read(chunk(text("trunc"), finish="MAX_TOKENS")))[0].reason == "max_output_tokens"


@pytest.mark.parametrize("reason", ["SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII"])
def test_safety_stops_finish_as_content_filter(reason: str) -> None:
    assert of(ev.Finished, read(chunk(text("x"), finish=reason)))[0].reason == "content_filter"


@pytest.mark.parametrize("reason", sorted(FAILED))
def test_stops_that_leave_no_usable_answer_fail_naming_the_reason(reason: str) -> None:
    events = read(chunk(finish=reason))
    failed, = of(ev.Failed, events)
    assert reason in failed.message
    assert of(ev.Finished, events) == []


def test_finish_message_is_kept_in_the_failure() -> None:
    malformed = chunk(finish="MALFORMED_FUNCTION_CALL")
    malformed["candidates"][0]["finishMessage"] = "Malformed function call: print(x"
    events = read(malformed)
    assert "print(x" in of(ev.Failed, events)[0].message


def test_unknown_finish_reason_is_noted_and_ends_normally() -> None:
    events = read(chunk(text("hi"), finish="SOMETHING_NEW"))
    assert of(ev.Finished, events)[0].reason == "stop"
    assert any("SOMETHING_NEW" in n.text for n in of(ev.Note, events))


def test_blocked_prompt_finishes_as_content_filter() -> None:
    events = read({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}, "responseId": "r"})
    finished, = of(ev.Finished, events)
    assert finished.reason == "content_filter"
    assert "PROHIBITED_CONTENT" in (finished.detail or "")


def test_usage_takes_the_last_cumulative_metadata() -> None:
    events = read(chunk(text("a"), usage={"promptTokenCount": 5, "candidatesTokenCount": 1}),
                  chunk(text("b"), finish="STOP", usage={"promptTokenCount": 5, "candidatesTokenCount": 2}))
    usage, = of(ev.Usage, events)
    assert (usage.input_tokens, usage.output_tokens) == (5, 2)


def test_thoughts_count_as_reasoning_and_as_output_tokens() -> None:
    usage, = of(ev.Usage, read(chunk(finish="STOP", usage={
        "promptTokenCount": 29, "candidatesTokenCount": 10, "thoughtsTokenCount": 202})))
    assert (usage.output_tokens, usage.reasoning_tokens) == (212, 202)


def test_cached_content_tokens_are_cached_input_tokens() -> None:
    usage, = of(ev.Usage, read(chunk(finish="STOP", usage={
        "promptTokenCount": 1000, "cachedContentTokenCount": 800, "candidatesTokenCount": 3})))
    assert (usage.input_tokens, usage.cached_tokens) == (1000, 800)


def test_tool_use_prompt_tokens_count_as_input() -> None:
    usage, = of(ev.Usage, read(chunk(finish="STOP", usage={
        "promptTokenCount": 10, "toolUsePromptTokenCount": 4, "candidatesTokenCount": 1})))
    assert usage.input_tokens == 14


def test_part_of_an_unknown_kind_is_reported() -> None:
    events = read(chunk({"executableCode": {"language": "PYTHON", "code": "1"}}, finish="STOP"))
    assert [u.path for u in of(ev.Unknown, events)] == ["output.part.executableCode"]


def test_extra_candidates_are_reported() -> None:
    two = chunk(text("a"), finish="STOP")
    two["candidates"].append({"content": {"parts": [text("b")]}, "index": 1})
    assert "candidates[1]" in [u.path for u in of(ev.Unknown, read(two))]


def test_citation_metadata_is_reported() -> None:
    cited = chunk(text("a"), finish="STOP")
    cited["candidates"][0]["citationMetadata"] = {"citationSources": [{"uri": "https://example.com"}]}
    assert "output.citationMetadata" in [u.path for u in of(ev.Unknown, read(cited))]


def test_error_element_fails_with_the_mapped_code() -> None:
    error = {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "slow down"}}
    events = read(chunk(text("a")), error)
    failed, = of(ev.Failed, events)
    assert (failed.code, failed.message) == ("rate_limit_exceeded", "RESOURCE_EXHAUSTED: slow down")


def test_error_element_without_a_code_takes_the_status_its_name_stands_for() -> None:
    failed, = of(ev.Failed, read({"error": {"status": "UNAUTHENTICATED", "message": "bad key"}}))
    assert failed.code == "invalid_api_key"


def test_answer_without_finish_reason_fails_as_cut_off() -> None:
    failed, = of(ev.Failed, read(chunk(text("a"))))
    assert "finishReason" in failed.message


def test_chunks_after_the_finish_are_ignored() -> None:
    events = read(chunk(text("a"), finish="STOP"), chunk(text("late")))
    assert [d.text for d in of(ev.TextDelta, events)] == ["a"]


def test_chunk_that_is_not_an_object_is_a_protocol_error() -> None:
    with pytest.raises(UpstreamProtocolError):
        read(["not", "an", "object"])  # type: ignore[arg-type]

"""Claude's server-side web search (issue 19): the request declares it, the stream's search becomes a
`web_search_call` item and its citations `url_citation` annotations, and the next turn gives Claude
its own search blocks back."""

from __future__ import annotations

import json
from typing import Any

import pytest
from anthropic.types import RawMessageStreamEvent
from pydantic import TypeAdapter

from tests.support.fake_upstream import Cited, WebResult, anthropic_web_search_events
from tests.support.vendor_types import assert_anthropic_request
from tests.translators.bodies import body, function, user
from tests.translators.streamcheck import (
    assert_chunking_invariant,
    assert_valid_responses_stream,
    done_items,
    run,
    sse,
)
from translators import stream_translator, translate_request
from translators.core.ids import sequential_ids
from translators.features import vendor_state

LIVE = {"type": "web_search", "external_web_access": True, "search_content_types": ["text", "image"]}
CACHED = {"type": "web_search", "external_web_access": False, "search_content_types": ["text", "image"]}
RESULTS = [WebResult("https://example.org/lisbon", "Lisbon - Example", "EncA" * 30, "2 days ago"),
           WebResult("https://stats.example.pt/pop", "Population 2025", "EncB" * 30)]
ANSWER = [Cited("Lisbon, Portugal's capital, "), Cited("has about 545,000 residents", (1, 0)),
          Cited(" and a café culture ☕."), Cited(" Its metro area is larger.", (1,))]
QUERY = "lisbon population 2025"


def events() -> list[dict[str, Any]]:
    return anthropic_web_search_events(QUERY, RESULTS, ANSWER)


def stream() -> bytes:
    return sse(*events())


def translation(*tools: dict[str, Any], model: str = "claude-sonnet-4-6", web_search: str = "follow"):
    return translate_request(body(user("How many people live in Lisbon?"), tools=list(tools)), "anthropic",
                             model, web_search=web_search)


def answer_text() -> str:
    return "".join(stretch.text for stretch in ANSWER)


def expected_annotations() -> list[dict[str, Any]]:
    """Each cited stretch's character span in the whole answer, once per source, in citation order."""
    out, at = [], 0
    for stretch in ANSWER:
        for source in stretch.sources:
            out.append({"type": "url_citation", "url": RESULTS[source].url, "title": RESULTS[source].title,
                        "start_index": at, "end_index": at + len(stretch.text)})
        at += len(stretch.text)
    return out


# -- the recorded-shape stream ----------------------------------------------------------------------


def test_the_synthetic_stream_is_valid_for_the_anthropic_sdk():
    adapter = TypeAdapter(RawMessageStreamEvent)
    for event in events():
        adapter.validate_python(event)


def test_a_search_becomes_a_web_search_call_between_the_preface_and_the_cited_answer():
    payloads = assert_valid_responses_stream(run("anthropic", translation(LIVE), [stream()]))
    preface, search, answer = done_items(payloads)
    assert preface["content"][0]["text"] == "I'll search for that."
    assert search["type"] == "web_search_call"
    assert search["status"] == "completed"
    assert search["action"] == {"type": "search", "query": QUERY,
                                "sources": [{"type": "url", "url": r.url} for r in RESULTS]}
    assert answer["type"] == "message"
    assert answer["content"][0]["text"] == answer_text()


def test_cited_text_carries_url_citations_at_its_character_offsets():
    payloads = assert_valid_responses_stream(run("anthropic", translation(LIVE), [stream()]))
    answer = done_items(payloads)[-1]
    annotations = answer["content"][0]["annotations"]
    assert annotations == expected_annotations()
    text = answer["content"][0]["text"]
    assert text[annotations[0]["start_index"]:annotations[0]["end_index"]] == "has about 545,000 residents"
    added = [p for p in payloads if p["type"] == "response.output_text.annotation.added"]
    assert [p["annotation"] for p in added] == annotations
    assert [p["annotation_index"] for p in added] == list(range(len(annotations)))


def test_the_search_item_streams_its_progress_events_before_it_is_done():
    payloads = assert_valid_responses_stream(run("anthropic", translation(LIVE), [stream()]))
    search_id = done_items(payloads)[1]["id"]
    kinds = [p["type"] for p in payloads if p.get("item_id") == search_id
             or p.get("item", {}).get("id") == search_id]
    assert kinds == ["response.output_item.added", "response.web_search_call.in_progress",
                     "response.web_search_call.searching", "response.web_search_call.completed",
                     "response.output_item.done"]


def test_the_search_item_id_carries_claudes_own_blocks_for_the_next_turn():
    payloads = assert_valid_responses_stream(run("anthropic", translation(LIVE), [stream()]))
    state = vendor_state.from_id(done_items(payloads)[1]["id"])
    assert state is not None and state.dialect == "anthropic"
    started = [e["content_block"] for e in events() if e["type"] == "content_block_start"]
    use = next(b for b in started if b["type"] == "server_tool_use")
    result = next(b for b in started if b["type"] == "web_search_tool_result")
    assert state.blocks == [{**use, "input": {"query": QUERY}}, result]


def test_every_chunking_gives_the_same_stream():
    assert_chunking_invariant("anthropic", translation(LIVE), stream(), every_split=False)


def test_the_upstreams_search_count_is_noted():
    translator = stream_translator("anthropic", translation(LIVE), new_id=sequential_ids())
    translator.feed(stream())
    translator.close()
    assert "web searches: 1 (the upstream's count)" in translator.report.notes
    assert not any("server_tool_use" in path for path in translator.report.dropped)


def test_a_failed_search_is_a_failed_web_search_call():
    failed = [e for e in events() if e.get("index") not in (3, 4, 5, 6)]
    for event in failed:
        if event.get("content_block", {}).get("type") == "web_search_tool_result":
            event["content_block"]["content"] = {"type": "web_search_tool_result_error",
                                                 "error_code": "max_uses_exceeded"}
    payloads = assert_valid_responses_stream(run("anthropic", translation(LIVE), [sse(*failed)]))
    search = done_items(payloads)[1]
    assert search["status"] == "failed"
    assert search["action"]["query"] == QUERY


# -- the request ------------------------------------------------------------------------------------


def test_live_search_declares_claudes_web_search_tool_with_domains_and_location():
    tool = {**LIVE, "filters": {"allowed_domains": ["example.org"]},
            "user_location": {"type": "approximate", "city": "Lisbon", "country": "PT"}}
    result = translation(function("exec_command"), tool)
    location = {"type": "approximate", "city": "Lisbon", "country": "PT"}
    assert result.body["tools"][-1] == {"type": "web_search_20250305", "name": "web_search",
                                        "allowed_domains": ["example.org"], "user_location": location,
                                        "cache_control": {"type": "ephemeral"}}
    assert result.dropped == []
    assert_anthropic_request(result.body)


def test_cached_only_search_is_dropped_with_how_to_go_live():
    result = translation(function("exec_command"), CACHED)
    assert [t.get("name") for t in result.body["tools"]] == ["exec_command"]
    assert result.dropped == ["tools[1]"]
    assert any('web_search = "live"' in note for note in result.notes)


def test_the_operator_can_make_cached_search_live_or_turn_search_off():
    live = translation(CACHED, web_search="live")
    assert live.body["tools"][0]["type"] == "web_search_20250305"
    assert live.dropped == []
    off = translation(LIVE, web_search="off")
    assert "tools" not in off.body
    assert off.dropped == ["tools[0]"]


def test_an_unknown_web_search_mode_is_refused():
    with pytest.raises(ValueError, match="gateway_web_search"):
        translation(LIVE, web_search="sometimes")


def test_a_model_without_web_search_gets_the_tool_reported_dropped():
    result = translation(LIVE, model="claude-3-haiku-20240307")
    assert "tools" not in result.body
    assert result.dropped == ["tools[0]"]
    assert any("no server-side web search" in note for note in result.notes)


# -- the next turn ----------------------------------------------------------------------------------


def streamed_items() -> list[dict[str, Any]]:
    """The items Codex keeps of the first turn, as it sends them back (docs/codex.md "Echo
    behaviour": the web_search_call's id, status and action without `sources`)."""
    items = done_items(assert_valid_responses_stream(run("anthropic", translation(LIVE), [stream()])))
    search = items[1]
    items[1] = {"type": "web_search_call", "id": search["id"], "status": "completed",
                "action": {"type": "search", "query": QUERY}}
    return items


def next_turn(target: str, *tools: dict[str, Any]):
    request = body(user("How many people live in Lisbon?"), *streamed_items(), user("And Porto?"),
                   tools=list(tools))
    return translate_request(request, target, "claude-sonnet-4-6" if target == "anthropic" else None)


def test_the_next_turn_gives_claude_its_search_back_before_the_answer():
    result = next_turn("anthropic", LIVE)
    assert_anthropic_request(result.body)
    turn = result.body["messages"][1]
    assert turn["role"] == "assistant"
    kinds = [b["type"] for b in turn["content"]]
    assert kinds == ["text", "server_tool_use", "web_search_tool_result", "text"]
    use, found = turn["content"][1], turn["content"][2]
    assert use["input"] == {"query": QUERY}
    assert found["tool_use_id"] == use["id"]
    assert [r["encrypted_content"] for r in found["content"]] == [r.encrypted_content for r in RESULTS]
    assert turn["content"][3]["text"] == answer_text()
    assert "input[2]" not in result.dropped


def test_without_search_declared_the_next_turn_sends_the_answer_as_plain_text():
    result = next_turn("anthropic")
    assert_anthropic_request(result.body)
    turn = result.body["messages"][1]
    assert [b["type"] for b in turn["content"]] == ["text", "text"]
    assert "input[2]" in result.dropped


@pytest.mark.parametrize("target", ["gemini", "chat", "bedrock"])
def test_another_vendor_gets_the_answer_as_plain_text(target):
    result = next_turn(target, LIVE)
    assert "input[2]" in result.dropped
    assert "encrypted" not in json.dumps(result.body).replace("encrypted_content", "")
    assert "EncA" not in json.dumps(result.body)

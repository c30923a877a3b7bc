"""A request translated through its client's `ItemCache` is the request translated without one:
the same upstream bytes, the same report (dropped paths at the item's place now, notes), the same
refusal (translators/responses_client/reuse.py)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from bench.workloads import lite_requests, long_request
from tests.data import CODEX, DATA
from tests.reliability import requests as gen
from tests.reliability.budget import fuzz
from tests.translators.bodies import (
    assistant,
    body,
    developer,
    function_call,
    function_output,
    user,
)
from translators import ItemCache, Refused, translate_request
from translators.wire import wirejson

TARGETS = ("anthropic", "chat", "gemini", "bedrock")
"""Every shipped dialect the IR serves (`responses` passes the client's body through)."""
RECORDED = sorted(CODEX.glob("request_*.json"))


def outcome(request: Any, target: str, cache: ItemCache | None = None) -> tuple[Any, ...]:
    """What the client would see: the upstream body's bytes and the translation's report, or the
    refusal's error body."""
    try:
        translation = translate_request(request, target, None, items=cache)
    except Refused as refused:
        return ("refused", refused.to_body())
    return (wirejson.dumps(translation.body), translation.model_dump(mode="json", exclude={"body"}))


def assert_same_through(cache: ItemCache, requests: list[Any], target: str) -> None:
    for n, request in enumerate(requests):
        assert outcome(request, target, cache) == outcome(request, target), f"request {n}"


# -- recordings and sessions ----------------------------------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
def test_every_recorded_codex_request_translates_the_same_through_a_cache(target: str) -> None:
    cache = ItemCache()
    requests = [json.loads(path.read_bytes()) for path in RECORDED]
    assert_same_through(cache, requests + requests, target)  # the second time, from the cache
    assert cache.hits + cache.reused > 0


@pytest.mark.parametrize("target", TARGETS)
def test_a_growing_30_turn_lite_session_translates_the_same_through_a_cache(target: str) -> None:
    """30 requests after the first, each the last one's input and what happened since (a tool's
    output, the user's next message), as bench.websocket counts turns."""
    requests = [json.loads(raw) for raw in lite_requests(120)][:31]
    assert len(requests) == 31
    cache = ItemCache()
    assert_same_through(cache, requests, target)
    items = sum(len(request["input"]) for request in requests)
    assert cache.reused == items - len(requests[-1]["input"])  # each request's items, once more


def test_a_classic_session_cut_at_every_turn_and_one_item_earlier_translates_the_same() -> None:
    whole = json.loads(long_request())
    requests = [{**whole, "input": whole["input"][:n]} for n in range(3, 217, 9)]
    requests += [{**whole, "input": whole["input"][1:n]} for n in range(3, 217, 31)]  # the oldest cut
    cache = ItemCache()
    assert_same_through(cache, requests, "anthropic")
    assert cache.hits > 0  # the items one place earlier were found by their content


def test_a_cache_too_small_for_the_history_translates_the_same() -> None:
    requests = [json.loads(raw) for raw in lite_requests(60)]
    cache = ItemCache(max_entries=7, max_bytes=40_000)
    assert_same_through(cache, requests, "anthropic")
    assert len(cache) <= 7 and cache.bytes <= 40_000


# -- an item elsewhere, and what its text cannot tell ------------------------------------------


def _history() -> list[dict[str, Any]]:
    return [developer("be brief"), user("list files", "twice"),
            assistant("on it", phase="commentary", annotations_extra=1),
            function_call("call_1", "exec_command", '{"cmd":"ls"}', status="completed", odd="x"),
            function_output("call_1", [{"type": "input_text", "text": "a.txt"},
                                       {"type": "input_audio", "audio_url": "data:audio/wav;base64,AA=="}])]


def test_an_item_at_another_place_is_reported_at_its_place_now() -> None:
    cache = ItemCache()
    first = body(*_history())
    moved = body(user("before all"), user("and this"), *_history()[1:])
    assert_same_through(cache, [first, moved, first], "anthropic")
    assert cache.hits >= 4
    dropped = translate_request(moved, "anthropic", None, items=cache).dropped
    assert {"input[3].annotations_extra", "input[4].odd", "input[5].output[1]"} <= set(dropped)


@pytest.mark.parametrize("first", ["null", "NaN"])
def test_a_nan_is_never_taken_for_the_null_of_the_same_text(first: str) -> None:
    """Python's parser reads NaN, which orjson writes as null: the texts match, the values not."""
    second = "NaN" if first == "null" else "null"

    def request(value: str, *more: dict[str, Any]) -> Any:
        search = json.loads('{"type": "tool_search_call", "call_id": "c1", "execution": "client", '
                            f'"arguments": {{"query": "q", "limit": {value}}}, "note": {value}}}')
        return {"model": "m", "input": [search, *more]}

    later = function_output("c1", "found")
    for target in ("anthropic", "chat"):
        cache = ItemCache()
        assert_same_through(cache, [request(first), request(second), request(first, later),
                                    request(second, later), request(second, later, user("more"))], target)


def test_an_item_that_leaves_a_note_is_decoded_each_time() -> None:
    file_part = {"type": "input_file", "file_id": "file-1"}  # noted with its path
    item = {"type": "message", "role": "user", "content": [file_part, {"type": "input_text", "text": "q"}]}
    requests = [body(item), body(user("first"), item), body(user("first"), item, assistant("a"))]
    assert_same_through(ItemCache(), requests, "anthropic")


def test_the_effort_a_configuration_update_set_comes_with_its_history() -> None:
    update = {"type": "configuration_update", "reasoning": {"effort": "high"}, "extra": 1}
    requests = [body(user("q"), update, reasoning={"effort": "low"}),
                body(user("q"), update, assistant("a"), user("again"), reasoning={"effort": "low"})]
    cache = ItemCache()
    assert_same_through(cache, requests, "anthropic")
    assert cache.reused == 2


def test_a_refused_item_after_a_cached_history_is_refused_the_same() -> None:
    cache = ItemCache()
    history = _history()
    requests = [body(*history), body(*history, {"type": "item_reference", "id": "msg_1"}),
                body(*history, {"type": 7}), body(*history, "not an item"),
                body(*history, function_call("call_2", "exec_command", status=None))]
    assert_same_through(cache, requests, "anthropic")
    assert outcome(requests[1], "anthropic", cache)[0] == "refused"


def test_an_item_orjson_cannot_write_is_decoded_each_time() -> None:
    big = function_call("call_1", "exec_command", {"n": 2**70})  # arguments as an object
    requests = [body(user("q"), big), body(user("q"), big, function_output("call_1", "ok"))]
    assert_same_through(ItemCache(), requests, "anthropic")


def test_the_cached_ir_is_changed_by_no_encoder() -> None:
    cache = ItemCache()
    requests = [json.loads(path.read_bytes()) for path in RECORDED] + [json.loads(long_request())]
    for request in requests:
        translate_request(request, "anthropic", None, items=cache)
    entries = [entry for run in cache.runs() for entry in run.entries]
    kept = copy.deepcopy(entries)
    for request in requests:
        for target in TARGETS:
            translate_request(request, target, None, items=cache)
    assert entries == kept


def test_a_messages_client_translates_as_without_a_cache_and_leaves_it_empty() -> None:
    request = json.loads((DATA / "claude_code" / "request_say_hi.json").read_bytes())
    cache = ItemCache()
    with_cache = translate_request(request, "anthropic", None, client="messages", items=cache)
    assert with_cache == translate_request(request, "anthropic", None, client="messages")
    assert len(cache) == 0 and cache.runs() == []


# -- any sequence of turns -------------------------------------------------------------------------


@st.composite
def conversations(draw: st.DrawFn) -> list[Any]:
    """Requests as one client sends them: each generated request, then its next turn (the same
    input and more), then the same input without its oldest item."""
    out: list[Any] = []
    for request in draw(st.lists(gen.requests(), min_size=1, max_size=3)):
        out.append(request)
        items = request.get("input") if isinstance(request, dict) else None
        if isinstance(items, list) and items:
            out.append({**request, "input": [*items, *draw(st.lists(gen.item, max_size=3))]})
            out.append({**request, "input": items[1:]})
    return out


@fuzz(40)
@given(conversations(), st.sampled_from(TARGETS))
@example([body(*_history()), body(*_history(), user("next")), body(*_history()[1:])], "anthropic")
def test_any_sequence_of_turns_translates_the_same_through_a_cache(requests: list[Any], target: str) -> None:
    assert_same_through(ItemCache(), requests, target)

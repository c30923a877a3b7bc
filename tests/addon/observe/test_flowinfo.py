"""addon/observe/flowinfo.py: the one-line comment, the mark, and usage read back from what the client got."""

from __future__ import annotations

import json

from addon.observe import flowinfo
from translators.core.report import Report


def test_summary_names_upstream_and_model_then_what_went_wrong() -> None:
    info = {"upstream": "anthropic", "model": "claude-sonnet-4-6", "refused": "no", "error": "boom",
            "dropped": ["input.reasoning", "text.verbosity"], "notes": ["a", "b"]}
    assert flowinfo.summary(info) == ("-> anthropic claude-sonnet-4-6 | refused: no | error: boom"
                                      " | dropped: input.reasoning, text.verbosity | notes: 2")


def test_summary_of_a_clean_flow_is_just_the_route() -> None:
    assert flowinfo.summary({"upstream": "chat", "model": "deepseek-chat", "dropped": [], "notes": []}) == (
        "-> chat deepseek-chat")


def _found(dropped: list[str], notes: tuple[str, ...] = (), cosmetic: tuple[str, ...] = ()) -> Report:
    report = Report(notes=list(notes))
    for path in dropped:
        report.drop(path, "cosmetic" if path in cosmetic else "lossy")
    return report


def test_notes_alone_do_not_mark_a_flow() -> None:
    assert not flowinfo.lost_something({"dropped": [], "notes": ["no upstream key"]})
    assert flowinfo.lost_something({"error": "upstream 429"})


def test_a_lossy_drop_marks_a_flow_and_cosmetic_drops_alone_do_not() -> None:
    both = {"dropped": ["tools[9]", "text.verbosity"], "cosmetic": ["text.verbosity"]}
    assert flowinfo.lost_something(both)
    assert not flowinfo.lost_something({"dropped": ["text.verbosity"], "cosmetic": ["text.verbosity"]})


def test_a_flow_saved_before_drops_had_kinds_counts_every_drop_as_lossy() -> None:
    info = {"upstream": "anthropic", "model": "m", "dropped": ["text.verbosity"]}
    assert flowinfo.lost_something(info)
    assert flowinfo.summary(info) == "-> anthropic m | dropped: text.verbosity"


def test_the_comment_names_lossy_drops_under_dropped_and_the_rest_under_cosmetic() -> None:
    info = {"upstream": "anthropic", "model": "m",
            "dropped": ["tools[2].strict", "tools[9]", "text.verbosity"],
            "cosmetic": ["tools[2].strict", "text.verbosity"]}
    assert flowinfo.summary(info) == (
        "-> anthropic m | dropped: tools[9] | cosmetic: tools[2].strict, text.verbosity")


def test_merge_keeps_order_and_drops_duplicates() -> None:
    info = {"dropped": ["a"], "notes": ["x"]}
    flowinfo.merge(info, _found(["b", "a"], ("x", "y")))
    assert info == {"dropped": ["a", "b"], "cosmetic": [], "notes": ["x", "y"]}


def test_merge_keeps_the_kinds_and_a_path_once_lossy_stays_lossy() -> None:
    info: dict = {"dropped": []}
    flowinfo.merge(info, _found(["input[1]", "text.verbosity", "service_tier"], cosmetic=("text.verbosity",
                                                                                           "service_tier")))
    flowinfo.merge(info, _found(["service_tier", "output[0].x"]))
    assert info["dropped"] == ["input[1]", "text.verbosity", "service_tier", "output[0].x"]
    assert info["cosmetic"] == ["text.verbosity"]


def test_usage_of_a_response_object() -> None:
    body = json.dumps({"object": "response", "usage": {"input_tokens": 3}}).encode()
    assert flowinfo.usage_of(flowinfo.final_response(body)) == {"input_tokens": 3}


def test_usage_of_a_stream_comes_from_its_terminal_event() -> None:
    stream = (b'event: response.created\ndata: {"response":{"usage":null}}\n\n'
              b'event: response.completed\ndata: {"type":"response.completed","response":'
              b'{"usage":{"input_tokens":5,"output_tokens":2}}}\n\n')
    assert flowinfo.usage_of(flowinfo.final_response(stream)) == {"input_tokens": 5, "output_tokens": 2}


def test_usage_of_anything_else_is_none() -> None:
    for body in (b"", b"{not json", b"event: response.failed\ndata: {broken\n\n",
                 b'{"error": {"message": "x"}}'):
        assert flowinfo.usage_of(flowinfo.final_response(body)) is None


def test_the_comment_counts_a_field_dropped_from_many_history_items_once() -> None:
    info = {"upstream": "anthropic", "model": "claude-sonnet-4-6",
            "dropped": ["tools[9]", "input[3].phase", "input[7].phase", "input[12].phase", "text.verbosity"]}
    assert flowinfo.summary(info) == (
        "-> anthropic claude-sonnet-4-6 | dropped: tools[9], input[*].phase x3, text.verbosity")


def test_the_metadata_keeps_every_exact_dropped_path() -> None:
    info: dict = {"dropped": []}
    flowinfo.merge(info, _found(["input[3].phase", "input[7].phase"]))
    assert info["dropped"] == ["input[3].phase", "input[7].phase"]


def test_summary_says_a_flow_was_a_compaction() -> None:
    info = {"upstream": "anthropic", "model": "claude-sonnet-4-6", "kind": "compaction", "dropped": [],
            "notes": ["n"]}
    assert flowinfo.summary(info) == "-> anthropic claude-sonnet-4-6 compaction | notes: 1"


def test_searches_are_counted_from_the_web_search_calls_the_client_got_and_shown_in_the_comment() -> None:
    output = [{"type": "web_search_call", "id": "ws_1", "status": "completed"},
              {"type": "message", "id": "msg_2"},
              {"type": "web_search_call", "id": "ws_3", "status": "failed"}]
    response = {"id": "r", "status": "completed", "output": output}
    completed = {"type": "response.completed", "response": response}
    stream = f"event: response.completed\ndata: {json.dumps(completed)}\n\n".encode()
    assert flowinfo.searches_of(flowinfo.final_response(stream)) == 2
    assert flowinfo.searches_of(flowinfo.final_response(json.dumps(completed["response"]).encode())) == 2
    assert flowinfo.searches_of(flowinfo.final_response(b"")) == 0
    info = {"upstream": "anthropic", "model": "claude-sonnet-4-6", "searches": 2}
    assert flowinfo.summary(info) == "-> anthropic claude-sonnet-4-6 | searches: 2"

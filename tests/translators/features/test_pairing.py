"""translators/features/pairing.py: every tool call followed by its result, and no result without its call."""

from __future__ import annotations

from translators.core.report import Report
from translators.features.pairing import pair
from translators.ir.request import Message, Reasoning, Text, ToolCall, ToolResult


def user(text: str, origin: str = "") -> Message:
    return Message(role="user", parts=[Text(text=text)], origin=origin)


def said(text: str) -> Message:
    return Message(role="assistant", parts=[Text(text=text)])


def call(call_id: str, kind: str = "function", origin: str = "") -> ToolCall:
    return ToolCall(kind=kind, call_id=call_id, name="exec_command", arguments="{}", origin=origin or call_id)


def result(call_id: str, text: str = "ok", kind: str = "function", origin: str = "") -> ToolResult:
    return ToolResult(kind=kind, call_id=call_id, parts=[Text(text=text)], origin=origin or f"out:{call_id}")


def shape(items) -> list[str]:
    out = []
    for item in items:
        if isinstance(item, ToolCall):
            out.append(f"call {item.call_id}")
        elif isinstance(item, ToolResult):
            out.append(f"result {item.call_id}")
        elif isinstance(item, Reasoning):
            out.append("reasoning")
        else:
            out.append(f"{item.role} {item.parts[0].text}")
    return out


def test_results_follow_the_run_of_assistant_items_that_holds_their_calls_in_call_order():
    items = [user("go"), call("a"), said("and"), call("b"), result("b"), result("a"), user("next")]
    assert shape(pair(items, Report())) == [
        "user go",
        "call a",
        "assistant and",
        "call b",
        "result a",
        "result b",
        "user next",
    ]


def test_consecutive_tool_turns_stay_apart():
    # Regression: the second turn's reasoning and call were merged into the first turn, ahead of
    # the first result the model had already seen.
    items = [
        user("go"),
        Reasoning(summary=["s"]),
        call("a"),
        result("a"),
        Reasoning(summary=["t"]),
        call("b"),
        result("b"),
    ]
    assert shape(pair(items, Report())) == [
        "user go",
        "reasoning",
        "call a",
        "result a",
        "reasoning",
        "call b",
        "result b",
    ]


def test_parallel_calls_get_their_results_together_after_the_last_call():
    items = [Reasoning(summary=["s"]), call("a"), call("b"), result("b"), result("a")]
    assert shape(pair(items, Report())) == ["reasoning", "call a", "call b", "result a", "result b"]


def test_a_result_whose_call_is_absent_is_dropped_and_reported():
    report = Report()
    out = pair([user("go"), result("ghost", origin="input[1]")], report)
    assert shape(out) == ["user go"]
    assert report.dropped == ["input[1]"]


def test_a_call_without_a_result_is_answered_aborted_and_noted():
    report = Report()
    out = pair([user("go"), call("a", origin="input[1]"), user("stop")], report)
    assert shape(out) == ["user go", "call a", "result a", "user stop"]
    assert out[2].parts == [Text(text="aborted")]
    assert len(report.notes) == 1
    assert "input[1]" in report.notes[0]


def test_a_second_result_for_the_same_call_is_dropped_and_reported():
    report = Report()
    out = pair([call("a"), result("a", "first"), result("a", "second", origin="input[2]")], report)
    assert [i.parts[0].text for i in out if isinstance(i, ToolResult)] == ["first"]
    assert report.dropped == ["input[2]"]


def test_a_repeated_call_id_is_dropped_and_reported():
    report = Report()
    out = pair([call("a", origin="input[0]"), call("a", origin="input[1]"), result("a")], report)
    assert shape(out) == ["call a", "result a"]
    assert report.dropped == ["input[1]"]


def test_a_result_takes_the_kind_of_its_call():
    # Codex answers a local_shell_call with a function_call_output (docs/codex.md "Input items")
    out = pair([call("a", kind="local_shell"), result("a", kind="function")], Report())
    assert out[1].kind == "local_shell"


def test_a_result_sent_before_its_call_is_moved_after_it():
    assert shape(pair([result("a"), call("a")], Report())) == ["call a", "result a"]

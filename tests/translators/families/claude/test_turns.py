"""translators/families/claude/turns.py: the user/assistant turns Anthropic Messages and Bedrock
Converse share."""

from __future__ import annotations

from typing import Any

from translators.core.report import Report
from translators.families.claude.turns import alternate, with_thinking
from translators.ir.request import Message, Part, Reasoning, Request, Text, ToolCall, ToolResult, VendorState

THINKING = {"type": "enabled", "budget_tokens": 2048}


class Tags:
    """Blocks that only say what they are, so the tests read the walk, not a dialect."""

    def parts(self, parts: list[Part], role: str) -> list[dict[str, Any]]:
        return [{"kind": "text", "text": p.text} for p in parts if isinstance(p, Text)]

    def reasoning(self, item: Reasoning) -> dict[str, Any] | None:
        return {"kind": "reasoning"} if item.state is not None else None

    def tool_call(self, item: ToolCall) -> dict[str, Any]:
        return {"kind": "call", "id": item.call_id}

    def tool_result(self, item: ToolResult) -> dict[str, Any]:
        return {"kind": "result", "id": item.call_id}

    def is_reasoning(self, block: dict[str, Any]) -> bool:
        return block["kind"] == "reasoning"

    def is_tool_result(self, block: dict[str, Any]) -> bool:
        return block["kind"] == "result"


def request(*items: Any) -> Request:
    return Request(model="m", items=list(items))


def said(role: str, text: str, origin: str = "input[0]", phase: str | None = None) -> Message:
    return Message(role=role, parts=[Text(text=text)], origin=origin, phase=phase)


def call(call_id: str) -> ToolCall:
    return ToolCall(kind="function", call_id=call_id, name="f", arguments="{}", origin="input[1]")


def result(call_id: str) -> ToolResult:
    return ToolResult(kind="function", call_id=call_id, parts=[Text(text="ok")], origin="input[2]")


def signed(origin: str = "input[1]") -> Reasoning:
    return Reasoning(state=VendorState(dialect="anthropic", signature="sig", text="t"), origin=origin)


def shape(turns: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    return [(t["role"], [b["kind"] for b in t["content"]]) for t in turns]


def test_consecutive_blocks_of_one_role_merge_into_one_turn() -> None:
    turns = alternate(request(said("user", "q"), said("assistant", "a"), call("c1"), call("c2"),
                              result("c1"), result("c2"), said("user", "more")), Tags(), False, Report())
    assert shape(turns) == [("user", ["text"]), ("assistant", ["text", "call", "call"]),
                            ("user", ["result", "result", "text"])]


def test_a_system_message_inside_the_history_speaks_as_the_user() -> None:
    assert shape(alternate(request(said("system", "rule")), Tags(), False, Report())) == [("user", ["text"])]


def test_a_message_without_blocks_adds_no_empty_turn() -> None:
    turns = alternate(request(Message(role="user", parts=[], origin="input[0]")), Tags(), False, Report())
    assert turns == []


def test_the_phase_of_a_message_is_reported_dropped() -> None:
    report = Report()
    alternate(request(said("assistant", "a", origin="input[3]", phase="commentary")), Tags(), False, report)
    assert report.dropped == ["input[3].phase"]


def test_reasoning_is_replayed_only_when_thinking_is_on() -> None:
    on, off = Report(), Report()
    assert shape(alternate(request(said("user", "q"), signed()), Tags(), True, on)) == [
        ("user", ["text"]), ("assistant", ["reasoning"])]
    assert shape(alternate(request(said("user", "q"), signed()), Tags(), False, off)) == [("user", ["text"])]
    assert (on.dropped, off.dropped) == ([], ["input[1]"])


def test_reasoning_the_dialect_cannot_take_back_is_reported_dropped() -> None:
    report = Report()
    alternate(request(said("user", "q"), Reasoning(origin="input[1]")), Tags(), True, report)
    assert report.dropped == ["input[1]"]


def test_thinking_stays_on_when_the_open_tool_turn_opens_with_signed_reasoning() -> None:
    report = Report()
    turns, thinking = with_thinking(request(said("user", "q"), signed(), call("c"), result("c")), Tags(),
                                    THINKING, report)
    assert thinking == THINKING
    assert shape(turns)[1] == ("assistant", ["reasoning", "call"])
    assert report.notes == []


def test_thinking_is_turned_off_and_the_effort_dropped_inside_an_unsigned_tool_loop() -> None:
    report = Report()
    loop = request(said("user", "q"), call("c"), result("c"))
    turns, thinking = with_thinking(loop, Tags(), THINKING, report)
    assert thinking is None
    assert shape(turns) == [("user", ["text"]), ("assistant", ["call"]), ("user", ["result"])]
    assert "reasoning.effort" in report.dropped
    assert any("thinking turned off" in note for note in report.notes)


def test_a_finished_turn_without_reasoning_keeps_thinking_on() -> None:
    finished = request(said("user", "q"), call("c"), result("c"), said("assistant", "done"),
                       said("user", "next"))
    assert with_thinking(finished, Tags(), THINKING, Report())[1] == THINKING

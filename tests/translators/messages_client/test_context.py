"""`context_management` edits applied to the history as the API applies them, with a note; what
cannot be emulated is reported."""

from __future__ import annotations

import pytest

from tests.translators.messages_client.messages import (
    assistant,
    body,
    decoded,
    text,
    tool_result,
    tool_use,
    user,
)
from translators.core.errors import MalformedRequest
from translators.messages_client.context import CLEARED


def _thinking(n: int) -> dict:
    return {"type": "thinking", "thinking": f"thought {n}", "signature": f"sig{n}"}


def _three_thinking_turns(**fields) -> dict:
    return body(
        user("a"),
        assistant(_thinking(1), text("1")),
        user("b"),
        assistant(_thinking(2), text("2")),
        user("c"),
        assistant(_thinking(3), text("3")),
        user("d"),
        **fields,
    )


def _thoughts(request) -> list[str]:
    return [item.summary[0] for item in request.items if item.type == "reasoning"]


def test_clear_thinking_keep_all_keeps_every_thinking_block_and_says_nothing() -> None:
    edits = {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]}
    request, report = decoded(_three_thinking_turns(context_management=edits))
    assert _thoughts(request) == ["thought 1", "thought 2", "thought 3"]
    assert not report


def test_clear_thinking_keeps_the_last_turns_thinking() -> None:
    edits = {"edits": [{"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 2}}]}
    request, report = decoded(_three_thinking_turns(context_management=edits))
    assert _thoughts(request) == ["thought 2", "thought 3"]
    assert [item.type for item in request.items].count("message") == 7
    assert report.notes and not report.dropped


def test_clear_thinking_by_default_keeps_the_last_turn_only() -> None:
    request, _ = decoded(
        _three_thinking_turns(context_management={"edits": [{"type": "clear_thinking_20251015"}]})
    )
    assert _thoughts(request) == ["thought 3"]


def _tool_turns(n: int, **fields) -> dict:
    messages = [user("start")]
    for i in range(n):
        messages += [
            assistant(tool_use(f"t{i}", "Read" if i % 2 else "Bash", path=f"f{i}")),
            user(tool_result(f"t{i}", f"output {i} " + "x" * 400)),
        ]
    return body(*messages, **fields)


def _outputs(request) -> list[str]:
    return [item.parts[0].text for item in request.items if item.type == "tool_result"]


def test_clear_tool_uses_past_the_trigger_clears_all_but_the_kept_results() -> None:
    edit = {
        "type": "clear_tool_uses_20250919",
        "trigger": {"type": "input_tokens", "value": 100},
        "keep": {"type": "tool_uses", "value": 2},
    }
    request, report = decoded(_tool_turns(5, context_management={"edits": [edit]}))
    outputs = _outputs(request)
    assert outputs[:3] == [CLEARED] * 3
    assert outputs[3].startswith("output 3") and outputs[4].startswith("output 4")
    assert report.notes and not report.dropped


def test_clear_tool_uses_below_the_trigger_changes_nothing() -> None:
    edit = {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 100_000}}
    request, report = decoded(_tool_turns(5, context_management={"edits": [edit]}))
    assert CLEARED not in _outputs(request)
    assert not report


def test_clear_tool_uses_spares_excluded_tools_and_can_clear_inputs() -> None:
    edit = {
        "type": "clear_tool_uses_20250919",
        "trigger": {"type": "tool_uses", "value": 1},
        "keep": {"type": "tool_uses", "value": 0},
        "exclude_tools": ["Read"],
        "clear_tool_inputs": True,
    }
    request, _ = decoded(_tool_turns(4, context_management={"edits": [edit]}))
    assert [o == CLEARED for o in _outputs(request)] == [True, False, True, False]
    calls = [item for item in request.items if item.type == "tool_call"]
    assert [c.arguments == "{}" for c in calls] == [True, False, True, False]


def test_clear_tool_uses_that_would_free_less_than_clear_at_least_changes_nothing() -> None:
    edit = {
        "type": "clear_tool_uses_20250919",
        "trigger": {"type": "tool_uses", "value": 1},
        "clear_at_least": {"type": "input_tokens", "value": 1_000_000},
    }
    request, _ = decoded(_tool_turns(5, context_management={"edits": [edit]}))
    assert CLEARED not in _outputs(request)


def test_compaction_cannot_be_emulated_and_is_reported() -> None:
    _, report = decoded(body(context_management={"edits": [{"type": "compact_20260112"}]}))
    assert report.lossy == ["context_management.edits[0]"]


def test_a_malformed_trigger_is_refused() -> None:
    edit = {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": "many"}}
    with pytest.raises(MalformedRequest):
        decoded(_tool_turns(1, context_management={"edits": [edit]}))

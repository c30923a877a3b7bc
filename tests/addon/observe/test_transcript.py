"""addon/observe/transcript.py: the demo's reading of a Responses stream, item by item."""

from __future__ import annotations

import json
from typing import Any

from addon.observe import transcript


def _stream(*events: dict[str, Any]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def _answer(*events: dict[str, Any]) -> str:
    return "".join(transcript.answer(_stream(*events)))


def _added(kind: str) -> dict[str, Any]:
    return {"type": "response.output_item.added", "item": {"type": kind}}


def _done(item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.done", "item": item}


def test_each_summary_part_of_a_reasoning_item_starts_its_own_line() -> None:
    text = _answer(_added("reasoning"),
                   {"type": "response.reasoning_summary_part.added", "summary_index": 0},
                   {"type": "response.reasoning_summary_text.delta", "delta": "first"},
                   {"type": "response.reasoning_summary_part.added", "summary_index": 1},
                   {"type": "response.reasoning_summary_text.delta", "delta": "second"},
                   _done({"type": "reasoning"}))
    assert [line.split() for line in text.splitlines()[1:]] == [["reasoning", "first"], ["second"]]


def test_a_reasoning_item_without_a_summary_says_so() -> None:
    assert _answer(_added("reasoning"), _done({"type": "reasoning"})).splitlines()[1].split() == [
        "reasoning", "(no", "summary)"]


def test_a_failed_stream_ends_with_the_error_code_and_message() -> None:
    failed = {"type": "response.failed", "response": {"error": {"code": "server_error", "message": "boom"}}}
    assert _answer(failed).splitlines()[-1].split() == ["failed", "server_error:", "boom"]


def test_an_incomplete_stream_gives_its_reason() -> None:
    incomplete = {"type": "response.incomplete",
                  "response": {"incomplete_details": {"reason": "max_output_tokens"},
                               "usage": {"input_tokens": 3, "output_tokens": 9}}}
    assert _answer(incomplete).splitlines()[-1].split()[:2] == ["incomplete", "max_output_tokens"]


def test_a_free_form_tool_call_shows_its_input_on_one_line() -> None:
    call = {"type": "custom_tool_call", "name": "apply_patch", "input": "*** Begin Patch\n*** End Patch\n"}
    assert _answer(_done(call)).splitlines()[-1].split(None, 2) == [
        "tool", "call", "apply_patch *** Begin Patch\\n*** End Patch\\n"]


def test_the_request_line_counts_tools_past_the_first_few() -> None:
    tools = [{"type": "function", "name": f"f{i}"} for i in range(transcript.TOOLS_SHOWN + 2)]
    line = transcript.request_line({"model": "m", "tools": tools, "input": []})
    assert f"{len(tools)} tools: f0, " in line
    assert f"f{transcript.TOOLS_SHOWN - 1}, +2 more" in line
    assert f"f{transcript.TOOLS_SHOWN}" not in line

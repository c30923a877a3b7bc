"""Reading an upstream request body of each dialect back, independently of the encoders: its tool
names, its history calls and results, and the rules every vendor enforces on them. Each dialect's
reader is in its conformance data (`BodyReader`, tests/support/conformance/<name>.py).

The rules (docs/anthropic.md "Conversation rules", "Tool names", "Streaming"; docs/chat.md "Request";
docs/gemini.md "Request", "Function names"; docs/bedrock.md "Request", "Tool names and ids"):
- tool names are unique and match the vendor's pattern;
- every call in the history is answered, in the turn right after it, and no result stands
  without its call (an orphan is a 400 upstream, docs/field-notes.md "Orphan tool items");
- call ids are unique and of the vendor's shape.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from tests.support import conformance
from tests.support.conformance import BodyReader


def reader(target: str) -> BodyReader:
    """The dialect's body reader; a dialect the fuzzers translate for must declare one."""
    found = conformance.of(target).body
    assert found is not None, f"{target} declares no upstream-body reader (tests/support/conformance/)"
    return found


def name_pattern(target: str) -> re.Pattern[str]:
    return reader(target).tool_name


def tool_names(target: str, body: dict[str, Any]) -> list[str]:
    return reader(target).tool_names(body)


def chosen_tool(target: str, body: dict[str, Any]) -> str | None:
    """The tool a forced tool_choice names, if any."""
    return reader(target).chosen_tool(body)


def history_calls(target: str, body: dict[str, Any]) -> list[tuple[str | None, str]]:
    return [call for _, calls, _ in reader(target).turns(body) for call in calls]


def check_pairing(target: str, body: dict[str, Any]) -> None:
    """Every call answered in the very next turn, no result without its call, ids unique."""
    found = reader(target)
    turns = found.turns(body)
    ids = [call_id for _, calls, _ in turns for call_id, _ in calls if call_id is not None]
    assert not [i for i, n in Counter(ids).items() if n > 1], f"{target}: a call id is used twice: {ids}"
    for call_id in ids:
        assert found.call_id.match(call_id), f"{target}: call id {call_id!r} has the wrong shape"
    for n, (_role, calls, results) in enumerate(turns):
        previous = turns[n - 1] if n else None
        if results:
            assert previous is not None and previous[1], f"{target}: turn {n} answers no call: {results}"
            expected = [cid if cid is not None else "name:" + name for cid, name in previous[1]]
            assert Counter(results) == Counter(expected), (
                f"{target}: turn {n} results {results} do not answer the calls {previous[1]}"
            )
        if calls:
            following = turns[n + 1] if n + 1 < len(turns) else None
            assert following is not None and following[2], f"{target}: calls of turn {n} are never answered"
    if found.results_first:
        _results_first(target, body)


def _results_first(target: str, body: dict[str, Any]) -> None:
    """Tool results come first in their user message, text after them (Anthropic's rule; the same
    Claude behind Bedrock)."""
    for n, message in enumerate(body["messages"]):
        kinds = [
            "result" if (b.get("type") == "tool_result" or "toolResult" in b) else "other"
            for b in message["content"]
            if not (isinstance(b, dict) and "cachePoint" in b)
        ]
        if "result" in kinds:
            first_other = kinds.index("other") if "other" in kinds else len(kinds)
            assert "result" not in kinds[first_other:], f"{target}: message {n} has text before a tool result"

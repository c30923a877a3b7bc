"""Reading an upstream request body of each dialect back, independently of the encoders: its tool
names, its history calls and results, and the rules every vendor enforces on them.

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

NAME = {
    "anthropic": re.compile(r"^[a-zA-Z0-9_-]{1,64}$"),
    "chat": re.compile(r"^[a-zA-Z0-9_-]{1,64}$"),
    "bedrock": re.compile(r"^[a-zA-Z0-9_-]{1,64}$"),
    "gemini": re.compile(r"^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$"),
}
CALL_ID = {
    "anthropic": re.compile(r"^[a-zA-Z0-9_-]+$"),
    "bedrock": re.compile(r"^[a-zA-Z0-9_.:-]{1,64}$"),
    "chat": re.compile(r"^.{1,40}$", re.DOTALL),
    "gemini": re.compile(r"^.+$", re.DOTALL),
}


def tool_names(target: str, body: dict[str, Any]) -> list[str]:
    if target == "anthropic":
        return [t["name"] for t in body.get("tools", [])]
    if target == "chat":
        return [
            t["function"]["name"] if t["type"] == "function" else t["custom"]["name"]
            for t in body.get("tools", [])
        ]
    if target == "gemini":
        return [d["name"] for t in body.get("tools", []) for d in t.get("functionDeclarations", [])]
    if target == "bedrock":
        return [t["toolSpec"]["name"] for t in (body.get("toolConfig") or {}).get("tools", [])]
    raise ValueError(target)


def chosen_tool(target: str, body: dict[str, Any]) -> str | None:
    """The tool a forced tool_choice names, if any."""
    if target == "anthropic":
        choice = body.get("tool_choice") or {}
        return choice.get("name") if choice.get("type") == "tool" else None
    if target == "chat":
        choice = body.get("tool_choice")
        if isinstance(choice, dict):
            return (choice.get("function") or choice.get("custom") or {}).get("name")
        return None
    if target == "gemini":
        names = ((body.get("toolConfig") or {}).get("functionCallingConfig") or {}).get(
            "allowedFunctionNames"
        )
        return names[0] if names else None
    if target == "bedrock":
        tool = ((body.get("toolConfig") or {}).get("toolChoice") or {}).get("tool")
        return tool.get("name") if tool else None
    raise ValueError(target)


# -- turns: [(role, [call (id, name)], [result id or name])] --------------------------------------


def _turns(
    target: str, body: dict[str, Any]
) -> list[tuple[str, list[tuple[str | None, str]], list[str | None]]]:
    turns: list[tuple[str, list[tuple[str | None, str]], list[str | None]]] = []
    if target in ("anthropic", "bedrock"):
        for message in body["messages"]:
            calls, results = [], []
            for block in message["content"]:
                if target == "anthropic" and block.get("type") == "tool_use":
                    calls.append((block["id"], block["name"]))
                elif target == "anthropic" and block.get("type") == "tool_result":
                    results.append(block["tool_use_id"])
                elif "toolUse" in block:
                    calls.append((block["toolUse"]["toolUseId"], block["toolUse"]["name"]))
                elif "toolResult" in block:
                    results.append(block["toolResult"]["toolUseId"])
            turns.append((message["role"], calls, results))
    elif target == "chat":
        for message in body["messages"]:
            if message["role"] == "tool":
                if turns and turns[-1][0] == "tool":
                    turns[-1][2].append(message["tool_call_id"])
                else:
                    turns.append(("tool", [], [message["tool_call_id"]]))
                continue
            calls = [
                (c["id"], (c.get("function") or c.get("custom"))["name"])
                for c in message.get("tool_calls", [])
            ]
            turns.append((message["role"], calls, []))
    elif target == "gemini":
        for content in body["contents"]:
            calls = [
                (p["functionCall"].get("id"), p["functionCall"]["name"])
                for p in content["parts"]
                if "functionCall" in p
            ]
            results = [
                p["functionResponse"].get("id") or "name:" + p["functionResponse"]["name"]
                for p in content["parts"]
                if "functionResponse" in p
            ]
            turns.append((content["role"], calls, results))
    else:
        raise ValueError(target)
    return turns


def history_calls(target: str, body: dict[str, Any]) -> list[tuple[str | None, str]]:
    return [call for _, calls, _ in _turns(target, body) for call in calls]


def check_pairing(target: str, body: dict[str, Any]) -> None:
    """Every call answered in the very next turn, no result without its call, ids unique."""
    turns = _turns(target, body)
    ids = [call_id for _, calls, _ in turns for call_id, _ in calls if call_id is not None]
    assert not [i for i, n in Counter(ids).items() if n > 1], f"{target}: a call id is used twice: {ids}"
    for call_id in ids:
        assert CALL_ID[target].match(call_id), f"{target}: call id {call_id!r} has the wrong shape"
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
    if target in ("anthropic", "bedrock"):
        _results_first(target, body)


def _results_first(target: str, body: dict[str, Any]) -> None:
    """Anthropic: tool results come first in their user message, text after them."""
    for n, message in enumerate(body["messages"]):
        kinds = [
            "result" if (b.get("type") == "tool_result" or "toolResult" in b) else "other"
            for b in message["content"]
            if not (isinstance(b, dict) and "cachePoint" in b)
        ]
        if "result" in kinds:
            first_other = kinds.index("other") if "other" in kinds else len(kinds)
            assert "result" not in kinds[first_other:], f"{target}: message {n} has text before a tool result"

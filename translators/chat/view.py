"""How mitmweb shows a Chat Completions request and its stream chunks (addon/views.py)."""

from __future__ import annotations

from typing import Any

from translators.dialect import RequestShape, View
from translators.wire.viewtext import as_list, delta, join, short, text


def read_request(body: dict[str, Any]) -> RequestShape:
    messages = as_list(body.get("messages"))
    system = [m for m in messages if isinstance(m, dict) and m.get("role") in ("system", "developer")]
    size = sum(len(text(m.get("content"))) if isinstance(m.get("content"), str) else 0 for m in system)
    summary = f"{len(system)} system/developer message(s) ({size:,} chars)" if system else "none"
    items = [str(m.get("role")) if isinstance(m, dict) else "?" for m in messages]
    tools = []
    for tool in as_list(body.get("tools")):
        if isinstance(tool, dict):
            inner = tool.get(tool.get("type")) if isinstance(tool.get(tool.get("type")), dict) else tool
            tools.append(str(inner.get("name") or tool.get("type")))
    return RequestShape(summary, items, tools, frozenset({"messages", "tools"}))


def claims(obj: dict[str, Any]) -> bool:
    return "choices" in obj


def event_line(name: str, obj: dict[str, Any]) -> tuple[str, str]:
    return str(obj.get("object") or "chunk"), _line(obj)


def _line(obj: dict[str, Any]) -> str:
    choices = as_list(obj.get("choices"))
    choice = choices[0] if choices and isinstance(choices[0], dict) else {}
    change = choice.get("delta") if isinstance(choice.get("delta"), dict) else {}
    parts: list[str | None] = [f"#{choice['index']}" if isinstance(choice.get("index"), int) else None]
    for key in ("role",):
        if change.get(key):
            parts.append(f"{key}={change[key]}")
    for key in ("content", "reasoning_content", "reasoning", "refusal"):
        if isinstance(change.get(key), str) and change[key]:
            parts.append(f"{key if key != 'content' else 'text'} {short(change[key])}")
    for call in as_list(change.get("tool_calls")):
        if isinstance(call, dict):
            fn = call.get("function") if isinstance(call.get("function"), dict) else {}
            parts.append(join(f"tool_call[{call.get('index')}]", call.get("id"), fn.get("name"),
                              delta(fn.get("arguments"))))
    if choice.get("finish_reason"):
        parts.append(f"finish_reason={choice['finish_reason']}")
    if isinstance(obj.get("usage"), dict):
        parts.append(f"in={obj['usage'].get('prompt_tokens')} out={obj['usage'].get('completion_tokens')}")
    return join(*parts)


VIEW = View(read_request=read_request, event_line=event_line, claims=claims)

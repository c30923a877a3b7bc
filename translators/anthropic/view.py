"""How mitmweb shows an Anthropic Messages request and its stream events (addon/views.py)."""

from __future__ import annotations

from typing import Any

from translators.dialect import RequestShape, View
from translators.wire.viewtext import as_list, base64_size, chars, file_label, join, role_blocks, short, text


def read_request(body: dict[str, Any]) -> RequestShape:
    system = body.get("system")
    if isinstance(system, str):
        summary = f"system: text ({chars(system)})"
    elif isinstance(system, list):
        size = sum(len(text(x.get("text"))) for x in system if isinstance(x, dict))
        summary = f"system: {len(system)} block(s) ({size:,} chars)"
    else:
        summary = "none"
    items = [role_blocks(m, "content", "type", _document) for m in as_list(body.get("messages"))]
    tools = [str(t.get("name") or t.get("type")) for t in as_list(body.get("tools")) if isinstance(t, dict)]
    return RequestShape(summary, items, tools, frozenset({"messages", "system", "tools"}))


def _document(block: dict[str, Any]) -> str | None:
    """`document(report.pdf; application/pdf; 12.0 KiB)`: a document block by title, type and size,
    also inside a tool result (`tool_result+document(...)`)."""
    if block.get("type") == "tool_result":
        inner = [_document(b) for b in as_list(block.get("content")) if isinstance(b, dict)]
        shown = [label for label in inner if label is not None]
        return "+".join(["tool_result", *shown]) if shown else None
    if block.get("type") != "document" or not isinstance(block.get("source"), dict):
        return None
    source = block["source"]
    if source.get("type") == "url":
        return file_label("document", block.get("title"), source.get("url"))
    data = source.get("data")
    if source.get("type") == "base64":
        amount = base64_size(data)
    else:  # a plain-text source: the text itself
        amount = chars(data) if isinstance(data, str) else None
    return file_label("document", block.get("title"), source.get("media_type"), amount)


def claims(obj: dict[str, Any]) -> bool:
    return isinstance(obj.get("type"), str)


def event_line(name: str, obj: dict[str, Any]) -> tuple[str, str]:
    kind = obj.get("type")
    return (kind if isinstance(kind, str) else name), _line(obj)


def _line(obj: dict[str, Any]) -> str:
    where = f"#{obj['index']}" if isinstance(obj.get("index"), int) else None
    if isinstance(obj.get("message"), dict):
        m = obj["message"]
        return join(m.get("id"), m.get("model"))
    if isinstance(obj.get("content_block"), dict):
        block = obj["content_block"]
        return join(where, block.get("type"), block.get("name") or block.get("id"))
    delta = obj.get("delta")
    if isinstance(delta, dict):
        if delta.get("stop_reason") or obj.get("usage"):
            usage = obj.get("usage") if isinstance(obj.get("usage"), dict) else {}
            return join(f"stop_reason={delta.get('stop_reason')}",
                        f"out={usage['output_tokens']}" if "output_tokens" in usage else None)
        for key in ("text", "thinking", "partial_json"):
            if isinstance(delta.get(key), str):
                return join(where, delta.get("type"), short(delta[key]))
        if isinstance(delta.get("signature"), str):
            return join(where, delta.get("type"), f"<{len(delta['signature'])} chars>")
        return join(where, delta.get("type"))
    if isinstance(obj.get("error"), dict):
        return short(obj["error"].get("message") or obj["error"])
    return where or ""


VIEW = View(read_request=read_request, event_line=event_line, claims=claims)

"""How mitmweb shows a Bedrock Converse request and its event-stream frames (addon/views.py)."""

from __future__ import annotations

from typing import Any

from botocore.eventstream import EventStreamBuffer

from translators.dialect import RequestShape, View
from translators.wire.viewtext import as_list, base64_size, delta, file_label, join, role_blocks, short, text


def read_request(body: dict[str, Any]) -> RequestShape:
    system = as_list(body.get("system"))
    size = sum(len(text(x.get("text"))) for x in system if isinstance(x, dict))
    summary = f"system: {len(system)} block(s) ({size:,} chars)" if system else "none"
    items = [role_blocks(m, "content", None, _document) for m in as_list(body.get("messages"))]
    config = body.get("toolConfig") if isinstance(body.get("toolConfig"), dict) else {}
    tools = [str(tool["toolSpec"].get("name")) for tool in as_list(config.get("tools"))
             if isinstance(tool, dict) and isinstance(tool.get("toolSpec"), dict)]
    return RequestShape(summary, items, tools, frozenset({"messages", "system", "toolConfig", "modelId"}))


def _document(block: dict[str, Any]) -> str | None:
    """`document(report; pdf; 12.0 KiB)`: a document block by name, format and size, also inside a
    tool result (`toolResult+document(...)`)."""
    result = block.get("toolResult")
    if isinstance(result, dict):
        inner = [_document(b) for b in as_list(result.get("content")) if isinstance(b, dict)]
        shown = [label for label in inner if label is not None]
        return "+".join(["toolResult", *shown]) if shown else None
    document = block.get("document")
    if not isinstance(document, dict):
        return None
    source = document.get("source") if isinstance(document.get("source"), dict) else {}
    location = source.get("s3Location") if isinstance(source.get("s3Location"), dict) else {}
    return file_label("document", document.get("name"), document.get("format"),
                      base64_size(source.get("bytes")) or location.get("uri"))


def claims(obj: dict[str, Any]) -> bool:
    return True  # its events carry no type field: whatever no other dialect claims


def event_line(name: str, obj: dict[str, Any]) -> tuple[str, str]:
    return name, _line(obj)


def _line(obj: dict[str, Any]) -> str:
    where = f"#{obj['contentBlockIndex']}" if isinstance(obj.get("contentBlockIndex"), int) else None
    start = obj.get("start")
    if isinstance(start, dict):
        tool = start.get("toolUse") if isinstance(start.get("toolUse"), dict) else {}
        kind = "toolUse" if tool else next(iter(start), None)
        return join(where, kind, tool.get("name"), tool.get("toolUseId"))
    change = obj.get("delta")
    if isinstance(change, dict):
        if isinstance(change.get("text"), str):
            return join(where, "text", short(change["text"]))
        if isinstance(change.get("toolUse"), dict):
            return join(where, "toolUse", delta(change["toolUse"].get("input")))
        reasoning = change.get("reasoningContent")
        if isinstance(reasoning, dict):
            if isinstance(reasoning.get("text"), str):
                return join(where, "reasoning", short(reasoning["text"]))
            return join(where, "reasoning", *(f"{k} <{len(str(v))} chars>" for k, v in reasoning.items()))
        return join(where, *change)
    if obj.get("stopReason"):
        return f"stopReason={obj['stopReason']}"
    if isinstance(obj.get("usage"), dict):
        return f"in={obj['usage'].get('inputTokens')} out={obj['usage'].get('outputTokens')}"
    if isinstance(obj.get("message"), str):
        return short(obj["message"])
    if "role" in obj:
        return f"role={obj['role']}"
    return where or short({k: v for k, v in obj.items() if k != "p"})


def is_eventstream(data: bytes) -> bool:
    """An AWS event-stream starts with a big-endian frame length, never with text."""
    return len(data) >= 16 and data[:1] == b"\x00"


def frames(data: bytes) -> list[tuple[str, str]] | None:
    """(event type, JSON payload) per AWS event-stream frame (ConverseStream); None for a body
    that is not an event stream (an error answered as JSON)."""
    if not is_eventstream(data):
        return None
    buffer = EventStreamBuffer()
    buffer.add_data(data)
    events = []
    for message in buffer:
        headers = dict(message.headers)
        kind = headers.get(":event-type") or headers.get(":exception-type") or headers.get(":message-type")
        events.append((str(kind), text(message.payload)))
    return events


VIEW = View(read_request=read_request, event_line=event_line, claims=claims, frames=frames)

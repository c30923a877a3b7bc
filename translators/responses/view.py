"""How mitmweb shows a Responses request and its stream events (addon/views.py)."""

from __future__ import annotations

from typing import Any

from translators.dialect import RequestShape, View
from translators.features.naming import DEFAULT_NAMESPACE
from translators.wire.viewtext import (
    DATA_URL,
    as_list,
    base64_size,
    chars,
    delta,
    file_label,
    join,
    short,
    text,
)


def read_request(body: dict[str, Any]) -> RequestShape:
    """Instructions + developer/system messages in `input`."""
    parts = []
    items: list[str] = []
    tools: list[str] = []
    if isinstance(body.get("instructions"), str):
        parts.append(f"instructions ({chars(body['instructions'])})")
    given = body.get("input")
    if isinstance(given, str):
        items = ["text"]
    elif isinstance(given, list):
        system = [i for i in given if isinstance(i, dict) and i.get("role") in ("developer", "system")]
        if system:
            size = sum(len(text(c.get("text"))) for i in system for c in as_list(i.get("content"))
                       if isinstance(c, dict))
            parts.append(f"{len(system)} developer/system message(s) in input ({size:,} chars)")
        items = [_item(i) for i in given]
    tools = _tool_names(body.get("tools"))
    tools_from = []
    for i, item in enumerate(given if isinstance(given, list) else []):
        if isinstance(item, dict) and item.get("type") == "additional_tools":  # Responses Lite
            tools += _tool_names(item.get("tools"))
            tools_from.append(f"input[{i}] additional_tools")
    consumed = frozenset({"input", "instructions", "tools"})
    return RequestShape("; ".join(parts) or "none", items, tools, consumed, tuple(tools_from))


def _tool_names(declarations: Any) -> list[str]:
    """The names the IR gives them (translators/responses_client/tools.py): `namespace.name`, bare in
    Codex's default namespace."""
    names: list[str] = []
    for tool in as_list(declarations):
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "namespace":
            prefix = "" if tool.get("name") == DEFAULT_NAMESPACE else f"{tool.get('name')}."
            names += [f"{prefix}{t.get('name')}" for t in as_list(tool.get("tools")) if isinstance(t, dict)]
        else:
            names.append(str(tool.get("name") or tool.get("type")))
    return names


def _item(item: Any) -> str:
    if not isinstance(item, dict):
        return "?"
    kind = str(item.get("type") or "message")
    label = f"{kind}/{item['role']}" if kind == "message" and item.get("role") else kind
    content = item.get("output") if "output" in item else item.get("content")
    files = [_file(p) for p in as_list(content) if isinstance(p, dict) and p.get("type") == "input_file"]
    return "+".join([label, *files])


def _file(part: dict[str, Any]) -> str:
    """`input_file(report.pdf; application/pdf; 12.0 KiB)`: a file by name, type and size."""
    data = part.get("file_data")
    head = DATA_URL.match(data) if isinstance(data, str) else None
    media = head.group(1) if head else None
    amount = base64_size(data[head.end():] if head else data) if isinstance(data, str) else None
    return file_label("input_file", part.get("filename"), media, amount,
                      part.get("file_url"), part.get("file_id"))


def claims(obj: dict[str, Any]) -> bool:
    kind = obj.get("type")
    return (isinstance(kind, str) and kind.startswith(("response.", "error"))) or "sequence_number" in obj


def event_line(name: str, obj: dict[str, Any]) -> tuple[str, str]:
    kind = obj.get("type") if isinstance(obj.get("type"), str) else None
    return kind or name, _line(obj)


def _line(obj: dict[str, Any]) -> str:
    where = f"#{obj['output_index']}" if isinstance(obj.get("output_index"), int) else None
    item = obj.get("item")
    if isinstance(item, dict):
        if item.get("type") == "web_search_call":  # its id carries the vendor's search: too long to show
            action = item.get("action") if isinstance(item.get("action"), dict) else {}
            what = f"{str(item.get('id')).split('.')[0]} (web_search_call {short(action.get('query'))})"
            return join(where, what, item.get("status"))
        what = f"{item.get('id')} ({item.get('type')}{' ' + item['name'] if item.get('name') else ''})"
        return join(where, what, item.get("status"))
    response = obj.get("response")
    if isinstance(response, dict):
        usage = response.get("usage")
        tokens = (f"in={usage.get('input_tokens')} out={usage.get('output_tokens')}"
                  if isinstance(usage, dict) else None)
        error = response.get("error")
        return join(response.get("id"), response.get("status"), response.get("model"), tokens,
                    short(error) if error else None)
    item_id = obj.get("item_id")
    preview = delta(obj.get("delta")) or delta(obj.get("text")) or delta(obj.get("arguments"))
    if preview is None and isinstance(obj.get("part"), dict):
        preview = obj["part"].get("type")
    if obj.get("type") == "error" or ("message" in obj and "code" in obj):
        preview = short(obj.get("message") or obj)
    return join(where, item_id, preview)


VIEW = View(read_request=read_request, event_line=event_line, claims=claims)

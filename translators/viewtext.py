"""Text helpers for the dialects' mitmweb views (each `translators/<dialect>/view.py`, shown by
addon/views.py): one-line previews of values, event splitting for `text/event-stream`."""

from __future__ import annotations

import json
from typing import Any

PREVIEW = 60
"""Characters of a delta or value shown on one line."""


def text(value: bytes | str | None) -> str:
    if value is None:
        return ""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def short(value: Any, limit: int = PREVIEW) -> str:
    """One line, at most `limit` characters: strings JSON-quoted (newlines show as \\n)."""
    out = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return out if len(out) <= limit else out[: limit - 1] + "…"


def chars(value: str) -> str:
    return f"{len(value):,} chars"


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def join(*parts: str | None) -> str:
    return "  ".join(p for p in parts if p)


def delta(value: Any) -> str | None:
    return short(value) if isinstance(value, str) else None


_NOT_KINDS = ("cache_control", "cachePoint", "thoughtSignature")


def role_blocks(message: Any, key: str, type_key: str | None) -> str:
    """`user[text,tool_result]`: a message's role and the kinds of its blocks."""
    if not isinstance(message, dict):
        return "?"
    blocks = message.get(key)
    if isinstance(blocks, str):
        kinds = ["text"]
    else:
        kinds = []
        for block in as_list(blocks):
            if not isinstance(block, dict):
                continue
            if type_key and type_key in block:
                kinds.append(str(block[type_key]))
            else:
                kinds.append(next((k for k in block if k not in _NOT_KINDS), "?"))
    return f"{message.get('role', '?')}[{','.join(kinds)}]"


def sse_events(data: bytes) -> list[tuple[str, str]]:
    """(event name, data) per server-sent event."""
    events: list[tuple[str, str]] = []
    name, lines = "", []
    for line in [*text(data).replace("\r\n", "\n").replace("\r", "\n").split("\n"), ""]:
        if not line:
            if lines:
                events.append((name or "message", "\n".join(lines)))
            name, lines = "", []
        elif line.startswith(":"):
            continue
        else:
            name_or_field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name_or_field == "data":
                lines.append(value)
            elif name_or_field == "event":
                name = value
    return events

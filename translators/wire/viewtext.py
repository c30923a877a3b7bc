"""Text helpers for the dialects' mitmweb views (each `translators/<dialect>/view.py`, shown by
addon/views.py): one-line previews of values, event splitting for `text/event-stream`."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
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


def role_blocks(message: Any, key: str, type_key: str | None,
                describe: Callable[[dict[str, Any]], str | None] | None = None) -> str:
    """`user[text,tool_result]`: a message's role and the kinds of its blocks; `describe` names a
    block more closely where it can (a file: `document(report.pdf; pdf; 12.0 KiB)`)."""
    if not isinstance(message, dict):
        return "?"
    blocks = message.get(key)
    if isinstance(blocks, str):
        kinds = ["text"]
    else:
        kinds = []
        for block in as_list(blocks):
            if not isinstance(block, dict) or (block and all(k in _NOT_KINDS for k in block)):
                continue  # a Converse `cachePoint` marks where a cache ends; it holds nothing
            label = describe(block) if describe is not None else None
            if label is not None:
                kinds.append(label)
            elif type_key and type_key in block:
                kinds.append(str(block[type_key]))
            else:
                kinds.append(next((k for k in block if k not in _NOT_KINDS), "?"))
    return f"{message.get('role', '?')}[{','.join(kinds)}]"


# -- files: shown by name, type and size, never by their bytes ------------------------------------
BRIEF = 160
"""A base64 payload longer than this is shown by its size (`brief_data`)."""
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")
DATA_URL = re.compile(r"data:([\w.+/-]*)((?:;[^,;]*)*);base64,")
_BYTE_KEYS = frozenset({"data", "bytes", "file_data"})
"""Keys whose value is a file's base64 in some dialect (Anthropic and Gemini `data`, Bedrock
`bytes`, Responses and Chat `file_data`)."""


def size(count: int) -> str:
    if count < 1024:
        return f"{count} B"
    if count < 1024 * 1024:
        return f"{count / 1024:.1f} KiB"
    return f"{count / (1024 * 1024):.1f} MiB"


def base64_size(data: Any) -> str | None:
    """The size of the bytes a base64 text decodes to, or None for no text."""
    if not isinstance(data, str):
        return None
    return size(len(data) * 3 // 4 - (len(data) - len(data.rstrip("="))))


def file_label(kind: str, *details: Any) -> str:
    """`kind(detail; detail)`, the details that are strings, each cut short."""
    shown = [d if len(d) <= PREVIEW else d[: PREVIEW - 1] + "…" for d in details if isinstance(d, str) and d]
    return f"{kind}({'; '.join(shown)})"


def brief_data(value: Any, key: str = "") -> Any:
    """A JSON value with every long base64 payload (a data URL's, or the value of a file's bytes
    key) replaced by its size and first characters, for showing a request (docs/responses.md "Files")."""
    if isinstance(value, dict):
        return {k: brief_data(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [brief_data(v, key) for v in value]
    if not isinstance(value, str) or len(value) <= BRIEF:
        return value
    head = DATA_URL.match(value)
    if head is not None:
        payload = value[head.end():]
        return f"{value[: head.end()]}<{base64_size(payload)} of base64: {payload[:24]}…>"
    if key in _BYTE_KEYS and _BASE64.fullmatch(value):
        return f"<{base64_size(value)} of base64: {value[:24]}…>"
    return value


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

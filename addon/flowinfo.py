"""What a user sees of a translation in mitmproxy: `flow.metadata["gateway"]` (saved with the
flow), a one-line comment and a mark (both shown in mitmweb, docs/mitmproxy.md "Where flows show
information")."""

from __future__ import annotations

import re
from typing import Any

from translators import wirejson

KEY = "gateway"
MARK = ":warning:"


def summary(info: dict[str, Any]) -> str:
    """`-> anthropic claude-sonnet-4-6 | dropped: input[3].phase, text.verbosity`; a compaction
    request reads `-> anthropic claude-sonnet-4-6 compaction | ...`."""
    head = f"-> {info.get('upstream')} {info.get('model')}"
    if info.get("kind") == "compaction":
        head += " compaction"
    parts = [head]
    if info.get("refused"):
        parts.append(f"refused: {info['refused']}")
    if info.get("error"):
        parts.append(f"error: {info['error']}")
    if info.get("dropped"):
        parts.append("dropped: " + ", ".join(collapse(info["dropped"])))
    if info.get("searches"):
        parts.append(f"searches: {info['searches']}")
    if info.get("notes"):
        parts.append(f"notes: {len(info['notes'])}")
    return " | ".join(parts)


_INDEX = re.compile(r"\[\d+\]")


def collapse(paths: list[str]) -> list[str]:
    """One line for a long history: `input[3].phase, input[9].phase` reads `input[*].phase x2`.
    The metadata keeps every exact path; only the comment is shortened."""
    groups: dict[str, list[str]] = {}
    for path in paths:
        groups.setdefault(_INDEX.sub("[*]", path), []).append(path)
    return [same[0] if len(same) == 1 else f"{key} x{len(same)}" for key, same in groups.items()]


def lost_something(info: dict[str, Any]) -> bool:
    return bool(info.get("dropped") or info.get("refused") or info.get("error"))


def describe(flow: Any) -> None:
    """Comment and mark of a gateway flow from its `flow.metadata["gateway"]`."""
    info = flow.metadata[KEY]
    flow.comment = summary(info)
    if lost_something(info):
        flow.marked = MARK


def merge(info: dict[str, Any], dropped: list[str], notes: list[str]) -> None:
    info["dropped"] = list(dict.fromkeys([*info.get("dropped", []), *dropped]))
    info["notes"] = list(dict.fromkeys([*info.get("notes", []), *notes]))


_TERMINAL = (b"event: response.completed\n", b"event: response.incomplete\n", b"event: response.failed\n")


def usage_of(body: bytes) -> dict[str, Any] | None:
    """Token usage of what the client got: a Responses object, or a stream's terminal event."""
    response = _final_response(body)
    usage = response.get("usage") if response is not None else None
    return usage if isinstance(usage, dict) else None


def searches_of(body: bytes) -> int:
    """How many web searches the upstream ran: the `web_search_call` items the client got."""
    response = _final_response(body)
    output = response.get("output") if response is not None else None
    if not isinstance(output, list):
        return 0
    return sum(1 for item in output if isinstance(item, dict) and item.get("type") == "web_search_call")


def _final_response(body: bytes) -> dict[str, Any] | None:
    """The Responses object the client got: the whole body, or a stream's terminal event's."""
    try:
        if body.lstrip().startswith(b"{"):
            response = wirejson.loads(body)
            return response if isinstance(response, dict) else None
        # the last terminal event (an event line never occurs inside JSON data, whose newlines
        # are escaped); found from the end rather than by splitting a stream of megabytes
        start = max(body.rfind(marker) for marker in _TERMINAL)
        if start < 0 or (start and body[start - 1] != 0x0A):
            return None
        block = body[start:].split(b"\n\n", 1)[0]
        data = b"".join(line[5:] for line in block.split(b"\n") if line.startswith(b"data:"))
        response = wirejson.loads(data).get("response")
        return response if isinstance(response, dict) else None
    except (ValueError, AttributeError):
        pass
    return None

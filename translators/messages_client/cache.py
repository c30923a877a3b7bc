"""A Messages client's prompt-cache breakpoints (`cache_control`), read into the IR with their TTL
(docs/claude-code.md "Prompt caching"): the upstreams with breakpoints keep them, the others report
them dropped (translators/features/caching.py).

What Anthropic refuses is refused here too, with its 400 (docs/anthropic.md "Prompt caching"): a
`cache_control` that is not `{"type": "ephemeral", "ttl"?: "5m" | "1h"}` (anthropic SDK
`CacheControlEphemeralParam`), more than four breakpoints in a request (the top-level one
counts), and a `1h` breakpoint after a `5m` one in the prompt's order (tools, system, messages).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from translators.core.errors import MalformedRequest
from translators.core.report import Report
from translators.features.caching import LIMIT
from translators.ir.request import CacheMark

_KEYS = frozenset({"type", "ttl"})


def read(block: dict[str, Any], path: str, report: Report) -> CacheMark | None:
    """The breakpoint on `block` (at `path`), or None; a malformed one is refused. Keys of later
    betas beside `type` and `ttl` (Claude Code 2.1.328 may send `scope: "global"` on its system
    prompt, and `evict_on_complete` on the top-level one) are Anthropic's own cache bookkeeping:
    reported, cosmetic."""
    value = block.get("cache_control")
    if value is None:
        return None
    where = f"{path}.cache_control" if path else "cache_control"
    if not isinstance(value, dict) or value.get("type") != "ephemeral":
        raise MalformedRequest(f'{where} must be {{"type": "ephemeral", "ttl"?: "5m" | "1h"}}', param=where)
    ttl = value.get("ttl", "5m")
    if ttl not in ("5m", "1h"):
        raise MalformedRequest(f"{where}.ttl must be 5m or 1h", param=f"{where}.ttl")
    for key in value:
        if key not in _KEYS:
            report.drop(f"{where}.{key}", kind="cosmetic")
    return CacheMark(ttl=ttl, origin=where)


def check(body: dict[str, Any]) -> bool:
    """Refuses what Anthropic refuses of the request's breakpoints taken together; True when the
    request has any."""
    ttls = list(_in_order(body))
    if len(ttls) > LIMIT:
        raise MalformedRequest(f"A maximum of {LIMIT} blocks with cache_control may be provided. "
                               f"Found {len(ttls)}.", param="cache_control")
    short = None
    for path, ttl in ttls:
        if ttl == "1h" and short is not None:
            raise MalformedRequest(f"{path}: a cache_control with ttl 1h may not follow one with ttl 5m "
                                   f"({short}); longer TTLs come first", param=path)
        if ttl == "5m" and short is None:
            short = path
    return bool(ttls)


def _in_order(body: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(path, ttl) of every breakpoint in cache order: tools, system, messages (blocks inside a
    tool result included), then the top-level one, which lands on the last block."""
    def ttl_of(block: Any) -> str | None:
        value = block.get("cache_control") if isinstance(block, dict) else None
        return value.get("ttl", "5m") if isinstance(value, dict) else None

    for i, tool in enumerate(_list(body.get("tools"))):
        if (ttl := ttl_of(tool)) is not None:
            yield f"tools[{i}].cache_control", ttl
    for i, block in enumerate(_list(body.get("system"))):
        if (ttl := ttl_of(block)) is not None:
            yield f"system[{i}].cache_control", ttl
    for i, message in enumerate(_list(body.get("messages"))):
        content = message.get("content") if isinstance(message, dict) else None
        for j, block in enumerate(_list(content)):
            path = f"messages[{i}].content[{j}]"
            if (ttl := ttl_of(block)) is not None:
                yield f"{path}.cache_control", ttl
            result = isinstance(block, dict) and block.get("type") == "tool_result"
            for k, nested in enumerate(_list(block.get("content") if result else None)):
                if (ttl := ttl_of(nested)) is not None:
                    yield f"{path}.content[{k}].cache_control", ttl
    if (ttl := ttl_of(body)) is not None:
        yield "cache_control", ttl


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []

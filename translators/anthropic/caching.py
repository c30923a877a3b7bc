"""Anthropic's prompt-cache breakpoints: `cache_control` on blocks (docs/anthropic.md "Prompt
caching"). The block writers put the client's own marks on the blocks they came with (`control`);
`place` then adds the gateway's (translators/features/caching.py) on the finished body."""

from __future__ import annotations

from typing import Any

from translators.features import caching
from translators.ir.request import CacheMark

UNCACHEABLE = frozenset({"thinking", "redacted_thinking"})
"""Blocks that take no `cache_control` (the SDK's thinking params have no such field)."""


def control(ttl: str) -> dict[str, str]:
    """`cache_control` for a TTL; `5m`, the default, is left unsaid (anthropic SDK
    `CacheControlEphemeralParam`)."""
    return {"type": "ephemeral"} if ttl == "5m" else {"type": "ephemeral", "ttl": ttl}


def mark(block: dict[str, Any], cache: CacheMark | None) -> dict[str, Any]:
    """`block` with the client's breakpoint, if it had one."""
    if cache is not None and block.get("type") not in UNCACHEABLE:
        block["cache_control"] = control(cache.ttl)
    return block


def place(body: dict[str, Any], auto: CacheMark | None = None) -> None:
    """Adds the gateway's breakpoints to a finished Messages body, after the client's; `auto`:
    the client's top-level `cache_control`, a breakpoint on the last cacheable block."""
    blocks: list[dict[str, Any]] = [*body.get("tools", ()), *body.get("system", ())]
    stable = len(blocks) - 1 if blocks else None
    slots = [_slot(block) for block in blocks]
    messages = body["messages"]
    for m, message in enumerate(messages):
        answered = (message["role"] == "user" and m + 1 < len(messages)
                    and messages[m + 1]["role"] == "assistant")
        content = message["content"]
        for block in content:
            blocks.append(block)
            slots.append(_slot(block))
        if answered and content:
            # the turn's last block that can carry a breakpoint ends it
            for k in range(len(slots) - 1, len(slots) - 1 - len(content), -1):
                if slots[k].cacheable:
                    slots[k].turn_end = True
                    break
    if auto is not None:
        last = next((i for i in range(len(slots) - 1, -1, -1) if slots[i].cacheable), None)
        if last is not None and slots[last].ttl is None:
            blocks[last]["cache_control"] = control(auto.ttl)
            slots[last].ttl = auto.ttl
    for source, target in caching.relocate(slots):
        blocks[target]["cache_control"] = blocks[source].pop("cache_control")
    for i, ttl in caching.place(slots, stable).items():
        blocks[i]["cache_control"] = control(ttl)


def _slot(block: dict[str, Any]) -> caching.Slot:
    kind = block.get("type")
    cacheable = kind not in UNCACHEABLE and not (kind == "text" and not block.get("text"))
    given = block.get("cache_control")
    return caching.Slot(cacheable=cacheable, ttl=given.get("ttl", "5m") if isinstance(given, dict) else None)

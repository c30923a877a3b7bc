"""Anthropic's prompt-cache breakpoints: `cache_control` on blocks (docs/anthropic.md "Prompt
caching"). The block writers put the client's own marks on the blocks they came with (`control`);
`place` then adds the gateway's (translators/features/caching.py) on the finished body."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
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


def place(body: dict[str, Any], auto: CacheMark | None = None, *, marked: bool = True) -> None:
    """Adds the gateway's breakpoints to a finished Messages body, after the client's; `auto`:
    the client's top-level `cache_control`, a breakpoint on the last cacheable block. `marked`
    False: the client sent no breakpoint at all (`CacheHints.present`), so no block carries one."""
    if not marked and auto is None:
        _place_unmarked(body)
        return
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


def _place_unmarked(body: dict[str, Any]) -> None:
    """`place` for a body no block of which carries a breakpoint (every Responses client's: Codex
    sends none), read from its end: the same blocks marked, without a slot per block of the
    history. With no client mark there is nothing to relocate and no hour to follow, so the
    marks are the first `LIMIT` distinct cacheable ones of: the newest block, the previous
    request's end, the end of the tools and system, the earlier requests' ends, newest first
    (translators/features/caching.py `place`). A long conversation is encoded every turn, and the
    walk over every block was a seventh of a turn that adds two items (docs/benchmarks.md
    "Request translation over a session")."""
    prefix: list[dict[str, Any]] = [*body.get("tools", ()), *body.get("system", ())]
    messages = body["messages"]
    ends = _turn_ends(messages)
    wanted = [_newest(messages, prefix), next(ends, None),
              (None, len(prefix) - 1) if prefix and _cacheable(prefix[-1]) else None]
    chosen: list[tuple[int | None, int]] = []
    for at in itertools.chain(wanted, ends):
        if len(chosen) == caching.LIMIT:
            break
        if at is not None and at not in chosen:
            chosen.append(at)
    for m, b in chosen:
        block = prefix[b] if m is None else messages[m]["content"][b]
        block["cache_control"] = control("5m")


def _newest(messages: list[dict[str, Any]], prefix: list[dict[str, Any]]) -> tuple[int | None, int] | None:
    """Where the last cacheable block is: (message, block), (None, prefix index), or None."""
    for m in range(len(messages) - 1, -1, -1):
        if (b := _last_cacheable(messages[m]["content"])) is not None:
            return m, b
    b = _last_cacheable(prefix)
    return (None, b) if b is not None else None


def _turn_ends(messages: list[dict[str, Any]]) -> Iterator[tuple[int, int]]:
    """Newest first, the last cacheable block of each user turn an assistant turn answers."""
    for m in range(len(messages) - 2, -1, -1):
        if messages[m]["role"] == "user" and messages[m + 1]["role"] == "assistant":
            b = _last_cacheable(messages[m]["content"])
            if b is not None:
                yield m, b


def _last_cacheable(blocks: list[dict[str, Any]]) -> int | None:
    for b in range(len(blocks) - 1, -1, -1):
        if _cacheable(blocks[b]):
            return b
    return None


def _cacheable(block: dict[str, Any]) -> bool:
    kind = block.get("type")
    return kind not in UNCACHEABLE and not (kind == "text" and not block.get("text"))


def _slot(block: dict[str, Any]) -> caching.Slot:
    given = block.get("cache_control")
    return caching.Slot(cacheable=_cacheable(block),
                        ttl=given.get("ttl", "5m") if isinstance(given, dict) else None)

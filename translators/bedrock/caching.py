"""Bedrock's prompt-cache breakpoints: `cachePoint` blocks after the block they close, in
`toolConfig.tools` (Claude), `system` and message content (botocore bedrock-runtime
`CachePointBlock`: `type: default`, `ttl`? `5m` | `1h`; docs/bedrock.md "Prompt caching").

The block writers tag the block a client's breakpoint came with (`MARK`, never sent); `place`
turns the tags into points and adds the gateway's (translators/features/caching.py), for a model
that takes them (`models.cache_points`); for another it only takes the tags away, and the
client's breakpoints are reported dropped.
"""

from __future__ import annotations

from typing import Any

from translators.bedrock.models import CachePoints
from translators.core.report import Report
from translators.features import caching
from translators.ir.request import CacheMark

MARK = "\x00cache"
"""A block's tag for the client's breakpoint on it: its `CacheMark`, taken off before sending."""


def mark(block: dict[str, Any], cache: CacheMark | None) -> dict[str, Any]:
    if cache is not None:
        block[MARK] = cache
    return block


def point(ttl: str, policy: CachePoints) -> dict[str, Any]:
    """A `cachePoint`; the default TTL (5 minutes) is left unsaid."""
    inner = {"type": "default", "ttl": ttl} if ttl == "1h" and policy.ttl else {"type": "default"}
    return {"cachePoint": inner}


def place(body: dict[str, Any], policy: CachePoints | None, auto: CacheMark | None, report: Report) -> None:
    """Turns the tags into points and adds the gateway's, after the client's (`auto`: the
    client's top-level `cache_control`, on the last block that takes a point); without a
    `policy` only takes the tags away."""
    tools = (body.get("toolConfig") or {}).get("tools") or []
    lists = [(tools, policy is not None and policy.tools), (body.get("system") or [], True)]
    stable_lists = len(lists)
    messages = body["messages"]
    lists += [(message["content"], True) for message in messages]
    if policy is None:
        for blocks, _ in lists:
            for block in blocks:
                block.pop(MARK, None)
        return
    refs: list[tuple[list[dict[str, Any]], dict[str, Any]]] = []
    slots: list[caching.Slot] = []
    stable: int | None = None
    for n, (blocks, takes) in enumerate(lists):
        for block in blocks:
            given: CacheMark | None = block.pop(MARK, None)
            if given is not None and not takes:
                report.drop(given.origin, kind="cosmetic")  # Nova takes no point among the tools
                given = None
            if not takes:
                continue
            if given is not None and given.ttl == "1h" and not policy.ttl:
                report.note(f"{given.origin}: sent as the model's default cache TTL (5 minutes); it "
                            "takes no 1h cache point")
            refs.append((blocks, block))
            slots.append(caching.Slot(cacheable="reasoningContent" not in block and "cachePoint" not in block,
                                      ttl=(given.ttl if policy.ttl else "5m") if given is not None else None))
        if n == stable_lists - 1 and slots:
            stable = len(slots) - 1
        if n >= stable_lists:
            m = n - stable_lists
            answered = (messages[m]["role"] == "user" and m + 1 < len(messages)
                        and messages[m + 1]["role"] == "assistant")
            if answered and blocks:
                for k in range(len(slots) - 1, len(slots) - 1 - len(blocks), -1):
                    if slots[k].cacheable:
                        slots[k].turn_end = True
                        break
    if not slots:
        return
    if auto is not None:
        last = next((i for i in range(len(slots) - 1, -1, -1) if slots[i].cacheable), None)
        if last is not None and slots[last].ttl is None:
            slots[last].ttl = auto.ttl if policy.ttl else "5m"
    caching.relocate(slots)  # the points are written from the slots below
    added = caching.place(slots, stable)
    wanted = {id(refs[i][1]): ttl for i, ttl in added.items()}
    wanted.update({id(refs[i][1]): slot.ttl for i, slot in enumerate(slots) if slot.ttl is not None})
    for blocks, _ in lists:
        if not any(id(b) in wanted for b in blocks):
            continue
        out: list[dict[str, Any]] = []
        for block in blocks:
            out.append(block)
            if (ttl := wanted.get(id(block))) is not None:
                out.append(point(ttl, policy))
        blocks[:] = out

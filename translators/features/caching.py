"""Prompt-cache breakpoints: the client's own, kept with their TTL, and the ones the gateway adds
so that a long, growing session keeps reading its prompt from the cache (docs/anthropic.md
"Prompt caching"; docs/bedrock.md "Prompt caching"; docs/chat.md "Prompt caching").

The vendor's rules the placement rests on (Anthropic's, which Claude on Bedrock shares):

- the prompt is one sequence of blocks, tools, then system, then messages; a breakpoint caches
  the prefix through its block, and only a breakpoint writes;
- at most `LIMIT` breakpoints a request;
- a breakpoint finds an earlier entry only at its own block or within the blocks just before it
  (`LOOKBACK` in all), so a turn that adds more blocks than that misses the previous turn's entry
  unless a breakpoint sits exactly where the previous request ended;
- a `1h` breakpoint may not follow a `5m` one.

So, after the client's marks, in this order while breakpoints remain: the newest block (next
turn's read), the end of the previous request (the last block of the user turn the newest
assistant turn answered: read exactly there, however many blocks the turn added), the end of the
stable prefix (tools and system: still read when the history changes), then the ends of earlier
requests. A mark the gateway adds before a client's `1h` mark is `1h` too; any other is `5m`.
When the client's marks take every breakpoint, one of them that can read nothing (inside the
newest turn, out of reach of the previous request's end) moves there (`relocate`).
Nothing here depends on time or on an earlier request: the same conversation gives the same marks.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from translators.core.report import Report
from translators.ir.request import CacheMark, Request

LIMIT = 4
"""Breakpoints a request may carry: Anthropic answers 400 to a fifth, Bedrock takes four."""
LOOKBACK = 20
"""Blocks a breakpoint searches for an earlier entry, its own included (docs/anthropic.md)."""


@dataclass(slots=True)
class Slot:
    """One block of the prompt, in cache order, as the placement sees it."""

    cacheable: bool = True
    """The block may carry a breakpoint (not a thinking block, not an empty text)."""
    ttl: str | None = None
    """The client's breakpoint on this block, and its TTL."""
    turn_end: bool = False
    """The last block of a user turn an assistant turn answers: where an earlier request ended."""


def place(slots: Sequence[Slot], stable: int | None, limit: int = LIMIT) -> dict[int, str]:
    """The breakpoints to add, by slot index, with their TTL. `stable`: the last slot of the
    tools and system (None: there is none)."""
    taken = {i: s.ttl for i, s in enumerate(slots) if s.ttl is not None}
    free = limit - len(taken)
    if free <= 0:
        return {}
    last = _cacheable_at_or_before(slots, len(slots) - 1)
    ends = [i for i in range(len(slots) - 1, -1, -1) if slots[i].turn_end and slots[i].cacheable]
    wanted = [last, *ends[:1], stable, *ends[1:]]
    chosen: list[int] = []
    for i in wanted:
        if free == 0:
            break
        if i is None or i in taken or i in chosen or not slots[i].cacheable:
            continue
        chosen.append(i)
        free -= 1
    hours = [i for i, ttl in taken.items() if ttl == "1h"]
    return {i: "1h" if any(h > i for h in hours) else "5m" for i in sorted(chosen)}


def relocate(slots: list[Slot], limit: int = LIMIT) -> list[tuple[int, int]]:
    """Moves the client's breakpoints that the translation displaced or that can read nothing;
    -> the moves, (from, to), in the order made.

    - The newest block unmarked but a client mark inside the newest turn: the client marked its
      newest block, and the translation moved it (results put back in call order: Claude Code
      lists parallel results as they finish): the last such mark goes back to the newest block.
    - Every breakpoint taken by the client, and one inside the newest turn too far from where the
      previous request ended for its lookback to find that request's entry: it reads nothing,
      and writes nothing the newest block's does not; it moves to that end, with its TTL.
    """
    moves: list[tuple[int, int]] = []
    last = _cacheable_at_or_before(slots, len(slots) - 1)
    if last is None:
        return moves
    end = next((i for i in range(len(slots) - 1, -1, -1) if slots[i].turn_end and slots[i].cacheable), None)
    floor = end if end is not None else -1
    inside = [i for i, s in enumerate(slots) if s.ttl is not None and floor < i < last]
    if slots[last].ttl is None and inside:
        moves.append(_move(slots, inside.pop(), last))
    taken = sum(1 for s in slots if s.ttl is not None)
    if (taken >= limit and end is not None and slots[end].ttl is None and inside
            and inside[0] - end >= LOOKBACK):
        moves.append(_move(slots, inside[0], end))
    return moves


def _move(slots: list[Slot], source: int, target: int) -> tuple[int, int]:
    slots[target].ttl, slots[source].ttl = slots[source].ttl, None
    return source, target


def _cacheable_at_or_before(slots: Sequence[Slot], index: int) -> int | None:
    for i in range(index, -1, -1):
        if slots[i].cacheable:
            return i
    return None


def marks(request: Request) -> Iterator[CacheMark]:
    """Every breakpoint the client sent, in no particular order."""
    if not request.cache.present:
        return
    yield from request.cache.system.values()
    if request.cache.auto is not None:
        yield request.cache.auto
    for tool in request.tools:
        mark = getattr(tool, "cache", None)
        if mark is not None:
            yield mark
    for item in request.items:
        if item.type in ("tool_call", "tool_result") and item.cache is not None:
            yield item.cache
        if item.type in ("message", "tool_result"):
            for part in item.parts:
                if part.cache is not None:
                    yield part.cache


def report_marks(request: Request, report: Report) -> None:
    """An upstream without breakpoints: each of the client's is dropped, cosmetic (where a
    vendor caches is no part of what the model reads)."""
    for mark in marks(request):
        report.drop(mark.origin, kind="cosmetic")


def system_marks(request: Request) -> list[CacheMark | None]:
    """The client's mark on each of `toolset.system_texts(request, ...)`: the system entries that
    are not blank, in order, then the namespace preamble (never marked)."""
    kept = [request.cache.system.get(i) for i, text in enumerate(request.system) if text.strip()]
    return [*kept, None]


def ttl_of(mark: CacheMark | None) -> str | None:
    return mark.ttl if mark is not None else None

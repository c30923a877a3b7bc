"""A fake of Anthropic's prompt cache: what a Messages (or Bedrock Converse) request reads from
the cache, writes to it and pays in full, under the vendor's rules (docs/anthropic.md "Prompt
caching", docs/bedrock.md "Prompt caching"):

- the prompt is one sequence of blocks, tools, then system, then messages; a cache entry is the
  prefix up to a block, keyed by a hash of every block before it and of the model;
- entries are written only at a breakpoint (`cache_control` on a block, the top-level
  `cache_control` on the last cacheable block, a Converse `cachePoint` after a block), and only
  when the prefix holds at least the model's minimum of tokens;
- each breakpoint looks for the nearest entry at its own position and the blocks before it, up to
  `LOOKBACK` blocks in all (an entry further back is not found), and refreshes what it finds; the
  request reads the longest prefix found;
- at most `LIMIT` breakpoints; a TTL of `1h` may not come after one of `5m`; an entry lives its
  TTL from its last read or write (the clock is injected);
- `cache_control` itself is no part of what is hashed (moving a breakpoint keeps the prefix).

Tokens are estimated at four characters of each block's canonical JSON a token: the figures are
the fake's own, consistent from one request to the next, which is what a cache-hit ratio needs.
The fake does not model the other invalidations Anthropic documents (a change of `tool_choice`,
of thinking settings, or images) nor the dropping of earlier thinking blocks.

`PromptCache.messages(body)` / `PromptCache.converse(body, model)` return a `CacheUsage`, whose
`messages_usage()` / `converse_usage()` are the usage objects those APIs answer with; a request
the real API refuses raises `CacheRefused` (a 400 `invalid_request_error` / `ValidationException`).
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

LIMIT = 4
"""Breakpoints per request: "A maximum of 4 blocks with cache_control may be provided" (a 400)."""
LOOKBACK = 20
"""Blocks a breakpoint looks at for an earlier entry, its own included."""
TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}
"""anthropic SDK `CacheControlEphemeralParam.ttl` (`5m` | `1h`, default `5m`); Converse `CacheTTL`."""
CHARS_PER_TOKEN = 4
UNCACHEABLE = frozenset({"thinking", "redacted_thinking"})
_POINT_KEYS = frozenset({"type", "ttl"})
"""Blocks that cannot carry `cache_control` (the SDK's thinking params have no such field)."""

_MINIMUM = (
    # documented minimum cacheable prompt lengths (Anthropic's prompt-caching page, quoted in
    # anthropics/anthropic-sdk-python#1194); the longest matching prefix wins
    ("claude-opus-4-6", 4096), ("claude-opus-4-5", 4096), ("claude-haiku-4-5", 4096),
    ("claude-3-5-haiku", 2048), ("claude-3-haiku", 2048),
    ("claude-opus-4-1", 1024), ("claude-opus-4", 1024), ("claude-sonnet-4", 1024),
    ("claude-3-7-sonnet", 1024),
    ("amazon.nova", 1000),  # Bedrock's prompt-caching guide: 1K tokens a checkpoint for Nova
)
DEFAULT_MINIMUM = 1024


def minimum_tokens(model: str) -> int:
    """The fewest tokens a cached prefix may hold for `model` (a Bedrock id reads as its Claude id)."""
    name = model.split("anthropic.", 1)[-1]
    best = max((entry for entry in _MINIMUM if entry[0] in name), key=lambda e: len(e[0]), default=None)
    return best[1] if best else DEFAULT_MINIMUM


class CacheRefused(ValueError):
    """A request the real API answers 400 for its cache markers."""


@dataclass(frozen=True, slots=True)
class CacheUsage:
    """One request's input tokens, split as the vendor bills them."""

    read: int
    write_5m: int
    write_1h: int
    uncached: int

    @property
    def written(self) -> int:
        return self.write_5m + self.write_1h

    @property
    def total(self) -> int:
        return self.read + self.written + self.uncached

    def messages_usage(self, output_tokens: int = 0) -> dict[str, Any]:
        """Anthropic's `usage` (anthropic SDK `types/usage.py`, `cache_creation.py`)."""
        return {"input_tokens": self.uncached, "cache_creation_input_tokens": self.written,
                "cache_read_input_tokens": self.read, "output_tokens": output_tokens,
                "cache_creation": {"ephemeral_5m_input_tokens": self.write_5m,
                                   "ephemeral_1h_input_tokens": self.write_1h}}

    def converse_usage(self, output_tokens: int = 0) -> dict[str, Any]:
        """Bedrock's `TokenUsage`: `inputTokens` leaves cache reads and writes out; `cacheDetails`
        lists writes by TTL, 1h before 5m (botocore bedrock-runtime `TokenUsage`, `CacheDetail`)."""
        out: dict[str, Any] = {"inputTokens": self.uncached, "outputTokens": output_tokens,
                               "totalTokens": self.total + output_tokens,
                               "cacheReadInputTokens": self.read, "cacheWriteInputTokens": self.written}
        written = (("1h", self.write_1h), ("5m", self.write_5m))
        details = [{"ttl": ttl, "inputTokens": n} for ttl, n in written if n]
        if details:
            out["cacheDetails"] = details
        return out


@dataclass(slots=True)
class _Block:
    key: str
    """The block as hashed: its place (tool, system, a role) and its JSON without cache markers."""
    tokens: int
    cacheable: bool
    ttl: str | None = None
    """A breakpoint on this block, and its TTL."""


@dataclass(slots=True)
class _Entry:
    expires: float
    ttl: str


@dataclass
class PromptCache:
    """One organisation's cache (one per fake server). `clock` returns seconds."""

    clock: Callable[[], float] = time.monotonic
    tokens: Callable[[str], int] = field(default=lambda text: math.ceil(len(text) / CHARS_PER_TOKEN))
    lookback: int = LOOKBACK
    limit: int = LIMIT
    entries: dict[str, _Entry] = field(default_factory=dict)

    # -- the two wires ------------------------------------------------------------------------
    def messages(self, body: dict[str, Any]) -> CacheUsage:
        """A Messages request body (POST /v1/messages)."""
        blocks = list(_messages_blocks(body, self.tokens))
        auto = body.get("cache_control")
        if auto is not None:
            ttl = _ttl(auto, "cache_control")
            last = next((b for b in reversed(blocks) if b.cacheable), None)
            if last is not None and last.ttl is None:
                last.ttl = ttl
        return self._run(str(body.get("model")), blocks)

    def converse(self, body: dict[str, Any], model: str, *, lookback: int | None = None) -> CacheUsage:
        """A Converse request body and the model id of its path. Claude looks back like on
        Anthropic's API; pass `lookback=1` for a model that reads only at its checkpoints (Nova)."""
        blocks = list(_converse_blocks(body, self.tokens))
        if lookback is None:
            return self._run(model, blocks)
        saved, self.lookback = self.lookback, lookback
        try:
            return self._run(model, blocks)
        finally:
            self.lookback = saved

    # -- the rules ----------------------------------------------------------------------------
    def _run(self, model: str, blocks: list[_Block]) -> CacheUsage:
        points = [i for i, b in enumerate(blocks) if b.ttl is not None]
        if len(points) > self.limit:
            raise CacheRefused(f"A maximum of {self.limit} blocks with cache_control may be provided. "
                               f"Found {len(points)}.")
        ttls = [blocks[i].ttl for i in points]
        if "5m" in ttls and "1h" in ttls[ttls.index("5m"):]:
            raise CacheRefused("a cache breakpoint with ttl 1h may not follow one with ttl 5m: longer "
                               "TTLs must come first (tools, then system, then messages)")
        now = self.clock()
        hashes, prefix = _chain(model, blocks)
        live = {h for h, entry in self.entries.items() if entry.expires > now}
        hit = -1
        for point in points:  # each breakpoint looks for its own entry; what it finds is refreshed
            for i in range(point, max(point - self.lookback, -1), -1):
                if hashes[i] in live:
                    hit = max(hit, i)
                    entry = self.entries[hashes[i]]
                    entry.expires = now + TTL_SECONDS[entry.ttl]
                    break
        covered = prefix[hit] if hit >= 0 else 0
        written = {"5m": 0, "1h": 0}
        floor = minimum_tokens(model)
        for point in points:
            ttl = blocks[point].ttl
            assert ttl is not None
            if point <= hit or prefix[point] < floor:
                continue
            self.entries[hashes[point]] = _Entry(now + TTL_SECONDS[ttl], ttl)
            written[ttl] += prefix[point] - covered
            covered = prefix[point]
        read = prefix[hit] if hit >= 0 else 0
        total = prefix[-1] if blocks else 0
        return CacheUsage(read=read, write_5m=written["5m"], write_1h=written["1h"],
                          uncached=total - read - written["5m"] - written["1h"])


def _chain(model: str, blocks: list[_Block]) -> tuple[list[str], list[int]]:
    """Each block's prefix hash and the tokens of the prefix through it."""
    digest = hashlib.sha256(model.encode()).hexdigest()
    hashes, prefix, total = [], [], 0
    for block in blocks:
        digest = hashlib.sha256((digest + block.key).encode()).hexdigest()
        total += block.tokens
        hashes.append(digest)
        prefix.append(total)
    return hashes, prefix


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _ttl(mark: Any, path: str) -> str:
    """A `cache_control` object's TTL; anything else the API refuses."""
    if not isinstance(mark, dict) or mark.get("type") != "ephemeral" or not set(mark) <= {"type", "ttl"}:
        raise CacheRefused(f'{path}: cache_control must be {{"type": "ephemeral", "ttl"?: "5m" | "1h"}}')
    ttl = mark.get("ttl", "5m")
    if ttl not in TTL_SECONDS:
        raise CacheRefused(f"{path}.ttl: Input should be '5m' or '1h'")
    return ttl


def _block(where: str, raw: dict[str, Any], path: str, tokens: Callable[[str], int]) -> _Block:
    bare = {k: v for k, v in raw.items() if k != "cache_control"}
    text = _canonical(bare)
    kind = raw.get("type")
    cacheable = kind not in UNCACHEABLE and not (kind == "text" and not raw.get("text"))
    ttl = None
    if raw.get("cache_control") is not None:
        if not cacheable:
            raise CacheRefused(f"{path}.cache_control: cache_control cannot be set on a {kind} block"
                               + (" that is empty" if kind == "text" else ""))
        ttl = _ttl(raw["cache_control"], f"{path}.cache_control")
    return _Block(key=f"{where}:{text}", tokens=tokens(text), cacheable=cacheable, ttl=ttl)


def _messages_blocks(body: dict[str, Any], tokens: Callable[[str], int]) -> Iterator[_Block]:
    for i, tool in enumerate(body.get("tools") or []):
        yield _block("tool", tool, f"tools.{i}", tokens)
    system = body.get("system")
    if isinstance(system, str) and system:
        yield _block("system", {"type": "text", "text": system}, "system", tokens)
    elif isinstance(system, list):
        for i, block in enumerate(system):
            yield _block("system", block, f"system.{i}", tokens)
    for i, message in enumerate(body.get("messages") or []):
        content = message.get("content")
        role = message.get("role")
        if isinstance(content, str):
            yield _block(f"{role}", {"type": "text", "text": content}, f"messages.{i}.content", tokens)
            continue
        for j, block in enumerate(content or []):
            yield _block(f"{role}", block, f"messages.{i}.content.{j}", tokens)


def _converse_blocks(body: dict[str, Any], tokens: Callable[[str], int]) -> Iterator[_Block]:
    """Converse: a `cachePoint` entry marks the block before it (botocore `CachePointBlock`:
    `type: default`, `ttl`? `5m` | `1h`), in `toolConfig.tools`, `system` and message content."""
    tools = (body.get("toolConfig") or {}).get("tools") or []
    yield from _with_points("tool", tools, "toolConfig.tools", tokens)
    yield from _with_points("system", body.get("system") or [], "system", tokens)
    for i, message in enumerate(body.get("messages") or []):
        yield from _with_points(str(message.get("role")), message.get("content") or [],
                                f"messages.{i}.content", tokens)


def _with_points(where: str, entries: list[dict[str, Any]], path: str,
                 tokens: Callable[[str], int]) -> Iterator[_Block]:
    held: _Block | None = None
    for i, entry in enumerate(entries):
        point = entry.get("cachePoint")
        if point is not None:
            if held is None:
                raise CacheRefused(f"{path}.{i}: a cachePoint must follow a content block")
            if not isinstance(point, dict) or point.get("type") != "default" or not set(point) <= _POINT_KEYS:
                raise CacheRefused(f'{path}.{i}.cachePoint: expected {{"type": "default", "ttl"?}}')
            ttl = point.get("ttl", "5m")
            if ttl not in TTL_SECONDS or held.ttl is not None:
                raise CacheRefused(f"{path}.{i}.cachePoint: a bad ttl, or two cache points in a row")
            held.ttl = ttl
            continue
        if held is not None:
            yield held
        text = _canonical(entry)
        held = _Block(key=f"{where}:{text}", tokens=tokens(text), cacheable="reasoningContent" not in entry)
    if held is not None:
        yield held

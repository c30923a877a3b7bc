"""The gateway's resource bounds: their options, and when work leaves the event loop.

mitmproxy runs every hook and stream callable on one event loop (docs/mitmproxy.md "Hooks",
"Streaming callables"): whatever a flow costs in memory or CPU there, every other flow waits
for or shares. Each bound has an option with a default that real traffic never reaches
(docs/design.md "Limits"):

- `gateway_max_request_bytes` (32 MiB): a request body as sent and as decoded. Anthropic refuses
  requests above 32 MB itself (docs/anthropic.md, 413 `request_too_large`), and a Codex request
  with a long history is a few MB; a zstd body of 32 KB can decode to 1 GB, so decoding stops at
  the bound and the client gets a 413.
- `gateway_max_kept_bytes` (8 MiB): what the saved flow keeps of each side of one stream. The
  stream itself goes on; the saved copy is cut and says so.
"""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import Awaitable, Callable
from typing import Any

MiB = 1024 * 1024
MAX_REQUEST_BYTES = 32 * MiB
MAX_KEPT_BYTES = 8 * MiB
INLINE_BYTES = 256 * 1024
"""Bodies below this are translated on the event loop: a 256 KB request (a long Codex session)
translates in a few ms, less than handing it to a thread and back would add to every small
one. Bigger ones go to a worker thread (bench/, docs/design.md "Limits")."""


def add_options(loader: Any) -> None:
    loader.add_option("gateway_max_request_bytes", int, MAX_REQUEST_BYTES,
                      "Largest request body the gateway reads, as sent and as decoded (bytes); "
                      "a bigger one gets 413.")
    loader.add_option("gateway_max_kept_bytes", int, MAX_KEPT_BYTES,
                      "Bytes of each side of one streamed answer kept for the saved flow; the "
                      "stream goes on, the saved copy is cut and says so.")


def off_loop(size: int, step: Callable[..., None], *args: Any) -> Awaitable[None] | None:
    """Run `step(*args)` now when `size` is small; otherwise return an awaitable that runs it in
    a worker thread. A hook returns it as it is: mitmproxy awaits whatever awaitable a hook
    returns and meanwhile serves every other flow (docs/mitmproxy.md "Hooks"), and a hook that
    returns None stays a plain synchronous call for small bodies and for tests."""
    if size < INLINE_BYTES:
        step(*args)
        return None
    return asyncio.to_thread(_without_gc, step, *args)


async def run[T](size: int, step: Callable[..., T], *args: Any) -> T:
    """`step(*args)`'s result: computed here when `size` is small, else in a worker thread (with
    the collector paused, as `off_loop`), while the event loop serves every other flow. For hooks
    that are coroutines already (the request hook waits for capabilities and the store)."""
    if size < INLINE_BYTES:
        return step(*args)
    return await asyncio.to_thread(_without_gc, step, *args)


_gc_lock = threading.Lock()
_gc_pauses = 0
_gc_was_enabled = True


def _without_gc[T](step: Callable[..., T], *args: Any) -> T:
    """Run `step` with Python's cyclic garbage collector paused. A large body is a million
    objects or more (parsed JSON, then the translated body), and each full collection pass over
    them holds the interpreter lock for 100-300 ms while the event loop waits: the thread would
    still stall every other stream. JSON objects hold no cycles, so reference counting frees
    them either way; the pause ends with the last overlapping step."""
    global _gc_pauses, _gc_was_enabled
    with _gc_lock:
        if _gc_pauses == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pauses += 1
    try:
        return step(*args)
    finally:
        with _gc_lock:
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_was_enabled:
                gc.enable()

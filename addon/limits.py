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
import contextlib
import gc
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

MiB = 1024 * 1024
MAX_REQUEST_BYTES = 32 * MiB
MAX_KEPT_BYTES = 8 * MiB
INLINE_BYTES = 256 * 1024
"""Bodies below this are translated on the event loop: a 256 KB request (a long Codex session)
translates in a few ms, less than handing it to a thread and back would add to every small
one. Bigger ones are read in a worker thread and translated in a worker process
(addon/workers.py; bench/, docs/design.md "Limits")."""


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


_RELEASE_STEP = 512
"""List items let go of per call in `let_go`."""


def let_go(size: int, value: Any) -> Awaitable[None]:
    """Empty the lists of a large parsed body in a worker thread, a slice at a time, so that
    freeing it is many short calls the event loop can interleave with, not one that frees a
    million objects at once. `value` must be no longer in use (other references only lose its
    list members)."""
    if size < INLINE_BYTES or not isinstance(value, dict):
        return asyncio.sleep(0)
    return asyncio.to_thread(_empty, value)


def _empty(value: dict[str, Any]) -> None:
    for member in value.values():
        if isinstance(member, list):
            empty(member)


_gc_lock = threading.Lock()
_gc_pauses = 0
_gc_was_enabled = True


@contextlib.contextmanager
def collector_paused(size: int = INLINE_BYTES) -> Iterator[None]:
    """Python's cyclic garbage collector paused over the block when `size` is large. A large body
    is a million objects or more (parsed JSON, then the translated body), and each full
    collection pass over them holds the interpreter lock for 100-300 ms, on the event loop or in
    a thread alike: every other stream would stall for as long. JSON objects hold no cycles, so
    reference counting frees them either way; the pause ends with the last overlapping one,
    which should outlive the large objects (a request's parse is let go of by the time its
    translation is sent)."""
    if size < INLINE_BYTES:
        yield
        return
    resume = pause_collector()
    try:
        yield
    finally:
        resume()


def pause_collector() -> Callable[[], None]:
    """Pause the cyclic collector until the returned callable is called (once; later calls do
    nothing): for large objects that outlive a hook, such as a stored turn's input items."""
    global _gc_pauses, _gc_was_enabled
    with _gc_lock:
        if _gc_pauses == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pauses += 1
    resumed = False

    def resume() -> None:
        global _gc_pauses
        nonlocal resumed
        with _gc_lock:
            if resumed:
                return
            resumed = True
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_was_enabled:
                gc.enable()

    return resume


def empty(items: list[Any]) -> None:
    """Let go of a long list's members a slice at a time (see `let_go`)."""
    while items:
        del items[-_RELEASE_STEP:]


def _without_gc[T](step: Callable[..., T], *args: Any) -> T:
    """Run `step` with the cyclic garbage collector paused (`collector_paused`)."""
    with collector_paused():
        return step(*args)

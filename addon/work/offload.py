"""Where the gateway's work runs when not on the event loop: the one module that starts threads
and processes (docs/concurrency.md).

mitmproxy runs every hook and stream callable on one event loop (docs/mitmproxy.md "Hooks",
"Streaming callables"): a step that blocks it holds every other flow for as long. One function
(or class) per mechanism, each saying why it is the right one for its work:

- `inline` / `off_loop` / `in_thread`: a step of a hook, inline when small, else in a worker
  thread of asyncio's own executor;
- `SerialThread`: one thread running calls in the order made (the store's);
- `background` / `wait`: a blocking call in a daemon thread of its own, its result awaited from
  any event loop with a timeout that never cancels it (the vendor's models endpoint);
- `pool` / `in_process` / `shutdown_pool`: a large CPU step in a spawned worker process;
- `freeze_startup`: the objects alive at start-up kept out of the cyclic collector's passes.

Nothing here knows a vendor, a flow or mitmproxy: the callers pass the step.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import multiprocessing
import os
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

# -- a hook's step: inline or in a worker thread -------------------------------------------------

INLINE_BYTES = 256 * 1024
"""Bodies below this are read and translated on the event loop: a 256 KB request (a long Codex
session) translates in a few ms, less than the hand-off to a worker process would add to every
small one. Bigger ones are read and translated in a worker process (addon/work/workers.py), and a whole
answer that big is translated in a worker thread (`off_loop`; figures in docs/concurrency.md)."""


def inline(size: int) -> bool:
    """The one rule for where a body's work runs: True (on the loop) below `INLINE_BYTES`."""
    return size < INLINE_BYTES


async def in_thread[T](step: Callable[..., T], *args: Any) -> T:
    """`step(*args)` in a worker thread of the running loop's default executor, awaited. Right
    for a step that mostly waits with the interpreter lock released (a file written or read by
    one system call, a decompressor) or is moderate CPU work: the loop goes on serving the other
    flows meanwhile. Wrong for a long CPU step in Python or one long C call (a parse of
    megabytes): a thread shares the lock with the loop, so that goes to `in_process`."""
    return await asyncio.to_thread(step, *args)


def off_loop(size: int, step: Callable[..., None], *args: Any) -> Awaitable[None] | None:
    """Run `step(*args)` now when `size` is `inline`; otherwise return an awaitable that runs it
    in a worker thread (`in_thread`). A hook returns it as it is: mitmproxy awaits whatever
    awaitable a hook returns and meanwhile serves every other flow (docs/mitmproxy.md "Hooks"),
    and a hook that returns None stays a plain synchronous call for small bodies and in tests."""
    if inline(size):
        step(*args)
        return None
    return in_thread(step, *args)


# -- one thread, calls in order --------------------------------------------------------------------


class SerialThread(ThreadPoolExecutor):
    """One thread (started at the first call) running every call submitted, one at a time, in the
    order submitted. Right for the store: a turn's write is queued before the client can send the
    request that reads it, so that read, queued later, finds it; the store's connection and
    transactions are never used by two threads at once; and a slow write (a 16 MB answer: 100 ms
    or more) or the first open (a new SQLite file: 10-20 ms) never waits on the loop. `shutdown
    (wait=True)` runs what was queued first (docs/concurrency.md "The store's thread")."""

    def __init__(self, name: str) -> None:
        super().__init__(max_workers=1, thread_name_prefix=name)

    async def call[T](self, step: Callable[..., T], *args: Any) -> T:
        """`step(*args)` queued behind every call made before, its result awaited on the loop."""
        return await asyncio.wrap_future(self.submit(step, *args))


# -- a blocking call in a thread of its own, bridged to any loop -------------------------------------


def background[T](step: Callable[..., T], *args: Any, name: str) -> Future[T]:
    """`step(*args)` started now in a daemon thread of its own; the future it completes. Right for
    a blocking network call whose result outlives the request that asked (the vendor's models
    endpoint: a request waits for it a short while, `wait`, and the answer fills a cache for the
    next ones): it is not bound to an event loop (the cache serves every loop of a test session
    and `configure` may run before the loop), and a daemon thread never holds the proxy's exit,
    as a slow vendor would hold asyncio's executor at its shutdown. The future always completes:
    with `step`'s result, or with whatever it raised; it cannot be cancelled once started."""
    future: Future[T] = Future()
    future.set_running_or_notify_cancel()  # from now on a waiter that gives up cannot cancel it

    def run() -> None:
        try:
            result = step(*args)
        except BaseException as exc:  # the future must complete, whatever the step did
            future.set_exception(exc)
        else:
            future.set_result(result)

    threading.Thread(target=run, name=name, daemon=True).start()
    return future


async def wait(future: Future[Any], timeout: float) -> bool:
    """Wait on the running loop at most `timeout` seconds for a future another thread completes;
    True when it is done. The future is never cancelled (the work goes on for later callers,
    whoever gave up on it), and the loop is woken from the completing thread with
    `call_soon_threadsafe`: nothing blocks the loop while it waits."""
    if future.done():
        return True
    loop = asyncio.get_running_loop()
    done = asyncio.Event()

    def wake(_: Future[Any]) -> None:
        with contextlib.suppress(RuntimeError):  # RuntimeError: that loop is closed by now
            loop.call_soon_threadsafe(done.set)

    future.add_done_callback(wake)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(done.wait(), timeout)
    return future.done()


# -- a large CPU step in a worker process ------------------------------------------------------------

WORKERS = max(1, min(2, os.cpu_count() or 1))
"""Processes in the pool: two large requests at once are translated side by side, a third waits."""
NICE = 5
"""How much lower a worker's priority is than the proxy's (`os.nice`)."""
WATCH_EVERY = 0.5
"""Seconds between a worker's looks at its parent."""
_pool_lock = threading.Lock()
_pool: ProcessPoolExecutor | None = None


def pool() -> ProcessPoolExecutor:
    """The worker processes, started at the first call (a proxy that only sees small requests
    never pays for them): at most `WORKERS`, started by `spawn`. A process has an interpreter lock
    of its own, so a step of seconds there never stalls the loop, where a thread would hold the
    loop's lock for every long C call. `spawn`, never `fork`: a fork of the proxy would copy its
    event loop, its threads and their locks mid-use. Each worker runs at a lower priority and ends
    with its proxy (`_yield_to_the_proxy`)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ProcessPoolExecutor(WORKERS, mp_context=multiprocessing.get_context("spawn"),
                                        initializer=_yield_to_the_proxy, initargs=(os.getpid(),))
        return _pool


async def in_process[T](step: Callable[..., T], *args: Any) -> T:
    """`step(*args)` in a worker process (`step` a module-level function, its arguments and result
    small and picklable: large bodies cross as files, addon/work/workers.py). The hand-off itself
    (starting a process the first time, pickling the arguments) runs in a thread, off the loop.
    A pool whose worker died (killed, out of memory) is replaced, and the call tried once more in
    the new one; a second `BrokenProcessPool` is raised."""
    for attempt in (1, 2):
        used = await in_thread(pool)
        try:
            future = await in_thread(used.submit, step, *args)
            return await asyncio.wrap_future(future)
        except BrokenProcessPool:
            _forget(used)
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def _forget(broken: ProcessPoolExecutor) -> None:
    global _pool
    with _pool_lock:
        if _pool is broken:
            _pool = None
    broken.shutdown(wait=False, cancel_futures=True)


def shutdown_pool() -> None:
    """The pool's processes are told to end (the addon's `done`); calls queued are cancelled. The
    next `pool()` starts a new one."""
    global _pool
    with _pool_lock:
        running, _pool = _pool, None
    if running is not None:
        running.shutdown(wait=False, cancel_futures=True)


def _yield_to_the_proxy(proxy: int | None = None) -> None:
    """In each worker, first: a lower priority than the proxy, so that on a machine with fewer
    cores than busy processes the event loop still gets the CPU when it has work; and a watch that
    ends the worker with its proxy (`_watch`)."""
    os.nice(NICE)
    if proxy is not None:
        threading.Thread(target=_watch, args=(proxy,), name="gateway-worker-watch", daemon=True).start()


def _watch(proxy: int) -> None:
    """End this worker once its proxy is gone. A proxy that exits cleanly shuts the pool down
    (`shutdown_pool`), but one killed with SIGKILL cannot: its workers (each with the translators
    loaded, ~86 MB) would wait on their queue for good. Its parent then becomes another process
    (init, or a subreaper), which is what is watched for; once the workers are gone, the
    resource tracker sees its pipe close and ends as well."""
    while os.getppid() == proxy:
        time.sleep(WATCH_EVERY)
    os._exit(0)


# -- the collector ----------------------------------------------------------------------------------


def freeze_startup() -> None:
    """Keep the objects alive once the proxy has started (mitmproxy's, the addon's and their
    libraries', about 110k) out of the cyclic collector's passes. A full pass over them holds the
    interpreter lock for ~70 ms, and one runs whenever a quarter as many new long-lived objects
    have piled up: every stream stalls for as long, at a moment no flow chose. They live as long
    as the proxy either way (docs/concurrency.md "The collector")."""
    gc.collect()  # what start-up left as garbage goes first, not into the frozen set
    gc.freeze()

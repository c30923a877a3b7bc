"""Large requests translated in a separate process, so the proxy's interpreter lock is never held
for long while other flows wait.

A worker thread shares the proxy's lock (addon/limits.py): pure Python hands it back every few
ms, but one long C call keeps it (orjson of a 20 MB body, a pydantic dump of the translation), and
every other stream stalls for as long. A worker process has a lock of its own: it takes the
client's body as bytes and gives back the upstream body as bytes and the translation without its
body, so what crosses is two flat byte strings (a copy each) and a few small objects.

The pool starts on the first large request (a small one never pays for it), with at most
`WORKERS` processes started by `spawn` (a fork of the proxy would copy its event loop and
threads), and is shut down with the proxy.
"""

from __future__ import annotations

import asyncio
import hashlib
import multiprocessing
import os
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

from addon.dialects import load_extra
from translators import Translation, translate_request, wirejson
from translators import dialect as registry

WORKERS = max(1, min(2, os.cpu_count() or 1))
"""Processes in the pool: two large requests at once are translated side by side, a third waits."""


@dataclass(frozen=True, slots=True)
class Translated:
    """What a worker gives back: the translation (its `body` a stand-in, see `translate`) and
    the upstream body written, with its metadata copy already dumped."""

    translation: Translation
    content: bytes
    saved: dict[str, Any]
    """`translation.model_dump(mode="json", exclude={"body"})`, for `flow.metadata`."""


def translate(data: bytes, dialect: str, model: str | None, capabilities: Any, web_search: str) -> Translated:
    """In the worker: `translate_request` of the JSON body `data`, written with `wirejson.dumps`.
    The translation comes back without the upstream body (the proxy never reads it again: it is
    the flow's request); in its place `{"sha1": …}` of the written body, which is all the Gemini
    decoder reads of it (a seed for made-up call ids, fixed by the request, new on every turn).
    A `TranslatorError` crosses as itself (it pickles)."""
    if dialect not in registry.names():  # a dialect of `$GATEWAY_DIALECTS`: a spawned worker
        load_extra()  # starts with the shipped ones only (addon/dialects.py)
    body = wirejson.loads(data)
    translation = translate_request(body, dialect, model, capabilities=capabilities, web_search=web_search)
    content = wirejson.dumps(translation.body)
    saved = translation.model_dump(mode="json", exclude={"body"})
    translation.body = {"sha1": hashlib.sha1(content, usedforsecurity=False).hexdigest()}
    return Translated(translation, content, saved)


def _yield_to_the_proxy() -> None:
    """A worker runs at a lower priority than the proxy: on a machine with fewer cores than busy
    processes, the event loop still gets the CPU when it has work (a worker starting, or
    translating, while every core is busy would otherwise take the loop's share)."""
    os.nice(NICE)


NICE = 5
_lock = threading.Lock()
_pool: ProcessPoolExecutor | None = None


def pool() -> ProcessPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ProcessPoolExecutor(WORKERS, mp_context=multiprocessing.get_context("spawn"),
                                        initializer=_yield_to_the_proxy)
        return _pool


async def run_translate(data: bytes, dialect: str, model: str | None, capabilities: Any,
                        web_search: str) -> Translated:
    """`translate(...)` in a worker process. The hand-off itself (starting a process the first
    time, pickling the body) runs in a thread, off the event loop. A pool whose worker died (killed,
    out of memory) is replaced, and the request tried once more in the new one."""
    for attempt in (1, 2):
        used = await asyncio.to_thread(pool)
        try:
            future = await asyncio.to_thread(used.submit, translate, data, dialect, model, capabilities,
                                             web_search)
            return await asyncio.wrap_future(future)
        except BrokenProcessPool:
            _forget(used)
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def _forget(broken: ProcessPoolExecutor) -> None:
    global _pool
    with _lock:
        if _pool is broken:
            _pool = None
    broken.shutdown(wait=False, cancel_futures=True)


def shutdown() -> None:
    global _pool
    with _lock:
        running, _pool = _pool, None
    if running is not None:
        running.shutdown(wait=False, cancel_futures=True)

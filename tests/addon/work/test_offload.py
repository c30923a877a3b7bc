"""Where work runs off the event loop (addon/work/offload.py): each mechanism's guarantee, stated as
what a caller may rely on; no timing is asserted."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import pathlib
import signal
import subprocess
import sys
import threading
import time
import weakref
from concurrent.futures import Future
from typing import Any

import pytest

from addon.work import offload

LONG = 60.0
"""Seconds a test waits for something that must happen; never reached when it does."""


@pytest.fixture(scope="module", autouse=True)
def _pool_shut_down_after() -> Any:
    yield
    offload.shutdown_pool()


# -- inline or a worker thread -------------------------------------------------------------------

def test_a_body_below_the_threshold_runs_inline_and_one_at_it_does_not() -> None:
    assert offload.inline(0) and offload.inline(offload.INLINE_BYTES - 1)
    assert not offload.inline(offload.INLINE_BYTES)


def test_a_small_step_runs_now_in_the_callers_thread_and_nothing_is_left_to_await() -> None:
    ran: list[int] = []
    assert offload.off_loop(offload.INLINE_BYTES - 1, ran.append, threading.get_ident()) is None
    assert ran == [threading.get_ident()]


def test_a_large_step_runs_in_a_worker_thread_once_awaited_while_the_loop_is_free() -> None:
    ran: list[int] = []

    async def hook() -> tuple[int, bool]:
        loop_thread = threading.get_ident()
        pending = offload.off_loop(offload.INLINE_BYTES, lambda: ran.append(threading.get_ident()))
        assert pending is not None and ran == []  # nothing runs before mitmproxy awaits it
        await pending
        return loop_thread, asyncio.get_running_loop().is_running()

    loop_thread, running = asyncio.run(hook())
    assert len(ran) == 1 and ran[0] != loop_thread and running


def test_in_thread_gives_back_the_steps_result_or_its_error() -> None:
    async def main() -> tuple[int, int]:
        return threading.get_ident(), await offload.in_thread(threading.get_ident)

    loop_thread, worker = asyncio.run(main())
    assert worker != loop_thread
    with pytest.raises(ZeroDivisionError):
        asyncio.run(offload.in_thread(lambda: 1 // 0))


# -- the serial thread ----------------------------------------------------------------------------

def test_a_serial_thread_runs_every_call_in_one_thread_in_the_order_made() -> None:
    """The first call holds its thread until every other call is queued: were there a second
    thread, the next call would run there."""
    serial = offload.SerialThread("test-serial")
    gate = threading.Event()
    order: list[tuple[int, int]] = []
    try:
        first = serial.submit(lambda: (gate.wait(LONG), order.append((0, threading.get_ident()))))
        rest = [serial.submit(lambda i=i: order.append((i, threading.get_ident()))) for i in range(1, 6)]
        gate.set()
        for future in (first, *rest):
            future.result(LONG)
    finally:
        serial.shutdown(wait=True)
    assert [i for i, _ in order] == list(range(6))
    assert len({thread for _, thread in order}) == 1 and order[0][1] != threading.get_ident()


def test_a_read_queued_after_a_write_finds_it_and_its_result_is_awaited_on_the_loop() -> None:
    serial = offload.SerialThread("test-serial")
    store: dict[str, str] = {}
    gate = threading.Event()

    def slow_write() -> None:
        gate.wait(LONG)
        store["turn"] = "written"

    async def main() -> str | None:
        serial.submit(slow_write)
        read = asyncio.ensure_future(serial.call(store.get, "turn"))
        await asyncio.sleep(0)  # the read is queued; the write still waits for its gate
        gate.set()
        return await read

    try:
        assert asyncio.run(main()) == "written"
    finally:
        serial.shutdown(wait=True)


def test_shutting_a_serial_thread_down_runs_what_was_queued_first() -> None:
    serial = offload.SerialThread("test-serial")
    gate = threading.Event()
    done: list[int] = []
    serial.submit(gate.wait, LONG)
    serial.submit(done.append, 1)
    threading.Thread(target=gate.set, daemon=True).start()
    serial.shutdown(wait=True)
    assert done == [1]


# -- a background thread bridged to the loop ------------------------------------------------------

def test_a_background_step_runs_in_a_daemon_thread_of_its_name_and_completes_its_future() -> None:
    future = offload.background(lambda: (threading.current_thread().name, threading.current_thread().daemon),
                                name="test-fetch")
    assert future.result(LONG) == ("test-fetch", True)


def test_a_background_step_that_raises_completes_its_future_with_the_error() -> None:
    future = offload.background(lambda: 1 // 0, name="test-fetch")
    assert isinstance(future.exception(LONG), ZeroDivisionError)


def test_a_waiter_that_gives_up_never_cancels_the_background_step() -> None:
    gate = threading.Event()
    future = offload.background(lambda: gate.wait(LONG) and "answer", name="test-fetch")
    assert asyncio.run(offload.wait(future, 0)) is False
    assert not future.cancel() and not future.done()
    gate.set()
    assert future.result(LONG) == "answer"


def test_the_wait_is_woken_on_the_loop_when_another_thread_completes_the_future() -> None:
    future: Future[str] = Future()

    async def main() -> tuple[bool, list[str]]:
        order: list[str] = []
        waiting = asyncio.ensure_future(offload.wait(future, LONG))
        await asyncio.sleep(0)  # the waiter now waits
        completing = threading.Thread(target=lambda: (order.append("completed"), future.set_result("x")))
        completing.start()
        done = await waiting
        order.append("woken")
        return done, order

    assert asyncio.run(main()) == (True, ["completed", "woken"])


def test_a_completed_future_serves_every_later_loop() -> None:
    """The cache of vendor answers outlives one loop (tests run each in its own)."""
    future = offload.background(lambda: "answer", name="test-fetch")
    future.result(LONG)
    assert asyncio.run(offload.wait(future, 0)) and asyncio.run(offload.wait(future, 0))


def test_a_step_ending_after_its_waiters_loop_closed_logs_nothing(caplog: pytest.LogCaptureFixture) -> None:
    gate = threading.Event()
    future = offload.background(lambda: gate.wait(LONG), name="test-fetch")
    asyncio.run(offload.wait(future, 0))  # that loop is closed when the step ends
    with caplog.at_level(logging.DEBUG):
        gate.set()
        future.result(LONG)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


# -- the process pool -----------------------------------------------------------------------------

_MARK = "imported"
"""What a freshly started worker sees: it imports this module anew, never a copy of the proxy's."""


def _mark() -> str:
    return _MARK


def _worker_pid() -> int:
    return os.getpid()


def test_the_work_runs_in_another_process_started_fresh_at_a_lower_priority() -> None:
    global _MARK
    offload.shutdown_pool()
    _MARK = "the proxy's own state"
    try:
        assert asyncio.run(offload.in_process(_mark)) == "imported"  # spawned: a fork would copy it
    finally:
        _MARK = "imported"
    assert asyncio.run(offload.in_process(_worker_pid)) != os.getpid()
    assert asyncio.run(offload.in_process(os.nice, 0)) == min(19, os.nice(0) + offload.NICE)


def test_the_pool_is_one_until_shut_down_then_a_new_one() -> None:
    first = offload.pool()
    assert offload.pool() is first
    offload.shutdown_pool()
    assert offload.pool() is not first


def test_a_pool_whose_worker_died_is_replaced_and_the_call_tried_again() -> None:
    broken = offload.pool()
    os.kill(broken.submit(os.getpid).result(timeout=LONG), signal.SIGKILL)
    assert asyncio.run(offload.in_process(_worker_pid)) != os.getpid()
    assert offload.pool() is not broken


def test_the_workers_of_a_proxy_killed_with_sigkill_end_with_it() -> None:
    """A killed proxy cannot shut its pool down; its workers notice they lost their parent."""
    code = ("import asyncio, time\nfrom addon.work import offload\n"
            "from tests.addon.work.test_offload import _worker_pid\n"
            "print(asyncio.run(offload.in_process(_worker_pid)), flush=True)\ntime.sleep(60)\n")
    proxy = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                             cwd=pathlib.Path(__file__).parents[3])
    assert proxy.stdout is not None
    worker = int(proxy.stdout.readline())
    proxy.kill()
    proxy.wait()
    deadline = time.monotonic() + 30
    while _alive(worker) and time.monotonic() < deadline:
        time.sleep(offload.WATCH_EVERY)
    assert not _alive(worker)


def _alive(pid: int) -> bool:
    """The process runs (a zombie, ended but not reaped by its new parent, counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


# -- the collector ----------------------------------------------------------------------------------

class _Node:
    def __init__(self) -> None:
        self.me = self


def test_start_up_garbage_is_collected_and_what_lives_is_frozen() -> None:
    garbage = _Node()  # a cycle only the collector frees
    gone = weakref.ref(garbage)
    del garbage
    alive = _Node()
    try:
        offload.freeze_startup()
        assert gone() is None
        assert gc.get_freeze_count() > 0 and not any(o is alive for o in gc.get_objects())
    finally:
        gc.unfreeze()
    assert any(o is alive for o in gc.get_objects())

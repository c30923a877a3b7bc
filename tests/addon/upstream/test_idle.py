"""addon/upstream/idle.py: a stream's idle deadline, one timer moved lazily. Only time spent
reading counts; a cancellation from outside stays one. The deadlines here are short and the
waits long, so a busy machine delays what is asserted, never changes it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from addon.upstream.idle import Idle


def run(scenario: Callable[[], Awaitable[object]]) -> object:
    return asyncio.run(asyncio.wait_for(scenario(), 30))


async def read(idle: Idle, wait: Awaitable[object]) -> str:
    """One read as the pump does it: armed, marked, its cancellation judged."""
    if idle.handle is None:
        idle.arm()
    idle.reading = True
    try:
        await wait
        return "read"
    except asyncio.CancelledError:
        if not idle.timed_out():
            raise
        return "timed out"
    finally:
        idle.reading = False


def test_a_read_past_the_deadline_times_out() -> None:
    async def scenario() -> str:
        idle = Idle(asyncio.get_running_loop().time() + 0.05)
        try:
            return await read(idle, asyncio.sleep(20))
        finally:
            idle.close()

    assert run(scenario) == "timed out"


def test_a_deadline_moved_meanwhile_is_waited_for() -> None:
    async def scenario() -> tuple[str, float]:
        loop = asyncio.get_running_loop()
        idle = Idle(loop.time() + 0.05)
        start = loop.time()

        async def move() -> None:
            await asyncio.sleep(0.01)
            idle.deadline = loop.time() + 0.5  # progress: the timer set for 0.05 s is early

        mover = asyncio.create_task(move())
        try:
            return await read(idle, asyncio.sleep(20)), loop.time() - start
        finally:
            await mover
            idle.close()

    outcome, waited = run(scenario)
    assert outcome == "timed out" and waited >= 0.5


def test_time_spent_outside_a_read_is_not_silence() -> None:
    async def scenario() -> list[str]:
        loop = asyncio.get_running_loop()
        idle = Idle(loop.time() + 0.05)
        try:
            first = await read(idle, asyncio.sleep(0))
            await asyncio.sleep(0.2)  # e.g. a slow client: the timer fires, nobody is reading
            assert idle.handle is None
            idle.deadline = loop.time() + 10  # the pump moves it by the time it waited
            return [first, await read(idle, asyncio.sleep(0.1))]
        finally:
            idle.close()

    assert run(scenario) == ["read", "read"]


@pytest.mark.parametrize("deadline_s", [10, 0.05], ids=["before the deadline", "at the deadline"])
def test_a_cancellation_from_outside_is_passed_on(deadline_s: float) -> None:
    async def scenario() -> None:
        idle = Idle(asyncio.get_running_loop().time() + deadline_s)
        try:
            await read(idle, asyncio.sleep(20))
        finally:
            idle.close()

    async def outside() -> None:
        task = asyncio.create_task(scenario())
        loop = asyncio.get_running_loop()
        # at 0.05 s: long before a 10 s deadline, or in the same turn of the loop as the
        # deadline's own cancel
        loop.call_at(loop.time() + 0.05, task.cancel)
        await task

    with pytest.raises(asyncio.CancelledError):
        run(outside)


def test_closing_stops_the_timer() -> None:
    async def scenario() -> bool:
        idle = Idle(asyncio.get_running_loop().time() + 0.05)
        idle.arm()
        idle.close()
        await asyncio.sleep(0.2)
        return idle.expired

    assert run(scenario) is False

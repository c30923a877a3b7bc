"""A leg's attempts, and what its client gets (docs/pools.md "The runner").

`Runner.answer(leg)` returns the `Reply` the loopback server (server.py) sends mitmproxy: its
status and head once decided, and its body. Two tasks share the work:

- the attempts (`_attempts`, in a task of its own): pick a deployment (pool.py), run one attempt
  (pump.py), and on a failure go on (another deployment, or the same after its cooldown, or a
  fallback) within the limits; once nothing is left, pass the last answer on or give up;
- the client's side (`_Client`): renders what the attempts hand it (a stream, a whole answer, a
  refusal, a give-up) and, for a client dialect with keep-alives that asked for a stream, writes
  the gateway's own keep-alive whenever the client has heard nothing for its interval; the
  first one sends the answer's head, after which a later failure is said inside the stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from addon.upstream import policy
from addon.upstream.client import Client
from addon.upstream.leg import Leg
from addon.upstream.pool import Balancer
from addon.upstream.pump import Data, Ended, Failure, Message, Pump, StreamHead, Whole
from translators.core.ids import random_ids
from translators.wire import wirejson
from translators.wire.stream_failure import events_in

Sink = Callable[[bytes], Awaitable[None]]
"""Writes one piece of a streamed body to the client at once; awaits only a full buffer."""

QUEUE = 16
"""Messages between the attempts and the client's side: a slow client holds the upstream back."""
SSE_HEAD = [("content-type", "text/event-stream"), ("cache-control", "no-cache")]
SENT_KEPT = 256 * 1024
"""What the client's stream got is kept up to this many bytes (its first events: the answer's id
and model), for a failure written after it; past it the events are only counted, so a stream of
any length holds no more (`stream_error`'s `also_sent`)."""


@dataclass(slots=True)
class Reply:
    """What goes back to mitmproxy: the status and headers, and the body (whole, or streamed)."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes | AsyncIterator[bytes]
    kind: str
    """`stream` (the client's stream, translated), `upstream` (an upstream's answer or error as
    it came, for the pipeline to translate), `refusal` (in the client's shape), `gave_up` (the
    client's retryable error, its dialect's `give_up`)."""
    closer: Callable[[], Awaitable[None]] | None = None
    attach: Callable[[Sink], None] | None = None
    """For a streamed body: the sender hands over how it writes one piece of the body
    (`Sink`), after which the attempts write their data with it as it comes, past the body's
    iterator (no hand-over between tasks per event); everything else still comes through the
    iterator, in order."""

    async def aclose(self) -> None:
        """Whoever sends the reply calls this once it is done with it, sent or not: an attempt
        still running for a body never read is abandoned."""
        close = getattr(self.body, "aclose", None)
        if close is not None:
            await close()
        if self.closer is not None:
            await self.closer()


@dataclass(slots=True)
class _GiveUp:
    message: str
    wait: float | None


class _Signal:
    """Wakes every leg waiting on a pool when one of its attempts ended (`Balancer.on_change`)."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def __call__(self) -> None:
        self._event.set()
        self._event = asyncio.Event()

    async def wait(self, timeout: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._event.wait(), max(timeout, 0))


class Runner:
    def __init__(self, client: Client, *, clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], float] = time.time) -> None:
        self.client = client
        self.clock = clock
        self.wall = wall
        self.pump = Pump(client, clock, wall)

    async def answer(self, leg: Leg) -> Reply:
        queue: asyncio.Queue[Message | _GiveUp | None] = asyncio.Queue(QUEUE)
        side = _Client(self, leg, queue)
        task = side.task = asyncio.create_task(self._run(leg, side.put))
        try:
            reply = await side.head()
        except BaseException:  # the client left before the head: the attempt in flight goes too
            await reap(task)
            raise
        leg.kind = reply.kind
        return reply

    async def _run(self, leg: Leg, put: Callable[[Message | _GiveUp | None], Awaitable[None]]) -> None:
        try:
            await self._attempts(leg, put)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a gateway bug must still answer the client, retryably
            leg.gave_up = f"gateway error in the upstream leg: {exc!r}"[:500]
            await put(_GiveUp(leg.gave_up, None))
        await put(None)

    async def _attempts(self, leg: Leg, put: Callable[[Message | _GiveUp | None], Awaitable[None]]) -> None:
        balancer, limits = leg.balancer, leg.limits
        signal = _signal_of(balancer)
        start = self.clock()
        failed: set[str] = set()
        excluded: set[str] = set()
        needs = leg.needs
        last: Failure | None = None
        while len(leg.attempts) <= limits.retries:
            now = self.clock()
            if leg.attempts and now - start >= limits.retry_seconds:
                break
            choice = balancer.pick(now, affinity=leg.affinity, failed=failed, excluded=excluded, needs=needs)
            if choice is None:
                ready = balancer.ready_at(now, excluded=excluded, needs=needs)
                if ready is None and not balancer.probing():
                    break  # nothing this turn may use becomes usable by waiting
                if ready is not None and ready - start >= limits.retry_seconds:
                    break  # the soonest cooldown ends past the time limit
                if now - start >= limits.retry_seconds:
                    break
                # until a cooldown ends, or a probe's answer (or any attempt's end) changes the pool
                until = ready if ready is not None else start + limits.retry_seconds
                await signal.wait(until - now)
                continue
            failure = await self.pump.attempt(leg, choice, put)
            if failure is None:
                return
            last = failure
            if failure.verdict == "retry":
                failed.add(choice.name)
            else:
                excluded.add(choice.name)
            if failure.verdict == "overflow" and (window := choice.deployment.window):
                needs = max(needs or 0, window + 1)  # a larger window than this one's
        if leg.attempts:
            leg.attempts[-1].outcome = "failed"
        if last is not None and last.verdict != "retry" and last.answer is not None:
            leg.attempts[-1].outcome = "passed on"
            leg.answered = last.answer.choice
            await put(last.answer)
            return
        now = self.clock()
        ready = balancer.ready_at(now)
        tried = "; ".join(f"{a.deployment}: {a.reason}" for a in leg.attempts) or "no deployment was usable"
        leg.gave_up = leg.scrub(f"every attempt failed ({tried})")[:1000]
        await put(_GiveUp(leg.gave_up, None if ready is None else ready - now))


def _signal_of(balancer: Balancer) -> _Signal:
    signal = balancer.on_change
    if not isinstance(signal, _Signal):
        signal = _Signal()
        balancer.on_change = signal
    return signal


class _Client:
    """The client's side of one leg: what it got so far, its keep-alives, its end."""

    task: asyncio.Task[None]

    def __init__(self, runner: Runner, leg: Leg, queue: asyncio.Queue[Message | _GiveUp | None]) -> None:
        self.runner = runner
        self.leg = leg
        self.queue = queue
        self.sink: Sink | None = None
        """How the sender writes a piece of the body (`Reply.attach`), while it streams it."""
        self.queued = 0
        """Messages put in the queue and not yet through the body (written, or taken as its
        end): data written past the queue waits until none is left ahead of it."""
        self.keep_alive = leg.speaks.keep_alive if leg.stream else None
        self.quiet_since = asyncio.get_running_loop().time()
        self.sent: list[bytes] = []
        """What the client's stream holds so far, up to `SENT_KEPT` bytes (for a failure written
        after it)."""
        self.kept = 0
        self.also_sent = 0
        """Events the client's stream got past `sent`."""
        self.ended = False
        """The client's answer is complete: the attempts' task may run on (draining)."""

    async def put(self, message: Message | _GiveUp | None) -> None:
        """From the attempts: stream data straight to the sender once it is attached and nothing
        is queued ahead, anything else through the queue."""
        sink = self.sink
        if sink is not None and not self.queued and type(message) is Data:
            if message.data:
                await sink(self._wrote(message.data))
            return
        self.queued += 1
        await self.queue.put(message)

    def attach(self, sink: Sink) -> None:
        self.sink = sink

    async def _next(self) -> Message | _GiveUp | bool | None:
        """The next message; False when a keep-alive is due first."""
        if self.keep_alive is None:
            return await self.queue.get()
        loop = asyncio.get_running_loop()
        while True:
            due = self.quiet_since + self.keep_alive.every
            try:
                async with asyncio.timeout_at(due):
                    return await self.queue.get()
            except TimeoutError:
                if loop.time() >= self.quiet_since + self.keep_alive.every:
                    return False  # else data went out past the queue meanwhile: not quiet

    async def head(self) -> Reply:
        while True:
            message = await self._next()
            if message is not False:
                self.queued -= 1
            if message is False:  # the keep-alive interval passed before the answer's head
                return Reply(200, list(SSE_HEAD), self._body([self._ping()]), "stream", self.close,
                             self.attach)
            if isinstance(message, StreamHead):
                return Reply(200, message.headers, self._body([]), "stream", self.close, self.attach)
            if isinstance(message, Whole):
                await self._finish()
                headers = [(k, v) for k, v in message.headers if k != "content-length"]
                headers.append(("content-length", str(len(message.body))))
                kind = "refusal" if message.refusal else "upstream"
                return Reply(message.status, headers, message.body, kind)
            if isinstance(message, _GiveUp):
                await self._finish()
                return self._give_up(message)
            if message is None:  # cannot happen: the attempts always say how they ended
                return self._give_up(_GiveUp("the upstream leg ended without an answer", None))

    def _give_up(self, given: _GiveUp) -> Reply:
        speaks = self.leg.speaks
        table = speaks.give_up
        wait = policy.client_wait(given.wait)
        message = f"{given.message} Please try again in {wait}s."
        body = speaks.error_body(table.status, table.code, message)
        status = speaks.error_status(table.status, body)
        data = wirejson.dumps(body)
        return Reply(status, [("content-type", "application/json"), ("retry-after", str(wait)),
                              ("content-length", str(len(data)))], data, "gave_up")

    def _ping(self) -> bytes:
        assert self.keep_alive is not None
        return self._wrote(self.keep_alive.event)

    def _wrote(self, data: bytes) -> bytes:
        if data:
            self.quiet_since = asyncio.get_running_loop().time()
            if self.kept < SENT_KEPT:
                self.sent.append(data)
                self.kept += len(data)
            else:
                self.also_sent += events_in(data)  # whole events: translators write no half
        return data

    async def close(self) -> None:
        """The stream is over for the client: an attempt that did not end it is abandoned."""
        self.sink = None
        await self._finish(quietly=not self.ended)

    async def _body(self, first: list[bytes]) -> AsyncIterator[bytes]:
        try:
            for data in first:
                yield data
            while True:
                message = await self._next()
                if message is False:
                    yield self._ping()
                    continue
                if isinstance(message, Data):
                    if message.data:
                        yield self._wrote(message.data)
                    self.queued -= 1  # written: data after it may go past the queue
                    continue
                self.queued -= 1
                if isinstance(message, Ended) or message is None:
                    self.ended = True
                    return
                elif isinstance(message, Whole):
                    self.ended = True
                    yield self._wrote(self._in_stream(message))
                    return
                elif isinstance(message, _GiveUp):
                    self.ended = True
                    yield self._wrote(self._given_up_in_stream(message))
                    return
                # a StreamHead after the head went out (with a keep-alive): nothing to send
        finally:
            await self.close()  # the client left, or its answer ended

    def _given_up_in_stream(self, given: _GiveUp) -> bytes:
        """The event that ends the client's stream when every attempt failed after its head went
        out: its dialect's own (`GiveUp.in_stream`), else its stream failure."""
        speaks = self.leg.speaks
        wait = policy.client_wait(given.wait)
        message = f"{given.message} Please try again in {wait}s."
        sent = b"".join(self.sent)
        if speaks.give_up.in_stream is not None:
            return speaks.give_up.in_stream(sent, message, self.runner.wall())
        return speaks.stream_error(sent, message, also_sent=self.also_sent, now=self.runner.wall(),
                                   new_id=random_ids())

    def _in_stream(self, whole: Whole) -> bytes:
        """An answer that came whole (an upstream error, a refusal) after the stream's head went
        out: through a hook of its deployment, which reads a whole body (translators'
        `whole_body`) and writes it as the client's stream ends (a failure event)."""
        if whole.choice is not None and whole.prepared is not None and not whole.refusal:
            hook = self.leg.hook(whole.choice.deployment, whole.prepared)
            out = _joined(hook(whole.body)) + hook.end()
            if out:
                self.leg.used = hook
                return out
        text = whole.body.decode("utf-8", "replace")[:2000]
        said = self.leg.scrub(f"upstream answered {whole.status}: {text}")
        return self.leg.speaks.stream_error(b"".join(self.sent), said, also_sent=self.also_sent,
                                            now=self.runner.wall(), new_id=random_ids())

    async def _finish(self, quietly: bool = False) -> None:
        """The attempts' task, awaited: an answer's rest is still drained there (pump.py), so a
        finished answer lets it run on; an abandoned one was cancelled."""
        if quietly:
            await reap(self.task)
            return
        if not self.task.done():
            self.task.add_done_callback(_retrieve)
            return
        _retrieve(self.task)


async def reap(task: asyncio.Task[Any]) -> None:
    """`task` cancelled and waited for, whatever it raised; a cancellation of the caller itself
    still goes on (swallowing it would leave the caller running, e.g. a connection serving on)."""
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise
    except Exception:
        pass


def _retrieve(task: asyncio.Task[None]) -> None:
    if not task.cancelled():
        task.exception()


def _joined(out: bytes | list[bytes | memoryview]) -> bytes:
    return out if isinstance(out, bytes) else b"".join(out)

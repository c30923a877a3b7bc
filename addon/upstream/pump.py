"""One attempt of a leg (docs/pools.md "One attempt"): send the prepared request, read the head,
and either pass a whole answer on, judge an error, or pump a stream through the attempt's hook.

A stream's client bytes are held back until the translator says the answer's content started:
a failure before that (an error event, silence, a broken connection) leaves the client with
nothing seen, so the turn may go on elsewhere. From the first content on, every byte goes out,
and the client's answer ends at the translator's terminal event, not at the upstream's EOF.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from addon.upstream import policy
from addon.upstream.client import Client, Response
from addon.upstream.connect import Broken, ClientError, ConnectFailed
from addon.upstream.idle import Idle
from addon.upstream.leg import Attempt, Hook, Leg, Prepared
from addon.upstream.pool import Choice, Outcome
from translators.core.errors import TranslatorError
from translators.wire import response_headers, wirejson
from translators.wire.upstream_errors import text_of

DRAIN_SECONDS = 2.0
"""How long the rest of an upstream's body (after the terminal event) is read to keep its
connection, after the client's answer ended."""
DRAIN_BYTES = 64 * 1024
HOP = frozenset({"content-length", "transfer-encoding", "connection", "keep-alive", "te", "trailer",
                 "upgrade", "proxy-connection"})


# -- what an attempt hands the client's side (runner.py renders them) ---------------------------
@dataclass(slots=True)
class StreamHead:
    headers: list[tuple[str, str]]


@dataclass(slots=True)
class Data:
    data: bytes


@dataclass(slots=True)
class Whole:
    """An answer passed on as it is: a whole upstream answer or error (the pipeline translates
    it), or a refusal already in the client's shape."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes
    choice: Choice | None = None
    prepared: Prepared | None = None
    refusal: bool = False


@dataclass(slots=True)
class Ended:
    """The client's answer is complete (the stream's terminal event went out)."""


Message = StreamHead | Data | Whole | Ended
Put = Callable[[Message], Any]


@dataclass(slots=True)
class Failure:
    """An attempt that did not answer the client: what it means and what to do next."""

    verdict: policy.Verdict
    reason: str
    retry_after: float | None = None
    answer: Whole | None = None
    """Its answer, passed on if nothing better comes (an `elsewhere` or `overflow` error)."""


Result = Failure | None
"""None: the client got its answer from this attempt."""


class Pump:
    def __init__(self, client: Client, clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], float] = time.time) -> None:
        self.client = client
        self.clock = clock
        self.wall = wall

    async def attempt(self, leg: Leg, choice: Choice, put: Put) -> Result:
        record = Attempt(choice.name, choice.fallback)
        leg.attempts.append(record)
        started = self.clock()
        try:
            result = await self._attempt(leg, choice, record, put)
        except BaseException:
            if not record.settled:
                self._settle(leg, choice, record, "dropped")
                record.outcome, record.reason = "dropped", record.reason or "the client left"
            raise
        finally:
            record.ms = int((self.clock() - started) * 1000)
        if result is not None:
            record.outcome, record.reason = "retried", result.reason
        record.reason = leg.scrub(record.reason)
        return result

    async def _attempt(self, leg: Leg, choice: Choice, record: Attempt, put: Put) -> Result:
        try:
            prepared = await leg.prepare(choice.deployment)
        except TranslatorError as exc:
            self._settle(leg, choice, record, "dropped")
            status, body = leg.speaks.refusal(exc)
            record.outcome, record.reason = "passed on", f"refused: {exc.message}"
            await put(Whole(status, [("content-type", "application/json")], wirejson.dumps(body), choice,
                            refusal=True))
            return None
        record.url = prepared.url
        leg.secrets.update(prepared.secrets)
        idle = leg.limits.idle_timeout
        try:
            async with asyncio.timeout(idle):
                response = await self.client.send(leg.method, prepared.url, prepared.headers, prepared.body,
                                                  leg.via)
        except TimeoutError:
            return self._failed(leg, choice, record, "retry", f"no answer within {idle:g} s")
        except ConnectFailed as exc:
            return self._failed(leg, choice, record, "retry", str(exc))
        except ClientError as exc:
            return self._failed(leg, choice, record, "retry", str(exc))
        record.status = response.status
        if too_big := response_headers.oversized(response.headers):  # what no API sends
            await response.aclose()
            return self._failed(leg, choice, record, "retry", f"the answer's head is too large: {too_big}")
        if 200 <= response.status < 300:
            leg.balancer.alive(choice)
        try:
            if response.status >= 300 or response.status < 200:
                return await self._error(leg, choice, record, prepared, response, put)
            if not leg.stream:
                return await self._whole(leg, choice, record, prepared, response, put)
            return await self._stream(leg, choice, record, prepared, response, put)
        finally:
            await response.aclose()

    # -- a whole answer, an error ------------------------------------------------------------------
    async def _read(self, response: Response, limit: int, idle: float) -> bytes:
        parts: list[bytes] = []
        size = 0
        while True:
            async with asyncio.timeout(idle):
                chunk = await response.next_chunk()
            if chunk is None:
                return b"".join(parts)
            size += len(chunk)
            if size > limit:
                raise Broken(f"the upstream's answer passed {limit} bytes")
            parts.append(chunk)

    async def _whole(self, leg: Leg, choice: Choice, record: Attempt, prepared: Prepared,
                     response: Response, put: Put) -> Result:
        try:
            body = await self._read(response, policy.MAX_WHOLE_BODY, leg.limits.idle_timeout)
        except (TimeoutError, ClientError) as exc:
            return self._failed(leg, choice, record, "retry", _said(exc, leg))
        self._answered(leg, choice, record)
        await put(Whole(response.status, _whole_headers(response.headers, body), body, choice, prepared))
        return None

    async def _error(self, leg: Leg, choice: Choice, record: Attempt, prepared: Prepared,
                     response: Response, put: Put) -> Result:
        try:
            body = await self._read(response, policy.MAX_ERROR_BODY, leg.limits.idle_timeout)
        except (TimeoutError, ClientError) as exc:
            reason = f"HTTP {response.status}, then {_said(exc, leg)}"
            return self._failed(leg, choice, record, "retry", reason)
        whole = Whole(response.status, _whole_headers(response.headers, body), body, choice, prepared)
        if response.status < 400:  # a redirect or an odd status: the pipeline's screen says what it is
            return await self._pass_on(leg, choice, record, whole, put, f"HTTP {response.status}")
        code = policy.error_code(choice.deployment.route.dialect, response.status, body)
        verdict = policy.of_status(response.status, code)
        said = " ".join(text_of(body[:4096]).split())[:300]
        reason = f"HTTP {response.status} {code}" + (f": {said}" if said else "")
        if verdict == "final":
            return await self._pass_on(leg, choice, record, whole, put, reason)
        wait = policy.retry_after(response.headers, self.wall(), text_of(body[:4096]))
        return self._failed(leg, choice, record, verdict, reason, wait, whole)

    async def _pass_on(self, leg: Leg, choice: Choice, record: Attempt, whole: Whole, put: Put,
                       reason: str) -> Result:
        self._settle(leg, choice, record, "answered")
        leg.answered = choice
        record.outcome, record.reason = "passed on", reason
        await put(whole)
        return None

    def _settle(self, leg: Leg, choice: Choice, record: Attempt, outcome: Outcome,
                wait: float | None = None) -> None:
        """The attempt's end, told to its pool once."""
        if not record.settled:
            record.settled = True
            leg.balancer.done(choice, self.clock(), outcome, wait)

    def _failed(self, leg: Leg, choice: Choice, record: Attempt, verdict: policy.Verdict, reason: str,
                wait: float | None = None, answer: Whole | None = None) -> Failure:
        """Health follows the verdict: the deployment failed (`retry`), refused it for good
        (`elsewhere`: cooled down as long as the pool allows), or was fine (`overflow`)."""
        if verdict == "retry":
            self._settle(leg, choice, record, "failed", wait)
        elif verdict == "elsewhere" and not leg.balancer.alone:
            self._settle(leg, choice, record, "failed", leg.balancer.cap)
        else:
            self._settle(leg, choice, record, "answered")
        return Failure(verdict, reason, wait, answer)

    def _answered(self, leg: Leg, choice: Choice, record: Attempt, hook: Hook | None = None) -> None:
        self._settle(leg, choice, record, "ok")
        leg.balancer.remember(leg.affinity, choice.name)
        leg.answered = choice
        leg.used = hook
        record.outcome = "answered"

    # -- a stream ------------------------------------------------------------------------------
    async def _stream(self, leg: Leg, choice: Choice, record: Attempt, prepared: Prepared,
                      response: Response, put: Put) -> Result:
        hook = leg.hook(choice.deployment, prepared)
        loop = asyncio.get_running_loop()
        watch = Idle(loop.time() + leg.limits.idle_timeout)
        try:
            return await self._pump(leg, choice, record, prepared, response, put, hook, watch)
        finally:
            watch.close()

    async def _pump(self, leg: Leg, choice: Choice, record: Attempt, prepared: Prepared,
                    response: Response, put: Put, hook: Hook, watch: Idle) -> Result:
        """`_stream`'s loop: one upstream read per pass, its bytes translated and sent on. The
        idle deadline counts only the time spent reading (`Idle`); one event's way through here
        is the per-event cost of a paced stream (docs/benchmarks.md "The per-event path")."""
        translator = hook.translator
        idle = leg.limits.idle_timeout
        loop = watch.loop
        progress = translator.progress
        held: list[bytes] | None = []
        size = 0

        async def send(message: Message) -> None:
            """To the client's side; time spent waiting for a slow client is no upstream silence."""
            before = loop.time()
            await put(message)
            watch.deadline += loop.time() - before

        while True:
            reason = None
            if watch.handle is None:
                watch.arm()
            watch.reading = True
            try:
                chunk = await response.next_chunk()
            except asyncio.CancelledError:
                if not watch.timed_out():
                    raise
                reason = f"the upstream sent no event for {idle:g} s"
            except ClientError as exc:
                reason = str(exc)
            finally:
                watch.reading = False
            if reason is not None:
                if held is not None:
                    return self._failed(leg, choice, record, "retry", f"before content: {reason}")
                # after content nothing is retried: the client's stream ends with its failure
                await send(Data(hook.cut(f"upstream stream ended mid-answer: {reason}")))
                self._late_failure(leg, choice, record, hook, reason)
                await send(Ended())
                return None
            out = _joined(hook.end() if chunk is None else hook(chunk))
            if translator.progress != progress:
                progress, watch.deadline = translator.progress, loop.time() + idle
            if held is not None:
                if translator.content_started or size + len(out) > policy.HOLD_BYTES:
                    leg.streaming = hook
                    await send(StreamHead(_stream_headers(response.headers)))
                    await send(Data(b"".join([*held, out])))
                    held = None
                elif translator.early_failure is not None or translator.finished or chunk is None:
                    failure = translator.early_failure
                    verdict = policy.of_code(failure.code) if failure is not None else "retry"
                    reason = (f"{failure.code}: {failure.message}" if failure is not None
                              else "the stream ended before any content")
                    if verdict != "final":
                        wait = policy.retry_after((), None, failure.message if failure else "")
                        # the upstream's own bytes, passed on (translated as a whole answer) when
                        # nothing else can serve what this one refused (`elsewhere`, `overflow`)
                        raw = _kept_upstream(hook)
                        answer = Whole(response.status, _whole_headers(response.headers, raw), raw, choice,
                                       prepared) if verdict != "retry" and raw is not None else None
                        return self._failed(leg, choice, record, verdict, f"before content: {reason}"[:500],
                                            wait, answer)
                    # the upstream's own answer, which no retry changes (it said nothing, or
                    # refused the request): the client gets it in its stream
                    await send(StreamHead(_stream_headers(response.headers)))
                    await send(Data(b"".join([*held, out, _joined(hook.end())])))
                    self._settle(leg, choice, record, "answered")
                    leg.answered, leg.used = choice, hook
                    record.outcome, record.reason = "passed on", reason[:500]
                    await send(Ended())
                    return None
                else:
                    held.append(out)
                    size += len(out)
                    continue
            elif out:  # `send`, inlined: this is the way of every event of a stream
                before = loop.time()
                await put(Data(out))
                watch.deadline += loop.time() - before
            if translator.finished or chunk is None:
                if chunk is not None:
                    await send(Data(_joined(hook.end())))
                self._answered(leg, choice, record, hook)
                self._remember_response(leg, choice, hook)
                await send(Ended())
                if chunk is not None:
                    await self._drain(response, hook)
                return None

    def _late_failure(self, leg: Leg, choice: Choice, record: Attempt, hook: Hook, reason: str) -> None:
        """After content nothing is retried: the client's stream ended with its failure (`cut`)."""
        self._settle(leg, choice, record, "failed")
        leg.answered, leg.used = choice, hook
        record.outcome, record.reason = "answered", f"cut after content: {reason}"[:500]

    def _remember_response(self, leg: Leg, choice: Choice, hook: Hook) -> None:
        """The answer's response id: a later `previous_response_id` naming it comes back here."""
        final = getattr(hook, "final_response", None)
        response = final() if callable(final) else None
        if isinstance(response, dict) and isinstance(response.get("id"), str):
            leg.balancer.remember([f"resp:{response['id']}"], choice.name)

    async def _drain(self, response: Response, hook: Hook) -> None:
        """The upstream's bytes after its terminal event, read a short while (kept by the hook):
        a body read to its end leaves its connection for the next request."""
        read = 0
        try:
            async with asyncio.timeout(DRAIN_SECONDS):
                while read < DRAIN_BYTES and (chunk := await response.next_chunk()) is not None:
                    read += len(chunk)
                    hook(chunk)
        except (TimeoutError, ClientError):
            pass


def _kept_upstream(hook: Hook) -> bytes | None:
    """What the hook kept of the upstream's body, when it kept all of it (`StreamHook.upstream`)."""
    kept = getattr(hook, "upstream", None)
    if kept is None or getattr(hook, "upstream_dropped", 0):
        return None
    return bytes(kept)


def _joined(out: bytes | list[bytes | memoryview]) -> bytes:
    if isinstance(out, bytes):
        return out
    return b"".join(out)


def _said(exc: BaseException, leg: Leg) -> str:
    if isinstance(exc, TimeoutError):
        return f"no byte of the answer for {leg.limits.idle_timeout:g} s"
    return str(exc)


def _whole_headers(headers: list[tuple[str, str]], body: bytes) -> list[tuple[str, str]]:
    return [*((k, v) for k, v in headers if k not in HOP), ("content-length", str(len(body)))]


def _stream_headers(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The upstream's head for the client's stream: its own framing and encoding gone (the
    client's body is the translator's), the client's content type."""
    kept = [(k, v) for k, v in headers if k not in HOP and k not in ("content-type", "content-encoding")]
    return [*kept, ("content-type", "text/event-stream"), ("cache-control", "no-cache")]

"""addon/upstream/runner.py + pump.py: one leg's attempts against local upstreams, through the real
stream translators and `StreamHook`. What is asserted is what the client got and what each
upstream saw, never how long anything took."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import ExitStack
from dataclasses import replace
from typing import Any

import pytest

from addon.routes.routing import Route
from addon.serve.streaming import StreamHook
from addon.upstream import policy
from addon.upstream import runner as runner_module
from addon.upstream.client import Client
from addon.upstream.leg import Leg, Prepared
from addon.upstream.pool import Balancer, Deployment
from addon.upstream.pump import Pump
from addon.upstream.runner import Reply, Runner
from tests.support.fake_upstream import (
    SSE_HEADERS,
    FakeUpstream,
    anthropic_message,
    anthropic_text,
    json_reply,
)
from tests.support.fake_upstream import (
    Reply as Answer,
)
from translators import client_dialects, stream_translator, translate_request
from translators import dialect as dialects
from translators.core.ids import sequential_ids

KEY = "sk-ant-upstream-secret-0123456789"
RESPONSES_BODY = {"model": "gpt-5.5", "stream": True, "input": [{"role": "user", "content": "hi"}]}
MESSAGES_BODY = {"model": "claude-sonnet-4-6", "max_tokens": 100, "stream": True,
                 "messages": [{"role": "user", "content": "hi"}]}
QUICK = policy.Limits(retries=3, retry_seconds=30, idle_timeout=30)


# -- upstream answers ---------------------------------------------------------------------------
def _sse(payload: dict[str, Any]) -> bytes:
    return f"event: {payload['type']}\ndata: {json.dumps(payload)}\n\n".encode()


START = _sse({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                                                   "model": "claude-sonnet-4-6", "content": [], "usage": {
                                                       "input_tokens": 5, "output_tokens": 1}}})
PING = _sse({"type": "ping"})
OVERLOADED = _sse({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
TEXT_OPEN = _sse({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
TEXT = _sse({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "partial"}})


def error(status: int, error_type: str, message: str, headers: Mapping[str, str] | None = None) -> Answer:
    """Anthropic's error body (its API reference, "Errors")."""
    payload = {"type": "error", "error": {"type": error_type, "message": message}}
    status, head, body = json_reply(status, payload)
    return status, {**head, **(headers or {})}, body


def stream(*chunks: bytes, then: Callable[[], None] | None = None) -> Answer:
    def body() -> Iterator[bytes]:
        yield from chunks
        if then is not None:
            then()

    return 200, SSE_HEADERS, body()


class Upstreams:
    """Named local upstreams, each answering its requests from its own list (the last repeats)."""

    def __init__(self, stack: ExitStack, **plans: list[Callable[[], Answer]]) -> None:
        self.plans = plans
        self.servers: dict[str, FakeUpstream] = {}
        for name in plans:
            self.servers[name] = stack.enter_context(FakeUpstream(self._script(name)))

    def _script(self, name: str) -> Callable[[Any, Mapping[str, str], str], Answer]:
        def script(_body: Any, _headers: Mapping[str, str], _path: str) -> Answer:
            plan = self.plans[name]
            return (plan.pop(0) if len(plan) > 1 else plan[0])()

        return script

    def hits(self, name: str) -> int:
        return len(self.servers[name].requests)

    def url(self, name: str) -> str:
        return self.servers[name].url


def deployment(name: str, url: str, window: int | None = None) -> Deployment:
    return Deployment(name, Route("*", dialects.get("anthropic"), url, "claude-sonnet-4-6", None,
                                  context_window=window))


def leg_for(deployments: list[Deployment], fallbacks: list[Deployment] | None = None, *,
            client: str = "responses", limits: policy.Limits = QUICK, stream: bool = True,
            balancer: Balancer | None = None, affinity: tuple[str, ...] = ()) -> Leg:
    body = RESPONSES_BODY if client == "responses" else MESSAGES_BODY
    if not stream:
        body = {**body, "stream": False}

    async def prepare(chosen: Deployment) -> Prepared:
        translation = translate_request(body, "anthropic", chosen.route.model, client=client)
        return Prepared(chosen.route.base_url + translation.path,
                        [*translation.headers.items(), ("x-api-key", KEY)],
                        json.dumps(translation.body).encode(), secrets=(KEY,))

    def hook(chosen: Deployment, _prepared: Prepared) -> StreamHook:
        translation = translate_request(body, "anthropic", chosen.route.model, client=client)
        translator = stream_translator("anthropic", translation, new_id=sequential_ids(), clock=lambda: 0)
        return StreamHook(translator, secrets=(KEY,), speaks=client_dialects.get(client))

    return Leg(balancer or Balancer(tuple(deployments), tuple(fallbacks or ()), backoff=0.05),
               prepare, hook, client_dialects.get(client), limits, stream, affinity=affinity)


def a_then_b(up: Upstreams, limits: policy.Limits = QUICK) -> Leg:
    """A leg over deployments `a` and `b` whose conversation is pinned to `a`: `a` is tried first,
    `b` is where a retry goes."""
    leg = leg_for([deployment("a", up.url("a")), deployment("b", up.url("b"))], limits=limits,
                  affinity=("k",))
    leg.balancer.remember(["k"], "a")
    return leg


async def collect(reply: Reply) -> bytes:
    if isinstance(reply.body, bytes):
        return reply.body
    return b"".join([chunk async for chunk in reply.body])


def run(leg: Leg, scenario: Callable[[Runner, Leg], Any] | None = None) -> Any:
    async def main() -> Any:
        client = Client()
        try:
            runner = Runner(client)
            if scenario is not None:
                return await scenario(runner, leg)
            reply = await runner.answer(leg)
            return reply, await collect(reply)
        finally:
            await client.close()

    return asyncio.run(asyncio.wait_for(main(), 60))


def events(body: bytes) -> list[str]:
    return [line[7:] for line in body.decode().splitlines() if line.startswith("event: ")]


def outcomes(leg: Leg) -> list[tuple[str, str]]:
    return [(a.deployment, a.outcome) for a in leg.attempts]


@pytest.fixture
def stack() -> Iterator[ExitStack]:
    with ExitStack() as exits:
        yield exits


# -- a healthy answer -----------------------------------------------------------------------------
def test_a_healthy_deployment_streams_the_translated_answer(stack: ExitStack) -> None:
    up = Upstreams(stack, a=[lambda: anthropic_text("hello there")])
    leg = leg_for([deployment("a", up.url("a"))])
    reply, body = run(leg)
    assert (reply.status, reply.kind) == (200, "stream")
    assert dict(reply.headers)["content-type"] == "text/event-stream"
    assert events(body)[0] == "response.created" and events(body)[-1] == "response.completed"
    assert b"hello there" in body
    assert outcomes(leg) == [("a", "answered")] and leg.kind == "stream"
    assert leg.answered is not None and leg.answered.name == "a" and leg.used is not None
    request = up.servers["a"].requests[0]
    assert request.header("x-api-key") == KEY and request.header("accept-encoding") == "identity"


def test_a_messages_client_gets_anthropic_events(stack: ExitStack) -> None:
    up = Upstreams(stack, a=[lambda: anthropic_text("hello")])
    _, body = run(leg_for([deployment("a", up.url("a"))], client="messages"))
    assert events(body)[0] == "message_start" and events(body)[-1] == "message_stop"


def test_a_whole_answer_is_passed_on_as_it_came(stack: ExitStack) -> None:
    up = Upstreams(stack, a=[lambda: anthropic_message("whole")])
    leg = leg_for([deployment("a", up.url("a"))], stream=False)
    reply, body = run(leg)
    assert (reply.status, reply.kind) == (200, "upstream")
    assert json.loads(body)["content"][0]["text"] == "whole"
    assert dict(reply.headers)["content-length"] == str(len(body))


# -- retried before the first content ---------------------------------------------------------------
def test_a_529_is_retried_on_the_other_deployment(stack: ExitStack) -> None:
    up = Upstreams(stack, a=[lambda: error(529, "overloaded_error", "Overloaded")],
                   b=[lambda: anthropic_text("from b")])
    leg = leg_for([deployment("a", up.url("a")), deployment("b", up.url("b"))], affinity=("pck:1",))
    leg.balancer.remember(["pck:1"], "a")
    _, body = run(leg)
    assert b"from b" in body and b"Overloaded" not in body
    assert outcomes(leg) == [("a", "retried"), ("b", "answered")]
    assert leg.attempts[0].status == 529 and "529" in leg.attempts[0].reason
    assert leg.balancer.remembered("pck:1") == "b"  # the conversation moved once


def test_an_overload_inside_the_stream_before_content_is_retried_unseen(stack: ExitStack) -> None:
    up = Upstreams(stack, a=[lambda: stream(START, PING, OVERLOADED)], b=[lambda: anthropic_text("from b")])
    leg = a_then_b(up)
    _, body = run(leg)
    assert events(body).count("response.created") == 1
    assert "response.failed" not in events(body) and b"from b" in body
    assert outcomes(leg) == [("a", "retried"), ("b", "answered")]
    assert "server_is_overloaded" in leg.attempts[0].reason


def test_a_refused_connection_is_retried_elsewhere(stack: ExitStack, dead_url: str) -> None:
    up = Upstreams(stack, b=[lambda: anthropic_text("from b")])
    leg = leg_for([deployment("dead", dead_url), deployment("b", up.url("b"))])
    leg.balancer.remember(["k"], "dead")
    leg.affinity = ("k",)
    _, body = run(leg)
    assert b"from b" in body
    assert outcomes(leg) == [("dead", "retried"), ("b", "answered")]
    assert leg.attempts[0].status is None and "cannot reach" in leg.attempts[0].reason


@pytest.mark.parametrize("silence", ["nothing", "pings only"])
def test_silence_before_content_is_an_idle_timeout_and_retried(stack: ExitStack, silence: str) -> None:
    release = threading.Event()

    def quiet() -> Answer:
        def body() -> Iterator[bytes]:
            yield START
            while not release.wait(0.02 if silence == "pings only" else 10):
                if silence == "pings only":
                    yield PING

        return 200, SSE_HEADERS, body()

    up = Upstreams(stack, a=[quiet], b=[lambda: anthropic_text("from b")])
    leg = a_then_b(up, replace(QUICK, idle_timeout=0.3))
    try:
        _, body = run(leg)
    finally:
        release.set()
    assert b"from b" in body
    assert outcomes(leg) == [("a", "retried"), ("b", "answered")]
    assert "no event for 0.3 s" in leg.attempts[0].reason


def test_a_401_on_one_deployment_goes_elsewhere_and_cools_it(stack: ExitStack) -> None:
    up = Upstreams(stack, a=[lambda: error(401, "authentication_error", "invalid x-api-key")],
                   b=[lambda: anthropic_text("from b")])
    leg = a_then_b(up)
    _, body = run(leg)
    assert b"from b" in body
    assert leg.balancer.health("a").failures == 1 and "HTTP 401" in leg.attempts[0].reason


def test_a_pool_of_one_passes_its_401_on_each_time_and_cools_nothing(stack: ExitStack) -> None:
    """Nothing else could serve what a lone upstream refuses for good: its next turn is sent, and
    the client gets the refusal itself, not a "no deployment was usable"."""
    up = Upstreams(stack, a=[lambda: error(401, "authentication_error", "invalid x-api-key")])
    balancer = Balancer((deployment("a", up.url("a")),))
    for _ in range(2):
        reply, body = run(leg_for([deployment("a", up.url("a"))], balancer=balancer))
        assert reply.status == 401 and b"invalid x-api-key" in body
    assert up.hits("a") == 2 and balancer.health("a").failures == 0


def test_a_pool_of_one_waits_for_its_retry_after_and_tries_again(stack: ExitStack) -> None:
    up = Upstreams(stack, a=[lambda: error(429, "rate_limit_error", "slow down", {"retry-after": "0.2"}),
                             lambda: anthropic_text("second time")])
    leg = leg_for([deployment("a", up.url("a"))])
    _, body = run(leg)
    assert b"second time" in body
    assert outcomes(leg) == [("a", "retried"), ("a", "answered")]


def test_a_context_overflow_goes_to_the_fallback_with_the_larger_window(stack: ExitStack) -> None:
    too_long = "prompt is too long: 40000 tokens > 32000 maximum"
    up = Upstreams(stack, small=[lambda: error(400, "invalid_request_error", too_long)],
                   large=[lambda: anthropic_text("fits here")])
    leg = leg_for([deployment("small", up.url("small"), window=32_000)],
                  [deployment("large", up.url("large"), window=200_000)])
    _, body = run(leg)
    assert b"fits here" in body
    assert outcomes(leg) == [("small", "retried"), ("large", "answered")]
    assert leg.answered is not None and leg.answered.fallback


def test_an_overflow_with_nowhere_larger_is_passed_on(stack: ExitStack) -> None:
    up = Upstreams(stack, a=[lambda: error(400, "invalid_request_error", "prompt is too long")])
    leg = leg_for([deployment("a", up.url("a"), window=32_000)])
    reply, body = run(leg)
    assert (reply.status, reply.kind) == (400, "upstream") and b"prompt is too long" in body
    assert outcomes(leg) == [("a", "passed on")]


# -- not retried ------------------------------------------------------------------------------------
def test_a_client_error_is_passed_on_at_once(stack: ExitStack) -> None:
    up = Upstreams(stack, a=[lambda: error(400, "invalid_request_error", "tools.0: bad schema")],
                   b=[lambda: anthropic_text("never")])
    leg = a_then_b(up)
    reply, body = run(leg)
    assert (reply.status, reply.kind) == (400, "upstream") and b"bad schema" in body
    assert outcomes(leg) == [("a", "passed on")] and up.hits("b") == 0


def test_a_stream_that_says_nothing_is_its_upstreams_answer_and_not_retried(stack: ExitStack) -> None:
    # what llama-cpp-python sends for a request over its context (docs/chat.md "Compatible servers")
    up = Upstreams(stack, a=[lambda: stream(PING)], b=[lambda: anthropic_text("never")])
    leg = a_then_b(up)
    reply, body = run(leg)
    assert (reply.status, reply.kind, events(body)[-1]) == (200, "stream", "response.failed")
    assert b"invalid_prompt" in body and up.hits("b") == 0
    assert outcomes(leg) == [("a", "passed on")]


def test_after_content_a_broken_stream_is_not_retried_and_ends_with_the_clients_failure(
        stack: ExitStack) -> None:
    def dies() -> Answer:
        def body() -> Iterator[bytes]:
            yield START + TEXT_OPEN + TEXT
            raise ConnectionResetError  # the fake's handler drops the connection mid-body

        return 200, SSE_HEADERS, body()

    up = Upstreams(stack, a=[dies], b=[lambda: anthropic_text("never")])
    leg = a_then_b(up)
    _, body = run(leg)
    assert b"partial" in body and events(body)[-1] == "response.failed"
    assert up.hits("b") == 0
    assert leg.attempts[0].outcome == "answered" and "cut after content" in leg.attempts[0].reason


def test_after_content_silence_past_the_idle_timeout_ends_the_clients_stream_with_its_failure(
        stack: ExitStack) -> None:
    release = threading.Event()
    up = Upstreams(stack, a=[lambda: stream(START + TEXT_OPEN + TEXT, then=lambda: release.wait(20))],
                   b=[lambda: anthropic_text("never")])
    leg = a_then_b(up, replace(QUICK, idle_timeout=0.3))
    try:
        _, body = run(leg)
    finally:
        release.set()
    assert b"partial" in body and events(body)[-1] == "response.failed"
    assert up.hits("b") == 0
    assert leg.attempts[0].reason == "cut after content: the upstream sent no event for 0.3 s"


def test_the_answer_ends_at_the_terminal_event_though_the_upstream_keeps_the_connection(
        stack: ExitStack) -> None:
    release = threading.Event()
    *_, chunks = anthropic_text("done")
    up = Upstreams(stack, a=[lambda: stream(*chunks, then=lambda: release.wait(20))])
    leg = leg_for([deployment("a", up.url("a"))])
    try:
        _, body = run(leg)
    finally:
        release.set()
    assert events(body)[-1] == "response.completed"


# -- all failed ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(("client", "status", "code"), [("responses", 503, "server_error"),
                                                         ("messages", 529, "overloaded_error")])
def test_when_every_attempt_fails_the_client_gets_what_it_retries(stack: ExitStack, client: str, status: int,
                                                                  code: str) -> None:
    up = Upstreams(stack, a=[lambda: error(529, "overloaded_error", "Overloaded")],
                   b=[lambda: error(503, "api_error", f"down (key {KEY})")])
    leg = leg_for([deployment("a", up.url("a")), deployment("b", up.url("b"))], client=client,
                  limits=replace(QUICK, retries=1))
    reply, body = run(leg)
    assert (reply.status, reply.kind) == (status, "gave_up")
    error_body = json.loads(body)["error"]
    assert (error_body.get("code") or error_body.get("type")) == code
    assert 1 <= int(dict(reply.headers)["retry-after"]) <= policy.GIVE_UP_WAIT
    assert "Please try again in" in error_body["message"] and KEY not in body.decode()
    assert outcomes(leg) == [("a", "retried"), ("b", "failed")] or outcomes(leg) == [("b", "retried"),
                                                                                       ("a", "failed")]


def test_the_attempt_limit_holds(stack: ExitStack) -> None:
    up = Upstreams(stack, **{n: [lambda: error(500, "api_error", "boom")] for n in "abcd"})
    leg = leg_for([deployment(n, up.url(n)) for n in "abcd"], limits=replace(QUICK, retries=2))
    reply, _ = run(leg)
    assert reply.kind == "gave_up" and len(leg.attempts) == 3
    assert sum(up.hits(n) for n in "abcd") == 3


def test_no_retries_when_retry_seconds_is_zero(stack: ExitStack) -> None:
    up = Upstreams(stack, a=[lambda: error(500, "api_error", "boom")], b=[lambda: anthropic_text("b")])
    leg = a_then_b(up, replace(QUICK, retry_seconds=0))
    reply, _ = run(leg)
    assert reply.kind == "gave_up" and up.hits("b") == 0


def test_a_cooldown_past_the_time_limit_is_not_waited_for(stack: ExitStack) -> None:
    up = Upstreams(stack, a=[lambda: error(429, "rate_limit_error", "later", {"retry-after": "50"})])
    leg = leg_for([deployment("a", up.url("a"))], limits=replace(QUICK, retry_seconds=5))
    reply, _ = run(leg)
    assert reply.kind == "gave_up" and up.hits("a") == 1
    assert dict(reply.headers)["retry-after"] == str(policy.GIVE_UP_WAIT)  # the cooldown, capped


# -- keep-alives for a client that has them -------------------------------------------------------------
def test_a_messages_client_gets_pings_while_the_upstream_is_silent_then_the_answer(
        stack: ExitStack, monkeypatch: pytest.MonkeyPatch) -> None:
    fast_pings(monkeypatch)
    release = threading.Event()
    status, headers, chunks = anthropic_text("after a wait")
    up = Upstreams(stack, a=[lambda: (status, headers, _after(release, chunks))])

    async def scenario(runner: Runner, leg: Leg) -> tuple[Reply, list[bytes]]:
        reply = await runner.answer(leg)
        assert reply.status == 200 and not isinstance(reply.body, bytes)
        got: list[bytes] = []
        async for chunk in reply.body:
            got.append(chunk)
            if chunk.startswith(b"event: ping") and got.count(chunk) == 3:
                release.set()
        return reply, got

    leg = leg_for([deployment("a", up.url("a"))], client="messages")
    try:
        _, got = run(leg, scenario)
    finally:
        release.set()
    body = b"".join(got)
    assert events(body)[:3] == ["ping", "ping", "ping"]
    assert events(body)[3] == "message_start" and events(body)[-1] == "message_stop"


def test_after_pings_a_leg_that_gives_up_ends_the_stream_with_an_overload(
        stack: ExitStack, monkeypatch: pytest.MonkeyPatch) -> None:
    fast_pings(monkeypatch)
    release = threading.Event()

    def late_overload() -> Answer:
        return 200, SSE_HEADERS, _after(release, [START, OVERLOADED])

    up = Upstreams(stack, a=[late_overload])
    leg = leg_for([deployment("a", up.url("a"))], client="messages", limits=replace(QUICK, retries=0))

    async def scenario(runner: Runner, leg: Leg) -> bytes:
        reply = await runner.answer(leg)
        assert reply.status == 200 and not isinstance(reply.body, bytes)
        got = b""
        async for chunk in reply.body:
            got += chunk
            release.set()
        return got

    try:
        body = run(leg, scenario)
    finally:
        release.set()
    assert events(body)[0] == "ping" and events(body)[-1] == "error"
    assert b"overloaded_error" in body and b"message_start" not in body


def fast_pings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pings every 50 ms, so a test sees several before its upstream says anything."""
    get = client_dialects.get
    messages = get("messages")
    assert messages.keep_alive is not None
    fast = replace(messages, keep_alive=replace(messages.keep_alive, every=0.05))
    monkeypatch.setattr(client_dialects, "get", lambda name: fast if name == "messages" else get(name))


def _after(release: threading.Event, chunks: list[bytes] | Any) -> Iterator[bytes]:
    release.wait(20)
    yield from chunks


def test_a_responses_client_gets_nothing_until_content(stack: ExitStack) -> None:
    release, opened = threading.Event(), threading.Event()

    def slow() -> Answer:
        def body() -> Iterator[bytes]:
            yield START
            opened.set()
            release.wait(20)
            yield TEXT_OPEN + TEXT
            yield from anthropic_text("")[2][-2:]

        return 200, SSE_HEADERS, body()

    up = Upstreams(stack, a=[slow])

    async def scenario(runner: Runner, leg: Leg) -> bytes:
        task = asyncio.create_task(runner.answer(leg))
        while not opened.is_set():
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.1)
        assert not task.done()  # the opening events went upstream, nothing to the client
        release.set()
        return await collect(await task)

    try:
        body = run(leg_for([deployment("a", up.url("a"))]), scenario)
    finally:
        release.set()
    assert events(body)[0] == "response.created" and b"partial" in body


# -- the client leaves, a refusal ----------------------------------------------------------------------
def test_a_client_that_leaves_mid_stream_closes_the_upstream_and_frees_the_deployment(
        stack: ExitStack) -> None:
    release = threading.Event()

    def endless() -> Answer:
        def body() -> Iterator[bytes]:
            yield START + TEXT_OPEN + TEXT
            release.wait(20)
            yield TEXT

        return 200, SSE_HEADERS, body()

    up = Upstreams(stack, a=[endless])
    leg = leg_for([deployment("a", up.url("a"))])

    async def scenario(runner: Runner, leg: Leg) -> int:
        reply = await runner.answer(leg)
        assert isinstance(reply.body, AsyncIterator)
        await reply.body.__anext__()
        await reply.body.aclose()  # type: ignore[attr-defined]
        await asyncio.sleep(0)
        return leg.balancer.health("a").in_flight

    try:
        assert run(leg, scenario) == 0
    finally:
        release.set()
    assert leg.attempts[0].outcome == "dropped"


def test_a_request_a_deployment_refuses_to_translate_is_answered_in_the_clients_shape() -> None:
    from translators import UnsupportedFeature

    leg = leg_for([deployment("a", "http://127.0.0.1:9")])

    async def refuse(_chosen: Deployment) -> Prepared:
        raise UnsupportedFeature("no images here", param="input[0]")

    leg.prepare = refuse
    reply, body = run(leg)
    assert (reply.status, reply.kind) == (400, "refusal")
    assert json.loads(body)["error"]["message"] == "no images here"


# -- several turns on one pool ---------------------------------------------------------------------
def test_a_turn_waiting_on_a_probe_goes_once_the_probe_s_answer_begins(stack: ExitStack) -> None:
    second_arrived = threading.Event()
    answers = iter([True, False])

    def answer() -> Answer:
        first = next(answers, False)
        if not first:
            second_arrived.set()
            return anthropic_text("second")
        *_, chunks = anthropic_text("probe")
        return 200, SSE_HEADERS, _after_first(chunks, second_arrived)

    up = Upstreams(stack, a=[answer])
    balancer = Balancer((deployment("a", up.url("a")),), backoff=0.01)
    balancer.done(balancer.pick(0) or pytest.fail("no pick"), 0, "failed")  # a was down: cooling
    legs = [leg_for([], balancer=balancer) for _ in range(2)]

    async def scenario(runner: Runner, _leg: Leg) -> list[bytes]:
        async def one(leg: Leg) -> bytes:
            return await collect(await runner.answer(leg))

        return list(await asyncio.gather(*(one(leg) for leg in legs)))

    try:
        bodies = run(legs[0], scenario)
    finally:
        second_arrived.set()
    assert sorted(b"probe" in body for body in bodies) == [False, True]
    assert all(events(body)[-1] == "response.completed" for body in bodies)
    assert up.hits("a") == 2 and balancer.health("a").failures == 0


def _after_first(chunks: list[bytes], gate: threading.Event) -> Iterator[bytes]:
    yield chunks[0]
    gate.wait(20)  # the probe's stream runs on until the waiting turn's request arrived
    yield from chunks[1:]


def test_200_concurrent_turns_over_a_pool_with_a_dead_deployment_all_succeed(
        stack: ExitStack, dead_url: str) -> None:
    """The dead deployment is tried once, then cooling; once its cooldown ends (the clock moved
    mid-way), by one probe, however many turns are in flight."""
    up = Upstreams(stack, ok=[lambda: anthropic_text("fine")])
    dead, healthy = deployment("dead", dead_url), deployment("ok", up.url("ok"))
    balancer = Balancer((dead, healthy), backoff=1.0)
    now = [0.0]

    legs: list[Leg] = []

    async def scenario(runner: Runner, _leg: Leg) -> list[Reply]:
        runner.clock = runner.pump.clock = lambda: now[0]
        warm = leg_for([], balancer=balancer, affinity=("k",))
        balancer.remember(["k"], "dead")
        await collect(await runner.answer(warm))  # the dead one fails, the turn moves
        legs.append(warm)
        replies: list[Reply] = []

        async def turn(n: int) -> None:
            if n == 100:
                now[0] = 1.5  # past the first cooldown: the next pick may probe it
            leg = leg_for([], balancer=balancer)
            legs.append(leg)
            reply = await runner.answer(leg)
            await collect(reply)
            replies.append(reply)

        await asyncio.gather(*(turn(n) for n in range(200)))
        return replies

    replies = run(leg_for([], balancer=balancer), scenario)
    assert len(replies) == 200 and all(r.kind == "stream" and r.status == 200 for r in replies)
    tries_of_dead = [a for leg in legs for a in leg.attempts if a.deployment == "dead"]
    assert len(tries_of_dead) == 2  # the warm-up's, and one probe once its cooldown was over
    assert balancer.health("dead").in_flight == 0
    assert up.hits("ok") == 201


def test_after_pings_an_upstream_error_the_client_must_see_is_said_in_its_stream(
        stack: ExitStack, monkeypatch: pytest.MonkeyPatch) -> None:
    fast_pings(monkeypatch)
    release = threading.Event()

    def late_refusal() -> Answer:
        release.wait(20)
        return error(400, "invalid_request_error", "tools.0.name: bad name")

    up = Upstreams(stack, a=[late_refusal])
    leg = leg_for([deployment("a", up.url("a"))], client="messages")

    async def scenario(runner: Runner, leg: Leg) -> bytes:
        reply = await runner.answer(leg)
        assert reply.status == 200 and not isinstance(reply.body, bytes)
        got = b""
        async for chunk in reply.body:
            got += chunk
            release.set()
        return got

    try:
        body = run(leg, scenario)
    finally:
        release.set()
    assert events(body)[0] == "ping" and events(body)[-1] == "error"
    assert b"bad name" in body and b"invalid_request_error" in body
    assert outcomes(leg) == [("a", "passed on")]


def test_a_client_that_leaves_before_the_head_abandons_the_attempt(stack: ExitStack) -> None:
    release = threading.Event()

    def slow_head() -> Answer:
        release.wait(20)
        return anthropic_text("too late")

    up = Upstreams(stack, a=[slow_head])
    leg = leg_for([deployment("a", up.url("a"))])

    async def scenario(runner: Runner, leg: Leg) -> tuple[int, str]:
        task = asyncio.create_task(runner.answer(leg))
        while not up.servers["a"].requests:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return leg.balancer.health("a").in_flight, leg.attempts[0].outcome

    try:
        assert run(leg, scenario) == (0, "dropped")
    finally:
        release.set()


def test_a_reply_whose_body_is_never_read_abandons_its_attempt_when_closed(stack: ExitStack) -> None:
    release = threading.Event()

    def long() -> Answer:
        def body() -> Iterator[bytes]:
            yield START + TEXT_OPEN + TEXT
            release.wait(20)

        return 200, SSE_HEADERS, body()

    up = Upstreams(stack, a=[long])
    leg = leg_for([deployment("a", up.url("a"))])

    async def scenario(runner: Runner, leg: Leg) -> tuple[int, str]:
        reply = await runner.answer(leg)
        await reply.aclose()  # e.g. the head could not be written: the body was never started
        return leg.balancer.health("a").in_flight, leg.attempts[0].outcome

    try:
        assert run(leg, scenario) == (0, "dropped")
    finally:
        release.set()


# -- a sender that writes the stream's data itself ---------------------------------------------------
def test_an_attached_sender_gets_the_data_after_it_past_the_iterator_in_order(stack: ExitStack) -> None:
    release = threading.Event()

    def gated() -> Answer:
        def body() -> Iterator[bytes]:
            yield START + TEXT_OPEN + TEXT
            release.wait(20)
            for _ in range(5):
                yield TEXT
            yield from anthropic_text("")[2][-2:]

        return 200, SSE_HEADERS, body()

    up = Upstreams(stack, a=[gated])

    async def scenario(runner: Runner, leg: Leg) -> tuple[list[tuple[str, bytes]], Reply]:
        reply = await runner.answer(leg)
        assert reply.attach is not None and not isinstance(reply.body, bytes)
        got: list[tuple[str, bytes]] = []

        async def sink(data: bytes) -> None:
            got.append(("sink", data))

        body = aiter(reply.body)
        got.append(("iterator", await anext(body)))  # what was queued before the sender attached
        reply.attach(sink)
        release.set()
        got += [("iterator", chunk) async for chunk in body]
        return got, reply

    try:
        got, _ = run(leg_for([deployment("a", up.url("a"))]), scenario)
    finally:
        release.set()
    whole = b"".join(data for _, data in got)
    assert events(whole)[0] == "response.created" and events(whole)[-1] == "response.completed"
    assert b"partial" * 6 in whole  # the done events hold the whole text, in order
    assert got[0][0] == "iterator" and {who for who, _ in got[1:]} == {"sink"}


# -- what the client's side keeps of the stream ----------------------------------------------------
def test_a_failure_after_a_long_stream_continues_its_numbering_from_a_bounded_copy(
        stack: ExitStack, monkeypatch: pytest.MonkeyPatch) -> None:
    """The client's side keeps the stream it wrote only up to `SENT_KEPT` bytes, however long the
    answer, and counts the events past it: a failure it writes after them (here a gateway fault
    once the answer ended) still carries the next sequence number."""
    monkeypatch.setattr(runner_module, "SENT_KEPT", 4096)
    delta = _sse({"type": "content_block_delta", "index": 0,
                  "delta": {"type": "text_delta", "text": "a long answer, " * 20}})
    close = [_sse({"type": "content_block_stop", "index": 0}),
             _sse({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                   "usage": {"output_tokens": 9}}),
             _sse({"type": "message_stop"})]

    def paced() -> Iterator[bytes]:  # a piece per read, as a model streams
        for chunk in [START, TEXT_OPEN, *[delta] * 300, *close]:
            yield chunk
            time.sleep(0.0005)

    up = Upstreams(stack, a=[lambda: (200, SSE_HEADERS, paced())])

    def fault(*_args: Any) -> None:
        raise RuntimeError("a gateway fault")

    monkeypatch.setattr(Pump, "_remember_response", fault)
    leg = leg_for([deployment("a", up.url("a"))])
    handed: list[int] = []
    real = leg.speaks.stream_error

    def stream_error(sent: bytes, message: str, **rest: Any) -> bytes:
        handed.append(len(sent))
        return real(sent, message, **rest)

    leg.speaks = replace(leg.speaks, stream_error=stream_error)
    _, body = run(leg)
    numbers = [json.loads(line[6:])["sequence_number"] for line in body.decode().splitlines()
               if line.startswith("data: ")]
    assert events(body)[-1] == "response.failed" and b"a gateway fault" in body
    assert numbers == list(range(len(numbers)))
    assert len(body) > 100_000 and handed and handed[0] < 4096 + 2000  # the first pieces, not all

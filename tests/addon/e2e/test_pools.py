"""A route of two deployments through real mitmdump (docs/pools.md): each failure before content
is tried on the other deployment and the client gets the answer; after content the client's
stream ends the way its own retry logic expects; when every attempt failed the client gets the
error it retries. The Responses client is the openai SDK (what Codex speaks), the Messages client
the anthropic SDK (what Claude Code speaks); both upstreams are strict Anthropic fakes
(tests/support/strict/anthropic.py).

One proxy for the module, routed with a TOML file, one pool per test (a pool's health, its
cooldowns and conversations, is its own: `lane` gives each test a model of its own):
- `gpt-lane<n>-*` / `claude-lane<n>-*`: deployments `a` and `b`, the two fakes, idle timeout 2 s;
- `gpt-dead<n>-*`: deployments `dead` (a port nothing listens on) and `a`;
- `gpt-gone<n>-*` / `claude-gone<n>-*`: both fakes, retries within 1 s only (a give-up is quick).

Each fake answers from a shared plan: the first requests to reach *either* deployment get the
planned failures, the rest a text answer; which deployment failed and which answered is read
from what each fake received.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest
from mitmproxy import http, io
from websockets.asyncio.client import connect

from tests.support.fake_upstream import SSE_HEADERS, FakeUpstream, Reply, anthropic_text, json_reply
from tests.support.mitmdump import MitmDump

pytestmark = pytest.mark.timeout(180)

TEXT = "answered by the pool"
KEYS = {"POOL_KEY_A": "sk-ant-pool-a-0123456789", "POOL_KEY_B": "sk-ant-pool-b-0123456789"}
MODEL = "claude-sonnet-4-6"


def _sse(payload: dict[str, Any]) -> bytes:
    return f"event: {payload['type']}\ndata: {json.dumps(payload)}\n\n".encode()


START = _sse({"type": "message_start", "message": {
    "id": "msg_pool", "type": "message", "role": "assistant", "model": MODEL, "content": [],
    "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 5, "output_tokens": 1}}})
PING = _sse({"type": "ping"})
OVERLOADED = _sse({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
TEXT_OPEN = _sse({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
TEXT_DELTA = _sse({"type": "content_block_delta", "index": 0,
                   "delta": {"type": "text_delta", "text": "partial answer"}})


def anthropic_error(status: int, kind: str, message: str, headers: Mapping[str, str] | None = None) -> Reply:
    """Anthropic's error body (https://platform.claude.com/docs/en/api/errors)."""
    status, head, body = json_reply(status, {"type": "error", "error": {"type": kind, "message": message}})
    return status, {**head, **(headers or {})}, body


def rate_limited() -> Reply:
    return anthropic_error(429, "rate_limit_error", "Number of request tokens has exceeded your limit",
                           {"retry-after": "30"})


def overloaded() -> Reply:
    return anthropic_error(529, "overloaded_error", "Overloaded")


def overloaded_in_stream() -> Reply:
    return 200, SSE_HEADERS, [START, PING, OVERLOADED]


def overloaded_after_content() -> Reply:
    return 200, SSE_HEADERS, [START, TEXT_OPEN, TEXT_DELTA, OVERLOADED]


def silent() -> Reply:
    def body() -> Iterator[bytes]:
        yield START
        time.sleep(4)  # past the route's idle_timeout (2 s)
        yield PING

    return 200, SSE_HEADERS, body()


class Plan:
    """The failures the next requests get, whichever deployment they reach; then text answers."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.failures: list[Callable[[], Reply]] = []
        self.always: Callable[[], Reply] | None = None

    def next(self) -> Reply | None:
        with self.lock:
            if self.always is not None:
                return self.always()
            return self.failures.pop(0)() if self.failures else None


PLAN = Plan()


def script(_body: Any, _headers: Mapping[str, str], path: str) -> Reply:
    if not path.startswith("/v1/messages"):
        return json_reply(404, {"type": "error", "error": {"type": "not_found_error", "message": "no"}})
    planned = PLAN.next()
    return planned if planned is not None else anthropic_text(TEXT, MODEL)


def deployments(*entries: tuple[str, str, str | None]) -> str:
    return "[" + ", ".join(
        f'{{ name = "{name}", base_url = "{url}"' + (f', key_env = "{key}"' if key else "") + " }"
        for name, url, key in entries) + "]"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, dead_url: str) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("pools")
    with FakeUpstream(script) as a, FakeUpstream(script) as b:
        pool = deployments(("a", a.url, "POOL_KEY_A"), ("b", b.url, "POOL_KEY_B"))
        dead = deployments(("dead", dead_url, None), ("a", a.url, "POOL_KEY_A"))
        routes = tmp / "routes.toml"
        routes.write_text("".join(
            f'[[route]]\nmodel = "{pattern}"\nupstream = "anthropic"\ntarget_model = "{MODEL}"\n{extra}\n'
            f"deployments = {members}\n"
            for n in range(LANES)
            for pattern, extra, members in (
                (f"gpt-lane{n}-*", "idle_timeout = 2", pool), (f"claude-lane{n}-*", "idle_timeout = 2", pool),
                (f"gpt-dead{n}-*", "", dead),
                (f"gpt-gone{n}-*", "retry_seconds = 1", pool),
                (f"claude-gone{n}-*", "retry_seconds = 1", pool))))
        with MitmDump(tmp / "mitm", mode="reverse:https://api.openai.com",
                      options={"gateway_config": str(routes), "gateway_capabilities": "table"},
                      args=["-w", str(tmp / "pool.flows")], env=dict(KEYS)) as mitm:
            yield {"mitm": mitm, "a": a, "b": b, "flows": tmp / "pool.flows"}


LANES = 24
_LANE = itertools.count()


@pytest.fixture
def lane() -> int:
    """A pool of this test's own (its models' number)."""
    n = next(_LANE)
    assert n < LANES
    return n


@pytest.fixture(autouse=True)
def fresh_plan() -> Iterator[None]:
    PLAN.failures.clear()
    PLAN.always = None
    yield
    PLAN.failures.clear()
    PLAN.always = None


@pytest.fixture
def responses(world: dict[str, Any]) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=f"{world['mitm'].url}/v1", api_key="sk-proj-client-0123456789",
                       max_retries=0, timeout=60) as client:
        yield client


@pytest.fixture
def messages(world: dict[str, Any]) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=world["mitm"].url, api_key="sk-ant-client-0123456789",
                               max_retries=0, timeout=60)


def counts(world: dict[str, Any]) -> tuple[int, int]:
    return len(world["a"].requests), len(world["b"].requests)


def served_after_one_failure(world: dict[str, Any], before: tuple[int, int]) -> None:
    """Two requests upstream: one to each deployment (the failure, then the other's answer)."""
    a, b = counts(world)
    assert (a - before[0], b - before[1]) == (1, 1)
    for fake, key in ((world["a"], "POOL_KEY_A"), (world["b"], "POOL_KEY_B")):
        assert fake.requests[-1].headers["x-api-key"] == KEYS[key]  # each deployment its own key


def ask_responses(client: openai.OpenAI, model: str, input: str = "hi", **extra: Any) -> list[Any]:
    return list(client.responses.create(model=model, input=input, stream=True, **extra))


def ask_messages(client: anthropic.Anthropic, model: str) -> anthropic.types.Message:
    with client.messages.stream(model=model, max_tokens=1024,
                                messages=[{"role": "user", "content": "hi"}]) as stream:
        return stream.get_final_message()


FAILURES = {"429 with retry-after": rate_limited, "529": overloaded,
            "an in-stream overload before content": overloaded_in_stream, "silence": silent}


@pytest.mark.parametrize("failure", list(FAILURES), ids=str)
def test_a_responses_turn_goes_on_at_the_other_deployment(world: dict[str, Any], responses: openai.OpenAI,
                                                          failure: str, lane: int) -> None:
    before = counts(world)
    PLAN.failures.append(FAILURES[failure])
    events = ask_responses(responses, f"gpt-lane{lane}-1")
    assert events[-1].type == "response.completed", events[-1]
    assert events[-1].response.output_text == TEXT
    assert [e.type for e in events].count("response.created") == 1  # nothing of the failure
    served_after_one_failure(world, before)


@pytest.mark.parametrize("failure", list(FAILURES), ids=str)
def test_a_messages_turn_goes_on_at_the_other_deployment(world: dict[str, Any], messages: anthropic.Anthropic,
                                                         failure: str, lane: int) -> None:
    before = counts(world)
    PLAN.failures.append(FAILURES[failure])
    message = ask_messages(messages, f"claude-lane{lane}-1")
    assert [b.text for b in message.content if b.type == "text"] == [TEXT]
    served_after_one_failure(world, before)


def test_a_refused_connection_goes_on_at_the_other_deployment(world: dict[str, Any],
        responses: openai.OpenAI, lane: int) -> None:
    for _ in range(3):
        events = ask_responses(responses, f"gpt-dead{lane}-1")
        assert events[-1].type == "response.completed"
        assert events[-1].response.output_text == TEXT


def test_the_record_names_each_attempt_and_the_deployment_that_answered(world: dict[str, Any],
        responses: openai.OpenAI, lane: int) -> None:
    PLAN.failures.append(overloaded)
    ask_responses(responses, f"gpt-lane{lane}-1")
    mitm: MitmDump = world["mitm"]
    deadline = time.monotonic() + 10
    model = f"gpt-lane{lane}-1"
    while model not in mitm.log and time.monotonic() < deadline:
        time.sleep(0.1)
    line = next(line for line in mitm.log.splitlines() if model in line)
    assert "529" in line and "via " in line, mitm.log


def test_mitmproxy_reaches_the_leg_through_the_pipe_in_the_process(world: dict[str, Any],
        responses: openai.OpenAI, lane: int) -> None:
    """addon/patches/loopback_pipe.py: the flow's server connection is the loopback server's
    address, with no local port (no socket was opened for it)."""
    before = len(saved(world["flows"]))
    ask_responses(responses, f"gpt-lane{lane}-1")
    deadline = time.monotonic() + 10
    while len(flows := saved(world["flows"])) == before:
        assert time.monotonic() < deadline, "the flow was not saved"
        time.sleep(0.1)
    conn = flows[-1].server_conn
    assert conn.address is not None and conn.address[0] == "127.0.0.1"
    assert conn.sockname == ("127.0.0.1", 0)


def saved(path: Path) -> list[http.HTTPFlow]:
    with path.open("rb") as f:
        return [flow for flow in io.FlowReader(f).stream() if isinstance(flow, http.HTTPFlow)]


def test_after_content_an_overload_ends_a_responses_stream_with_server_error(
        world: dict[str, Any], responses: openai.OpenAI, lane: int) -> None:
    before = counts(world)
    PLAN.failures.append(overloaded_after_content)
    events = ask_responses(responses, f"gpt-lane{lane}-1")
    assert events[-1].type == "response.failed"
    assert events[-1].response.error.code == "server_error"
    assert "partial answer" in "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert sum(counts(world)) - sum(before) == 1  # nothing retried once content went out


def test_after_content_an_overload_ends_a_messages_stream_with_overloaded_error(
        world: dict[str, Any], lane: int) -> None:
    before = counts(world)
    PLAN.failures.append(overloaded_after_content)
    answer = httpx.post(f"{world['mitm'].url}/v1/messages", timeout=60,
                        headers={"x-api-key": "sk-ant-client-0123456789", "anthropic-version": "2023-06-01"},
                        json={"model": f"claude-lane{lane}-1", "max_tokens": 1024, "stream": True,
                              "messages": [{"role": "user", "content": "hi"}]})
    events = [json.loads(line[5:]) for line in answer.text.splitlines() if line.startswith("data:")]
    assert events[-1]["type"] == "error", events
    assert events[-1]["error"]["type"] == "overloaded_error"
    assert "partial answer" in answer.text
    assert sum(counts(world)) - sum(before) == 1


def test_when_every_attempt_failed_a_responses_client_gets_503_server_error(
        world: dict[str, Any], responses: openai.OpenAI, lane: int) -> None:
    PLAN.always = lambda: anthropic_error(529, "overloaded_error", "Overloaded", {"retry-after": "5"})
    with pytest.raises(openai.InternalServerError) as caught:
        ask_responses(responses, f"gpt-gone{lane}-1")
    assert caught.value.status_code == 503
    assert caught.value.body["code"] == "server_error"
    wait = int(caught.value.response.headers["retry-after"])
    assert 1 <= wait <= 30
    assert "a: HTTP 529" in caught.value.body["message"] and "b: HTTP 529" in caught.value.body["message"]


def test_when_every_attempt_failed_a_messages_client_gets_529(world: dict[str, Any],
        messages: anthropic.Anthropic, lane: int) -> None:
    PLAN.always = lambda: anthropic_error(529, "overloaded_error", "Overloaded", {"retry-after": "5"})
    with pytest.raises(anthropic.APIStatusError) as caught:
        ask_messages(messages, f"claude-gone{lane}-1")
    assert caught.value.status_code == 529
    assert caught.value.body["error"]["type"] == "overloaded_error"  # type: ignore[index]
    assert 1 <= int(caught.value.response.headers["retry-after"]) <= 30


def test_a_conversation_stays_on_one_deployment_while_it_is_healthy(world: dict[str, Any],
        responses: openai.OpenAI, lane: int) -> None:
    """Two new conversations between its turns: spread, they alternate the deployments, so a
    conversation that was not sticky would too."""
    before = counts(world)
    for turn in range(20):
        for other in range(2):
            ask_responses(responses, f"gpt-lane{lane}-1", prompt_cache_key=f"other-{turn}-{other}",
                          input="another conversation")
        events = ask_responses(responses, f"gpt-lane{lane}-1", prompt_cache_key="one-conversation",
                               input=f"sticky turn {turn}")
        assert events[-1].response.output_text == TEXT
    sticky = [sum(b"sticky turn" in r.body for r in fake.requests[start:])
              for fake, start in ((world["a"], before[0]), (world["b"], before[1]))]
    assert sorted(sticky) == [0, 20]


def test_200_concurrent_turns_with_one_dead_deployment_are_all_answered(world: dict[str, Any],
                                                                       lane: int) -> None:
    before = len(world["a"].requests)

    async def turns() -> list[httpx.Response]:
        limits = httpx.Limits(max_connections=200, max_keepalive_connections=200)
        async with httpx.AsyncClient(timeout=120, limits=limits) as client:
            return await asyncio.gather(*(
                client.post(f"{world['mitm'].url}/v1/responses",
                            json={"model": f"gpt-dead{lane}-1", "input": f"turn {n}", "stream": True})
                for n in range(200)))

    answers = asyncio.run(turns())
    assert [a.status_code for a in answers] == [200] * 200
    assert all("event: response.completed" in a.text for a in answers)
    assert len(world["a"].requests) - before == 200


# -- over Codex's WebSocket (docs/websocket.md): each socket request is a flow of its own --------
SOCKET_HEADERS = {"authorization": "Bearer sk-proj-client-0123456789",
                  "openai-beta": "responses_websockets=2026-02-06"}


def socket_turns(world: dict[str, Any], model: str, inputs: list[str]) -> list[list[dict[str, Any]]]:
    """One socket, one request per input (each with its whole input), each request's events."""

    async def scenario() -> list[list[dict[str, Any]]]:
        url = world["mitm"].url.replace("http://", "ws://") + "/v1/responses"
        out = []
        async with connect(url, additional_headers=SOCKET_HEADERS, proxy=None) as ws:
            for text in inputs:
                await ws.send(json.dumps({"type": "response.create", "model": model, "store": False,
                                          "stream": True, "input": text}))
                events: list[dict[str, Any]] = []
                while not events or events[-1]["type"] not in SOCKET_TERMINAL:
                    frame = await ws.recv()
                    assert isinstance(frame, str)
                    events.append(json.loads(frame))
                out.append(events)
        return out

    return asyncio.run(asyncio.wait_for(scenario(), 120))


SOCKET_TERMINAL = ("response.completed", "response.failed", "response.incomplete", "error")


@pytest.mark.parametrize("failure", ["529", "an in-stream overload before content"], ids=str)
def test_a_socket_turn_goes_on_at_the_other_deployment(world: dict[str, Any], failure: str,
                                                       lane: int) -> None:
    before = counts(world)
    PLAN.failures.append(FAILURES[failure])
    (events,) = socket_turns(world, f"gpt-lane{lane}-1", ["hi"])
    assert events[-1]["type"] == "response.completed", events[-1]
    assert [e["type"] for e in events].count("response.created") == 1
    served_after_one_failure(world, before)


def test_a_socket_stays_on_one_deployment_while_it_is_healthy(world: dict[str, Any],
                                                              responses: openai.OpenAI, lane: int) -> None:
    before = counts(world)
    ask_responses(responses, f"gpt-lane{lane}-1", prompt_cache_key="before the socket")
    turns = socket_turns(world, f"gpt-lane{lane}-1", [f"socket turn {n}" for n in range(6)])
    assert all(events[-1]["type"] == "response.completed" for events in turns)
    on_socket = [sum(b"socket turn" in r.body for r in fake.requests[start:])
                 for fake, start in ((world["a"], before[0]), (world["b"], before[1]))]
    assert sorted(on_socket) == [0, 6]


def test_the_saved_flows_show_the_upstream_request_and_hold_no_key(world: dict[str, Any],
        responses: openai.OpenAI, lane: int) -> None:
    PLAN.failures.append(overloaded)
    ask_responses(responses, f"gpt-lane{lane}-1")
    world["mitm"].stop()
    data = Path(world["flows"]).read_bytes()
    for key in KEYS.values():
        assert key.encode() not in data
    assert b"127.0.0.1" in data
    assert b"/v1/messages" in data

"""The Responses WebSocket transport through real mitmdump + the addon (docs/websocket.md), with a
real WebSocket client (the `websockets` library, which the Agents SDK's WebSocket model uses too),
in reverse mode (`openai_base_url`) and regular mode (`HTTPS_PROXY`, the proxy's CA), to the local
Anthropic upstream. What only the socket can show: a prewarm answered without the upstream, later
requests carrying only new items while the upstream gets the whole history, each request a
translated flow of its own, errors as `error` events with their status."""

from __future__ import annotations

import asyncio
import json
import re
import ssl
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from mitmproxy import io as mio
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidStatus

from addon.team import clients_file as clients
from tests.addon.e2e.conftest import CLIENT_KEY, UPSTREAM_MODEL, StartProxy
from tests.addon.e2e.upstream import Upstream, cut, error, raw_stream, stream
from tests.support import fake_upstream
from tests.support.mitmdump import MitmDump
from tests.support.wait import until

pytestmark = pytest.mark.timeout(90)

DEVELOPER = {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Be brief."}]}
USER = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "list the files"}]}
TOOLS = [{"type": "function", "name": "exec_command", "description": "Runs a command.",
          "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}}]
HEADERS = {"authorization": f"Bearer {CLIENT_KEY}", "openai-beta": "responses_websockets=2026-02-06"}
TERMINAL = ("response.completed", "response.failed", "response.incomplete", "error")


def create(**fields: Any) -> str:
    return json.dumps({"type": "response.create", "model": "gpt-5.5", "tools": TOOLS, "store": False,
                       "stream": True, "include": ["reasoning.encrypted_content"],
                       "reasoning": {"effort": "medium"}, **fields})


async def answer(ws: ClientConnection, message: str) -> list[dict[str, Any]]:
    """Send one request; its events up to the one that ends it."""
    await ws.send(message)
    events: list[dict[str, Any]] = []
    while not events or events[-1]["type"] not in TERMINAL:
        frame = await ws.recv()
        assert isinstance(frame, str), "a binary frame"
        events.append(json.loads(frame))
    return events


def outputs(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["item"] for e in events if e["type"] == "response.output_item.done"]


SIGNATURE = "EqQBCkYIBxgCKkBsig-e2e-websocket-0123456789"


def _event(payload: dict[str, Any]) -> bytes:
    return b"event: %s\ndata: %s\n\n" % (payload["type"].encode(), json.dumps(payload).encode())


def thinking_then_tool_call() -> Any:
    """Claude thinks (a signed thinking block), then calls `exec_command`: the signature must come
    back to the upstream with the tool result, whichever transport the client used."""
    chunks = list(fake_upstream.anthropic_tool_use("exec_command", {"cmd": "ls"}, model=UPSTREAM_MODEL)[2])
    thinking = [
        _event({"type": "content_block_start", "index": 0,
                "content_block": {"type": "thinking", "thinking": ""}}),
        _event({"type": "content_block_delta", "index": 0,
                "delta": {"type": "thinking_delta", "thinking": "The user wants the files."}}),
        _event({"type": "content_block_delta", "index": 0,
                "delta": {"type": "signature_delta", "signature": SIGNATURE}}),
        _event({"type": "content_block_stop", "index": 0}),
    ]
    shifted = [c.replace(b'"index": 0', b'"index": 1') for c in chunks[1:]]
    return raw_stream([chunks[0], *thinking, *shifted])


def run(scenario: Callable[[], Awaitable[Any]]) -> Any:
    return asyncio.run(asyncio.wait_for(scenario(), 60))


def reverse_socket(proxy: MitmDump) -> Any:
    return connect(proxy.url.replace("http://", "ws://") + "/v1/responses", additional_headers=HEADERS,
                   proxy=None)


@pytest.fixture(scope="module")
def reverse_proxy(start_proxy: StartProxy) -> MitmDump:
    return start_proxy("ws-reverse", "reverse:https://api.openai.com")


def test_a_prewarm_is_answered_without_the_upstream(reverse_proxy: MitmDump, upstream: Upstream) -> None:
    async def scenario() -> list[dict[str, Any]]:
        async with reverse_socket(reverse_proxy) as ws:
            return await answer(ws, create(generate=False, input=[DEVELOPER]))

    events = run(scenario)
    assert [e["type"] for e in events] == ["response.created", "response.completed"]
    usage = events[-1]["response"]["usage"]
    assert (usage["input_tokens"], usage["output_tokens"], usage["total_tokens"]) == (0, 0, 0)
    assert upstream.received == []


def test_pings_are_answered_through_the_relay_and_a_close_is_clean(reverse_proxy: MitmDump) -> None:
    """The control frames mitmproxy relays to the server end (docs/state.md "The WebSocket
    transport") reach the gateway's endpoint, which answers them."""

    async def scenario() -> tuple[int | None, int | None]:
        async with reverse_socket(reverse_proxy) as ws:
            for _ in range(3):
                await (await ws.ping(b"are you there"))
            await answer(ws, create(generate=False, input=[DEVELOPER]))
            await ws.close(1000)
            received = ws.protocol.close_rcvd
            return ws.close_code, received.code if received else None

    assert run(scenario) == (1000, 1000)


def test_a_turn_prints_its_lines_and_a_client_that_drops_its_socket_is_no_error(
        start_proxy: StartProxy, upstream: Upstream) -> None:
    """Issue 38: the socket is served where mitmproxy hands it over (docs/websocket.md), so a turn
    prints what an HTTP turn prints (the gateway's line, the flow's line with the client's address)
    and the socket's own 101 once; nothing of the gateway's own machinery (a listener, its
    connections, `[replay]` flows, a re-targeted `/<token>` upgrade), and Codex's way of leaving
    (TCP dropped, no close frame) is no error."""
    proxy = start_proxy("ws-quiet", "reverse:https://api.openai.com")
    upstream.reset()
    upstream.plan(stream())

    async def scenario() -> None:
        async with reverse_socket(proxy) as ws:
            await answer(ws, create(input=[USER]))
            ws.transport.abort()  # as Codex leaves: no close frame

    run(scenario)
    until(lambda: "client disconnect" in proxy.log, "the client's disconnect")
    log = proxy.log
    for noise in ("Error in WebSocket connection", "ABNORMAL_CLOSURE", "[replay]", "server listening",
                  "connection open", "WebSocket turn"):
        assert noise not in log, f"{noise!r} printed:\n{log}"
    assert log.count("Switching Protocols") == 1  # the client's own upgrade, its real path
    assert "GET https://api.openai.com/v1/responses" in log
    assert "| 200 |" in log  # the gateway's line
    assert log.count("POST ") == 1  # the turn's flow, printed as the client's
    assert not re.search(r"GET http://127\.0\.0\.1:\d+/[\w-]{16,}", log)


def test_a_tool_loop_over_one_connection_sends_only_new_items_and_the_upstream_gets_the_whole_history(
        reverse_proxy: MitmDump, upstream: Upstream) -> None:
    upstream.plan(thinking_then_tool_call(), stream())

    async def scenario() -> list[list[dict[str, Any]]]:
        async with reverse_socket(reverse_proxy) as ws:
            prewarm = await answer(ws, create(generate=False, input=[DEVELOPER]))
            first = await answer(ws, create(previous_response_id=prewarm[-1]["response"]["id"], input=[USER]))
            (call,) = [i for i in outputs(first) if i["type"] == "function_call"]
            result = {"type": "function_call_output", "call_id": call["call_id"], "output": "a.txt"}
            second = await answer(ws, create(previous_response_id=first[-1]["response"]["id"],
                                             input=[result]))
            return [first, second]

    first, second = run(scenario)
    assert first[-1]["type"] == second[-1]["type"] == "response.completed"
    assert "".join(e["delta"] for e in second if e["type"] == "response.output_text.delta")
    ws_bodies = [r.json for r in upstream.received]
    assert len(ws_bodies) == 2
    # the same conversation over HTTP, whole, as Codex sends it without the socket
    (call,) = [i for i in outputs(first) if i["type"] == "function_call"]
    upstream.reset()
    upstream.plan(stream())
    body = {"model": "gpt-5.5", "tools": TOOLS, "store": False, "stream": True,
            "include": ["reasoning.encrypted_content"], "reasoning": {"effort": "medium"},
            "input": [DEVELOPER, USER, *outputs(first),
                      {"type": "function_call_output", "call_id": call["call_id"], "output": "a.txt"}]}
    with httpx.stream("POST", f"{reverse_proxy.url}/v1/responses", json=body, headers=HEADERS,
                      timeout=30) as response:
        assert response.status_code == 200
        response.read()
    (http_body,) = [r.json for r in upstream.received]
    assert ws_bodies[1] == http_body
    assert [m["role"] for m in http_body["messages"]] == ["user", "assistant", "user"]
    assert SIGNATURE in json.dumps(ws_bodies[1]["messages"][1])  # the thinking block came back
    assert [m["role"] for m in ws_bodies[0]["messages"]] == ["user"]


def test_each_request_is_a_translated_flow_of_its_own(start_proxy: StartProxy, module_dir: Path,
                                                     upstream: Upstream) -> None:
    proxy = start_proxy("ws-saved", "reverse:https://api.openai.com")

    async def scenario() -> None:
        async with reverse_socket(proxy) as ws:
            await answer(ws, create(input=[USER]))
            await answer(ws, create(input=[USER, DEVELOPER]))

    run(scenario)
    proxy.stop()
    with (module_dir / "ws-saved.flows").open("rb") as file:
        flows = list(mio.FlowReader(file).stream())
    posts = [f for f in flows if f.request.method == "POST"]
    assert len(posts) == 2
    for flow in posts:
        info = flow.metadata["gateway"]
        assert (info["upstream"], info["client_model"]) == ("anthropic", "gpt-5.5")
        assert flow.metadata["gateway.websocket"].startswith("ws_")
        assert flow.response.status_code == 200
    (socket,) = [f for f in flows if f.websocket is not None]
    assert socket.metadata["gateway.websocket"].endswith("/v1/responses")
    # issue 38: no internal flow saved: the socket's flow is the client's own upgrade, as it asked
    assert socket.request.path == "/v1/responses" and socket.response.status_code == 101
    assert [json.loads(m.content)["input"] for m in socket.websocket.messages] == [[USER], [USER, DEVELOPER]]
    assert all(f.request.path.startswith("/v1/") for f in flows), [f.request.url for f in flows]


def test_an_answer_the_connection_cannot_extend_is_previous_response_not_found_and_the_socket_lives_on(
        reverse_proxy: MitmDump, upstream: Upstream) -> None:
    async def scenario() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        async with reverse_socket(reverse_proxy) as ws:
            refused = await answer(ws, create(previous_response_id="resp_from_another_socket", input=[USER]))
            whole = await answer(ws, create(input=[USER]))
            return refused, whole

    refused, whole = run(scenario)
    (event,) = refused
    assert (event["type"], event["status"], event["error"]["code"]) == (
        "error", 400, "previous_response_not_found")
    assert whole[-1]["type"] == "response.completed"
    assert len(upstream.received) == 1


def test_an_upstream_error_is_an_error_event_with_its_status(reverse_proxy: MitmDump,
                                                             upstream: Upstream) -> None:
    upstream.plan(error(400, "invalid_request_error", "The request is malformed."))

    async def scenario() -> list[dict[str, Any]]:
        async with reverse_socket(reverse_proxy) as ws:
            return await answer(ws, create(input=[USER]))

    (event,) = run(scenario)
    assert (event["type"], event["status"]) == ("error", 400)
    assert "The request is malformed." in event["error"]["message"]


def test_an_upstream_killed_mid_answer_gives_the_client_an_error_event(reverse_proxy: MitmDump,
                                                                       upstream: Upstream) -> None:
    upstream.plan(cut(after=4))

    async def scenario() -> list[dict[str, Any]]:
        async with reverse_socket(reverse_proxy) as ws:
            return await answer(ws, create(input=[USER]))

    events = run(scenario)
    last = events[-1]
    failed = last["type"] == "response.failed" or (last["type"] == "error" and last["status"] >= 500)
    assert failed, last
    assert not any(e["type"] == "response.completed" for e in events)


def test_an_interrupt_ends_the_answer_and_the_upstream_call_and_the_socket_lives_on(
        start_proxy: StartProxy, module_dir: Path, upstream: Upstream) -> None:
    proxy = start_proxy("ws-interrupt", "reverse:https://api.openai.com")
    upstream.plan(stream(delay=0.2))  # several seconds of stream

    async def scenario() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        async with reverse_socket(proxy) as ws:
            await ws.send(create(input=[USER]))
            events: list[dict[str, Any]] = []
            while not any(e["type"] == "response.output_text.delta" for e in events):
                events.append(json.loads(await ws.recv()))
            rid = events[0]["response"]["id"]
            await ws.send(json.dumps({"type": "response.interrupt", "response_id": rid,
                                      "mode": "discard_partial_items"}))
            while events[-1]["type"] not in TERMINAL:
                events.append(json.loads(await ws.recv()))
            after = await answer(ws, create(previous_response_id=rid, input=[USER]))
            return events, after

    events, after = run(scenario)
    final = events[-1]["response"]
    assert (events[-1]["type"], final["status"], final["output"]) == ("response.completed", "incomplete", [])
    assert after[-1]["type"] == "response.completed"
    interrupted, following = upstream.received
    # the interrupted answer is the history the next request extends: nothing of it was whole
    assert [m["role"] for m in following.json["messages"]] == ["user"]
    assert len(following.json["messages"][0]["content"]) == 2  # both user messages, merged
    # both requests' flows, as the proxy saved them once each was over (the first one's upstream
    # answer would take seconds more if it were read to its end)
    posts = until(lambda: _saved_posts(module_dir / "ws-interrupt.flows", 2), "both flows saved")
    assert posts[0].metadata["gateway"]["error"]  # the interrupted one says it ended early
    assert interrupted.finished is None, "the upstream wrote its whole answer"


def _saved_posts(path: Path, count: int) -> list[Any] | None:
    try:
        with path.open("rb") as file:
            posts = [f for f in mio.FlowReader(file).stream() if f.request.method == "POST"]
    except Exception:  # a flow half written
        return None
    return posts if len(posts) >= count else None


def test_regular_mode_serves_the_socket_inside_the_tunnel(start_proxy: StartProxy,
                                                          upstream: Upstream) -> None:
    proxy = start_proxy("ws-regular")
    trust = ssl.create_default_context(cafile=str(proxy.ca_cert))

    async def scenario() -> list[dict[str, Any]]:
        async with connect("wss://api.openai.com/v1/responses", additional_headers=HEADERS,
                           proxy=proxy.url, ssl=trust) as ws:
            prewarm = await answer(ws, create(generate=False, input=[DEVELOPER]))
            return await answer(ws, create(previous_response_id=prewarm[-1]["response"]["id"], input=[USER]))

    events = run(scenario)
    assert events[-1]["type"] == "response.completed"
    (received,) = upstream.received
    assert received.json["system"][0]["text"] == "Be brief."


ANA_KEY = clients.KEY_PREFIX + "ana-ws-e2e-key-0123456789abcdef"


def test_with_client_keys_the_upgrade_needs_one_and_each_request_is_its_clients(
        start_proxy: StartProxy, module_dir: Path, upstream: Upstream) -> None:
    path = module_dir / "ws-clients.toml"
    path.write_text(clients.table(clients.Client("ana", clients.hash_key(ANA_KEY), ("gpt-5*",))))
    proxy = start_proxy("ws-clients", "reverse:https://api.openai.com", gateway_clients=str(path))
    url = proxy.url.replace("http://", "ws://") + "/v1/responses"

    async def scenario() -> tuple[int, list[dict[str, Any]], list[dict[str, Any]]]:
        with pytest.raises(InvalidStatus) as anonymous:
            async with connect(url, proxy=None):
                pass
        async with connect(url, proxy=None, additional_headers={"authorization": f"Bearer {ANA_KEY}"}) as ws:
            allowed = await answer(ws, create(input=[USER]))
            refused = await answer(ws, create(model="o3", input=[USER]))
        return anonymous.value.response.status_code, allowed, refused

    status, allowed, refused = run(scenario)
    assert status == 401
    assert allowed[-1]["type"] == "response.completed"
    (event,) = refused
    assert (event["type"], event["status"], event["error"]["code"]) == ("error", 403, "model_not_allowed")
    assert "'ana'" in event["error"]["message"]
    (received,) = upstream.received
    assert ANA_KEY not in json.dumps(received.headers)

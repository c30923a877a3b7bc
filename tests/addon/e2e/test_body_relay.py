"""The body relay through a real mitmdump (addon/patches/body_relay.py; its rules one by one:
tests/addon/patches/test_body_relay.py): a paced stream to a cleartext HTTP/1.1 client, or to a
WebSocket client's turn, passes mitmproxy's layers only for its first pieces and its end, and the
client reads every event in order, its connection kept for the next turn; a client over TLS gets
every piece through mitmproxy, as before. `layer_reads.py` counts what mitmproxy's layers read
while a body streams."""

from __future__ import annotations

import asyncio
import json
import ssl
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect

from tests.addon.e2e.conftest import CLIENT_KEY, CODEX_HEADERS, StartProxy
from tests.addon.e2e.upstream import Upstream, fixture_text, sse_events, stream
from tests.support.mitmdump import GATEWAY, MitmDump

pytestmark = pytest.mark.timeout(120)

SPY = Path(__file__).with_name("layer_reads.py")
FIXTURE = "thinking_prompt.sse"
"""41 events: a thinking block, then text."""
PIECES = len(sse_events(FIXTURE))


@pytest.fixture(scope="module")
def proxy(start_proxy: StartProxy, module_dir: Path) -> tuple[MitmDump, MitmDump, Path]:
    reads = module_dir / "reads.jsonl"
    env: dict[str, str | None] = {"GATEWAY_TEST_LAYER_READS": str(reads)}
    return (start_proxy("relay-regular", "regular", env=env, scripts=(GATEWAY, SPY)),
            start_proxy("relay-reverse", "reverse:https://api.openai.com", env=env, scripts=(GATEWAY, SPY)),
            reads)


def turn(client: httpx.Client, url: str) -> list[dict[str, object]]:
    """One streamed turn; the Responses events the client read."""
    body = {"model": "gpt-5.5", "input": "think, then answer", "stream": True}
    headers = {"authorization": f"Bearer {CLIENT_KEY}", **CODEX_HEADERS}
    with client.stream("POST", url, json=body, headers=headers) as answer:
        assert answer.status_code == 200, answer.read()
        data = b"".join(answer.iter_raw())
    return [json.loads(line[6:]) for line in data.decode().splitlines() if line.startswith("data: ")]


def last_reads(reads: Path, n: int) -> list[int]:
    return [json.loads(line)["reads"] for line in reads.read_text().splitlines()[-n:]]


def test_a_cleartext_clients_stream_goes_past_mitmproxys_layers_after_its_first_pieces(
        proxy: tuple[MitmDump, MitmDump, Path], upstream: Upstream) -> None:
    mitmdump, _, reads = proxy
    upstream.plan(stream(FIXTURE, delay=0.02), stream(FIXTURE, delay=0.02))
    connects = mitmdump.log.count("client connect")
    with httpx.Client(proxy=mitmdump.url, timeout=30) as client:  # http://: the client talks cleartext
        turns = [turn(client, "http://api.openai.com/v1/responses") for _ in range(2)]
    assert mitmdump.log.count("client connect") == connects + 1  # both turns on one kept connection
    for events in turns:
        assert events[0]["type"] == "response.created" and events[-1]["type"] == "response.completed"
        assert [e["sequence_number"] for e in events] == list(range(len(events)))
        text = "".join(str(e["delta"]) for e in events if e["type"] == "response.output_text.delta")
        assert text == fixture_text(FIXTURE)
    assert len(upstream.received) == 2
    # the first pieces (held until content starts) and the body's end go through mitmproxy; the
    # other pieces, one upstream read each, go to the client straight
    assert all(n <= 4 for n in last_reads(reads, 2)), (last_reads(reads, 2), PIECES)


def test_a_tls_clients_stream_goes_through_mitmproxys_layers_piece_by_piece(
        proxy: tuple[MitmDump, MitmDump, Path], upstream: Upstream) -> None:
    mitmdump, _, reads = proxy
    upstream.plan(stream(FIXTURE, delay=0.02))
    trust = ssl.create_default_context(cafile=str(mitmdump.ca_cert))
    with httpx.Client(proxy=mitmdump.url, verify=trust, timeout=30) as client:
        events = turn(client, "https://api.openai.com/v1/responses")
    text = "".join(str(e["delta"]) for e in events if e["type"] == "response.output_text.delta")
    assert text == fixture_text(FIXTURE)
    (n,) = last_reads(reads, 1)
    assert n >= PIECES // 2, (n, PIECES)


def test_a_websocket_turns_stream_goes_past_mitmproxys_layers_after_its_first_pieces(
        proxy: tuple[MitmDump, MitmDump, Path], upstream: Upstream) -> None:
    """Each `response.create` is a flow run as a replay (addon/patches/replay_client.py): its
    pieces go where the replay's stand-in client hands them, the socket's relay."""
    _, mitmdump, reads = proxy
    upstream.plan(stream(FIXTURE, delay=0.02))
    url = mitmdump.url.replace("http://", "ws://") + "/v1/responses"
    headers = {"authorization": f"Bearer {CLIENT_KEY}", "openai-beta": "responses_websockets=2026-02-06"}
    create = {"type": "response.create", "model": "gpt-5.5", "input": "think, then answer", "stream": True,
              "store": False}

    async def scenario() -> list[dict[str, Any]]:
        async with connect(url, additional_headers=headers, proxy=None) as ws:
            await ws.send(json.dumps(create))
            events: list[dict[str, Any]] = []
            while not events or events[-1]["type"] not in ("response.completed", "response.failed", "error"):
                events.append(json.loads(await ws.recv()))
            return events

    events = asyncio.run(asyncio.wait_for(scenario(), 60))
    assert events[-1]["type"] == "response.completed", events[-1]
    text = "".join(str(e["delta"]) for e in events if e["type"] == "response.output_text.delta")
    assert text == fixture_text(FIXTURE)
    (n,) = last_reads(reads, 1)
    assert n <= 4, (n, PIECES)

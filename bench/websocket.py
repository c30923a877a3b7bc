"""The Responses WebSocket transport against HTTP over one growing Codex session
(docs/websocket.md "Measured"): `python -m bench.websocket [--turns 30] [--answer 161|recorded]`.

One mitmdump with the addon (reverse mode) in front of a loopback Anthropic upstream answering all
at once (unpaced): bench/loopback.py's answer of 161 text deltas, 169 events for the client (the
length of the real Codex answer issue 39 measured), or with `--answer recorded` the longest
recorded Anthropic stream (bench/turn_ends.py `anthropic_answer`: thinking then text, 121 events
for the client). Two sessions of the same conversation run
interleaved turn by turn, so both see the same machine: over HTTP the client POSTs the whole history
each turn, as Codex does without the socket; over one WebSocket it sends a prewarm, then each turn
`previous_response_id` and only its new items, as Codex 0.169 does. Each turn adds a user message
of about 3 KB (a pasted log, a tool output) to the real Codex request (bench/workloads.py).

Per turn: the bytes the client uploads (the POST body; the text frame), and the proxy's CPU time
across the turn (every thread's scheduler run time, /proc/<pid>/task/*/schedstat), the same reading
bench/proxy.py takes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from dataclasses import dataclass, field
from statistics import median
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from bench.fixtures import ISSUE_DELTAS
from bench.loopback import Upstream
from bench.proxy import Mitmdump, _addon_args
from bench.turn_ends import AnswerServer, anthropic_answer
from bench.workloads import small_request

PASTE = "\n".join(f"{i:04d} INFO worker[{i % 7}] processed batch {i} in {i % 97} ms; queue depth {i % 13}"
                  for i in range(48))
"""About 3 KB, what one turn adds."""


@dataclass
class Side:
    uploaded: list[int] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)
    events: list[int] = field(default_factory=list)
    """Events the client got per turn."""


def _new_items(turn: int) -> list[dict[str, Any]]:
    return [{"type": "message", "role": "user",
             "content": [{"type": "input_text", "text": f"turn {turn}: what does this say?\n{PASTE}"}]}]


def _items_of(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["item"] for e in events if e.get("type") == "response.output_item.done"]


async def _http_turn(port: int, body: dict[str, Any]) -> tuple[int, list[dict[str, Any]]]:
    data = json.dumps(body).encode()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"POST /v1/responses HTTP/1.1\r\nhost: api.openai.com\r\ncontent-type: application/json\r\n"
                 b"accept: text/event-stream\r\nauthorization: Bearer sk-bench\r\nconnection: close\r\n"
                 b"content-length: %d\r\n\r\n%s" % (len(data), data))
    await writer.drain()
    raw = _body(await reader.read(-1))
    writer.close()
    events = [json.loads(line[5:]) for line in raw.split(b"\n") if line.startswith(b"data:")]
    if not events or events[-1].get("type") != "response.completed":
        raise RuntimeError(f"HTTP turn failed: {raw[-500:]!r}")
    return len(data), events


def _body(raw: bytes) -> bytes:
    """The answer's body: after its head, its chunks joined when it is chunked (as the gateway's
    streamed answers are, docs/pools.md "The loopback server")."""
    head, _, rest = raw.partition(b"\r\n\r\n")
    if b"transfer-encoding: chunked" not in head.lower():
        return rest
    body = bytearray()
    while rest:
        size, _, rest = rest.partition(b"\r\n")
        length = int(size.split(b";")[0] or b"0", 16)
        if not length:
            break
        body += rest[:length]
        rest = rest[length + 2:]
    return bytes(body)


async def _ws_turn(ws: ClientConnection, message: dict[str, Any]) -> tuple[int, list[dict[str, Any]]]:
    text = json.dumps(message)
    await ws.send(text)
    events: list[dict[str, Any]] = []
    while not events or events[-1]["type"] not in ("response.completed", "response.failed", "error"):
        events.append(json.loads(await ws.recv()))
    if events[-1]["type"] != "response.completed":
        raise RuntimeError(f"WebSocket turn failed: {events[-1]}")
    return len(text.encode()), events


async def _session(proxy: Mitmdump, turns: int) -> dict[str, Side]:
    base = json.loads(small_request())
    prefix = base["input"][:-1]  # the developer prompt and the context; the user's turns follow
    fields = {k: v for k, v in base.items() if k != "input"}
    http_history = list(prefix)
    sides = {"http": Side(), "websocket": Side()}
    async with connect(f"ws://127.0.0.1:{proxy.port}/v1/responses", proxy=None, max_size=None,
                       additional_headers={"authorization": "Bearer sk-bench"}) as ws:
        warm = {"type": "response.create", **fields, "input": prefix, "generate": False}
        uploaded, events = await _ws_turn(ws, warm)
        sides["websocket"].uploaded.append(uploaded)  # the prewarm belongs to the first turn
        last = events[-1]["response"]["id"]
        for turn in range(turns):
            new = _new_items(turn)
            before = proxy.cpu_s()
            uploaded, events = await _http_turn(proxy.port, {**fields, "input": [*http_history, *new]})
            sides["http"].cpu_ms.append((proxy.cpu_s() - before) * 1e3)
            sides["http"].uploaded.append(uploaded)
            sides["http"].events.append(len(events))
            http_history += [*new, *_items_of(events)]
            before = proxy.cpu_s()
            message = {"type": "response.create", **fields, "previous_response_id": last, "input": new}
            uploaded, events = await _ws_turn(ws, message)
            sides["websocket"].cpu_ms.append((proxy.cpu_s() - before) * 1e3)
            sides["websocket"].events.append(len(events))
            if turn == 0:
                sides["websocket"].uploaded[0] += uploaded
            else:
                sides["websocket"].uploaded.append(uploaded)
            last = events[-1]["response"]["id"]
    return sides


async def _main(turns: int, extra: list[str], answer: str = str(ISSUE_DELTAS),
                interval_s: float = 0) -> dict[str, Side]:
    upstream: Upstream | AnswerServer = (AnswerServer(anthropic_answer()) if answer == "recorded"
                                         else Upstream(deltas=int(answer), interval_s=interval_s))
    await upstream.start()
    with tempfile.TemporaryDirectory(prefix="bench-ws-") as tmp:
        proxy = Mitmdump([*_addon_args(upstream.port), *extra], f"{tmp}/addon")
        try:
            return await _session(proxy, turns)
        finally:
            proxy.stop()
            await upstream.stop()


def report(sides: dict[str, Side]) -> dict[str, Any]:
    http, ws = sides["http"], sides["websocket"]
    last10 = slice(-10, None)
    return {
        "turns": len(http.uploaded),
        "events_per_answer": {"http": median(http.events), "websocket": median(ws.events)},
        "uploaded_bytes_total": {"http": sum(http.uploaded), "websocket": sum(ws.uploaded),
                                 "ratio": sum(http.uploaded) / sum(ws.uploaded)},
        "uploaded_bytes_last_turn": {"http": http.uploaded[-1], "websocket": ws.uploaded[-1]},
        "cpu_ms_per_turn_median": {"http": median(http.cpu_ms), "websocket": median(ws.cpu_ms),
                                   "ratio": median(ws.cpu_ms) / median(http.cpu_ms)},
        "cpu_ms_per_turn_median_last10": {"http": median(http.cpu_ms[last10]),
                                          "websocket": median(ws.cpu_ms[last10]),
                                          "ratio": median(ws.cpu_ms[last10]) / median(http.cpu_ms[last10])},
        "cpu_ms_total": {"http": sum(http.cpu_ms), "websocket": sum(ws.cpu_ms),
                         "ratio": sum(ws.cpu_ms) / sum(http.cpu_ms)},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--answer", default=str(ISSUE_DELTAS),
                        help=f"a number of text deltas ({ISSUE_DELTAS}: 169 events for the client) "
                        "or recorded")
    parser.add_argument("--interval", type=float, default=0.0,
                        help="seconds between the upstream's deltas (paced; default: all at once)")
    parser.add_argument("--set", action="append", default=[], metavar="OPTION=VALUE",
                        help="a mitmdump option for the proxy (e.g. flow_detail=0)")
    args = parser.parse_args()
    extra = [arg for option in args.set for arg in ("--set", option)]
    print(json.dumps(report(asyncio.run(_main(args.turns, extra, args.answer, args.interval))), indent=2))


if __name__ == "__main__":
    main()

"""One Codex turn through real mitmdump, step by step: where the gateway's extra time goes.

`python -m bench.hooks [--turns N] [--sessions S] [--clients raw sdk] [--long] [--keepalive] [--zstd]
[--capabilities table|vendor] [--ablate steps credentials credentials-lean] [--json FILE]`;
also the step `hooks` of `python -m bench`.

The turn: the largest real Codex request in tests/data/codex, sent with Codex's own headers, and an
unpaced answer (the longest Anthropic recording in tests/data/anthropic, every event written at
once, one HTTP chunk each; bench/turn_ends.py). Three fresh mitmdumps per session, in the same
reverse mode, each with bench/hook_timer.py loaded last, their turns interleaved (the order rotates
every round):

- `plain`: plain mitmdump in front of the Anthropic answer, `stream_large_bodies=1` as in
  bench/proxy.py (request and answer streamed through);
- `plain-responses`: plain mitmdump in front of an upstream that answers with the very bytes the
  addon sends its client (taken from a first addon turn): what the client does with the translated
  answer (the openai SDK parses every event) is then the same on both sides;
- `addon`: mitmdump with addon/gateway.py, routed to the Anthropic answer.

Two clients: `raw` (one write, `connection: close`, the body read to its end as bytes) and `sdk`
(the openai SDK's `AsyncOpenAI.responses.create(..., stream=True)`, one client per mitmdump so its
connection is kept across turns, every event parsed). Per turn: the client's wall time, the
mitmdump's CPU time, and one timeline on one clock (bench/hook_timer.py): every hook of every addon,
the gateway's steps, the stream callable, mitmproxy's own event handling, gc passes, and the
upstream's stamps. The first turn of each fresh mitmdump is reported apart (imports and caches
that warm once per process). Method and figures: docs/benchmarks.md "One turn, step by step".
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import os
import sys
import tempfile
import urllib.request
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench.proxy import ADDON, MITMDUMP, Mitmdump
from bench.turn_ends import (
    SSE_BREAK,
    AnswerServer,
    ClientTurn,
    Seen,
    answer_name,
    anthropic_answer,
    codex_request,
    dechunk,
    largest_request,
    raw_turn,
    sdk_client,
    sdk_turn,
)
from bench.workloads import TARGET_MODELS

TIMER = Path(__file__).resolve().parent / "hook_timer.py"
MODES = ("plain", "plain-responses", "addon")
CLIENTS = ("raw", "sdk")


# -- the proxies ------------------------------------------------------------------------------------

def _addon_args(up_port: int, capabilities: str) -> list[str]:
    return ["--mode", f"reverse:http://127.0.0.1:{up_port}", "-s", str(ADDON),
            "--set", "gateway_match=/v1/responses", "--set", "gateway_upstream=anthropic",
            "--set", f"gateway_base_url=http://127.0.0.1:{up_port}",
            "--set", f"gateway_model={TARGET_MODELS['anthropic']}",
            "--set", f"gateway_capabilities={capabilities}",
            "--set", "gateway_key_env=ANTHROPIC_API_KEY", "-s", str(TIMER)]


def _plain_args(up_port: int) -> list[str]:
    return ["--mode", f"reverse:http://127.0.0.1:{up_port}", "--set", "stream_large_bodies=1",
            "-s", str(TIMER)]


ABLATIONS = ("steps", "credentials", "credentials-lean")
"""What the addon's mitmdump can be run without (bench/hook_timer.py ABLATE)."""


@contextlib.contextmanager
def _ablated(names: tuple[str, ...]) -> Iterator[None]:
    """`BENCH_HOOKS_ABLATE` for the mitmdump started inside (bench/proxy.py passes os.environ on)."""
    before = os.environ.get("BENCH_HOOKS_ABLATE")
    os.environ["BENCH_HOOKS_ABLATE"] = ",".join(names)
    try:
        yield
    finally:
        if before is None:
            del os.environ["BENCH_HOOKS_ABLATE"]
        else:
            os.environ["BENCH_HOOKS_ABLATE"] = before


@contextlib.contextmanager
def _proxies(ports: dict[str, int], capabilities: str,
             ablate: tuple[str, ...] = ()) -> Iterator[dict[str, Mitmdump]]:
    started: dict[str, Mitmdump] = {}
    with tempfile.TemporaryDirectory(prefix="bench-hooks-") as tmp:
        try:
            for mode in MODES:
                port = ports[mode]
                args = _addon_args(port, capabilities) if mode == "addon" else _plain_args(port)
                with _ablated(ablate if mode == "addon" else ()):
                    started[mode] = Mitmdump(args, f"{tmp}/{mode}")
                started[mode].wait_for(r"bench-hook-timer (ready)", 60, f"{mode}: the timer did not start")
            yield started
        finally:
            for proxy in started.values():
                proxy.stop()


def timeline(port: int) -> dict[str, Any]:
    """The timer's records since the last call (bench/hook_timer.py)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/__bench__/timeline", timeout=30) as answer:
        return json.loads(answer.read())


# -- one turn, as a timeline ------------------------------------------------------------------------

POINTS = (
    "request bytes reach the proxy", "requestheaders hooks start", "request hooks start",
    "request hooks end", "upstream connection asked for", "upstream connected",
    "upstream has the request head", "upstream has the request body", "upstream wrote its answer",
    "answer bytes reach the proxy", "responseheaders hooks end", "last answer bytes handled",
    "response hooks start", "response hooks end", "client has the whole answer",
)
"""The moments of a turn, in the order of an addon turn (a plain mitmdump streams the request, so
its upstream has the request before its request hooks run)."""


@dataclass
class TurnRecord:
    mode: str
    client: str
    round: int
    """Turns of one round (every mode once, same client) ran back to back: paired differences."""
    first: bool
    """The first turn of a fresh mitmdump (not in the medians)."""
    total_ms: float
    cpu_ms: float
    """The mitmdump's CPU over the turn, every thread (bench/proxy.py `Mitmdump.cpu_s`)."""
    points_ms: dict[str, float]
    """Moments of the turn (POINTS), ms after the client started it."""
    hooks_ms: dict[str, float]
    """Every addon's hook (`Addon.hook`), wall ms, summed when one runs twice."""
    hooks_cpu_ms: dict[str, float]
    steps_ms: dict[str, float]
    """The gateway's steps (bench/hook_timer.py STEPS), wall ms, summed per label."""
    steps_cpu_ms: dict[str, float]
    callable_calls: int
    callable_ms: float
    mitm_ms: float
    """mitmproxy's own event handling (`server_event`: parse, layers, writes; the stream callable
    runs inside it). mitmproxy starts a hook's task eagerly (`asyncio.eager_task_factory`), so a
    hook runs inside the event that asked for it until its first real suspension: the hooks' time
    is taken out (`_own`)."""
    mitm_by_event: dict[str, float]
    """`mitm_ms` per kind of event (`DataReceived client`, `HookCompleted request`: what mitmproxy
    does once the hook is done, e.g. ask for the upstream connection; `OpenConnectionCompleted`:
    the request head and body written), wall ms."""
    gc_ms: float
    gc_passes: dict[str, int]
    """Passes of the cyclic collector during the turn, per generation."""
    gc_longest_ms: float
    """The longest pass (wall: a pass the scheduler interrupts counts its wait too)."""
    client_read: int
    """Bytes the raw client read (head and chunked body), or events the SDK parsed."""


def _sum(records: list[dict[str, Any]], key: str) -> dict[str, float]:
    out: dict[str, float] = defaultdict(float)
    for r in records:
        out[r["name"]] += (r["end"] - r["start"] if key == "wall" else r["cpu"] or 0) / 1e6
    return dict(out)


def _own_by_name(events: list[dict[str, Any]], hooks: list[dict[str, Any]]) -> dict[str, float]:
    """Each kind of event's wall time, ms, less the hooks that ran inside (one thread: overlap is
    nesting)."""
    out: dict[str, float] = defaultdict(float)
    for e in events:
        inside = sum(max(0, min(e["end"], h["end"]) - max(e["start"], h["start"])) for h in hooks)
        out[e["name"]] += max(0, e["end"] - e["start"] - inside) / 1e6
    return dict(out)


def _own(events: list[dict[str, Any]], hooks: list[dict[str, Any]]) -> float:
    """The events' wall time, ms, less the hooks that ran inside them."""
    return sum(_own_by_name(events, hooks).values())


def turn_record(mode: str, client: str, rnd: int, first: bool, turn: ClientTurn, cpu_ms: float,
                seen: Seen | None, data: dict[str, Any]) -> TurnRecord:
    """One turn's records from the timer, its client's and its upstream's stamps. The turn's own
    connection is the one that ran a `request` hook; the steps, the callable and gc carry none."""
    records = [r for r in data["records"] if r["start"] >= turn.start_ns]
    ours = next((r["conn"] for r in records if r["kind"] == "hook" and r["name"].endswith(".request")), None)
    mine = [r for r in records if r["conn"] in (ours, None)]
    kinds: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in mine:
        kinds[r["kind"]].append(r)

    def ms(ns: int) -> float:
        return (ns - turn.start_ns) / 1e6

    def when(kind: str, suffix: str, edge: str, pick: Any) -> float | None:
        found = [r[edge] for r in kinds[kind] if r["name"].endswith(suffix)]
        return ms(pick(found)) if found else None

    points = {
        "request bytes reach the proxy": when("mitm", "DataReceived client", "start", min),
        "requestheaders hooks start": when("hook", ".requestheaders", "start", min),
        "request hooks start": when("hook", ".request", "start", min),
        "request hooks end": when("hook", ".request", "end", max),
        "upstream connection asked for": when("hook", ".server_connect", "start", min),
        "upstream connected": when("hook", ".server_connected", "start", min),
        "upstream has the request head": ms(seen.head_ns) if seen else None,
        "upstream has the request body": ms(seen.body_ns) if seen else None,
        "upstream wrote its answer": ms(seen.written_ns) if seen else None,
        "answer bytes reach the proxy": when("mitm", "DataReceived server", "start", min),
        "responseheaders hooks end": when("hook", ".responseheaders", "end", max),
        "last answer bytes handled": when("mitm", "DataReceived server", "end", max),
        "response hooks start": when("hook", ".response", "start", min),
        "response hooks end": when("hook", ".response", "end", max),
        "client has the whole answer": ms(turn.end_ns),
    }
    calls = kinds["callable"]
    return TurnRecord(
        mode=mode, client=client, round=rnd, first=first, total_ms=(turn.end_ns - turn.start_ns) / 1e6,
        cpu_ms=cpu_ms, points_ms={k: v for k, v in points.items() if v is not None},
        hooks_ms=_sum(kinds["hook"], "wall"), hooks_cpu_ms=_sum(kinds["hook"], "cpu"),
        steps_ms=_sum(kinds["step"], "wall"), steps_cpu_ms=_sum(kinds["step"], "cpu"),
        callable_calls=len(calls), callable_ms=sum(_sum(calls, "wall").values()),
        mitm_ms=_own(kinds["mitm"], kinds["hook"]), mitm_by_event=_own_by_name(kinds["mitm"], kinds["hook"]),
        gc_ms=sum(_sum(kinds["gc"], "wall").values()),
        gc_passes=dict(Counter(r["name"] for r in kinds["gc"])),
        gc_longest_ms=max(((r["end"] - r["start"]) / 1e6 for r in kinds["gc"]), default=0.0),
        client_read=turn.received)


# -- the run ----------------------------------------------------------------------------------------

@dataclass
class HooksResult:
    request: str
    request_bytes: int
    answer: str
    answer_events: int
    turns: list[TurnRecord]
    """Every turn, the first of each fresh mitmdump included (`first`)."""
    sessions: int
    keepalive: bool
    zstd: bool
    capabilities: str
    ablate: tuple[str, ...]
    load: tuple[float, float]
    """Load average (1 min) before and after."""
    upstream_connections: dict[str, int] = field(default_factory=dict)
    """Connections each mode's upstream accepted, over every turn."""
    upstream_requests: dict[str, int] = field(default_factory=dict)
    upstream_head: str = ""
    """The head of the first request the addon sent upstream (the key shown by its length)."""
    alone_ms: dict[str, list[float]] = field(default_factory=dict)
    """Each client straight to each upstream, no proxy (`client -> answer`): the client's own
    share of a turn, e.g. the openai SDK parsing every event."""

    def of(self, mode: str, client: str, first: bool = False) -> list[TurnRecord]:
        return [t for t in self.turns if t.mode == mode and t.client == client and t.first == first]

    def paired(self, client: str, base: str, attr: str = "total_ms") -> list[float]:
        """addon minus `base`, turn by turn within each round (`attr`: a TurnRecord field, or
        `hooks_cpu_total`, every hook's CPU summed)."""
        def value(t: TurnRecord) -> float:
            return sum(t.hooks_cpu_ms.values()) if attr == "hooks_cpu_total" else getattr(t, attr)

        addon = {t.round: value(t) for t in self.of("addon", client)}
        other = {t.round: value(t) for t in self.of(base, client)}
        return [addon[r] - other[r] for r in addon if r in other]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class _Setup:
    body: bytes
    headers: list[tuple[str, str]]
    encoding: str | None
    timeout_s: float = 60.0


async def _one(mode: str, client: str, rnd: int, first: bool, proxy: Mitmdump, upstream: AnswerServer,
               sdk: Any, setup: _Setup) -> TurnRecord:
    before = len(upstream.seen)
    cpu = proxy.cpu_s()
    if client == "raw":
        turn = await raw_turn(proxy.port, setup.body, setup.headers, setup.encoding, setup.timeout_s)
        if turn.status != 200 or not turn.body.endswith(b"\r\n0\r\n\r\n"):
            raise RuntimeError(f"{mode} raw turn went wrong: {turn.body[:300]!r}; "
                               f"mitmdump says: {''.join(proxy.log)[-1500:]}")
    else:
        turn = await sdk_turn(sdk, json.loads(setup.body), setup.timeout_s)
    cpu_ms = (proxy.cpu_s() - cpu) * 1e3
    data = await asyncio.to_thread(timeline, proxy.port)  # the turn is over: its hooks have all run
    seen = upstream.seen[-1] if len(upstream.seen) > before else None
    return turn_record(mode, client, rnd, first, turn, cpu_ms, seen, data)


async def _session(proxies: dict[str, Mitmdump], servers: dict[str, AnswerServer], setup: _Setup,
                   clients: tuple[str, ...], turns: int, rnd: int) -> list[TurnRecord]:
    if not servers["plain-responses"].chunks:  # what the addon's client gets, as an upstream's answer
        first = await raw_turn(proxies["addon"].port, setup.body, setup.headers, setup.encoding,
                               setup.timeout_s)
        servers["plain-responses"].chunks = [c for c in SSE_BREAK.split(dechunk(first.body)) if c.strip()]
        await asyncio.to_thread(timeline, proxies["addon"].port)
    sdks = {mode: sdk_client(proxies[mode].port) for mode in MODES} if "sdk" in clients else {}
    records = []
    try:
        for i in range(1 + turns):  # the first turn of each mitmdump is kept apart
            order = MODES[i % 3:] + MODES[:i % 3]
            for client in clients:
                rnd += 1
                for mode in order:
                    records.append(await _one(mode, client, rnd, i == 0, proxies[mode], servers[mode],
                                              sdks.get(mode), setup))
    finally:
        for sdk in sdks.values():
            await sdk.close()
    return records


async def _measure(turns: int, sessions: int, clients: tuple[str, ...], keepalive: bool, zstd: bool,
                   capabilities: str, ablate: tuple[str, ...], long: bool) -> HooksResult:
    raw_body, headers = codex_request(long)
    setup = _Setup(raw_body, headers, None)
    if zstd:
        setup = _Setup(_zstd_compress(raw_body), headers, "zstd")
    chunks = anthropic_answer()
    load_before = os.getloadavg()[0]
    servers = {mode: AnswerServer([] if mode == "plain-responses" else chunks, keepalive=keepalive)
               for mode in MODES}
    for server in servers.values():
        await server.start()
    records: list[TurnRecord] = []
    alone: dict[str, list[float]] = {}
    try:
        if "sdk" in clients:  # the SDK imports its types at its first request: not in any turn
            await _alone("sdk", servers["plain"].port, setup, 1)
        for _ in range(sessions):
            ports = {mode: server.port for mode, server in servers.items()}
            with _proxies(ports, capabilities, ablate) as proxies:
                records += await _session(proxies, servers, setup, clients, turns, len(records))
        for client in clients:
            for answer, mode in (("anthropic", "plain"), ("responses", "plain-responses")):
                alone[f"{client} -> {answer} answer"] = await _alone(client, servers[mode].port, setup, turns)
    finally:
        for server in servers.values():
            await server.stop()
    name = "bench/workloads.py long_request() (216 items, 40 tools)" if long else largest_request().name
    return HooksResult(request=name, request_bytes=len(raw_body), answer=answer_name(),
                       answer_events=len(chunks), turns=records, sessions=sessions, keepalive=keepalive,
                       zstd=zstd, capabilities=capabilities, ablate=ablate,
                       load=(load_before, os.getloadavg()[0]),
                       upstream_connections={m: s.connections for m, s in servers.items()},
                       upstream_requests={m: len(s.seen) for m, s in servers.items()},
                       upstream_head=servers["addon"].head, alone_ms=alone)


def _zstd_compress(data: bytes) -> bytes:
    if sys.version_info >= (3, 14):
        from compression import zstd
    else:
        from backports import zstd  # the one the gateway reads with (addon/serve/bodies.py)
    return zstd.compress(data)


async def _alone(client: str, port: int, setup: _Setup, turns: int) -> list[float]:
    """`turns` turns of one client straight to one upstream, wall ms."""
    sdk = sdk_client(port) if client == "sdk" else None
    out = []
    try:
        for _ in range(turns):
            if sdk is None:
                turn = await raw_turn(port, setup.body, setup.headers, setup.encoding, setup.timeout_s)
            else:
                turn = await sdk_turn(sdk, json.loads(setup.body), setup.timeout_s)
            out.append((turn.end_ns - turn.start_ns) / 1e6)
    finally:
        if sdk is not None:
            await sdk.close()
    return out


def run(turns: int = 5, sessions: int = 2, clients: tuple[str, ...] = CLIENTS, keepalive: bool = False,
        zstd: bool = False, capabilities: str = "table", ablate: tuple[str, ...] = (),
        long: bool = False) -> HooksResult:
    if not MITMDUMP.exists():
        raise RuntimeError(f"mitmdump not found at {MITMDUMP}")
    if "sdk" in clients and importlib.util.find_spec("openai") is None:
        clients = tuple(c for c in clients if c != "sdk")  # the raw client needs nothing installed
    return asyncio.run(_measure(turns, sessions, clients, keepalive, zstd, capabilities, ablate, long))


def main(argv: list[str] | None = None) -> int:
    from bench.hooks_report import render  # it imports this module's records

    parser = argparse.ArgumentParser(prog="python -m bench.hooks", description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=5, help="measured turns per mode, client and session")
    parser.add_argument("--sessions", type=int, default=2, help="sets of fresh mitmdumps")
    parser.add_argument("--clients", nargs="+", choices=CLIENTS, default=list(CLIENTS))
    parser.add_argument("--keepalive", action="store_true", help="the upstream keeps its connections")
    parser.add_argument("--zstd", action="store_true",
                        help="a zstd request body (Codex with a ChatGPT login)")
    parser.add_argument("--capabilities", choices=("table", "vendor"), default="table",
                        help="vendor: the gateway asks the upstream's models endpoint (here a 404)")
    parser.add_argument("--ablate", nargs="+", choices=ABLATIONS, default=[],
                        help="run the addon's mitmdump without these (bench/hook_timer.py ABLATE)")
    parser.add_argument("--long", action="store_true",
                        help="the 216-item session of bench/workloads.py instead of the real request")
    parser.add_argument("--json", type=Path, help="write every turn's record here")
    args = parser.parse_args(argv)
    res = run(args.turns, args.sessions, tuple(args.clients), args.keepalive, args.zstd, args.capabilities,
              tuple(args.ablate), args.long)
    print(render(res), flush=True)
    if args.json:
        args.json.write_text(json.dumps(res.as_dict(), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The stream path against plain mitmdump, on real recordings (issue 39's stream targets).

`python -m bench.stream_path [--pace-ms 2] [--turns 4] [--sessions 3] [--concurrent 50]
[--rounds 2] [--tree NAME=DIR ...] [--answer anthropic|chat] [--json FILE]`

The turn: the largest real Codex request in tests/data/codex with Codex's own headers, answered by
a recorded stream (`anthropic`: the longest Anthropic recording in tests/data/anthropic, the one
bench/hooks.py answers with), one HTTP chunk per event. Sides, each a fresh mitmdump per session,
all in the same reverse mode:

- `plain`: plain mitmdump (`stream_large_bodies=1`, as bench/proxy.py) relaying the same upstream
  frames;
- one side per tree (`--tree NAME=DIR`, default this tree as `here`): mitmdump with
  `DIR/addon/gateway.py`, routed to the same upstream. A tree from another commit is
  `git archive`d to a temporary directory; its gateway puts its own root first on `sys.path`.

Two measures, every side's turns interleaved (the order rotates every round):

- paced: the upstream writes one event every `--pace-ms` ms (one event per wake-up of the proxy,
  the realistic case); per turn, the mitmdump's CPU (the scheduler's run time of every thread,
  bench/proxy.py `Mitmdump.cpu_s`). Reported per session and pooled as side / plain.
- concurrent: `--concurrent` turns at once through one side (unpaced: every event written at
  once), the client's wall time of each; the p50 of a round against plain mitmdump's p50 in the
  same round (the floor: plain mitmdump relaying the same frames to the same clients).

Never asserted in a test (tests/bench/test_stream_path.py runs a tiny one for its shape).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from statistics import median

from bench.fixtures import ISSUE_DELTAS, long_answer
from bench.proxy import MITMDUMP, Mitmdump
from bench.turn_ends import SSE_BREAK, AnswerServer, anthropic_answer, codex_request, raw_turn
from bench.workloads import REPO, TARGET_MODELS

CHAT = REPO / "tests" / "data" / "openai_chat"


def answer(kind: str) -> tuple[str, list[bytes]]:
    """The stream the upstream answers with, one chunk per event, and its upstream dialect
    (`gateway_upstream`): a recording, or (`long`) the long synthetic Anthropic answer."""
    if kind == "long":
        return "anthropic", list(long_answer(ISSUE_DELTAS).chunks)
    if kind == "chat":
        path = max(CHAT.glob("*.sse"), key=lambda p: p.stat().st_size)
        return "chat", [c for c in SSE_BREAK.split(path.read_bytes()) if c.strip()]
    return "anthropic", anthropic_answer()


@dataclass
class PacedServer(AnswerServer):
    """AnswerServer, but with `interval_s` > 0 one event every `interval_s` (each its own write
    and drain), as a model's stream comes."""

    interval_s: float = 0.0

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.interval_s <= 0:
            await super()._serve(reader, writer)
            return
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
            if length:
                await reader.readexactly(int(length[1]))
            if not head.startswith(b"POST "):
                writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                await writer.drain()
                return
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                         b"cache-control: no-cache\r\ntransfer-encoding: chunked\r\n"
                         b"connection: close\r\n\r\n")
            for data in self.chunks:
                writer.write(b"%x\r\n%s\r\n" % (len(data), data))
                await writer.drain()
                await asyncio.sleep(self.interval_s)
            writer.write(b"0\r\n\r\n")
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


def _addon_args(gateway: Path, up_port: int, dialect: str) -> list[str]:
    return ["--mode", f"reverse:http://127.0.0.1:{up_port}", "-s", str(gateway),
            "--set", "gateway_match=/v1/responses", "--set", f"gateway_upstream={dialect}",
            "--set", f"gateway_base_url=http://127.0.0.1:{up_port}",
            "--set", f"gateway_model={TARGET_MODELS[dialect]}",
            "--set", "gateway_capabilities=table", "--set", "gateway_key_env=ANTHROPIC_API_KEY"]


@contextlib.contextmanager
def _proxies(trees: dict[str, Path], up_port: int, dialect: str) -> Iterator[dict[str, Mitmdump]]:
    started: dict[str, Mitmdump] = {}
    with tempfile.TemporaryDirectory(prefix="bench-stream-") as tmp:
        try:
            started["plain"] = Mitmdump(["--mode", f"reverse:http://127.0.0.1:{up_port}",
                                         "--set", "stream_large_bodies=1"], f"{tmp}/plain")
            for name, tree in trees.items():
                started[name] = Mitmdump(_addon_args(tree / "addon" / "gateway.py", up_port, dialect),
                                         f"{tmp}/{name}")
            yield started
        finally:
            for proxy in started.values():
                proxy.stop()


@dataclass
class StreamPathResult:
    answer: str
    events: int
    pace_ms: float
    concurrent: int
    sides: list[str]
    paced_cpu_ms: dict[str, list[float]] = field(default_factory=dict)
    """Every measured paced turn's CPU, per side."""
    session_ratios: dict[str, list[float]] = field(default_factory=dict)
    """side / plain paced CPU, per session (sum of its turns)."""
    concurrent_p50_ms: dict[str, list[float]] = field(default_factory=dict)
    """p50 of the concurrent turns' wall time, per side and round."""
    concurrent_cpu_ms: dict[str, list[float]] = field(default_factory=dict)
    load: tuple[float, float] = (0.0, 0.0)

    def cpu_ratio(self, side: str) -> float:
        """Pooled paced CPU, side / plain."""
        return sum(self.paced_cpu_ms[side]) / sum(self.paced_cpu_ms["plain"])

    def paired(self, side: str, against: str) -> list[float]:
        """side / against paced CPU, per session: two trees compared within each session, whose
        processes share its luck (docs/benchmarks.md "The stream path through the leg")."""
        return [mine / theirs for mine, theirs in zip(self.session_ratios[side],
                                                       self.session_ratios[against], strict=True)]

    def p50_ratios(self, side: str) -> list[float]:
        return [mine / floor for mine, floor in zip(self.concurrent_p50_ms[side],
                                                     self.concurrent_p50_ms["plain"], strict=True)]


async def _turn(proxy: Mitmdump, body: bytes, headers: list[tuple[str, str]], timeout_s: float) -> None:
    turn = await raw_turn(proxy.port, body, headers, None, timeout_s)
    if turn.status != 200 or not turn.body.endswith(b"\r\n0\r\n\r\n"):
        raise RuntimeError(f"turn went wrong: {turn.body[:300]!r}; "
                           f"mitmdump says: {''.join(proxy.log)[-1500:]}")


async def _concurrent(proxy: Mitmdump, body: bytes, headers: list[tuple[str, str]], n: int,
                      timeout_s: float) -> tuple[float, float]:
    """p50 wall ms of `n` turns started at once, and the mitmdump's CPU ms over them."""
    cpu = proxy.cpu_s()
    turns = await asyncio.gather(*(raw_turn(proxy.port, body, headers, None, timeout_s) for _ in range(n)))
    spent = (proxy.cpu_s() - cpu) * 1e3
    bad = [t for t in turns if t.status != 200 or not t.body.endswith(b"\r\n0\r\n\r\n")]
    if bad:
        raise RuntimeError(f"{len(bad)} of {n} concurrent turns went wrong: {bad[0].body[:300]!r}")
    return median((t.end_ns - t.start_ns) / 1e6 for t in turns), spent


async def _measure(trees: dict[str, Path], kind: str, pace_ms: float, turns: int, sessions: int,
                   concurrent: int, rounds: int) -> StreamPathResult:
    dialect, chunks = answer(kind)
    body, headers = codex_request()
    sides = ["plain", *trees]
    res = StreamPathResult(kind, len(chunks), pace_ms, concurrent, sides, load=(os.getloadavg()[0], 0.0))
    for side in sides:
        res.paced_cpu_ms[side], res.concurrent_p50_ms[side], res.concurrent_cpu_ms[side] = [], [], []
        res.session_ratios[side] = []
    server = PacedServer(chunks)
    await server.start()
    timeout_s = 60 + len(chunks) * pace_ms / 1e3 * 5
    try:
        for _ in range(sessions):
            with _proxies(trees, server.port, dialect) as proxies:
                server.interval_s = 0.0
                for side in sides:  # warm-up: imports and caches that warm once per process
                    await _turn(proxies[side], body, headers, timeout_s)
                server.interval_s = pace_ms / 1e3
                spent = dict.fromkeys(sides, 0.0)
                for i in range(turns):
                    for side in sides[i % len(sides):] + sides[:i % len(sides)]:
                        proxy = proxies[side]
                        before = proxy.cpu_s()
                        await _turn(proxy, body, headers, timeout_s)
                        await asyncio.sleep(0.1)  # the flow's end (response hook, log line)
                        ms = (proxy.cpu_s() - before) * 1e3
                        res.paced_cpu_ms[side].append(ms)
                        spent[side] += ms
                for side in sides:
                    res.session_ratios[side].append(spent[side] / spent["plain"])
                server.interval_s = 0.0
                for r in range(rounds if concurrent else 0):
                    for side in sides[r % len(sides):] + sides[:r % len(sides)]:
                        p50, cpu = await _concurrent(proxies[side], body, headers, concurrent, timeout_s)
                        res.concurrent_p50_ms[side].append(p50)
                        res.concurrent_cpu_ms[side].append(cpu)
                        await asyncio.sleep(0.3)
    finally:
        await server.stop()
    res.load = (res.load[0], os.getloadavg()[0])
    return res


def run(trees: dict[str, Path] | None = None, kind: str = "anthropic", pace_ms: float = 2.0, turns: int = 4,
        sessions: int = 3, concurrent: int = 50, rounds: int = 2) -> StreamPathResult:
    if not MITMDUMP.exists():
        raise RuntimeError(f"mitmdump not found at {MITMDUMP}")
    trees = trees or {"here": REPO}
    return asyncio.run(_measure(trees, kind, pace_ms, turns, sessions, concurrent, rounds))


def _range(values: list[float], fmt: str = ".2f") -> str:
    return f"{min(values):{fmt}}-{max(values):{fmt}}" if values else "-"


def render(res: StreamPathResult) -> str:
    out = [f"answer: {res.answer} ({res.events} upstream events), paced {res.pace_ms:g} ms; "
           f"load {res.load[0]:.1f} -> {res.load[1]:.1f}",
           f"{'side':10} {'paced cpu ms/turn':>18} {'×plain':>7} {'sessions ×plain':>16} "
           f"{'conc p50 ms':>12} {'×floor':>7} {'rounds ×floor':>14}"]
    for side in res.sides:
        cpu = res.paced_cpu_ms[side]
        p50 = res.concurrent_p50_ms[side]
        conc = (f"{median(p50):12.0f} {median(res.p50_ratios(side)):7.2f} {_range(res.p50_ratios(side)):>14}"
                if p50 else "")
        out.append(f"{side:10} {median(cpu):18.2f} {res.cpu_ratio(side):7.3f} "
                   f"{_range(res.session_ratios[side], '.3f'):>16} {conc}")
    first, *others = res.sides[1:] or [""]
    for side in others:
        pairs = res.paired(side, first)
        out.append(f"{side} / {first}, per session: median {median(pairs):.3f} ({_range(pairs, '.2f')}), "
                   f"{sum(p < 1 for p in pairs)} of {len(pairs)} below 1")
    return "\n".join(out)


def _trees(specs: list[str]) -> dict[str, Path]:
    out = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or name == "plain":
            raise SystemExit(f"--tree wants NAME=DIR (NAME not 'plain'): {spec!r}")
        out[name] = Path(path).resolve()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.stream_path", description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", action="append", default=[], help="NAME=DIR, a tree with addon/gateway.py")
    parser.add_argument("--answer", choices=("anthropic", "chat", "long"), default="anthropic",
                        help="the longest Anthropic recording (118 events), a Chat one, or "
                        f"{ISSUE_DELTAS} text deltas (169 client events, the issue's answer)")
    parser.add_argument("--pace-ms", type=float, default=2.0)
    parser.add_argument("--turns", type=int, default=4, help="paced turns per side and session")
    parser.add_argument("--sessions", type=int, default=3, help="sets of fresh mitmdumps")
    parser.add_argument("--concurrent", type=int, default=50, help="turns at once (0: skip)")
    parser.add_argument("--rounds", type=int, default=2, help="concurrent rounds per session")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    started = time.time()
    res = run(_trees(args.tree) or None, args.answer, args.pace_ms, args.turns, args.sessions,
              args.concurrent, args.rounds)
    print(render(res), flush=True)
    print(f"({time.time() - started:.0f} s)")
    if args.json:
        args.json.write_text(json.dumps(asdict(res), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

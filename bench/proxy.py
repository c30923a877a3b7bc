"""Through the proxy: real mitmdump with the addon vs plain mitmdump, both in front of the same
local upstream streaming a long Anthropic answer, turns alternating in one run.

- addon: `--mode reverse:http://127.0.0.1:UP -s addon/gateway.py --set gateway_match=/v1/responses
  --set gateway_upstream=anthropic --set gateway_base_url=http://127.0.0.1:UP`; the client gets
  translated Responses events. Same listening mode as plain, so both run the same mitmproxy layers
  and the difference is the addon's own (a Codex custom provider in reverse mode is set up so).
- plain: `--mode reverse:http://127.0.0.1:UP --set stream_large_bodies=1`; the client gets the
  upstream's bytes as they come (without `stream_large_bodies` mitmproxy would buffer the whole
  answer, docs/mitmproxy.md "Streaming callables", which is no baseline for a streaming proxy).
- hook: like plain, but with `-s bench/identity_addon.py`: the same bytes through an identity stream
  callable, to split what any callable costs in mitmproxy from what the gateway itself adds.
- timed (after the sessions, not compared): the addon with `-s bench/callable_timer.py`, which times
  the gateway's stream callable itself inside the proxy, to set against its cost in a tight loop.

Latency per event: client read time minus the upstream's stamp in that event. CPU per turn: the
scheduler's run time of every thread of the mitmdump process across the turn (/proc/<pid>/task/*/schedstat,
nanoseconds; utime + stime from /proc/<pid>/stat, in clock ticks, where schedstat is missing).

Sessions: a mitmdump keeps its luck for its whole life (memory layout, hash seed, which CPU it
lands on). Two plain mitmdumps in one run differed by 1%, but single sessions of the same gateway
code measured anywhere from -5% to +27% over plain. So the comparison is repeated with fresh
processes and pooled: one session's ratio is mostly that luck.
"""

from __future__ import annotations

import asyncio
import contextlib
import glob
import os
import queue
import re
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median, quantiles

from bench.loopback import Turn, Upstream, turn
from bench.workloads import REPO, TARGET_MODELS, small_request

MITMDUMP = Path(sys.executable).parent / "mitmdump"
ADDON = REPO / "addon" / "gateway.py"
IDENTITY = Path(__file__).resolve().parent / "identity_addon.py"
TIMER = Path(__file__).resolve().parent / "callable_timer.py"
MODES = ("plain", "hook", "addon")
_TICK_S = 1 / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True, slots=True)
class ModeResult:
    latency_us_median: float
    latency_us_p95: float
    cpu_ms_per_turn: float
    wall_ms_per_turn: float
    events_seen: int
    """Stamped events the client saw, over all measured turns."""


@dataclass(frozen=True, slots=True)
class ProxyResult:
    deltas: int
    interval_ms: float
    turns: int
    """Measured turns per mode in each session."""
    sessions: int
    plain: ModeResult
    hook: ModeResult
    addon: ModeResult
    session_cpu_ratios: tuple[float, ...]
    """addon / plain CPU per turn in each session, to show how far one session alone can be off."""
    callable_us_median: float | None = None
    """The gateway's stream callable alone, timed inside a mitmdump of its own (callable_timer.py):
    median µs per upstream event; None when not run."""

    @property
    def added_latency_us(self) -> float:
        return self.addon.latency_us_median - self.plain.latency_us_median

    @property
    def added_latency_us_p95(self) -> float:
        return self.addon.latency_us_p95 - self.plain.latency_us_p95

    @property
    def cpu_ratio(self) -> float:
        return self.addon.cpu_ms_per_turn / self.plain.cpu_ms_per_turn

    @property
    def added_cpu_us_per_event(self) -> float:
        return (self.addon.cpu_ms_per_turn - self.plain.cpu_ms_per_turn) * 1e3 / self.deltas

    @property
    def hook_cpu_us_per_event(self) -> float:
        """What an identity stream callable alone adds over plain passthrough."""
        return (self.hook.cpu_ms_per_turn - self.plain.cpu_ms_per_turn) * 1e3 / self.deltas


class Mitmdump:
    def __init__(self, args: list[str], confdir: str) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "ANTHROPIC_API_KEY": "sk-ant-bench"}
        cmd = [str(MITMDUMP), "--listen-host", "127.0.0.1", "-p", "0", "--set", f"confdir={confdir}",
               "--set", "connection_strategy=lazy", *args]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     env=env, cwd=REPO)
        self.lines: queue.Queue[str] = queue.Queue()
        self.log: list[str] = []
        threading.Thread(target=self._drain, daemon=True).start()
        self.port = self._wait_for_port(timeout_s=60)

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
            self.log = [*self.log[-40:], line]

    def _wait_for_port(self, timeout_s: float) -> int:
        return int(self.wait_for(r"listening at 127\.0\.0\.1:(\d+)", timeout_s, "mitmdump did not start"))

    def wait_for(self, pattern: str, timeout_s: float, failure: str) -> str:
        """The first group of the next output line that matches `pattern`."""
        while True:
            try:
                line = self.lines.get(timeout=timeout_s)
            except queue.Empty:
                raise RuntimeError(f"{failure}: {''.join(self.log)[-2000:]}") from None
            if found := re.search(pattern, line):
                return found[1]

    def cpu_s(self) -> float:
        threads = glob.glob(f"/proc/{self.proc.pid}/task/*/schedstat")
        if threads:  # run time in ns (first field), exact where utime/stime count 10 ms ticks
            return sum(int(Path(path).read_text().split()[0]) for path in threads) / 1e9
        stat = Path(f"/proc/{self.proc.pid}/stat").read_text()
        fields = stat[stat.rindex(")") + 2:].split()
        return (int(fields[11]) + int(fields[12])) * _TICK_S  # utime, stime (fields 14, 15)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def _addon_args(up_port: int) -> list[str]:
    return ["--mode", f"reverse:http://127.0.0.1:{up_port}", "-s", str(ADDON),
            "--set", "gateway_match=/v1/responses", "--set", "gateway_upstream=anthropic",
            "--set", f"gateway_base_url=http://127.0.0.1:{up_port}",
            "--set", f"gateway_model={TARGET_MODELS['anthropic']}",
            "--set", "gateway_capabilities=table",  # the bench upstream serves no models endpoint
            "--set", "gateway_key_env=ANTHROPIC_API_KEY"]  # a loopback upstream gets only a named key


@contextlib.contextmanager
def _proxies(up_port: int) -> Iterator[dict[str, Mitmdump]]:
    started: dict[str, Mitmdump] = {}
    with tempfile.TemporaryDirectory(prefix="bench-mitm-") as tmp:
        try:
            started["plain"] = Mitmdump(["--mode", f"reverse:http://127.0.0.1:{up_port}",
                                         "--set", "stream_large_bodies=1"], f"{tmp}/plain")
            started["hook"] = Mitmdump(["--mode", f"reverse:http://127.0.0.1:{up_port}", "-s", str(IDENTITY)],
                                       f"{tmp}/hook")
            started["addon"] = Mitmdump(_addon_args(up_port), f"{tmp}/addon")
            yield started
        finally:
            for proxy in started.values():
                proxy.stop()


def _check(mode: str, result: Turn, deltas: int, proxy: Mitmdump) -> None:
    end = b"response.completed" if mode == "addon" else b"message_stop"
    if result.status != 200 or end not in result.body or len(result.latencies_ns) < 0.95 * deltas:
        raise RuntimeError(f"{mode} turn went wrong: status {result.status}, {len(result.latencies_ns)} of "
                           f"{deltas} events seen; body starts {result.body[:300]!r}; "
                           f"mitmdump says: {''.join(proxy.log)[-1500:]}")


@dataclass
class _Tally:
    """What the measured turns of every session add up to, per mode."""

    latencies_ns: dict[str, list[int]] = field(default_factory=lambda: {mode: [] for mode in MODES})
    cpu_s: dict[str, float] = field(default_factory=lambda: dict.fromkeys(MODES, 0.0))
    wall_ns: dict[str, int] = field(default_factory=lambda: dict.fromkeys(MODES, 0))
    turns: int = 0

    def mode_result(self, mode: str) -> ModeResult:
        lat = self.latencies_ns[mode]
        return ModeResult(latency_us_median=median(lat) / 1e3, latency_us_p95=quantiles(lat, n=20)[-1] / 1e3,
                          cpu_ms_per_turn=self.cpu_s[mode] * 1e3 / self.turns,
                          wall_ms_per_turn=self.wall_ns[mode] / 1e6 / self.turns, events_seen=len(lat))


async def _session(up_port: int, body: bytes, deltas: int, timeout_s: float, turns: int, warmup: int,
                   tally: _Tally) -> float:
    """One set of fresh mitmdumps: warm-up turns, then `turns` measured turns per mode, alternating.
    Returns this session's own addon / plain CPU ratio."""
    cpu = dict.fromkeys(MODES, 0.0)
    with _proxies(up_port) as proxies:
        for i in range(warmup + turns):
            for mode in MODES[i % 3:] + MODES[:i % 3]:  # rotate who goes first
                proxy = proxies[mode]
                before = proxy.cpu_s()
                result = await turn(proxy.port, body, timeout_s)
                await asyncio.sleep(0.2)  # let mitmdump finish the flow (response hook, log line)
                _check(mode, result, deltas, proxy)
                if i >= warmup:
                    cpu[mode] += proxy.cpu_s() - before
                    tally.latencies_ns[mode] += result.latencies_ns
                    tally.wall_ns[mode] += result.wall_ns
    for mode in MODES:
        tally.cpu_s[mode] += cpu[mode]
    tally.turns += turns
    return cpu["addon"] / cpu["plain"]


async def _callable_us(up_port: int, body: bytes, deltas: int, timeout_s: float, turns: int) -> float:
    """Median µs per call of the gateway's stream callable inside a timed mitmdump, over `turns`
    turns after one warm-up."""
    with tempfile.TemporaryDirectory(prefix="bench-mitm-") as tmp:
        proxy = Mitmdump([*_addon_args(up_port), "-s", str(TIMER)], f"{tmp}/timed")
        try:
            medians = []
            for i in range(turns + 1):
                result = await turn(proxy.port, body, timeout_s)
                _check("addon", result, deltas, proxy)
                ns = int(proxy.wait_for(r"bench-callable-ns (\d+)", timeout_s, "no callable timing"))
                if i:
                    medians.append(ns)
        finally:
            proxy.stop()
    return median(medians) / 1e3


async def _measure(deltas: int, interval_ms: float, turns: int, warmup: int, sessions: int,
                   callable_turns: int) -> ProxyResult:
    upstream = Upstream(deltas=deltas, interval_s=interval_ms / 1e3)
    await upstream.start()
    body = small_request()
    timeout_s = 30 + deltas * interval_ms / 1e3 * 5
    tally = _Tally()
    try:
        ratios = [await _session(upstream.port, body, deltas, timeout_s, turns, warmup, tally)
                  for _ in range(sessions)]
        callable_us = (await _callable_us(upstream.port, body, deltas, timeout_s, callable_turns)
                       if callable_turns else None)
    finally:
        await upstream.stop()
    return ProxyResult(deltas=deltas, interval_ms=interval_ms, turns=turns, sessions=sessions,
                       plain=tally.mode_result("plain"), hook=tally.mode_result("hook"),
                       addon=tally.mode_result("addon"), session_cpu_ratios=tuple(ratios),
                       callable_us_median=callable_us)


def run(deltas: int, interval_ms: float, turns: int, warmup: int = 1, sessions: int = 1,
        callable_turns: int = 0) -> ProxyResult:
    if not MITMDUMP.exists():
        raise RuntimeError(f"mitmdump not found at {MITMDUMP}")
    return asyncio.run(_measure(deltas, interval_ms, turns, warmup, sessions, callable_turns))

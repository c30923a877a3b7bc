"""The printed tables, the verdicts against the issue's targets, and the JSON document."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench.growth import GrowthRow
from bench.hooks import HooksResult
from bench.hooks_report import render as hooks_render
from bench.profile import Profile
from bench.proxy import ProxyResult
from bench.requests import RequestRow
from bench.sessions import SessionRow, TurnRatio
from bench.sessions import table as session_table
from bench.sessions import verdicts as session_verdicts
from bench.stall import StallRow
from bench.streams import StreamRow


@dataclass
class Results:
    meta: dict[str, Any]
    requests: list[RequestRow] = field(default_factory=list)
    sessions: list[SessionRow] = field(default_factory=list)
    session_turn: TurnRatio | None = None
    streams: list[StreamRow] = field(default_factory=list)
    stream_files: list[StreamRow] = field(default_factory=list)
    growth: list[GrowthRow] = field(default_factory=list)
    proxy: ProxyResult | None = None
    stall: list[StallRow] = field(default_factory=list)
    hooks: HooksResult | None = None
    profiles: list[Profile] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Verdict:
    target: str
    ok: bool | None
    """On the wall-time medians; None: not measured in this run."""
    measured: str
    ok_cpu: bool | None = None
    """The same target judged on CPU-time medians (robust to other processes on the machine)."""


def _fmt(value: float | None, spec: str = ".1f") -> str:
    return "-" if value is None else format(value, spec)


def _table(head: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)]

    def line(cells: list[str]) -> str:  # two text columns, then numbers aligned right
        return "  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    return "\n".join([line(head), *(line(r) for r in rows)])


def request_table(rows: list[RequestRow]) -> str:
    head = ["workload", "target", "KB", "items", "tools", "ours µs", "floor µs", "×floor", "(cpu)",
            "orjson µs", "×orjson", "peer µs", "peer/ours", "(cpu)"]
    return _table(head, [[r.workload, r.target, f"{r.bytes / 1e3:.1f}", str(r.items), str(r.tools),
                          _fmt(r.ours_us), _fmt(r.floor_us), _fmt(r.ratio, ".2f"), _fmt(r.ratio_cpu, ".2f"),
                          _fmt(r.orjson_floor_us), _fmt(r.ratio_orjson, ".2f"), _fmt(r.peer_us),
                          _fmt(r.speedup), _fmt(r.speedup_cpu)] for r in rows])


def stream_table(rows: list[StreamRow]) -> str:
    head = ["dialect", "streams", "events", "KB", "ours µs/ev", "floor µs/ev", "×floor", "(cpu)",
            "×orjson", "ours ms/MB", "peer µs/ev", "peer/ours", "(cpu)", "last event"]
    return _table(head, [[r.dialect, r.stream, str(r.events), f"{r.bytes / 1e3:.1f}",
                          _fmt(r.ours_us_per_event), _fmt(r.floor_us_per_event), _fmt(r.ratio, ".2f"),
                          _fmt(r.ratio_cpu, ".2f"), _fmt(r.ratio_orjson, ".2f"), _fmt(r.ours_ms_per_mb),
                          _fmt(r.peer_us_per_event),
                          _fmt(r.speedup), _fmt(r.speedup_cpu), r.terminal] for r in rows])


def proxy_table(p: ProxyResult) -> str:
    head = ["mode", "", "latency median µs", "latency p95 µs", "CPU ms/turn", "wall ms/turn", "events seen"]
    rows = [[name, "", _fmt(m.latency_us_median), _fmt(m.latency_us_p95), _fmt(m.cpu_ms_per_turn),
             _fmt(m.wall_ms_per_turn), str(m.events_seen)]
            for name, m in (("plain", p.plain), ("hook", p.hook), ("addon", p.addon))]
    added = (f"addon adds {p.added_latency_us:+.1f} µs per event "
             f"(median; p95 {p.added_latency_us_p95:+.1f} µs), "
             f"CPU ×{p.cpu_ratio:.2f} per turn ({100 * (p.cpu_ratio - 1):+.0f}%, "
             f"{p.added_cpu_us_per_event:+.1f} µs CPU per event, of which an identity stream callable "
             f"alone costs {p.hook_cpu_us_per_event:+.1f} µs)")
    lines = [_table(head, rows), added,
             f"CPU added in each of {p.sessions} session(s) of fresh mitmdumps: {_each_session(p)}"]
    if p.callable_us_median is not None:
        lines.append(f"the gateway's stream callable alone, timed inside a mitmdump of its own: "
                     f"{p.callable_us_median:.1f} µs median per event")
    return "\n".join(lines)


def _each_session(p: ProxyResult) -> str:
    return ", ".join(f"{100 * (ratio - 1):+.0f}%" for ratio in p.session_cpu_ratios)


def profile_table(profiles: list[Profile], top: int = 6) -> str:
    parts = []
    for prof in profiles:
        parts.append(f"{prof.label}: {prof.ms_per_call:.2f} ms per call ({prof.calls} calls profiled)")
        rows = [[h.function, h.where, f"{h.self_ms:.3f}", f"{h.self_pct:.1f}", f"{h.total_pct:.1f}"]
                for h in prof.hotspots[:top]]
        parts.append(_table(["  function", "where", "self ms/call", "self %", "total %"],
                            [[f"  {r[0]}", *r[1:]] for r in rows]))
    return "\n".join(parts)


def verdicts(res: Results) -> list[Verdict]:
    """PASS/FAIL on the wall-time medians the issue asks for; CPU-time figures alongside."""
    out = []
    if res.requests:
        worst = max(res.requests, key=lambda r: r.ratio)
        worst_cpu = max(res.requests, key=lambda r: r.ratio_cpu)
        out.append(Verdict("request translation <= 3x the JSON floor", worst.ratio <= 3,
                           f"worst {worst.ratio:.2f}x ({worst.workload} -> {worst.target}); "
                           f"in CPU time worst {worst_cpu.ratio_cpu:.2f}x "
                           f"({worst_cpu.workload} -> {worst_cpu.target})",
                           worst_cpu.ratio_cpu <= 3))
    if res.sessions and res.session_turn is not None:
        out += [Verdict(target, ok, measured, ok_cpu)
                for target, ok, ok_cpu, measured in session_verdicts(res.sessions, res.session_turn)]
    peered = [r for r in res.requests if r.speedup is not None and r.speedup_cpu is not None]
    out.append(Verdict("request translation >= 10x faster than litellm",
                       min(r.speedup or 0.0 for r in peered) >= 10 if peered else None,
                       ", ".join(f"{r.workload} {r.speedup:.1f}x (CPU time {r.speedup_cpu:.1f}x)"
                                 for r in peered) or "not run",
                       min(r.speedup_cpu or 0.0 for r in peered) >= 10 if peered else None))
    if res.streams:
        worst_s = max(res.streams, key=lambda r: r.ratio)
        out.append(Verdict("stream translation <= 3x the JSON floor per event", worst_s.ratio <= 3,
                           "; ".join(f"{r.dialect} {r.stream} {r.ratio:.2f}x (CPU time {r.ratio_cpu:.2f}x)"
                                     for r in res.streams),
                           max(r.ratio_cpu for r in res.streams) <= 3))
    speeds = [r for r in res.streams if r.speedup is not None and r.speedup_cpu is not None]
    out.append(Verdict("stream translation >= 10x faster than litellm",
                       min(r.speedup or 0.0 for r in speeds) >= 10 if speeds else None,
                       ", ".join(f"{r.stream} {r.speedup:.1f}x (CPU time {r.speedup_cpu:.1f}x)"
                                 for r in speeds) or "not run",
                       min(r.speedup_cpu or 0.0 for r in speeds) >= 10 if speeds else None))
    p = res.proxy
    out.append(Verdict("addon adds < 1 ms per event over plain mitmdump",
                       p.added_latency_us < 1000 if p else None,
                       f"{p.added_latency_us:+.1f} µs median, {p.added_latency_us_p95:+.1f} µs p95"
                       if p else "not run"))
    out.append(Verdict("addon adds < 10% CPU per streamed turn over plain mitmdump",
                       p.cpu_ratio < 1.10 if p else None,
                       f"{100 * (p.cpu_ratio - 1):+.1f}% ({p.plain.cpu_ms_per_turn:.0f} -> "
                       f"{p.addon.cpu_ms_per_turn:.0f} ms per {p.deltas}-event turn, pooled over "
                       f"{p.sessions} session(s): {_each_session(p)})" if p else "not run"))
    return out


def verdict_table(items: list[Verdict]) -> str:
    mark = {True: "PASS", False: "FAIL", None: "n/a "}

    def line(v: Verdict) -> str:
        differs = v.ok_cpu is not None and v.ok_cpu != v.ok
        cpu = f" -- in CPU time: {mark[v.ok_cpu]}" if differs else ""
        return f"[{mark[v.ok]}] {v.target}: {v.measured}{cpu}"

    return "\n".join(line(v) for v in items)


def render(res: Results) -> str:
    m = res.meta
    parts = [f"dialect-gateway benchmarks: {m['started']}, Python {m['python']}, {m['cpus']} CPUs, "
             f"load average {m['load_before']:.1f} -> {m['load_after']:.1f}, "
             f"{'quick' if m['quick'] else 'full'} run"]
    if res.requests:
        parts += ["", "Request translation (as the addon does it: wirejson.loads + translate_request + "
                  "wirejson.dumps of the body; floor = json.loads + json.dumps of the same bytes, the "
                  "issue's floor; orjson = the same two calls with orjson, the parser the gateway uses; "
                  "peer = litellm, anthropic only)",
                  request_table(res.requests)]
    if res.sessions and res.session_turn is not None:
        parts += ["", "Request translation over a session (bench/sessions.py: anthropic; warm = the client's "
                  "cache holds what the session's previous request decoded; floor = json.loads + json.dumps "
                  "of the same bytes)",
                  session_table(res.sessions, res.session_turn)]
    if res.streams:
        parts += ["", "Stream translation (one chunk per upstream event, fresh translator per stream; "
                  "floor = json.loads + json.dumps of every event payload; ×orjson = against the same "
                  "floor with orjson; peer = litellm, anthropic only)",
                  stream_table(res.streams)]
    if res.growth:
        parts += ["", "Cost against one value's size (Anthropic stream translated whole; linear: about 8x "
                  "for 8x the size, quadratic: about 64x)",
                  _table(["case", "small KB", "large KB", "small ms", "large ms", "ratio"],
                         [[g.case, f"{g.small_bytes / 1024:.0f}", f"{g.large_bytes / 1024:.0f}",
                           f"{g.small_ms:.1f}", f"{g.large_ms:.1f}", f"{g.ratio:.1f}"] for g in res.growth])]
    if res.proxy:
        p = res.proxy
        parts += ["", f"Through the proxy (mitmdump {m.get('mitmproxy')}; {p.deltas} Anthropic text deltas "
                  f"{p.interval_ms:g} ms apart; {p.turns} measured turns per mode, alternating, in each of "
                  f"{p.sessions} session(s) of fresh mitmdumps)",
                  proxy_table(p)]
    if res.stall:
        parts += ["", "Another stream held up by one heavy request (bench/stall.py: the longest wait of a "
                  "steady stream's event inside the proxy, quiet vs while the heavy request is on its way; "
                  "share = that wait over the heavy request's time in the proxy)",
                  _table(["case", "", "heavy MB", "quiet ms", "stall ms", "×quiet", "work ms", "share"],
                         [[r.case, "", f"{r.heavy_mb:.1f}", f"{r.quiet_ms:.1f}", f"{r.stall_ms:.1f}",
                           f"{r.ratio:.1f}", f"{r.work_ms:.0f}", f"{r.share:.3f}"] for r in res.stall])]
    if res.hooks:
        parts += ["", hooks_render(res.hooks)]
    parts += ["", "Targets", verdict_table(verdicts(res))]
    if res.profiles:
        parts += ["", "Profile of our side (pyinstrument; self time per call, top functions)",
                  profile_table(res.profiles)]
    if res.notes or res.errors:
        parts += ["", "Notes", *(f"- {n}" for n in res.notes), *(f"- ERROR {e}" for e in res.errors)]
    return "\n".join(parts)


def to_json(res: Results) -> dict[str, Any]:
    p = res.proxy
    return {
        "meta": res.meta,
        "requests": [r.as_dict() for r in res.requests],
        "sessions": [r.as_dict() for r in res.sessions],
        "session_turn": None if res.session_turn is None else res.session_turn.as_dict(),
        "streams": [r.as_dict() for r in res.streams],
        "stream_files": [r.as_dict() for r in res.stream_files],
        "growth": [g.as_dict() for g in res.growth],
        "stall": [r.as_dict() for r in res.stall],
        "hooks": None if res.hooks is None else res.hooks.as_dict(),
        "proxy": None if p is None else {
            **asdict(p), "added_latency_us": p.added_latency_us,
            "added_latency_us_p95": p.added_latency_us_p95,
            "cpu_ratio": p.cpu_ratio, "added_cpu_us_per_event": p.added_cpu_us_per_event,
            "hook_cpu_us_per_event": p.hook_cpu_us_per_event},
        "targets": [asdict(v) for v in verdicts(res)],
        "profiles": [asdict(pr) for pr in res.profiles],
        "notes": res.notes,
        "errors": res.errors,
    }


def write(res: Results, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(to_json(res), indent=2, ensure_ascii=False) + "\n")

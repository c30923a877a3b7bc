"""`python -m bench [--quick] [--out bench/results/latest.json] [--skip NAME ...]`

Runs request translation, request translation over long sessions with the client's cache
(bench/sessions.py), stream translation, the proxy comparison, one Codex turn step by step
(bench/hooks.py), the litellm peer and a profile of our side; prints the tables and the verdicts
against the targets of issues 8 and 39; writes the JSON.
Exit status 1 when a benchmark failed to run (a dialect or peer that is missing is only a note).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from importlib import metadata
from pathlib import Path
from typing import Any

from bench import growth, hooks, peer_litellm, profile, proxy, requests, sessions, stall, streams
from bench.fixtures import long_answer, recorded
from bench.report import Results, render, write
from bench.workloads import TARGET_MODELS, lite_session, long_request, small_request
from translators import Translation, translate_request

STEPS = ("requests", "sessions", "streams", "growth", "proxy", "stall", "hooks", "peer", "profile")


@dataclass(frozen=True, slots=True)
class Budget:
    request_samples: dict[str, int]
    peer_request_samples: dict[str, int]
    stream_samples: int
    """Rounds for a 40-event stream; longer streams get proportionally fewer (at least 3)."""
    peer_stream_samples: int
    long_deltas: int
    proxy_deltas: int
    proxy_turns: int
    """Measured turns per mode in each proxy session."""
    proxy_sessions: int
    """Fresh sets of mitmdumps (bench/proxy.py: one process keeps its luck, ten points or more, for life)."""
    proxy_callable_turns: int
    """Turns of the timed mitmdump that measures the stream callable inside the proxy."""
    profile_seconds: float
    growth_samples: int = 5
    proxy_interval_ms: float = 1.0
    stall_items: int = 100_000
    """Items of the heavy request in bench/stall.py."""
    stall_event_mb: int = 16
    """Size of the heavy answer's one event in bench/stall.py."""
    hooks_turns: int = 8
    """Measured turns per mode and client in each session of bench/hooks.py."""
    hooks_sessions: int = 3
    session_samples: int = 40
    """Timed calls per case of bench/sessions.py."""


FULL = Budget(request_samples={"small": 200, "long": 40}, peer_request_samples={"small": 60, "long": 12},
              stream_samples=100, peer_stream_samples=10, long_deltas=2000, proxy_deltas=2000, proxy_turns=4,
              proxy_sessions=3, proxy_callable_turns=2,
              profile_seconds=1.5)
QUICK = Budget(request_samples={"small": 10, "long": 3}, peer_request_samples={"small": 3, "long": 1},
               stream_samples=3, peer_stream_samples=1, long_deltas=200, proxy_deltas=200, proxy_turns=1,
               proxy_sessions=1, proxy_callable_turns=1,
               profile_seconds=0.2, growth_samples=3, stall_items=5_000,
               stall_event_mb=1, hooks_turns=1, hooks_sessions=1, session_samples=3)


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _meta(quick: bool) -> dict[str, Any]:
    return {"started": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
            "load_before": os.getloadavg()[0], "load_after": None, "quick": quick,
            "mitmproxy": _version("mitmproxy"), "litellm": _version("litellm"),
            "pyinstrument": _version("pyinstrument"), "seconds": {}}


def _guarded(res: Results, label: str, step: Callable[[], None]) -> None:
    print(f"bench: {label} ...", file=sys.stderr, flush=True)
    start = time.monotonic()
    try:
        step()
    except Exception as exc:
        traceback.print_exc(file=sys.stderr)
        res.errors.append(f"{label}: {exc!r}"[:1000])
    res.meta["seconds"][label] = round(time.monotonic() - start, 1)


def _translate_all(dialect: str, translation: Translation, streams_chunks: list[tuple[bytes, ...]]) -> None:
    for chunks in streams_chunks:
        streams.translate(dialect, translation, chunks)


def _profiles(res: Results, targets: list[str], budget: Budget) -> None:
    small, long, lite = small_request(), long_request(), lite_session()
    jobs: list[tuple[str, Callable[[], object]]] = []
    if "anthropic" in targets:
        jobs.append(("request small -> anthropic", lambda: requests.ours(small, "anthropic")))
        jobs.append(("request Lite 188 -> anthropic", lambda: requests.ours(lite, "anthropic")))
    jobs += [(f"request long -> {t}", partial(requests.ours, long, t)) for t in targets]
    for dialect in targets:
        translation = translate_request(json.loads(small), dialect, TARGET_MODELS[dialect])
        found, _ = recorded(dialect)
        if found:
            jobs.append((f"stream {dialect} recorded ({len(found)})",
                         partial(_translate_all, dialect, translation, [s.chunks for s in found])))
        if dialect == "anthropic":
            answer = long_answer(budget.long_deltas)
            jobs.append((f"stream anthropic synthetic ({answer.events} events)",
                         partial(streams.translate, "anthropic", translation, answer.chunks)))
    res.profiles += [profile.profile(label, fn, budget.profile_seconds) for label, fn in jobs]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[1])
    parser.add_argument("--quick", action="store_true", help="tiny iteration counts (seconds, not minutes)")
    parser.add_argument("--out", type=Path, default=Path("bench/results/latest.json"),
                        help="JSON results file")
    parser.add_argument("--skip", action="append", choices=STEPS, default=[], help="leave a benchmark out")
    args = parser.parse_args(argv)
    budget = QUICK if args.quick else FULL
    res = Results(meta=_meta(args.quick))

    peer = None
    if "peer" not in args.skip:
        loaded = peer_litellm.load()
        if isinstance(loaded, str):
            res.notes.append(loaded)
        else:
            peer = loaded
            if peer.version != "1.110.2":
                res.notes.append(f"litellm {peer.version} found; the peer calls were written against 1.110.2")
    targets, skipped = requests.available_targets()
    res.notes += skipped

    def run_requests() -> None:
        rows, notes = requests.run(targets, budget.request_samples, peer, budget.peer_request_samples)
        res.requests, res.notes = rows, res.notes + notes

    def run_sessions() -> None:
        res.sessions, res.session_turn = sessions.run(budget.session_samples)

    def run_streams() -> None:
        rows, files, notes = streams.run(targets, budget.stream_samples, peer, budget.peer_stream_samples,
                                         budget.long_deltas)
        res.streams, res.stream_files, res.notes = rows, files, res.notes + notes

    def run_growth() -> None:
        res.growth = growth.run(budget.growth_samples)

    def run_proxy() -> None:
        res.proxy = proxy.run(budget.proxy_deltas, budget.proxy_interval_ms, budget.proxy_turns,
                              sessions=budget.proxy_sessions, callable_turns=budget.proxy_callable_turns)

    def run_stall() -> None:
        res.stall = stall.run(budget.stall_items, budget.stall_event_mb)

    def run_hooks() -> None:
        res.hooks = hooks.run(budget.hooks_turns, budget.hooks_sessions)

    def run_profile() -> None:
        why_not = profile.available()
        if why_not:
            res.notes.append(why_not)
        else:
            _profiles(res, targets, budget)

    for name, step in (("requests", run_requests), ("sessions", run_sessions), ("streams", run_streams),
                       ("growth", run_growth),
                       ("proxy", run_proxy), ("stall", run_stall), ("hooks", run_hooks),
                       ("profile", run_profile)):
        if name not in args.skip:
            _guarded(res, name, step)
    res.meta["load_after"] = os.getloadavg()[0]
    print(render(res), flush=True)
    write(res, args.out)
    print(f"\nJSON: {args.out}")
    return 1 if res.errors else 0


if __name__ == "__main__":
    sys.exit(main())

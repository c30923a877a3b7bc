"""Request translation over a conversation's life (issue 39): long Codex sessions, fresh and with
the client's cache of decoded items warm, against the JSON floor of the same bytes, all in one
interleaved run.

A Codex session resends its whole history every request (docs/codex.md "Responses Lite"), so the
request the addon translates on a long session's turn is mostly items it decoded on the previous
one; the addon passes the client's `ItemCache` (`translate_request(..., items=)`), which holds
them. A warm case times the request with a cache that holds exactly what the session's previous
request left in it (a fresh copy per call, prepared before the timing), so each call decodes only
the items that request added.

The cases:
- `lite 188`: the Lite session of `bench/workloads.py` `lite_session(188)`, from the real Lite
  capture, fresh and warm (the previous request held 185 items);
- `classic 216`: the 216-item, 40-tool session of `long_request()`, fresh and warm (the previous
  request held the history without its last turn's final answer and the user's new message);
- `fresh request`: the real Codex request (4 items, 10 tools), no cache;
- `+2 items to 200`: a Lite request that adds a call and its output to a 200-item conversation,
  warm, against `10-item request`, fresh: the issue's second target compares the two.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from statistics import median
from typing import Any

from bench.requests import floor
from bench.timing import interleaved
from bench.workloads import (
    TARGET_MODELS,
    describe,
    lite_before,
    lite_session,
    long_request,
    small_request,
    steered,
    with_a_call,
)
from translators import translate_request
from translators.wire import wirejson

try:  # the translators of before issue 39 have no cache: their warm cases run without one
    from translators import ItemCache
except ImportError:  # pragma: no cover - only when benchmarking an older tree
    ItemCache = None  # type: ignore[assignment,misc]

TARGET = "anthropic"
LITE_ITEMS = 188
TURN_BASE = 200
TEN = 9
"""The 10-item request is the Lite session's 9-item one and a message the user typed meanwhile."""


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    raw: bytes
    previous: bytes | None = None
    """The request before it in its session, whose items the warm cache holds; None: fresh."""


@dataclass(frozen=True, slots=True)
class SessionRow:
    case: str
    target: str
    items: int
    bytes: int
    cache: str
    """"warm" (the previous request's items cached), "fresh" (no cache), or "none" (warm asked
    but these translators have no cache)."""
    ours_us: float
    floor_us: float
    ours_cpu_us: float
    floor_cpu_us: float

    @property
    def ratio(self) -> float:
        return self.ours_us / self.floor_us

    @property
    def ratio_cpu(self) -> float:
        return self.ours_cpu_us / self.floor_cpu_us

    def as_dict(self) -> dict[str, object]:
        return {**asdict(self), "ratio": self.ratio, "ratio_cpu": self.ratio_cpu}


@dataclass(frozen=True, slots=True)
class TurnRatio:
    """A turn adding 2 items to a 200-item conversation against a fresh 10-item request."""

    turn: str
    ten: str
    ratio: float
    ratio_cpu: float

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def cases() -> list[Case]:
    lite = lite_session(LITE_ITEMS)
    long = long_request()
    body = json.loads(long)
    long_previous = json.dumps({**body, "input": body["input"][:-2]}, ensure_ascii=False).encode()
    turn_base = lite_session(TURN_BASE)
    return [Case("lite 188", lite), Case("lite 188", lite, lite_before(LITE_ITEMS)),
            Case("classic 216", long), Case("classic 216", long, long_previous),
            Case("fresh request", small_request()),
            Case("+2 items to 200", with_a_call(turn_base), turn_base),
            Case("10-item request", steered(lite_session(TEN)))]


def ours(raw: bytes, target: str, cache: Any = None) -> bytes:
    """What the addon does per request (bench/requests.py `ours`), with the client's cache."""
    extra = {} if cache is None else {"items": cache}
    translation = translate_request(wirejson.loads(raw), target, TARGET_MODELS[target], **extra)
    return wirejson.dumps(translation.body)


class _Warm:
    """Calls `ours` with a new cache each time, each warmed beforehand with the previous request.
    A used cache is kept until the run ends: freeing it is no part of a request."""

    def __init__(self, raw: bytes, previous: bytes, target: str, calls: int) -> None:
        self.raw, self.target = raw, target
        self.caches = []
        self.used: list[Any] = []
        for _ in range(calls):
            cache = ItemCache()
            ours(previous, target, cache)
            self.caches.append(cache)

    def __call__(self) -> bytes:
        cache = self.caches.pop()
        self.used.append(cache)
        return ours(self.raw, self.target, cache)


def run(samples: int, target: str = TARGET, warmup: int = 2) -> tuple[list[SessionRow], TurnRatio]:
    found = cases()
    contenders: dict[str, Callable[[], object]] = {}
    for case in found:
        label = _label(case)
        if case.previous is not None and ItemCache is not None:
            contenders[label] = _Warm(case.raw, case.previous, target, samples + warmup)
        else:
            contenders[label] = lambda raw=case.raw: ours(raw, target)
        contenders[f"floor {case.name}"] = lambda raw=case.raw: floor(raw)
    timings = interleaved(contenders, samples, warmup=warmup)
    rows = []
    for case in found:
        label, shape = _label(case), describe(case.raw)
        mine, base = timings[label], timings[f"floor {case.name}"]
        cache = "fresh" if case.previous is None else "warm" if ItemCache is not None else "none"
        rows.append(SessionRow(case.name, target, shape["items"], shape["bytes"], cache, mine.median_us,
                               base.median_us, mine.cpu_median_us, base.cpu_median_us))
    turn = next(r for r in rows if r.case == "+2 items to 200")
    ten = next(r for r in rows if r.case == "10-item request")
    return rows, TurnRatio(f"{turn.case} ({turn.cache})", ten.case, turn.ours_us / ten.ours_us,
                           turn.ours_cpu_us / ten.ours_cpu_us)


def _label(case: Case) -> str:
    return f"{case.name} {'warm' if case.previous is not None else 'fresh'}"


# -- the tables, and `python -m bench.sessions` ---------------------------------------------------

TARGETS = {"lite 188": 2.0, "turn": 3.0}
"""Issue 39's targets: a long Lite session at most 2x the JSON floor (fresh and warm), a turn
adding 2 items to a 200-item conversation at most 3x a fresh 10-item request."""


def verdicts(rows: list[SessionRow], turn: TurnRatio) -> list[tuple[str, bool, bool, str]]:
    """(target, met on wall medians, met on CPU medians, what was measured)."""
    lite = [r for r in rows if r.case == "lite 188"]
    worst = max(lite, key=lambda r: r.ratio)
    worst_cpu = max(lite, key=lambda r: r.ratio_cpu)
    return [
        ("long Lite session (188 items), fresh and warm, <= 2x the JSON floor",
         worst.ratio <= TARGETS["lite 188"], worst_cpu.ratio_cpu <= TARGETS["lite 188"],
         ", ".join(f"{r.cache} {r.ratio:.2f}x (CPU {r.ratio_cpu:.2f}x)" for r in lite)),
        ("a turn adding 2 items to a 200-item conversation <= 3x a 10-item request",
         turn.ratio <= TARGETS["turn"], turn.ratio_cpu <= TARGETS["turn"],
         f"{turn.ratio:.2f}x (CPU {turn.ratio_cpu:.2f}x)"),
    ]


def table(rows: list[SessionRow], turn: TurnRatio) -> str:
    head = (f"{'case':18} {'cache':5} {'items':>5} {'KB':>6} {'ours µs':>9} {'floor µs':>9} {'×floor':>7} "
            f"{'(cpu)':>6}")
    lines = [head] + [f"{r.case:18} {r.cache:5} {r.items:5d} {r.bytes / 1e3:6.1f} {r.ours_us:9.0f} "
                      f"{r.floor_us:9.0f} {r.ratio:7.2f} {r.ratio_cpu:6.2f}" for r in rows]
    lines.append(f"{turn.turn} / {turn.ten}: {turn.ratio:.2f}x (CPU {turn.ratio_cpu:.2f}x)")
    return "\n".join(lines)


def _spread(values: list[float]) -> str:
    return f"{median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.sessions", description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=40, help="timed calls per case and round")
    parser.add_argument("--rounds", type=int, default=1, help="runs in this process; medians (min-max)")
    parser.add_argument("--target", default=TARGET)
    parser.add_argument("--json", type=Path, help="write every round's rows here")
    args = parser.parse_args(argv)
    rounds = [run(args.samples, args.target) for _ in range(args.rounds)]
    for n, (rows, turn) in enumerate(rounds, 1):
        print(f"round {n}\n{table(rows, turn)}\n")
    if args.rounds > 1:
        print("over the rounds, ratio to the floor: median (min-max)")
        for i, row in enumerate(rounds[0][0]):
            wall = [r[0][i].ratio for r in rounds]
            cpu = [r[0][i].ratio_cpu for r in rounds]
            print(f"  {row.case:18} {row.cache:5} wall {_spread(wall)}  CPU {_spread(cpu)}")
        print(f"  {rounds[0][1].turn} / {rounds[0][1].ten}: wall {_spread([t.ratio for _, t in rounds])}  "
              f"CPU {_spread([t.ratio_cpu for _, t in rounds])}")
    for target, ok, ok_cpu, measured in verdicts(*rounds[-1]):
        print(f"[{'PASS' if ok else 'FAIL'}] {target}: {measured}"
              + ("" if ok == ok_cpu else f" -- in CPU time: {'PASS' if ok_cpu else 'FAIL'}"))
    if args.json is not None:
        args.json.write_text(json.dumps([{"rows": [r.as_dict() for r in rows], "turn": turn.as_dict()}
                                         for rows, turn in rounds], indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

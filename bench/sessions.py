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

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
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

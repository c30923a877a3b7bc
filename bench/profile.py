"""Where our time goes: pyinstrument over the request and stream translations, summed per function.

Self time is the time in a function's own code (C calls it makes that pyinstrument does not see as
frames included); total time counts every call below it once per call path (no double counting
under recursion).

The garbage collector is off while profiling: the profiler's own samples grow the heap, and the
collections that triggers would land, whole, on whichever function happened to allocate (a 2 ms
"hotspot" in a function that costs 10 µs). Measured apart, collection costs 2-5% of a request.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Hotspot:
    function: str
    where: str
    self_ms: float
    self_pct: float
    total_pct: float


@dataclass(frozen=True, slots=True)
class Profile:
    label: str
    calls: int
    ms_per_call: float
    hotspots: list[Hotspot]


def available() -> str | None:
    """None when pyinstrument can run, else why not."""
    try:
        import pyinstrument  # noqa: F401
    except ImportError:
        return "pyinstrument is not installed (pip install pyinstrument); profile skipped"
    return None


def profile(label: str, fn: Callable[[], object], seconds: float, top: int = 8) -> Profile:
    from pyinstrument import Profiler

    fn()  # warm caches and imports outside the profile
    profiler = Profiler(interval=0.0002, async_mode="disabled")
    calls = 0
    gc.collect()
    gc.disable()
    try:
        profiler.start()
        start = time.perf_counter()
        while calls == 0 or time.perf_counter() - start < seconds:
            fn()
            calls += 1
        elapsed = time.perf_counter() - start
        session = profiler.stop()
    finally:
        gc.enable()
    root = session.root_frame()
    if root is None:
        return Profile(label, calls, elapsed * 1e3 / calls, [])
    self_s: dict[tuple[str, str], float] = {}
    total_s: dict[tuple[str, str], float] = {}
    _walk(root, self_s, total_s, frozenset())
    whole = root.time or 1.0
    ranked = sorted(self_s.items(), key=lambda kv: kv[1], reverse=True)[:top]
    return Profile(label, calls, elapsed * 1e3 / calls, [
        Hotspot(function=name, where=where, self_ms=s * 1e3 / calls, self_pct=100 * s / whole,
                total_pct=100 * total_s[(name, where)] / whole) for (name, where), s in ranked])


def _walk(frame: Any, self_s: dict[tuple[str, str], float], total_s: dict[tuple[str, str], float],
          above: frozenset[tuple[str, str]]) -> None:
    key = (frame.function or "?", f"{frame.file_path_short or '?'}:{frame.line_no or 0}")
    if frame.is_synthetic:
        return
    self_s[key] = self_s.get(key, 0.0) + frame.total_self_time
    if key not in above:
        total_s[key] = total_s.get(key, 0.0) + frame.time
    for child in frame.children:
        _walk(child, self_s, total_s, above | {key})

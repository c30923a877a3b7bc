"""Interleaved timing: every contender runs once per round, so machine drift hits all alike.

Wall time is `perf_counter_ns`. The same calls are also timed in CPU time of the calling thread
(`thread_time_ns`), which leaves out the time the thread sat preempted: on a shared, loaded
machine the CPU-time ratios stay put while the wall-time ones wander. Work a contender hands to
other threads (litellm's logging threads) is not in its CPU time.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from statistics import median


@dataclass(frozen=True, slots=True)
class Timing:
    median_ns: float
    min_ns: int
    cpu_median_ns: float
    samples: int

    @property
    def median_us(self) -> float:
        return self.median_ns / 1e3

    @property
    def cpu_median_us(self) -> float:
        return self.cpu_median_ns / 1e3


def interleaved(contenders: Mapping[str, Callable[[], object]], samples: Mapping[str, int] | int,
                warmup: int = 2) -> dict[str, Timing]:
    """Median wall time (`perf_counter_ns`) and CPU time per call of each contender.

    `samples` may differ per contender (a slow peer gets fewer); the rounds that run a slower
    contender are spread evenly over the whole measurement rather than bunched at the start."""
    counts = {name: samples if isinstance(samples, int) else samples[name] for name in contenders}
    for fn in contenders.values():
        for _ in range(warmup):
            fn()
    gc.collect()
    rounds = max(counts.values())
    wall: dict[str, list[int]] = {name: [] for name in contenders}
    cpu: dict[str, list[int]] = {name: [] for name in contenders}
    clock, cpu_clock = time.perf_counter_ns, time.thread_time_ns
    for r in range(rounds):
        for name, fn in contenders.items():
            n = counts[name]
            if (r * n) // rounds == ((r + 1) * n) // rounds:
                continue
            start = clock()
            cpu_start = cpu_clock()
            fn()
            cpu[name].append(cpu_clock() - cpu_start)
            wall[name].append(clock() - start)
    return {name: Timing(median_ns=median(ts), min_ns=min(ts), cpu_median_ns=median(cpu[name]),
                         samples=len(ts)) for name, ts in wall.items()}

"""How a cost grows with its input: the ratio of two costs, robust enough for a test.

Linear work grows about `factor` times for `factor` times the input, quadratic work about
factor²; the tests assert a bound between the two, far from both. A cost is the CPU time of this
thread doing the work (best of a few rounds), not wall-clock time: another job on the machine
takes the CPU away between the rounds, it does not add to what the work itself costs. The
figures themselves are bench/growth.py's."""

from __future__ import annotations

import time
from collections.abc import Callable

FACTOR = 16


def growth[T](make: Callable[[int], T], run: Callable[[T], object], size: int, factor: int = FACTOR,
              rounds: int = 5) -> float:
    """Best time of `run(make(size * factor))` over best time of `run(make(size))`; only `run`
    is timed."""
    return _best(run, make(size * factor), rounds) / _best(run, make(size), rounds)


def _best[T](run: Callable[[T], object], arg: T, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.thread_time()
        run(arg)
        times.append(time.thread_time() - start)
    return min(times)


LINEAR_BOUND = 128
"""Between linear (~16 for 16 times the input) and quadratic (~256), with room for the bigger
input falling out of the CPU caches."""


def slower(run: Callable[[], object], baseline: Callable[[], object], rounds: int = 3) -> float:
    """Best time of `run` over best time of `baseline`: the same input size and number of
    pieces, with and without the accumulation under test."""
    return _best(lambda _: run(), None, rounds) / _best(lambda _: baseline(), None, rounds)


SAME_COST_BOUND = 5.0
"""Accumulating pieces costs about what passing them on does; quadratic joining of a 1.6 MB
value in 256-byte pieces costs tens of times more."""

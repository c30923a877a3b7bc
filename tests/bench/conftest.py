"""The benchmarks' smoke runs in the test process."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def suite_heap_frozen() -> Iterator[None]:
    """The test process's own heap (every collected test of the suite, every module it imported)
    kept out of the collector's passes while a benchmark runs: bench/timing.py collects before
    each measurement, and a full pass over that heap took longer than the smoke run it precedes.
    What the benchmark itself allocates is collected as in `python -m bench`."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()

"""Waiting on a condition instead of sleeping for a guessed time.

A fixed sleep is either too short on a loaded machine (the test races) or too long on an idle
one (the suite crawls). `until` polls the condition itself; its deadline only bounds a wait that
never ends, so it is generous: a slow machine waits longer, it does not fail."""

from __future__ import annotations

import time
from collections.abc import Callable

DEADLINE = 60.0
"""Seconds before a wait gives up: far past anything a working run needs."""
POLL = 0.01


def until[T](condition: Callable[[], T], what: str, timeout: float = DEADLINE) -> T:
    """`condition()`'s first truthy value, polled every POLL seconds; fails naming `what` if none
    comes within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout:.0f} s for {what}")
        time.sleep(POLL)
    return value

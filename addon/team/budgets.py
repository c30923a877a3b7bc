"""A client's budgets (docs/team.md "Budgets"): requests per rolling minute, in this process."""

from __future__ import annotations

import collections
import math
import threading
import time
from collections.abc import Callable


class RateWindow:
    """Requests per rolling minute per client, in this process (docs/team.md "Budgets"): the
    times of the last minute's requests, oldest first, at most the limit kept."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._seen: dict[str, collections.deque[float]] = {}
        self._lock = threading.Lock()

    def take(self, name: str, per_minute: int) -> float:
        """0 when the request may go (and it is counted), else the seconds until it may."""
        if per_minute <= 0:
            return 0.0
        now = self.clock()
        with self._lock:
            seen = self._seen.setdefault(name, collections.deque())
            while seen and seen[0] <= now - 60.0:
                seen.popleft()
            if len(seen) >= per_minute:
                return max(seen[0] + 60.0 - now, 0.001)
            seen.append(now)
            return 0.0


def retry_after(seconds: float) -> str:
    """`retry-after` in whole seconds, never 0 (a client would retry at once)."""
    return str(max(1, math.ceil(seconds)))

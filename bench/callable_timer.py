"""mitmproxy script for the proxy benchmark, loaded after addon/gateway.py in a mitmdump of its own:
times the gateway's stream callable inside the proxy and prints the median per call after every
response (`bench-callable-ns <median> <calls>`).

The clock is `perf_counter_ns`, read through the vDSO: a clock that enters the kernel
(`thread_time_ns`) would itself chill the caches whose coldness is being measured. The timed
mitmdump is not one of the modes whose CPU is compared.
"""

from __future__ import annotations

import time
from typing import Any

from addon.serve import streaming

_calls: list[int] = []
_untimed = streaming.StreamHook.__call__


def _timed(self: streaming.StreamHook, data: bytes) -> bytes | list[bytes]:
    start = time.perf_counter_ns()
    out = _untimed(self, data)
    _calls.append(time.perf_counter_ns() - start)
    return out


streaming.StreamHook.__call__ = _timed  # type: ignore[method-assign]


def response(flow: Any) -> None:
    if _calls:
        ordered = sorted(_calls)
        print(f"bench-callable-ns {ordered[len(ordered) // 2]} {len(ordered)}", flush=True)
        _calls.clear()

"""mitmdump script for the load test: `GET /__reliability/memory` runs a full garbage collection
inside the proxy and answers with the HTTP flows still alive and the process's resident memory.

Why collect first: mitmproxy's connection layers form reference cycles (layers, contexts, the
exceptions its type checks raise and catch), so a finished flow is freed by the cyclic collector,
whose next full pass may be hundreds of flows away; RSS read without it measures that timing, not
what the proxy keeps. Loaded before `offline_guard.py`, which would otherwise answer it.
"""

from __future__ import annotations

import gc
import json
import re
from pathlib import Path

from mitmproxy import http

PATH = "/__reliability/memory"


def rss_mb() -> float:
    status = Path("/proc/self/status").read_text()
    match = re.search(r"VmRSS:\s+(\d+) kB", status)
    return int(match[1]) / 1024 if match else -1.0


class MemoryProbe:
    def request(self, flow: http.HTTPFlow) -> None:
        if flow.response is not None or flow.request.path != PATH:
            return
        before = rss_mb()
        gc.collect()
        alive = sum(1 for o in gc.get_objects() if isinstance(o, http.HTTPFlow) and o is not flow)
        body = {"flows": alive, "rss_mb": rss_mb(), "rss_mb_before_collect": before}
        flow.response = http.Response.make(
            200, json.dumps(body).encode(), {"content-type": "application/json"}
        )


addons = [MemoryProbe()]

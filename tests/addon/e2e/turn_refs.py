"""A test's mitmdump script: whether a finished turn is freed by reference counting. The cyclic
collector is switched off once the proxy runs; at each answer's head the turn's context and leg
(addon/serve/flow.py `FlowCtx`, addon/upstream/leg.py `Leg`) are held weakly, and at each answer's
end the number of earlier turns' objects still alive is written as one JSON line,
`{"earlier": N, "alive": M}`, to the file `GATEWAY_TEST_TURN_REFS` names
(tests/addon/e2e/test_turn_memory.py reads it). Alive with the collector off means held only by a
reference cycle: freed at the collector's next pass, not when the turn ended."""

from __future__ import annotations

import gc
import json
import os
import weakref
from typing import Any

from mitmproxy import http

_held: list[weakref.ref[Any]] = []


def running() -> None:
    gc.disable()


def responseheaders(flow: http.HTTPFlow) -> None:
    from addon.serve.flow import context_of  # loaded by the gateway's script, first in the chain

    fc = context_of(flow)
    if fc is not None and fc.sending is not None:
        _held.extend((weakref.ref(fc), weakref.ref(fc.sending.leg)))


def response(flow: http.HTTPFlow) -> None:
    earlier = _held[:-2]
    alive = sum(1 for ref in earlier if ref() is not None)
    with open(os.environ["GATEWAY_TEST_TURN_REFS"], "a") as out:
        out.write(json.dumps({"earlier": len(earlier) // 2, "alive": alive}) + "\n")

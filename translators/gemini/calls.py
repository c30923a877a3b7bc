"""Function-call ids between Gemini and the client.

Gemini 3 names each call (`functionCall.id`) and wants it echoed in `functionResponse.id`;
earlier models send no id and pair responses by name and order (docs/gemini.md "Streaming"). The
client needs a `call_id` either way, so the decoder makes one from the response id and the
call's position: deterministic (no clock or randomness), unique across turns because every
Gemini response has its own id. Such a made-up id is marked with `SYNTHETIC_PREFIX` and never
sent back to Gemini, which never saw it.
"""

from __future__ import annotations

from typing import Any

from translators.core.report import Report
from translators.features import toolset
from translators.ir.request import ToolCall

SYNTHETIC_PREFIX = "gcall_"


def synthesized_id(response_id: str, position: int) -> str:
    return f"{SYNTHETIC_PREFIX}{response_id}_{position}"


def wire_id(call_id: str) -> str | None:
    """The id to show Gemini for a client call id, or None when Gemini gave the call none."""
    return None if call_id.startswith(SYNTHETIC_PREFIX) else call_id


def function_call(call: ToolCall, wire_name: str, report: Report) -> dict[str, Any]:
    out: dict[str, Any] = {"name": wire_name, "args": toolset.call_input(call, report)}
    call_id = wire_id(call.call_id)
    if call_id is not None:
        out["id"] = call_id
    return out

"""Requests that fit the model: the output limit a request goes upstream with, whatever the
dialect (Anthropic `max_tokens`, Chat `max_tokens` / `max_completion_tokens`, Gemini
`maxOutputTokens`, Bedrock `maxTokens`, Responses `max_output_tokens`; docs/models.md "Output
limits").

The client's limit is sent at most as large as

- the model's own output limit, `ModelCapabilities.max_output_tokens`: the route's stated
  `max_output_tokens`, else the vendor's models endpoint, else the dialect's shipped table;
- what the context window leaves once the input is in, where the window is known: vendors count
  input and output against one window and refuse a request whose input plus limit passes it
  (Anthropic and Bedrock: "input length and `max_tokens` exceed context limit"; DeepSeek: "This
  model's maximum context length is ... tokens"). The input is the IR's estimate
  (`translators/ir/size.py`).

A larger value is refused by the vendor (DeepSeek: "the valid range of max_tokens is [1, 8192]"),
so it is lowered and the flow says so in a note: the request still asks for all the model can
write. A request without a limit gets none unless its upstream needs one (`default`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from translators.core.capabilities import ModelCapabilities
from translators.core.report import Report
from translators.ir import size
from translators.ir.request import Request

MIN_ROOM = 1024
"""The least the context window lowers a limit to: the input is only estimated, and a limit of a
few tokens would cut the answer where the upstream might have taken the request. An input
estimated at the whole window or more sets no ceiling at all: the upstream either refuses it
whatever the limit (a context overflow, which clients handle) or has a larger window than the one
known (a beta, a newer tier)."""


@dataclass(frozen=True, slots=True)
class Ceiling:
    tokens: int
    why: str
    """What sets it, for the note: `deepseek-chat's output limit`."""


def ceiling(request: Request, caps: ModelCapabilities) -> Ceiling | None:
    """The largest limit `request` may be sent with to the model `caps` describes; None when
    nothing is known of either the output limit or the window."""
    out = Ceiling(caps.max_output_tokens, f"{caps.model}'s output limit") if caps.max_output_tokens else None
    window = caps.context_window
    used = size.estimate_tokens(request) if window else 0
    if window and used < window:
        room = max(window - used, MIN_ROOM)
        if out is None or room < out.tokens:
            out = Ceiling(room, f"what {caps.model}'s {window}-token context window leaves after an input of "
                                f"about {used} tokens")
    return out


def output_limit(request: Request, caps: ModelCapabilities, report: Report, *,
                 default: int | None = None) -> int | None:
    """The limit to send: the client's, lowered to the ceiling (with a note); without one,
    `default` (an upstream that needs a limit: Claude), itself kept under the ceiling, else None."""
    asked = request.max_output_tokens
    if asked is None:
        if default is None:
            return None
        top = ceiling(request, caps)
        return default if top is None else min(default, top.tokens)
    top = ceiling(request, caps)
    if top is not None and asked > top.tokens:
        report.note(f"output limit {asked} lowered to {top.tokens}: {top.why}")
        return top.tokens
    return asked


_SENT = (("max_tokens",), ("max_completion_tokens",), ("max_output_tokens",),
         ("generationConfig", "maxOutputTokens"), ("inferenceConfig", "maxTokens"))
"""Where each dialect's body carries its output limit (this module's docstring)."""


def sent_limit(body: dict[str, Any]) -> int | None:
    """The output limit an encoded upstream body carries, whichever dialect wrote it; None when
    it has none."""
    for path in _SENT:
        value: Any = body
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    return None


def reserved_output(request: Request, caps: ModelCapabilities, body: dict[str, Any]) -> int | None:
    """The most output tokens a turn may take as sent (`sent_limit`), else the model's ceiling."""
    sent = sent_limit(body)
    if sent is not None:
        return sent
    top = ceiling(request, caps)
    return top.tokens if top is not None else None

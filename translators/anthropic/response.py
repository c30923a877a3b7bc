"""Whole Anthropic answers and error bodies (docs/anthropic.md "Request", "Errors")."""

from __future__ import annotations

from typing import Any

from translators.anthropic import errors
from translators.anthropic.stream import finish_events, usage_event
from translators.core.errors import UpstreamProtocolError
from translators.core.translation import Translation
from translators.dialect import ErrorInfo
from translators.ir import events as ev
from translators.ir.request import VendorState
from translators.wire import wirejson
from translators.wire.upstream_errors import code_for, text_of


def response_events(body: Any, translation: Translation) -> list[ev.Event]:
    if not isinstance(body, dict) or not isinstance(body.get("content"), list):
        raise UpstreamProtocolError("the Anthropic answer has no content array")
    out: list[ev.Event] = [ev.Started()]
    for index, block in enumerate(body["content"]):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            out += [ev.TextDelta(index, block.get("text") or ""), ev.TextDone(index)]
        elif kind == "thinking":
            thinking = block.get("thinking") or ""
            state = VendorState(dialect="anthropic", signature=block.get("signature"), text=thinking)
            out += [ev.ReasoningDelta(index, thinking), ev.ReasoningDone(index, state)]
        elif kind == "redacted_thinking":
            state = VendorState(dialect="anthropic", redacted=block.get("data") or "")
            out.append(ev.ReasoningDone(index, state))
        elif kind == "tool_use":
            out += [ev.ToolCallStarted(index, block.get("id") or "", block.get("name") or ""),
                    ev.ToolCallDone(index, wirejson.text(block.get("input") or {}))]
        else:
            out.append(ev.Unknown(f"output.content_block.{kind}"))
    if isinstance(body.get("usage"), dict):
        out.append(usage_event(body["usage"]))
    out += finish_events(body.get("stop_reason"), body.get("stop_sequence"))
    return out


def error_info(status: int, body: Any) -> ErrorInfo:
    """`{"type":"error","error":{"type","message"}}`; anything else is kept as text."""
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        failure = errors.failure(body["error"], status)
        return ErrorInfo(failure.code, failure.message)
    text = text_of(body)
    return ErrorInfo(code_for(status, text, table=errors.ERRORS), text or f"HTTP {status}")

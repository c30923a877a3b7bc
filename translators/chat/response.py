"""Whole Chat Completions answers and HTTP error bodies (docs/chat.md "Request", "Streaming", "DeepSeek")."""

from __future__ import annotations

from typing import Any

from translators.chat import errors
from translators.chat.choice import Choice
from translators.chat.stream import error_event, usage_event
from translators.core.errors import UpstreamProtocolError
from translators.core.translation import Translation
from translators.dialect import ErrorInfo
from translators.ir import events as ev


def response_events(body: Any, translation: Translation) -> list[ev.Event]:
    if isinstance(body, dict) and ("error" in body or body.get("object") == "error"):
        return [error_event(body.get("error", body))]
    choices = body.get("choices") if isinstance(body, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise UpstreamProtocolError("the Chat answer has no choices")
    out: list[ev.Event] = [ev.Started()]
    for extra in choices[1:]:
        out.append(ev.Unknown(f"choices[{extra.get('index') if isinstance(extra, dict) else '?'}]"))
    first = choices[0]
    message = first.get("message")
    if not isinstance(message, dict):
        raise UpstreamProtocolError("the Chat answer's first choice has no message")
    choice = Choice()
    # a whole message reads as a single delta: same reasoning, DSML and tool-call handling
    choice.delta(message, out, path="choices[0].message")
    if isinstance(body.get("usage"), dict):
        out.append(usage_event(body["usage"]))
    choice.read_stop(first)
    choice.finish(first.get("finish_reason") or "stop", out)
    choice.finished(out)
    return out


def error_info(status: int, body: Any) -> ErrorInfo:
    """`{"error": {"message", "type", "param", "code"}}`; Ollama sends `{"error": "text"}`, vLLM
    a flat `{"object": "error", "message", ...}` (chat/errors.py)."""
    failure = errors.body_failure(status, body)
    return ErrorInfo(failure.code, failure.message)

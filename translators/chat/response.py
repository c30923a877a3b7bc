"""Whole Chat Completions answers and HTTP error bodies (docs/chat.md "Request", "Streaming", "DeepSeek")."""

from __future__ import annotations

from typing import Any

from translators.chat.choice import Choice
from translators.chat.stream import error_event, usage_event
from translators.dialect import ErrorInfo
from translators.errors import UpstreamProtocolError
from translators.ir import events as ev
from translators.translation import Translation
from translators.upstream_errors import code_for, text_of

# DeepSeek answers 402 "Insufficient Balance" (api-docs.deepseek.com/quick_start/error_codes).
_CODE_BY_STATUS = {402: "insufficient_quota"}


def response_events(body: Any, translation: Translation) -> list[ev.Event]:
    if isinstance(body, dict) and ("error" in body or body.get("object") == "error"):
        return [error_event(body.get("error", body))]
    choices = body.get("choices") if isinstance(body, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise UpstreamProtocolError("the Chat answer has no choices")
    out: list[ev.Event] = [ev.Started(upstream_id=body.get("id"), model=body.get("model"))]
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
    choice.finish(first.get("finish_reason") or "stop", out)
    choice.finished(out)
    return out


def error_info(status: int, body: Any) -> ErrorInfo:
    """`{"error": {"message", "type", "param", "code"}}`; Ollama sends `{"error": "text"}`, vLLM
    a flat `{"object": "error", "message", ...}`."""
    error = body.get("error", body) if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        kind = error.get("type") if isinstance(error.get("type"), str) else None
        vendor = error.get("code") if isinstance(error.get("code"), str) else kind
        message = error["message"]
        return ErrorInfo(_code(status, message, vendor), f"{kind}: {message}" if kind else message)
    text = error if isinstance(error, str) else text_of(body)
    return ErrorInfo(_code(status, text, None), text or f"HTTP {status}")


def _code(status: int, message: str, vendor: str | None) -> str:
    code = code_for(status, message, vendor)
    if code == "context_length_exceeded":
        return code
    return _CODE_BY_STATUS.get(status, code)

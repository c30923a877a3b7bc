"""The toy's request, `{"model": ..., "prompt": "...", "stream": false}`, to the IR."""

from __future__ import annotations

from typing import Any

from translators.core.errors import MalformedRequest
from translators.ir.request import Message, Request, Text
from translators.report import Report  # the public plugin name (translators/report.py)

_READ = frozenset({"model", "prompt", "stream"})


def decode(body: Any, report: Report) -> Request:
    if not isinstance(body, dict):
        raise MalformedRequest("the request body must be a JSON object")
    model, prompt = body.get("model"), body.get("prompt")
    if not isinstance(model, str) or not model:
        raise MalformedRequest("model must be a non-empty string", param="model")
    if not isinstance(prompt, str) or not prompt:
        raise MalformedRequest("prompt must be a non-empty string", param="prompt")
    for key in body:
        if key not in _READ:
            report.drop(key)  # every other field is reported, never dropped silently
    return Request(model=model, items=[Message(role="user", parts=[Text(text=prompt)])],
                   stream=bool(body.get("stream")))

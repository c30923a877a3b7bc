"""Errors in the Responses shape, for a Responses client (docs/design.md "Errors",
docs/responses.md "Terminal events"): `{"error": {"type", "code", "message", "param"}}` as an HTTP
body with the status it stands for, and `response.failed` as the event that ends a stream the
gateway fails inside.
"""

from __future__ import annotations

import re
from typing import Any

from translators.core.errors import TranslatorError, error_type_for_status
from translators.core.ids import IdFactory
from translators.wire import wirejson
from translators.wire.sse import encode_event
from translators.wire.stream_failure import events_in

TERMINALS = ("response.completed", "response.incomplete", "response.failed")
"""The events that end a Responses stream (docs/responses.md "Terminal events")."""

_CREATED = re.compile(rb'"response":\s*\{"id":\s*"([^"]+)"')
_MODEL = re.compile(rb'"model":\s*"([^"]*)"')


def error_body(status: int, code: str, message: str, param: str | None = None) -> dict[str, Any]:
    """The error body for `status`; its status stays what it is."""
    return {"error": {"type": error_type_for_status(status), "code": code, "message": message,
                      "param": param}}


def refusal(exc: TranslatorError) -> tuple[int, dict[str, Any]]:
    """A request the gateway will not send -> its status and body (`TranslatorError.to_body`)."""
    return exc.status, exc.to_body()


def answer_status(body: dict[str, Any]) -> int:
    """A Responses object is 200 even when it failed (the failure is in it), and so is the
    compaction object; a bare error body is what `/responses/compact` answers when no summary
    came, a 500 (translators/responses_client/compaction.py)."""
    return 500 if "object" not in body and isinstance(body.get("error"), dict) else 200


def stream_failed(sent: bytes, message: str, *, also_sent: int, now: float, new_id: IdFactory) -> bytes:
    """A `response.failed` that continues what the client already got: the response id and model
    of its `response.created`, the next sequence number (docs/responses.md "Terminal events")."""
    response_id = _CREATED.search(sent)
    model = _MODEL.search(sent)
    response: dict[str, Any] = {
        "id": response_id[1].decode() if response_id else new_id("resp"),
        "object": "response", "created_at": int(now), "status": "failed",
        "model": wirejson.loads(b'"%s"' % model[1]) if model else "", "output": [],
        "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
        "error": {"code": "server_error", "message": message}, "incomplete_details": None, "usage": None,
    }
    sequence = events_in(sent) + also_sent
    return encode_event("response.failed", {"type": "response.failed", "response": response,
                                            "sequence_number": sequence})

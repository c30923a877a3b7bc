"""The toy's errors: `{"problem": {"status": N, "code": ..., "why": ...}}`, as a body or as the
last line of its stream."""

from __future__ import annotations

import json
from typing import Any

from translators.core.errors import TranslatorError
from translators.core.ids import IdFactory


def problem(status: int, code: str, message: str, param: str | None = None) -> dict[str, Any]:
    del param  # the toy names no field
    return {"problem": {"status": status, "code": code, "why": message}}


def refusal(exc: TranslatorError) -> tuple[int, dict[str, Any]]:
    return exc.status, problem(exc.status, exc.code, exc.message)


def answer_status(body: dict[str, Any]) -> int:
    return 502 if "problem" in body else 200


def line(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload).encode() + b"\n"


def stream_error(sent: bytes, message: str, *, also_sent: int, now: float, new_id: IdFactory) -> bytes:
    """The gateway failed inside the stream: one problem line ends it."""
    del sent, also_sent, now, new_id
    return line(problem(502, "server_error", message))

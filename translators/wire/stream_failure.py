"""The event that ends a client's stream when the gateway itself fails inside it, in the client's
dialect (docs/design.md "Errors", docs/claude-code.md "Errors").

The stream translator never raises, but the proxy's stream callable around it can still break
(addon/streaming.py): it then writes one of these after what the client already got, unless that
already holds a terminal event. Each client dialect names its writer and its terminal events
(translators/client_dialects.py `stream_error`, `stream_terminals`).
"""

from __future__ import annotations

import re
from typing import Any, Protocol

from translators.core.ids import IdFactory
from translators.messages_client import errors as messages_errors
from translators.wire import wirejson
from translators.wire.sse import encode_event


class StreamError(Protocol):
    def __call__(self, sent: bytes, message: str, *, also_sent: int, now: float,
                 new_id: IdFactory) -> bytes:
        """`sent`: the client's stream so far (as kept); `also_sent`: events it got that are not
        in `sent` (the kept copy is bounded); `now`: unix seconds; -> the one event that ends it."""
        ...


RESPONSES_TERMINALS = ("response.completed", "response.incomplete", "response.failed")
"""The events that end a Responses stream (docs/responses.md "Terminal events")."""
MESSAGES_TERMINALS = ("message_stop", "error")
"""The events that end an Anthropic Messages stream: `message_stop`, or one `error` after which
Anthropic sends nothing more (docs/claude-code.md "Events out")."""

_CREATED = re.compile(rb'"response":\s*\{"id":\s*"([^"]+)"')
_MODEL = re.compile(rb'"model":\s*"([^"]*)"')


def responses_failed(sent: bytes, message: str, *, also_sent: int, now: float, new_id: IdFactory) -> bytes:
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


def messages_error(sent: bytes, message: str, *, also_sent: int, now: float, new_id: IdFactory) -> bytes:
    """Anthropic's mid-stream failure: one `error` event, `api_error` (a gateway fault, which the
    anthropic SDK raises as an `APIStatusError` and Claude Code reports), whatever came before."""
    del sent, also_sent, now, new_id  # an `error` event carries no id, number or time
    return encode_event("error", messages_errors.body("api_error", message))


def events_in(out: bytes | bytearray) -> int:
    """The `event:` lines of written SSE: one C scan (a multiline regular expression tries
    every position of a 16 MB event, a second or more on the event loop)."""
    return out.count(b"\nevent: ") + out.startswith(b"event: ")


def has_terminal(out: bytes | bytearray, terminals: tuple[str, ...] = RESPONSES_TERMINALS) -> bool:
    """Whether written SSE holds the `event:` line of one of `terminals`."""
    for name in terminals:
        line = b"event: " + name.encode()
        at = out.find(line)
        while at >= 0:
            end = at + len(line)
            if (at == 0 or out[at - 1] == 0x0A) and (end == len(out) or out[end] == 0x0A):
                return True
            at = out.find(line, end)
    return False

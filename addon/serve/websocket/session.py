"""One WebSocket connection's Responses state: what a `response.create` message becomes
(docs/websocket.md "Per-connection history").

No mitmproxy, no network: the endpoint (addon/serve/websocket/endpoint.py) gives each message to `plan`
and what the client saw of each answer to `finish`.

- A prewarm (`generate: false`) is answered here: `response.created` + `response.completed`,
  zero usage, no upstream call; its input is the start of the connection's history.
- A request whose `previous_response_id` is the connection's last answer carries only new items:
  the request sent on is the previous request's whole input, that answer's output items as the
  client got them, then the new items, without `previous_response_id`.
- Any other `previous_response_id` is left in the request: the gateway's store resolves it for
  a `store: true` client, or answers `previous_response_not_found`, which makes Codex resend the
  whole request (docs/websocket.md "Events").
- What the connection keeps is bounded by `gateway_max_request_bytes`: a history that could no
  longer be sent as one request is forgotten, and the next incremental request is answered
  `previous_response_not_found` by the same rule.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from translators.wire import wirejson

WS_ONLY = ("type", "generate")
"""Members of a `response.create` message that belong to the socket, not to the Responses request."""


class Refused(Exception):
    """A message the connection answers with an `error` event (docs/websocket.md "Events")."""

    def __init__(self, status: int, code: str, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.param = status, code, message, param

    def event(self) -> dict[str, Any]:
        return error_event(self.status, {"type": "invalid_request_error", "code": self.code,
                                         "message": self.message, "param": self.param})


def error_event(status: int, error: dict[str, Any], headers: dict[str, str] | None = None) -> dict[str, Any]:
    """The socket's form of an HTTP error answer: Codex reads `status` (and `headers`, e.g.
    `retry-after`) as it reads an HTTP status (docs/websocket.md "The protocol, as the gateway
    relies on it")."""
    event: dict[str, Any] = {"type": "error", "status": status, "error": error}
    if headers:
        event["headers"] = headers
    return event


@dataclass(frozen=True)
class Local:
    """Events answered by the connection itself (a prewarm)."""

    events: list[dict[str, Any]]


@dataclass(frozen=True)
class Send:
    """A Responses request to send through the gateway's HTTP path."""

    body: dict[str, Any]
    known: bool
    """Its whole input is here (not behind a `previous_response_id` the store resolves)."""


@dataclass
class Session:
    max_bytes: int
    """gateway_max_request_bytes: the most this connection keeps (docs/websocket.md "Limits")."""
    last_id: str | None = None
    history: list[Any] = field(default_factory=list)
    """The last request's whole input plus its answer's output items, as the client saw them."""

    def plan(self, message: Any, now: int) -> Local | Send:
        """What to do with one client message; `now`: the clock's seconds, for a prewarm's answer."""
        if not isinstance(message, dict):
            raise Refused(400, "invalid_request_error", "a message is a JSON object")
        if message.get("type") != "response.create":
            raise Refused(400, "invalid_request_error",
                          f"unsupported message type {message.get('type')!r}: send response.create "
                          "(or response.interrupt)", "type")
        body = {k: v for k, v in message.items() if k not in WS_ONLY}
        new = _items(body.get("input"))
        previous = body.get("previous_response_id")
        known = True
        if previous is not None and previous == self.last_id:
            body.pop("previous_response_id")
            body["input"] = [*self.history, *new]
        elif previous is not None:
            known = False  # the store's to resolve, or to refuse (docs/websocket.md "Per-connection history")
        else:
            body["input"] = new
        if message.get("generate") is False:
            return self._prewarm(body, known, now)
        body["stream"] = True  # the socket carries events only
        return Send(body, known)

    def _prewarm(self, body: dict[str, Any], known: bool, now: int) -> Local:
        if not known:
            raise Refused(400, "previous_response_not_found",
                          f"Previous response with id '{body.get('previous_response_id')}' not found.",
                          "previous_response_id")
        rid = new_id()
        self.remember(rid, body["input"], [], len(wirejson.dumps(body["input"])))
        created = _response(rid, body, now, "in_progress")
        done = {**_response(rid, body, now, "completed"),
                "usage": {"input_tokens": 0, "input_tokens_details": {"cached_tokens": 0},
                          "output_tokens": 0, "output_tokens_details": {"reasoning_tokens": 0},
                          "total_tokens": 0}}
        return Local([{"type": "response.created", "sequence_number": 0, "response": created},
                      {"type": "response.completed", "sequence_number": 1, "response": done}])

    def remember(self, response_id: str, sent_input: list[Any], output: list[Any], size: int) -> None:
        """An answer the client got in full: its id extends this history from now on, unless the
        whole (`size` bytes: the request sent plus the output items) is past the bound."""
        if size > self.max_bytes:
            self.forget()
            return
        self.last_id = response_id
        self.history = [*sent_input, *output]

    def finish(self, send: Send, response_id: str | None, output: list[Any], size: int) -> None:
        """A request's answer is over: `response_id` when it completed, None when it failed."""
        if response_id is None:
            return  # the client retries against the last answer it completed
        if not send.known:
            self.forget()  # its history is in the store, not here
            return
        self.remember(response_id, send.body["input"], output, size)

    def forget(self) -> None:
        self.last_id, self.history = None, []


def _items(value: Any) -> list[Any]:
    """`input` as a list of items: a string is one user message (as over HTTP)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    if isinstance(value, list):
        return value
    raise Refused(400, "invalid_request_error", "input is a string or an array of items", "input")


def _response(rid: str, body: dict[str, Any], now: int, status: str) -> dict[str, Any]:
    return {"id": rid, "object": "response", "created_at": now, "status": status, "model": body.get("model"),
            "output": [], "error": None, "incomplete_details": None, "usage": None}


def new_id() -> str:
    return f"resp_{uuid.uuid4().hex}"

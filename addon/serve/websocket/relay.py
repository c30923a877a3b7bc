"""One turn's HTTP answer, as the gateway wrote it for an HTTP client, turned into the socket's
text frames (docs/websocket.md "Events"): a 200 `text/event-stream` answer gives one frame per SSE
event's data, as it is; an error answer gives one `error` event with its status. The relay also
keeps what the session needs: the answer's id and its output items as the client saw them.

No mitmproxy, no network: `headers`, `data`, `end` are fed by the replayed flow
(addon/serve/websocket/turn.py), `send` takes each frame's text (UTF-8 bytes).

An event is relayed as it is, its type read from its first member (the gateway's encoder writes
`{"type":...` first): only the few events the session keeps (`response.created`, the output items,
the terminal event) are parsed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from addon.serve.websocket.session import error_event, new_id
from translators.wire import wirejson

TERMINAL = ("response.completed", "response.failed", "response.incomplete", "error")
"""The events that end a request on the socket; Codex reads the next request's answer after one."""
_READ = frozenset(t.encode() for t in (*TERMINAL, "response.created", "response.output_item.done"))
"""The events the relay parses; every other one is sent on unread."""
_TYPE = b'{"type":"'


class Relay:
    def __init__(self, send: Callable[[bytes], None], max_bytes: int) -> None:
        self.send = send
        self.max_bytes = max_bytes
        """An error body is read up to this many bytes; the output items kept for the session too."""
        self.status = 0
        self.retry_after: str | None = None
        self.streamed = False
        self._buffer = b""
        self._error_body = b""
        self.response_id: str | None = None
        """The answer's id, from `response.created` on."""
        self.completed: str | None = None
        """The answer's id once `response.completed` was relayed."""
        self.output: list[Any] = []
        self.output_bytes = 0
        self.terminal: str | None = None
        self._held: bytes | None = None
        """The terminal event, sent once the flow is over: over HTTP the client's body ends only
        after the gateway's `response` hook (its turn stored, its report written), and a socket
        client that reads the end of an answer finds the same (docs/websocket.md "Events")."""
        self.interrupted = False

    # -- the flow's answer ------------------------------------------------------------------
    def headers(self, status: int, content_type: str, retry_after: str | None) -> None:
        self.status = status
        self.retry_after = retry_after
        self.streamed = status == 200 and content_type.split(";")[0].strip().lower() == "text/event-stream"

    def data(self, chunk: bytes) -> None:
        if self.terminal is not None or self.interrupted:
            return  # a request ends at its terminal event (docs/websocket.md "Events")
        if not self.streamed:
            room = self.max_bytes - len(self._error_body)
            self._error_body += chunk[:max(room, 0)]
            return
        self._buffer += chunk
        if b"\r" not in self._buffer:  # the gateway's own framing: events end at a blank line
            blocks = self._buffer.split(b"\n\n")
            self._buffer = blocks.pop()
            for block in blocks:
                self._event(block)
                if self.terminal is not None:
                    return
            return
        while True:
            cut = _boundary(self._buffer)
            if cut is None:
                return
            block, self._buffer = self._buffer[:cut[0]], self._buffer[cut[1]:]
            self._event(block)
            if self.terminal is not None:
                return

    def end(self, failure: str | None) -> None:
        """The answer is over: whole, or cut (`failure`: why). The socket gets a terminal event
        whatever happened, so the client never waits for one that will not come."""
        if self._held is not None:
            held, self._held = self._held, None
            self.send(held)
            return
        if self.interrupted or self.terminal is not None:
            return
        if self.streamed and self._buffer.strip() and failure is None:
            self._event(self._buffer)  # a last event without its blank line
            self._buffer = b""
            if self.terminal is not None:
                self.end(None)
                return
        if not self.streamed and self.status >= 400 and failure is None:
            self._error_answer()
            return
        reason = failure or ("the answer ended before response.completed" if self.streamed
                             else f"unexpected answer: HTTP {self.status}")
        # a 5xx: Codex retries it as it retries a dropped stream (docs/websocket.md "Events")
        self._emit(error_event(502, {"type": "server_error", "code": "stream_disconnected",
                                     "message": f"gateway: {reason}", "param": None}))

    def interrupt(self, now: int) -> None:
        """`response.interrupt`: the answer ends here, with the items the client got in full
        (`discard_partial_items`: those half-sent are dropped) (docs/websocket.md "Interrupt")."""
        if self.interrupted or self.terminal is not None:
            return
        self.interrupted = True
        rid = self.response_id or new_id()
        self.completed = rid
        self.terminal = "response.completed"
        self.send(wirejson.dumps({"type": "response.completed", "response": {
            "id": rid, "object": "response", "created_at": now, "status": "incomplete",
            "incomplete_details": {"reason": "interrupted"}, "output": self.output, "usage": None,
            "error": None}}))

    # -- events -----------------------------------------------------------------------------
    def _event(self, block: bytes) -> None:
        data = _data(block)
        if not data.strip():
            return  # a comment or an event without data
        if data.startswith(_TYPE):
            end = data.find(b'"', len(_TYPE))
            if end > 0 and data[len(_TYPE):end] not in _READ:
                self.send(data)  # relayed unread
                return
        try:
            event = wirejson.loads(data)
        except ValueError:
            event = None
        if not isinstance(event, dict):
            return  # never produced by the gateway's encoder; nothing a client could read
        kind = event.get("type")
        response = event.get("response") if isinstance(event.get("response"), dict) else {}
        if kind == "response.created" and isinstance(response.get("id"), str):
            self.response_id = response["id"]
        elif kind == "response.output_item.done" and "item" in event:
            self.output_bytes += len(data)
            self.output.append(event["item"])
        if kind in TERMINAL:
            self.terminal = kind
            if kind == "response.completed" and isinstance(response.get("id"), str):
                self.completed = response["id"]
            self._held = data
            return
        self.send(data)

    def _error_answer(self) -> None:
        try:
            body = wirejson.loads(self._error_body)
        except ValueError:
            body = None
        error = body.get("error") if isinstance(body, dict) else None
        if not isinstance(error, dict):
            error = {"type": "server_error", "code": None, "param": None,
                     "message": self._error_body.decode(errors="replace")[:500]}
        headers = {"retry-after": self.retry_after} if self.retry_after else None
        self._emit(error_event(self.status, error, headers))

    def _emit(self, event: dict[str, Any]) -> None:
        self.terminal = "error"
        self.send(wirejson.dumps(event))


def _data(block: bytes) -> bytes:
    """An SSE event's data: its one `data:` line (the gateway's framing), else its lines joined."""
    first = block.startswith(b"data:")
    at = 0 if first else block.find(b"\ndata:") + 1
    if at > 0 or first:
        rest = block[at + 5:]
        if b"\n" not in rest and b"\r" not in rest:
            return rest[1:] if rest[:1] == b" " else rest
    return b"\n".join(line[5:].removeprefix(b" ") for line in block.splitlines() if line.startswith(b"data:"))


def _boundary(buffer: bytes) -> tuple[int, int] | None:
    """Where the first SSE event ends: (end of its block, start of the next), or None."""
    found = [(i, i + len(sep)) for sep in (b"\n\n", b"\r\n\r\n", b"\r\r") if (i := buffer.find(sep)) >= 0]
    return min(found) if found else None

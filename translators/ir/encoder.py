"""What every client dialect's event encoder shares: IR events in, the client's wire bytes out.

An encoder (translators/responses_client/stream.py for Responses clients, translators/messages_client/
stream.py for Messages clients) answers one method per IR item event; `_item` is the one place that
maps an event to its method, so a new IR event kind is added here once and every client dialect
must answer it; so must `_keep_alive` (an upstream keep-alive, `ev.KeepAlive`, which each encoder
takes before its answer opens: it is no part of the answer). The common ending is here too:
`finish_parts` guarantees exactly one terminal event, whatever the upstream did (docs/design.md
"Errors").
"""

from __future__ import annotations

from typing import Any

from translators.ir import events as ev

MAX_OUTPUT_CHARS = 16 * 1024 * 1024
"""One answer's bound, for every client dialect's encoder (docs/design.md "Limits"): 30 times the
longest a model writes (128k output tokens, about 500 KB of text), and the size of the largest
single upstream event (translators/wire/sse.py). An answer is held until its items' done events,
which repeat it four times: an upstream that never ends must not be followed forever."""


class EventEncoder:
    """The shared half of a client dialect's encoder; subclasses define `encode_parts`,
    `finished`, `_out` and the item methods below."""

    finished: bool
    _out: list[bytes]

    def encode_parts(self, events: list[ev.Event]) -> list[bytes]:
        raise NotImplementedError

    def response(self) -> dict[str, Any]:
        """The whole answer as it stands: the body of a non-streamed call."""
        raise NotImplementedError

    def encode(self, events: list[ev.Event]) -> bytes:
        return b"".join(self.encode_parts(events))

    def finish(self, reason: str = "upstream stream ended before it finished") -> bytes:
        return b"".join(self.finish_parts(reason))

    def finish_parts(self, reason: str = "upstream stream ended before it finished") -> list[bytes]:
        """Exactly one terminal event, whatever the upstream did (in pieces, as `encode_parts`)."""
        if not self.finished:
            self._fail("server_error", reason)
        out, self._out = self._out, []
        return out

    def _item(self, event: ev.Event) -> None:
        """An event of the answer's items or its end, to its method (`Started`, `Usage`, `Note`
        and `Unknown` are each encoder's own business, before this)."""
        match event:
            case ev.TextDelta(key=key, text=text):
                self._text_delta(key, text)
            case ev.TextDone(key=key):
                self._close(key)
            case ev.ReasoningDelta(key=key, text=text):
                self._reasoning_delta(key, text)
            case ev.ReasoningDone(key=key, state=state):
                self._reasoning_done(key, state)
            case ev.ToolCallStarted(key=key, call_id=call_id, name=name):
                self._call_started(key, call_id, name)
            case ev.ToolCallDelta(key=key, fragment=fragment):
                self._call_delta(key, fragment)
            case ev.ToolCallDone(key=key, arguments=arguments):
                self._call_done(key, arguments)
            case ev.WebSearch():
                self._web_search(event)
            case ev.Citation():
                self._cite(event)
            case ev.Finished(reason=reason, detail=detail):
                self._finish(reason, detail)
            case ev.Failed(code=code, message=message):
                self._fail(code, message)

    # -- what each encoder writes -------------------------------------------------------------
    def _keep_alive(self) -> None:
        """The upstream is still there and has said nothing yet: the client's own keep-alive
        event, or nothing where its dialect has none (docs/claude-code.md "Keep-alives")."""
        raise NotImplementedError

    def _text_delta(self, key: object, text: str) -> None:
        raise NotImplementedError

    def _close(self, key: object) -> None:
        """The item opened under `key` is complete."""
        raise NotImplementedError

    def _reasoning_delta(self, key: object, text: str) -> None:
        raise NotImplementedError

    def _reasoning_done(self, key: object, state: Any) -> None:
        raise NotImplementedError

    def _call_started(self, key: object, call_id: str, name: str) -> None:
        raise NotImplementedError

    def _call_delta(self, key: object, fragment: str) -> None:
        raise NotImplementedError

    def _call_done(self, key: object, arguments: str | None) -> None:
        raise NotImplementedError

    def _web_search(self, search: ev.WebSearch) -> None:
        raise NotImplementedError

    def _cite(self, citation: ev.Citation) -> None:
        raise NotImplementedError

    def _finish(self, reason: str, detail: str | None) -> None:
        raise NotImplementedError

    def _fail(self, code: str, message: str) -> None:
        raise NotImplementedError

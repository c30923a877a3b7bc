"""Anthropic Messages SSE -> IR events (docs/anthropic.md "Streaming").

Every event is `event: <type>` + `data: <json with the same type>`; blocks are started, get
deltas, and stop, each by `index`. `ping` may come anywhere, and is passed on as a keep-alive
(as is an SSE comment line); `error` may come mid-stream and then the stream simply ends.
"""

from __future__ import annotations

from typing import Any

from translators.anthropic import errors
from translators.anthropic.websearch import Searches
from translators.core.errors import UpstreamProtocolError
from translators.ir import events as ev
from translators.ir.request import VendorState
from translators.wire import decoding, wirejson
from translators.wire.sse import COMMENT, SSEDecoder, SSEEvent

_DELTA_FIELDS = {"text_delta": "text", "input_json_delta": "partial_json", "thinking_delta": "thinking",
                 "signature_delta": "signature"}
"""Each delta type's one field (docs/anthropic.md "Streaming")."""

_STREAMED = ("text", "thinking", "tool_use")
"""Block types whose deltas are passed on (other server-tool blocks were reported at their start)."""

STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop_sequence",
    "tool_use": "tool_calls",
    "pause_turn": "pause_turn",
    "max_tokens": "max_output_tokens",
    "refusal": "content_filter",
    "model_context_window_exceeded": "context_length_exceeded",
}


def _text(value: Any) -> str:
    """A string field of an event; absent or null is empty, any other JSON type is malformed."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


def _count(usage: dict[str, Any], key: str) -> int | None:
    value = usage.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"usage.{key} is not an integer")
    return value


def usage_event(usage: dict[str, Any]) -> ev.Usage:
    """Anthropic counts cache reads and writes apart from `input_tokens`; Responses counts them in."""
    uncached = _count(usage, "input_tokens")
    cached = _count(usage, "cache_read_input_tokens") or 0
    written = _count(usage, "cache_creation_input_tokens") or 0
    counted = uncached is not None
    server = usage.get("server_tool_use")
    # the writes by TTL (anthropic SDK `cache_creation.py`): an hour's are priced apart
    by_ttl = usage.get("cache_creation")
    hour = _count(by_ttl, "ephemeral_1h_input_tokens") if isinstance(by_ttl, dict) else None
    return ev.Usage(input_tokens=uncached + cached + written if counted else None,
                    output_tokens=_count(usage, "output_tokens"),
                    cached_tokens=cached if counted else None,
                    cache_write_tokens=written if counted else None,
                    cache_write_1h_tokens=hour if counted else None,
                    web_searches=_count(server, "web_search_requests") if isinstance(server, dict) else None)


def finish_events(stop_reason: str | None, stop_sequence: Any = None) -> list[ev.Event]:
    """The end; a stop sequence's finish names the sequence that matched (the message's
    `stop_sequence`), which a Messages client is told and a Responses client reads as stop."""
    reason = STOP_REASONS.get(stop_reason or "end_turn")
    if reason is None:
        return [ev.Note(f"unknown stop_reason {stop_reason!r} treated as end_turn"), ev.Finished("stop")]
    detail = stop_sequence if reason == "stop_sequence" and isinstance(stop_sequence, str) else None
    return [ev.Finished(reason, detail)]


class AnthropicDecoder:
    def __init__(self) -> None:
        self._sse = SSEDecoder(comments=True)
        self._blocks: dict[int, str] = {}
        self._thinking: dict[int, list[str]] = {}
        # per block index, the pieces of a streamed value, joined once at its block's end: a
        # tool input of a few MB comes in thousands of deltas (docs/design.md "Limits")
        self._signature: dict[int, list[str]] = {}
        self._tool_input: dict[int, list[str]] = {}
        self._stop_reason: str | None = None
        self._stop_sequence: str | None = None
        self._done = False
        self._web = Searches()

    def feed(self, data: bytes) -> list[ev.Event]:
        if self._done:
            return []
        out = decoding.each(lambda: self._sse.feed(data), self._event)
        self._done = self._done or decoding.ended(out)
        return out

    def close(self) -> list[ev.Event]:
        if self._done:
            return []
        out = decoding.each(self._sse.close, self._event)
        self._done, over = True, self._done or decoding.ended(out)
        if not over:
            out.append(ev.Failed("server_error", "the Anthropic stream ended before message_stop"))
        return out

    def _event(self, sse: SSEEvent, out: list[ev.Event]) -> None:
        if self._done:
            return
        if sse.event == COMMENT:
            out.append(ev.KeepAlive())
            return
        try:
            event = wirejson.loads(sse.data)
        except ValueError:
            raise UpstreamProtocolError(
                f"Anthropic sent an event that is not JSON: {sse.data[:120]!r}") from None
        if not isinstance(event, dict):
            raise UpstreamProtocolError("Anthropic sent an event that is not a JSON object")
        kind = event.get("type")
        handler = _HANDLERS.get(kind) if isinstance(kind, str) else None
        if handler is None:
            out.append(ev.Unknown(f"stream.{kind}"))
            return
        try:
            handler(self, event, out)
        except (AttributeError, TypeError, KeyError, ValueError) as exc:
            # a field of the wrong JSON type (an object that is a list, an unhashable index...):
            # the receive boundary turns it into this package's error (docs/design.md "Errors")
            raise UpstreamProtocolError(f"Anthropic sent a malformed {kind} event: {exc}") from None

    def _on_ping(self, event: dict[str, Any], out: list[ev.Event]) -> None:
        out.append(ev.KeepAlive())

    def _on_message_start(self, event: dict[str, Any], out: list[ev.Event]) -> None:
        message = event.get("message") or {}
        out.append(ev.Started())
        if isinstance(message.get("usage"), dict):
            out.append(usage_event(message["usage"]))

    def _on_content_block_start(self, event: dict[str, Any], out: list[ev.Event]) -> None:
        index = event.get("index")
        block = event.get("content_block") or {}
        kind = block.get("type")
        self._blocks[index] = kind
        if kind == "text":
            key = self._web.text_start(index, block)
            if text := _text(block.get("text")):
                out.append(ev.TextDelta(self._web.text(index, text) if self._web.merging else key, text))
            return
        if self._web.start(index, block, out):
            return
        self._web.flush(out)  # a block of another kind ends the cited text run
        if kind == "thinking":
            thinking = _text(block.get("thinking"))
            self._thinking[index] = [thinking]
            if thinking:
                out.append(ev.ReasoningDelta(index, thinking))
        elif kind == "redacted_thinking":
            state = VendorState(dialect="anthropic", redacted=_text(block.get("data")))
            out.append(ev.ReasoningDone(index, state))
        elif kind == "tool_use":
            self._tool_input[index] = [wirejson.text(block["input"])] if block.get("input") else []
            out.append(ev.ToolCallStarted(index, _text(block.get("id")), _text(block.get("name"))))
        else:
            # other server tools (web fetch, code execution) run on Anthropic's side; the
            # client cannot replay them, so they are reported rather than forwarded
            out.append(ev.Unknown(f"output.content_block.{kind}"))

    def _on_content_block_delta(self, event: dict[str, Any], out: list[ev.Event]) -> None:
        index = event.get("index")
        block = self._blocks.get(index)
        delta = event.get("delta") or {}
        kind = delta.get("type")
        if block == "server_tool_use" and kind == "input_json_delta":
            self._web.input(index, _text(delta.get("partial_json")))
            return
        if block == "text" and kind == "citations_delta":
            self._web.cite(index, delta.get("citation"), out)
            return
        if block not in _STREAMED:
            return  # a block already reported at its start (server tools), or never started
        field = _DELTA_FIELDS.get(kind) if isinstance(kind, str) else None
        self._delta(index, kind, _text(delta.get(field)) if field else "", out)

    def _delta(self, index: Any, kind: Any, value: str, out: list[ev.Event]) -> None:
        """A delta of a streamed block: its index, delta type and the text of its one field."""
        if kind == "text_delta":
            out.append(ev.TextDelta(self._web.text(index, value) if self._web.merging else index, value))
        elif kind == "input_json_delta":
            self._tool_input.setdefault(index, []).append(value)
            out.append(ev.ToolCallDelta(index, value))
        elif kind == "thinking_delta":
            self._thinking.setdefault(index, []).append(value)
            out.append(ev.ReasoningDelta(index, value))
        elif kind == "signature_delta":
            self._signature.setdefault(index, []).append(value)
        else:
            out.append(ev.Unknown(f"output.delta.{kind}"))

    def _on_content_block_stop(self, event: dict[str, Any], out: list[ev.Event]) -> None:
        index = event.get("index")
        kind = self._blocks.pop(index, None)
        if kind == "text":
            if not self._web.text_stop(index, out):  # a cited run closes when something else starts
                out.append(ev.TextDone(index))
        elif kind == "thinking":
            text = "".join(self._thinking.pop(index, []))
            out.append(ev.ReasoningDone(index, VendorState(
                dialect="anthropic", signature=_joined(self._signature.pop(index, None)), text=text)))
        elif kind == "tool_use":
            args = "".join(self._tool_input.pop(index, ()))
            out.append(ev.ToolCallDone(index, args or "{}"))

    def _on_message_delta(self, event: dict[str, Any], out: list[ev.Event]) -> None:
        self._web.end(out)
        delta = event.get("delta") or {}
        if delta.get("stop_reason"):
            self._stop_reason = delta["stop_reason"]
        if isinstance(delta.get("stop_sequence"), str):
            self._stop_sequence = delta["stop_sequence"]
        if isinstance(event.get("usage"), dict):
            out.append(usage_event(event["usage"]))

    def _on_message_stop(self, event: dict[str, Any], out: list[ev.Event]) -> None:
        self._web.end(out)
        self._done = True
        out.extend(finish_events(self._stop_reason, self._stop_sequence))

    def _on_error(self, event: dict[str, Any], out: list[ev.Event]) -> None:
        self._done = True
        failure = errors.failure(event.get("error"))
        out.append(ev.Failed(failure.code, failure.message))


def _joined(parts: list[str] | None) -> str | None:
    """A value that never arrived stays None; one that arrived empty stays ''."""
    return None if parts is None else "".join(parts)


_HANDLERS = {name.removeprefix("_on_"): handler for name, handler in vars(AnthropicDecoder).items()
             if name.startswith("_on_")}
"""Event type -> handler: one dict lookup per event on the hot path."""

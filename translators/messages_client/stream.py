"""IR stream events -> Anthropic Messages SSE, and the whole `Message` of a non-streamed call
(docs/claude-code.md "Events out").

What the anthropic SDK's stream accumulator and Claude Code read: `message_start`, then per
block `content_block_start`, deltas (`text_delta`, `thinking_delta` + `signature_delta`,
`input_json_delta`, `citations_delta`) and `content_block_stop`, each by `index`; then one
`message_delta` (stop reason, cumulative usage) and `message_stop`. A failure is one `error`
event, after which the stream simply ends, as Anthropic's does. Exactly one end, whatever the
upstream did (`finish`).

The output depends on the events alone, never on how the upstream's bytes were cut: the
`message_start` waits for the first event that is not `Started` / `Usage`, so the input tokens a
decoder reports at the start are in it whichever chunk they came in.
"""

from __future__ import annotations

import json
from typing import Any

from translators.core.ids import IdFactory
from translators.core.report import Report
from translators.features import vendor_state
from translators.features.naming import ToolIndex
from translators.ir import events as ev
from translators.ir.encoder import MAX_OUTPUT_CHARS, EventEncoder
from translators.ir.request import VendorState
from translators.messages_client import errors, signature
from translators.wire.sse import encode_event

STOP_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "max_output_tokens": "max_tokens",
    "content_filter": "refusal",
    "context_length_exceeded": "model_context_window_exceeded",
    "stop_sequence": "stop_sequence",
    "pause_turn": "pause_turn",
}
"""The IR's finish reasons (translators/ir/events.py `Finished`) -> Anthropic's `stop_reason`
(anthropic SDK `StopReason`)."""


class _Block:
    __slots__ = ("chunks", "index", "kind", "name", "tool_id")

    def __init__(self, kind: str, index: int) -> None:
        self.kind = kind
        self.index = index
        self.chunks: list[str] = []
        self.tool_id = ""
        self.name = ""


class MessagesEncoder(EventEncoder):
    """Sans-I/O: `encode(events)` -> SSE bytes; `finish()` guarantees the one end; `message()`
    is the whole `Message` so far (the body of a non-streamed answer)."""

    def __init__(self, *, model: str, report: Report, new_id: IdFactory, tools: ToolIndex | None = None,
                 show_thinking: bool = True) -> None:
        self.model = model
        """The model the client asked for: what its answer names."""
        self.report = report
        self.new_id = new_id
        self.tools = tools or ToolIndex()
        self.show_thinking = show_thinking
        """False for `thinking.display: "omitted"`: thinking blocks carry their signature only."""
        self.message_id = new_id("msg")
        self.finished = False
        self.error: dict[str, Any] | None = None
        """The error body once the answer failed (what a non-streamed call answers instead)."""
        self.stop_reason: str | None = None
        self.stop_sequence: str | None = None
        self.content: list[dict[str, Any]] = []
        self._open: dict[object, _Block] = {}
        self._next_index = 0
        self._usage: dict[str, int] = {}
        self._started = False
        self._begun = False
        """The upstream began its answer (`Started`)."""
        self._out: list[bytes] = []
        self._held = 0
        self._called = False
        """A tool_use block went out: the turn stops for the tool, whatever the upstream said."""
        self._ending: _Block | None = None
        """A text block whose text is complete, its `content_block_stop` held back one event: a
        signature alone right after it is stopped before it (`_settle`)."""

    # -- public -------------------------------------------------------------------------------
    def encode_parts(self, events: list[ev.Event]) -> list[bytes]:
        """The bytes in pieces, one per event (the shape `translators/api.py` `StreamTranslator`
        passes on)."""
        for event in events:
            self._handle(event)
        out, self._out = self._out, []
        return out

    def ping(self) -> bytes:
        """A `ping` event, for the caller to send on a long wait (it has the clock)."""
        return b"" if self.finished else encode_event("ping", {"type": "ping"})

    def message(self) -> dict[str, Any]:
        return {"id": self.message_id, "type": "message", "role": "assistant", "model": self.model,
                "content": self.content, "stop_reason": self.stop_reason,
                "stop_sequence": self.stop_sequence, "usage": self._usage_body(start=False)}

    def response(self) -> dict[str, Any]:
        """What a non-streamed call answers: the error body once it failed, else the message."""
        return self.error if self.error is not None else self.message()

    # -- dispatch -----------------------------------------------------------------------------
    def _handle(self, event: ev.Event) -> None:
        match event:
            case ev.Unknown(path=path):
                self.report.drop(path)
                return
            case ev.Note(text=text):
                self.report.note(text)
                return
            case ev.Usage():
                self._add_usage(event)
                return
            case ev.Started():
                self._begun = True
                return
            case ev.KeepAlive():
                self._keep_alive()
                return
        if self.finished:
            return
        if not self._started:
            self._start()
        if self._ending is not None and self._settle(event):
            return
        self._item(event)

    def _keep_alive(self) -> None:
        """Anthropic's own `ping`; nothing once the answer ended. Once the upstream has begun its
        answer, the message opens first, as Anthropic's own stream orders them; before that it
        goes alone, which the SDKs skip wherever it comes (anthropic SDK `Stream.__stream__`)."""
        if self.finished:
            return
        if self._begun and not self._started:
            self._start()
        self._out.append(self.ping())

    def _emit(self, payload: dict[str, Any]) -> None:
        self._out.append(encode_event(payload["type"], payload))

    def _start(self) -> None:
        self._started = True
        self._emit({"type": "message_start", "message": {
            "id": self.message_id, "type": "message", "role": "assistant", "model": self.model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": self._usage_body(start=True)}})

    def _full(self, text: str) -> bool:
        """Past MAX_OUTPUT_CHARS (every client encoder's bound, docs/design.md "Limits") the
        answer fails, once; nothing more is held."""
        self._held += len(text)
        if self._held <= MAX_OUTPUT_CHARS:
            return False
        self._fail("upstream_output_too_large", f"the upstream's answer passed {MAX_OUTPUT_CHARS} "
                   "characters; the gateway ends it rather than hold more")
        return True

    # -- blocks -------------------------------------------------------------------------------
    def _open_block(self, key: object, kind: str, start: dict[str, Any]) -> _Block:
        block = _Block(kind, self._next_index)
        self._next_index += 1
        self._open[key] = block
        self._emit({"type": "content_block_start", "index": block.index, "content_block": start})
        return block

    def _delta(self, block: _Block, delta: dict[str, Any]) -> None:
        self._emit({"type": "content_block_delta", "index": block.index, "delta": delta})

    def _close(self, key: object) -> None:
        block = self._open.pop(key, None)
        if block is None:
            return
        if block.kind == "text":
            self._end_text()
            self._ending = block
            return
        if block.kind == "thinking":
            self._close_thinking(block, None)
        elif block.kind == "tool_use":
            self._close_tool(block, None)
        elif block.kind != "hidden_thinking":
            self._emit({"type": "content_block_stop", "index": block.index})

    def _stop_all(self) -> None:
        for key in list(self._open):
            self._close(key)
        self._end_text()

    # -- a signature after the text -----------------------------------------------------------
    def _settle(self, event: ev.Event) -> bool:
        """The event after an answer's text ended. A signature alone (Gemini 3 signs the last part
        of an answer: a signature-only part after the text, docs/gemini.md "Streaming") goes in a
        thinking block stopped *before* the text block, so the text stays the answer's last block:
        Claude Code takes the block stopped last for the answer and printed nothing when it was
        the thinking (docs/claude-code.md "A signature after the text"). True: the event is
        written. Anything else stops the text block first."""
        if isinstance(event, ev.ReasoningDone) and event.key not in self._open and self._signs(event.state):
            self._reasoning_done(event.key, event.state)
            self._end_text()
            return True
        self._end_text()
        return False

    def _signs(self, state: VendorState | None) -> bool:
        """A state that writes a signature of its own (no redacted data: that is its own block)."""
        if state is None or state.redacted is not None:
            return False
        return bool(signature.write(state, shown=self.show_thinking))

    def _end_text(self) -> None:
        block, self._ending = self._ending, None
        if block is not None:
            self.content.append({"type": "text", "text": "".join(block.chunks)})
            self._emit({"type": "content_block_stop", "index": block.index})

    # -- text ---------------------------------------------------------------------------------
    def _text_delta(self, key: object, text: str) -> None:
        block = self._open.get(key)
        if block is None:
            block = self._open_block(key, "text", {"type": "text", "text": ""})
        if not text or self._full(text):
            return
        block.chunks.append(text)
        self._delta(block, {"type": "text_delta", "text": text})

    def _cite(self, citation: ev.Citation) -> None:
        """A web search result the open text cites (anthropic SDK `CitationsWebSearchResultLocation`;
        another vendor's search has no encrypted index to give)."""
        block = self._open.get(citation.key)
        if block is None or block.kind != "text":
            self.report.note(f"a citation of {citation.url} came for no open text and was left out")
            return
        cited = "".join(block.chunks)[citation.start:citation.end]
        self._delta(block, {"type": "citations_delta", "citation": {
            "type": "web_search_result_location", "cited_text": cited, "url": citation.url,
            "title": citation.title, "encrypted_index": ""}})

    # -- thinking -----------------------------------------------------------------------------
    def _reasoning_delta(self, key: object, text: str) -> None:
        if not self.show_thinking:
            # nothing of it is shown: the block waits for its signature (`_thinking_done`)
            self._open.setdefault(key, _Block("hidden_thinking", -1))
            return
        block = self._open.get(key)
        if block is None:
            block = self._open_block(key, "thinking", {"type": "thinking", "thinking": "", "signature": ""})
        if not text or self._full(text):
            return
        block.chunks.append(text)
        self._delta(block, {"type": "thinking_delta", "thinking": text})

    def _reasoning_done(self, key: object, state: VendorState | None) -> None:
        block = self._open.pop(key, None)
        if block is None and state is not None and state.redacted is not None:
            # redacted reasoning: one block, whole (anthropic SDK `RedactedThinkingBlock`)
            data = signature.write_redacted(state)
            redacted = self._open_block(key, "redacted_thinking", {"type": "redacted_thinking", "data": data})
            self._open.pop(key)
            self.content.append({"type": "redacted_thinking", "data": data})
            self._emit({"type": "content_block_stop", "index": redacted.index})
            return
        if block is None or block.index < 0:
            if not self.show_thinking and not signature.write(state, shown=False):
                return  # hidden text and no state: a block would carry nothing
            block = self._open_block(key, "thinking", {"type": "thinking", "thinking": "", "signature": ""})
            self._open.pop(key)
        self._close_thinking(block, state)

    def _close_thinking(self, block: _Block, state: VendorState | None) -> None:
        sig = signature.write(state, shown=self.show_thinking)
        if sig:
            self._delta(block, {"type": "signature_delta", "signature": sig})
        self.content.append({"type": "thinking", "thinking": "".join(block.chunks), "signature": sig})
        self._emit({"type": "content_block_stop", "index": block.index})

    # -- tool use -----------------------------------------------------------------------------
    def _call_started(self, key: object, call_id: str, name: str) -> None:
        ref = self.tools.lookup(name)
        tool_id = call_id or self.new_id("toolu")
        block = self._open_block(key, "tool_use", {"type": "tool_use", "id": tool_id, "name": ref.name,
                                                   "input": {}})
        block.tool_id, block.name = tool_id, ref.name
        self._called = True

    def _call_delta(self, key: object, fragment: str) -> None:
        """Held until the call is done: the SDK parses the input after every delta and raises on
        text that is no JSON prefix, which an upstream other than Anthropic may write."""
        block = self._open.get(key)
        if block is None or block.kind != "tool_use":
            self.report.note(f"tool-call arguments for an unknown block {key!r} were ignored")
            return
        if not fragment or self._full(fragment):
            return
        block.chunks.append(fragment)

    def _call_done(self, key: object, arguments: str | None) -> None:
        block = self._open.pop(key, None)
        if block is not None and block.kind == "tool_use":
            self._close_tool(block, arguments)
        elif block is not None:
            self._open[key] = block
            self._close(key)

    def _close_tool(self, block: _Block, arguments: str | None) -> None:
        """One `input_json_delta` with the whole input, when it is a JSON object; anything else
        is sent as `{}`, with a note (a client cannot run a call it cannot read)."""
        if arguments is not None and not block.chunks and self._full(arguments):
            return
        args = arguments if arguments is not None else "".join(block.chunks)
        value = _object(args, self.report)
        if value:
            self._delta(block, {"type": "input_json_delta", "partial_json": args})
        self.content.append({"type": "tool_use", "id": block.tool_id, "name": block.name, "input": value})
        self._emit({"type": "content_block_stop", "index": block.index})

    # -- web search ---------------------------------------------------------------------------
    def _web_search(self, search: ev.WebSearch) -> None:
        """A search the upstream ran: Anthropic's own blocks as they came, any other vendor's as
        a `server_tool_use` + `web_search_tool_result` pair whose id carries its state, as the id
        of a Responses `web_search_call` does (translators/features/vendor_state.py `in_id`)."""
        state = search.state
        if state is not None and state.dialect == "anthropic" and state.blocks:
            blocks = [dict(b) for b in state.blocks]
        else:
            use_id = vendor_state.in_id(self.new_id("srvtoolu"), state)
            result: Any = [{"type": "web_search_result", "url": url, "title": url, "encrypted_content": "",
                            "page_age": None} for url in search.sources]
            if search.failed:
                result = {"type": "web_search_tool_result_error", "error_code": "unavailable"}
            blocks = [{"type": "server_tool_use", "id": use_id, "name": "web_search",
                       "input": {"query": search.query}},
                      {"type": "web_search_tool_result", "tool_use_id": use_id, "content": result}]
        for body in blocks:
            index = self._next_index
            self._next_index += 1
            self._emit({"type": "content_block_start", "index": index, "content_block": body})
            self._emit({"type": "content_block_stop", "index": index})
            self.content.append(body)

    # -- the end ------------------------------------------------------------------------------
    def _finish(self, reason: str, detail: str | None) -> None:
        self._stop_all()
        stop = STOP_REASONS.get(reason)
        if stop is None:
            self.report.note(f"the upstream's finish {reason!r} sent as end_turn")
            stop = "end_turn"
        if stop == "end_turn" and self._called:
            stop = "tool_use"  # some upstreams say "stop" after a call; the client must run it
        self.finished = True
        self.stop_reason = stop
        self.stop_sequence = detail if stop == "stop_sequence" else None
        delta = {"stop_reason": stop, "stop_sequence": self.stop_sequence}
        self._emit({"type": "message_delta", "delta": delta, "usage": self._usage_body(start=False)})
        self._emit({"type": "message_stop"})

    def _fail(self, code: str, message: str) -> None:
        """One `error` event, and the stream ends (Anthropic's own mid-stream failure)."""
        self.finished = True
        self._open.clear()
        self._ending = None
        self.error = errors.body(errors.type_for_code(code), message)
        self._emit(self.error)

    # -- usage --------------------------------------------------------------------------------
    def _add_usage(self, usage: ev.Usage) -> None:
        for field in ("input_tokens", "output_tokens", "cached_tokens", "cache_write_tokens",
                      "cache_write_1h_tokens", "web_searches"):
            value = getattr(usage, field)
            if isinstance(value, int) and not isinstance(value, bool):
                self._usage[field] = value

    def _usage_body(self, *, start: bool) -> dict[str, Any]:
        """Anthropic counts cache reads and writes apart from `input_tokens`; the IR counts them in
        (translators/anthropic/stream.py `usage_event`). Counts are cumulative: the SDK's
        accumulator overwrites with the last `message_delta`'s."""
        u = self._usage
        cached = u.get("cached_tokens", 0)
        written = u.get("cache_write_tokens", 0)
        body: dict[str, Any] = {
            "input_tokens": max(u.get("input_tokens", 0) - cached - written, 0),
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": cached,
            "output_tokens": 0 if start else u.get("output_tokens", 0),
        }
        if hour := u.get("cache_write_1h_tokens"):
            # the writes by TTL (anthropic SDK `Usage.cache_creation`), said when an hour's were made
            body["cache_creation"] = {"ephemeral_5m_input_tokens": max(written - hour, 0),
                                      "ephemeral_1h_input_tokens": hour}
        if not start and u.get("web_searches"):
            body["server_tool_use"] = {"web_search_requests": u["web_searches"]}
        return body


def _object(text: str, report: Report) -> dict[str, Any]:
    """A tool's input: a JSON object (the SDK's `ToolUseBlock.input`), else empty with a note."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        report.note("tool-call arguments were not a JSON object; the client gets an empty input")
        return {}
    return value

"""IR stream events -> the Responses SSE that Codex and the `openai` SDK accept.

What Codex 0.169 needs (docs/codex.md "What Codex needs back"): every item complete in
`response.output_item.done`
(the only source of history; deltas are display only), exactly one terminal event, and a
`response.completed` with `response.id` and either full usage or none, never `end_turn: false`.
Event shapes follow the `openai` SDK's `ResponseStreamEvent` union (docs/responses.md "Event order").
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any

from translators.core.ids import IdFactory
from translators.core.report import Report
from translators.features import freeform, vendor_state
from translators.features.naming import ToolIndex, ToolRef
from translators.ir import events as ev
from translators.ir.encoder import MAX_OUTPUT_CHARS, EventEncoder
from translators.responses_client import client_tools
from translators.wire.response_object import response_object
from translators.wire.sse import LongStrings, encode_event

# Upstream finish reasons, already normalised by the decoders, -> how the response ends.
_INCOMPLETE = {"max_output_tokens", "content_filter"}
_USAGE_FIELDS = ("input_tokens", "output_tokens", "cached_tokens", "reasoning_tokens", "cache_write_tokens",
                 "web_searches")
_FAILED_FINISH = {"context_length_exceeded": "Your input exceeds the context window of this model."}
PAUSE_NOTE = ("the upstream paused a long server-tool turn (Anthropic's pause_turn); a Responses "
              "answer has no such end, so it completed with what was written "
              "(docs/responses.md \"Terminal events\")")
"""A Responses object's statuses are completed, incomplete and failed: none says "send me again to
go on", which is what Anthropic's `pause_turn` asks of a Messages client."""
# `response.failed` codes the client understands: the ones Codex acts on (docs/codex.md "Errors and retries")
# and the general ones of the SDK's `ResponseError.code`. Codex retries any other code like server_error, and
# the SDK's type rejects it, so other codes are sent as server_error with the code kept in the message.
# `server_is_overloaded` is one of them: Codex 0.169 ends the turn on it at once ("Selected model is at
# capacity"), where an upstream's overload is worth the retries it gives server_error.
_CLIENT_CODES = frozenset({"server_error", "rate_limit_exceeded", "invalid_prompt", "context_length_exceeded",
                           "insufficient_quota", "usage_not_included"})


_DELTAS = {
    "message": ("response.output_text.delta", '"content_index":0,"delta":', ',"logprobs":[]'),
    "reasoning": ("response.reasoning_summary_text.delta", '"summary_index":0,"delta":', ""),
    "function": ("response.function_call_arguments.delta", '"delta":', ""),
    "custom": ("response.custom_tool_call_input.delta", '"delta":', ""),
}
"""Item kind -> its delta event type and the payload fields around `delta` (openai SDK event types)."""


_LONG = 64 * 1024
"""A delta this long is written by orjson, whose string escaping is `encode_basestring`'s with
ensure_ascii=False, byte for byte, for every string it takes (all but lone surrogates); once an
answer holds this many characters, long strings are written once for all the events that repeat
them (`sse.LongStrings`)."""


class _Open:
    """One output item being streamed."""

    __slots__ = ("annotations", "call_id", "chunks", "delta_head", "delta_tail", "index", "item_id", "kind",
                 "name", "opened", "ref", "streamed", "streamer")

    def __init__(self, kind: str, index: int, item_id: str) -> None:
        self.kind = kind
        self.index = index
        self.item_id = item_id
        event_type, before, after = _DELTAS.get(kind, _DELTAS["function"])
        self.delta_head = (f'event: {event_type}\ndata: {{"item_id":{encode_basestring(item_id)},'
                           f'"output_index":{index},{before}')
        self.delta_tail = f'{after},"type":"{event_type}","sequence_number":'
        """Every delta event of this item is delta_head + the JSON string + delta_tail + its
        sequence number + `}`: see `_emit_delta`."""
        self.chunks: list[str] = []
        self.annotations: list[dict[str, Any]] = []
        self.ref: ToolRef | None = None
        self.call_id = ""
        self.name = ""
        self.streamer: freeform.InputStreamer | None = None
        self.opened = False
        self.streamed = False
        """A delta of this tool call's input went out (`_call_done` sends one otherwise)."""


class ResponsesEncoder(EventEncoder):
    def __init__(self, *, model: str, tools: ToolIndex, report: Report, new_id: IdFactory,
                 clock: Callable[[], float] = time.time, echo: dict[str, Any] | None = None) -> None:
        self.model = model
        self.echo = echo or {}
        """What the request set of the fields every Responses object repeats
        (translators/responses_client/echo.py)."""
        self.tools = tools
        self.report = report
        self.new_id = new_id
        self.response_id = new_id("resp")
        self._clock = clock
        self.created_at = int(clock())
        self.completed_at: int | None = None
        self.output: list[dict[str, Any]] = []
        self.status = "in_progress"
        self.error: dict[str, Any] | None = None
        self.incomplete: dict[str, Any] | None = None
        self._open: dict[object, _Open] = {}
        self._next_index = 0
        self._seq = 0
        self._usage: dict[str, int | None] = {}
        self._started = False
        self.finished = False
        self._out: list[bytes] = []
        self._held = 0
        self._strings = LongStrings()
        """Characters of text, reasoning and arguments held for the items' done events."""

    # -- public -----------------------------------------------------------------------------
    def encode_parts(self, events: list[ev.Event]) -> list[bytes]:
        """`encode`'s bytes in pieces, unjoined: a long text's JSON is one piece, the same object
        in every event that repeats it (`sse.LongStrings`), so a caller can pass it on without
        copying it five times."""
        for event in events:
            # deltas are nearly every event of a stream: straight to their writer, once the
            # response is open and until it ends (the same calls `_handle` would make)
            if self._started and not self.finished:
                if type(event) is ev.TextDelta:
                    self._text_delta(event.key, event.text)
                    continue
                if type(event) is ev.ReasoningDelta:
                    self._reasoning_delta(event.key, event.text)
                    continue
                if type(event) is ev.ToolCallDelta:
                    self._call_delta(event.key, event.fragment)
                    continue
            self._handle(event)
        out, self._out = self._out, []
        return out

    def response(self) -> dict[str, Any]:
        """The Responses object as it stands (the body of a non-streamed answer)."""
        return response_object(self.response_id, self.created_at, self.status, self.model, self.output,
                               error=self.error, incomplete=self.incomplete, usage=self._usage_body(),
                               echo=self.echo, completed_at=self.completed_at)

    # -- dispatch ---------------------------------------------------------------------------
    def _handle(self, event: ev.Event) -> None:
        if isinstance(event, ev.Unknown):
            self.report.drop(event.path)
            return
        if isinstance(event, ev.Note):
            self.report.note(event.text)
            return
        if type(event) is ev.KeepAlive:
            self._keep_alive()
            return
        if isinstance(event, ev.Usage):
            for field in _USAGE_FIELDS:
                value = getattr(event, field)
                if isinstance(value, int) and not isinstance(value, bool):  # usage must be integers (Codex)
                    self._usage[field] = value
            return
        if self.finished:
            return
        if not self._started:
            self._start()
        if type(event) is not ev.Started:
            self._item(event)

    def _emit(self, event_type: str, payload: dict[str, Any]) -> None:
        payload["type"] = event_type
        payload["sequence_number"] = self._seq
        self._seq += 1
        if self._held < _LONG:
            self._out.append(encode_event(event_type, payload))
        else:  # the long text of an item is in its done events and the final response
            self._out += self._strings.event_parts(event_type, payload)

    def _emit_delta(self, item: _Open, text: str) -> None:
        """Delta events are most of a stream: written from the item's template rather than a dict.

        The bytes are exactly those `_emit` would write for the same payload (same key order,
        same string escaping as `json` with ensure_ascii=False); bench/ measured the dict path at
        about twice the cost of parsing the upstream event.
        """
        if len(text) >= _LONG and (value := self._strings.json(text)) is not None:
            # one giant delta (a whole file in one event): its JSON written once, in one C pass,
            # and passed on as its own piece (`encode_parts`), never copied into the event
            tail = b"%b%d}\n\n" % (item.delta_tail.encode(), self._seq)
            self._out += (item.delta_head.encode(), value, tail)
        else:
            self._out.append(f"{item.delta_head}{encode_basestring(text)}{item.delta_tail}{self._seq}}}\n\n"
                             .encode("utf-8", "backslashreplace"))
        self._seq += 1

    def _start(self) -> None:
        """`response.created`, then `response.in_progress`, as OpenAI sends them (recorded in
        tests/data/openai_responses; the Open Responses streaming events list both)."""
        self._started = True
        self._emit("response.created", {"response": self.response()})
        self._emit("response.in_progress", {"response": self.response()})

    def _new(self, key: object, kind: str, prefix: str) -> _Open:
        item = _Open(kind, self._next_index, self.new_id(prefix))
        self._next_index += 1
        self._open[key] = item
        return item

    # -- text -------------------------------------------------------------------------------
    def _text_delta(self, key: object, text: str) -> None:
        item = self._open.get(key)
        if item is None:
            item = self._new(key, "message", "msg")
            self._emit("response.output_item.added", {"output_index": item.index, "item": {
                "type": "message", "id": item.item_id, "role": "assistant", "status": "in_progress",
                "content": []}})
            self._emit("response.content_part.added", {
                "item_id": item.item_id, "output_index": item.index, "content_index": 0,
                "part": {"type": "output_text", "text": "", "annotations": []}})
        if not text or self._full(text):
            return
        item.chunks.append(text)
        self._emit_delta(item, text)

    def _cite(self, citation: ev.Citation) -> None:
        """A `url_citation` on the open message's text (openai SDK `AnnotationURLCitation`)."""
        item = self._open.get(citation.key)
        if item is None or item.kind != "message":
            self.report.note(f"a citation of {citation.url} came for no open message and was left out")
            return
        annotation = {"type": "url_citation", "url": citation.url, "title": citation.title,
                      "start_index": citation.start, "end_index": citation.end}
        self._emit("response.output_text.annotation.added", {
            "item_id": item.item_id, "output_index": item.index, "content_index": 0,
            "annotation_index": len(item.annotations), "annotation": annotation})
        item.annotations.append(annotation)

    def _full(self, text: str) -> bool:
        """Past MAX_OUTPUT_CHARS the response fails, once; nothing more is held."""
        self._held += len(text)
        if self._held <= MAX_OUTPUT_CHARS:
            return False
        self._fail("upstream_output_too_large",
                   f"the upstream's answer passed {MAX_OUTPUT_CHARS} characters; the gateway ends it "
                   "rather than hold more")
        return True

    def _close_message(self, item: _Open) -> None:
        text = "".join(item.chunks)
        part = {"type": "output_text", "text": text, "annotations": item.annotations}
        self._emit("response.output_text.done", {
            "item_id": item.item_id, "output_index": item.index, "content_index": 0, "text": text,
            "logprobs": []})
        self._emit("response.content_part.done", {
            "item_id": item.item_id, "output_index": item.index, "content_index": 0, "part": part})
        self._done(item, {"type": "message", "id": item.item_id, "role": "assistant", "status": "completed",
                          "content": [part]})

    # -- reasoning --------------------------------------------------------------------------
    def _open_reasoning(self, key: object) -> _Open:
        item = self._open.get(key)
        if item is None:
            item = self._new(key, "reasoning", "rs")
            self._emit("response.output_item.added", {"output_index": item.index, "item": {
                "type": "reasoning", "id": item.item_id, "summary": []}})
        return item

    def _reasoning_delta(self, key: object, text: str) -> None:
        item = self._open_reasoning(key)
        if not text or self._full(text):
            return
        if not item.opened:
            item.opened = True
            self._emit("response.reasoning_summary_part.added", {
                "item_id": item.item_id, "output_index": item.index, "summary_index": 0,
                "part": {"type": "summary_text", "text": ""}})
        item.chunks.append(text)
        self._emit_delta(item, text)

    def _reasoning_done(self, key: object, state: Any) -> None:
        item = self._open_reasoning(key)
        body: dict[str, Any] = {"type": "reasoning", "id": item.item_id, "summary": []}
        if item.opened:
            text = "".join(item.chunks)
            part = {"type": "summary_text", "text": text}
            self._emit("response.reasoning_summary_text.done", {
                "item_id": item.item_id, "output_index": item.index, "summary_index": 0, "text": text})
            self._emit("response.reasoning_summary_part.done", {
                "item_id": item.item_id, "output_index": item.index, "summary_index": 0, "part": part})
            body["summary"] = [part]
        if state is not None:
            body["encrypted_content"] = vendor_state.encode(state)
        self._done(item, body)

    # -- tool calls -------------------------------------------------------------------------
    def _call_started(self, key: object, call_id: str, name: str) -> None:
        ref = self.tools.lookup(name)
        prefix = {"custom": "ctc", "tool_search": "tsc", "local_shell": "lsh", "shell": "sh",
                  "apply_patch": "apc", "computer": "cu"}.get(ref.kind, "fc")
        item = self._new(key, ref.kind, prefix)
        item.ref, item.call_id, item.name = ref, call_id or self.new_id("call"), name
        if ref.kind == "function":
            self._emit("response.output_item.added", {"output_index": item.index, "item": {
                **self._call_head(item, "function_call"), "arguments": "", "status": "in_progress"}})
        elif ref.kind == "custom":
            item.streamer = freeform.InputStreamer()
            self._emit("response.output_item.added", {"output_index": item.index, "item": {
                **self._call_head(item, "custom_tool_call"), "input": "", "status": "in_progress"}})

    def _call_head(self, item: _Open, item_type: str) -> dict[str, Any]:
        head: dict[str, Any] = {"type": item_type, "id": item.item_id, "call_id": item.call_id,
                                "name": item.ref.name if item.ref else item.name}
        if item.ref and item.ref.namespace:
            head["namespace"] = item.ref.namespace
        if item.ref and item.ref.plaintext and item_type == "function_call":
            # the arguments are as the model wrote them: Codex then hands a multi-agent message on
            # as text, not as ciphertext only OpenAI could read (docs/codex.md "Multi-agent")
            head["encrypted_function_args"] = []
        return head

    def _call_delta(self, key: object, fragment: str) -> None:
        item = self._open.get(key)
        if item is None or not fragment:
            if item is None:
                self.report.note(f"tool-call arguments for an unknown block {key!r} were ignored")
            return
        if self._full(fragment):
            return
        item.chunks.append(fragment)
        if item.kind == "function":
            item.streamed = True
            self._emit_delta(item, fragment)
        elif item.kind == "custom" and item.streamer is not None:
            text = item.streamer.feed(fragment)
            if text:
                item.streamed = True
                self._emit_delta(item, text)

    def _call_done(self, key: object, arguments: str | None) -> None:
        item = self._open.get(key)
        if item is None:
            return
        args = arguments if arguments is not None else "".join(item.chunks)
        if item.kind == "function":
            args = args or "{}"
            if not item.streamed:  # the upstream gave them whole (Gemini): one delta with all of it
                self._emit_delta(item, args)
            self._emit("response.function_call_arguments.done", {
                "item_id": item.item_id, "output_index": item.index, "arguments": args,
                "name": item.ref.name if item.ref else item.name})
            self._done(item, {**self._call_head(item, "function_call"), "arguments": args,
                              "status": "completed"})
        elif item.kind == "custom":
            raw = freeform.unwrap(args)
            ref = item.ref
            if ref is not None and (problem := freeform.grammar_mismatch(ref.syntax, ref.definition, raw)):
                self.report.note(f"{ref.name}: the model's input does not parse with its grammar ({problem})")
            if raw and not item.streamed:
                self._emit_delta(item, raw)
            self._emit("response.custom_tool_call_input.done", {
                "item_id": item.item_id, "output_index": item.index, "input": raw})
            self._done(item, {**self._call_head(item, "custom_tool_call"), "input": raw,
                              "status": "completed"})
        elif item.kind == "tool_search":
            body = {"type": "tool_search_call", "id": item.item_id, "call_id": item.call_id,
                    "execution": "client", "arguments": _object(args, self.report), "status": "completed"}
            self._emit("response.output_item.added", {"output_index": item.index, "item": body})
            self._done(item, body)
        elif item.kind in client_tools.KINDS:
            body = client_tools.call_item(item.kind, item.item_id, item.call_id, _object(args, self.report),
                                          self.report)
            self._emit("response.output_item.added", {"output_index": item.index, "item": body})
            self._done(item, body)
        else:  # local_shell
            # `command` and `env` are required in the SDK's LocalShellCallAction
            action = {"type": "exec", "command": [], "env": {}, **_object(args, self.report)}
            body = {"type": "local_shell_call", "id": item.item_id, "call_id": item.call_id,
                    "status": "completed", "action": action}
            self._emit("response.output_item.added", {"output_index": item.index, "item": body})
            self._done(item, body)

    # -- web search -------------------------------------------------------------------------
    def _web_search(self, search: ev.WebSearch) -> None:
        """One `web_search_call` item, whole (openai SDK `ResponseFunctionWebSearch`). The vendor's
        state rides in its id, the one field of it Codex sends back (docs/codex.md "Echo behaviour")."""
        item = self._new(search.key, "web_search", "ws")
        item.item_id = vendor_state.in_id(item.item_id, search.state)
        head = {"item_id": item.item_id, "output_index": item.index}
        self._emit("response.output_item.added", {"output_index": item.index, "item": {
            "type": "web_search_call", "id": item.item_id, "status": "in_progress",
            "action": {"type": "search", "query": search.query}}})
        self._emit("response.web_search_call.in_progress", dict(head))
        self._emit("response.web_search_call.searching", dict(head))
        if not search.failed:
            self._emit("response.web_search_call.completed", dict(head))
        action = {"type": "search", "query": search.query,
                  "sources": [{"type": "url", "url": url} for url in search.sources]}
        self._done(item, {"type": "web_search_call", "id": item.item_id,
                          "status": "failed" if search.failed else "completed", "action": action})

    # -- closing ----------------------------------------------------------------------------
    def _done(self, item: _Open, body: dict[str, Any]) -> None:
        self._emit("response.output_item.done", {"output_index": item.index, "item": body})
        self.output.append(body)
        for key, value in list(self._open.items()):
            if value is item:
                del self._open[key]
                break

    def _close(self, key: object) -> None:
        item = self._open.get(key)
        if item is None:
            return
        if item.kind == "message":
            self._close_message(item)
        elif item.kind == "reasoning":
            self._reasoning_done(key, None)
        else:
            self._call_done(key, None)

    def _close_all(self) -> None:
        for key in list(self._open):
            self._close(key)

    def _finish(self, reason: str, detail: str | None) -> None:
        self._close_all()
        if reason in _FAILED_FINISH:
            self._fail(reason, detail or _FAILED_FINISH[reason])
            return
        self.finished = True
        if searches := self._usage.get("web_searches"):
            self.report.note(f"web searches: {searches} (the upstream's count)")
        if reason in _INCOMPLETE:
            self.status = "incomplete"
            self.incomplete = {"reason": reason}
            self._emit("response.incomplete", {"response": self.response()})
        else:
            if reason == "pause_turn":
                self.report.note(PAUSE_NOTE)
            self.status = "completed"
            self.completed_at = int(self._clock())
            self._emit("response.completed", {"response": self.response()})

    def _keep_alive(self) -> None:
        """Nothing: a Responses stream has no keep-alive event (the openai SDK's event types, Codex's
        reader). An SSE comment would be skipped safely, but Codex's idle timer counts events, not
        bytes, so it would keep nothing alive (docs/claude-code.md "Keep-alives")."""

    def _fail(self, code: str, message: str) -> None:
        if code not in _CLIENT_CODES:
            code, message = "server_error", f"{code}: {message}"
        if not self._started:
            self._start()
        self.finished = True
        self.status = "failed"
        self.error = {"code": code, "message": message}
        self._emit("response.failed", {"response": self.response()})

    def _usage_body(self) -> dict[str, Any] | None:
        u = self._usage
        if u.get("input_tokens") is None and u.get("output_tokens") is None:
            return None
        input_tokens = u.get("input_tokens") or 0
        output_tokens = u.get("output_tokens") or 0
        return {
            "input_tokens": input_tokens,
            # the openai SDK's ResponseUsage requires both details (openai 3.57 InputTokensDetails)
            "input_tokens_details": {"cached_tokens": u.get("cached_tokens") or 0,
                                     "cache_write_tokens": u.get("cache_write_tokens") or 0},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": u.get("reasoning_tokens") or 0},
            "total_tokens": input_tokens + output_tokens,
        }


def _object(text: str, report: Report) -> dict[str, Any]:
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        report.note("tool-call arguments were not valid JSON; sent as an empty object")
        return {}
    return value if isinstance(value, dict) else {}

"""OpenAI Responses answers -> IR events, for a client that is not a Responses client
(docs/responses.md "As an upstream of other clients"): the SSE stream, a whole `Response` object,
and error bodies.

`event: <type>` / `data: {"type": <type>, ...}`. Output items are told apart by `output_index`.
A reasoning item's summary text streams as `response.reasoning_summary_text.delta`; its
`encrypted_content` (asked for with `include`) arrives whole on `response.output_item.done`, and
becomes the IR's reasoning state, which the client carries to the next turn. A function call
opens on `response.output_item.added`, streams `response.function_call_arguments.delta`, and closes
on its `output_item.done`. The stream ends with `response.completed`, `response.incomplete`
(`incomplete_details.reason`), `response.failed` (`response.error`) or an `error` event. A
`keepalive` event (`{"type": "keepalive", "sequence_number"}`, sent on long waits though the SDK's
types do not list it) and an SSE comment line are the upstream's keep-alives.
"""

from __future__ import annotations

from typing import Any

from translators.core.errors import UpstreamProtocolError
from translators.core.translation import Translation
from translators.dialect import ErrorInfo
from translators.ir import events as ev
from translators.ir.request import VendorState
from translators.wire import decoding, wirejson
from translators.wire.upstream_errors import ErrorTable, Failure, describe, text_of

DIALECT = "responses"

ERRORS = ErrorTable(
    status_of={"invalid_request_error": 400, "authentication_error": 401, "permission_error": 403,
               "not_found_error": 404, "rate_limit_exceeded": 429, "rate_limit_error": 429,
               "insufficient_quota": 429, "server_error": 500, "server_is_overloaded": 503},
    code_of={"insufficient_quota": "insufficient_quota", "server_is_overloaded": "server_is_overloaded",
             "rate_limit_exceeded": "rate_limit_exceeded"},
)
"""OpenAI's error types and codes (`{"error": {"message", "type", "param", "code"}}`)."""

INCOMPLETE = {"max_output_tokens": "max_output_tokens", "content_filter": "content_filter"}
"""`incomplete_details.reason` -> the IR's finish reason."""


def failure(error: Any, status: int | None = None) -> Failure:
    """An OpenAI error object: its `code` decides when it is a word, else its `type`."""
    if not isinstance(error, dict):
        return describe(ERRORS, text_of(error), status=status or ERRORS.default_status)
    kind = error.get("type") if isinstance(error.get("type"), str) else None
    code = error.get("code") if isinstance(error.get("code"), str) else None
    message = str(error.get("message") or "upstream error")
    return describe(ERRORS, message, status=status, error_type=code or kind, label=kind or code or "")


def error_info(status: int, body: Any) -> ErrorInfo:
    """An HTTP error body (parsed JSON, or the text of one that is not)."""
    error = body.get("error", body) if isinstance(body, dict) else body
    found = failure(error, status)
    return ErrorInfo(found.code, found.message)


def usage_event(usage: Any) -> ev.Usage | None:
    """Responses counts as the IR does: input includes cached tokens, output reasoning tokens."""
    if not isinstance(usage, dict):
        return None
    inputs, outputs = usage.get("input_tokens_details"), usage.get("output_tokens_details")
    inputs = inputs if isinstance(inputs, dict) else {}
    outputs = outputs if isinstance(outputs, dict) else {}
    return ev.Usage(input_tokens=_int(usage.get("input_tokens")),
                    output_tokens=_int(usage.get("output_tokens")),
                    cached_tokens=_int(inputs.get("cached_tokens")),
                    reasoning_tokens=_int(outputs.get("reasoning_tokens")))


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def reasoning_state(item: dict[str, Any]) -> VendorState | None:
    """The reasoning item's `encrypted_content`, exactly as sent, as the IR's state."""
    encrypted = item.get("encrypted_content")
    if not isinstance(encrypted, str) or not encrypted:
        return None
    return VendorState(dialect=DIALECT, signature=encrypted)


class _Reader:
    """What the stream and the whole body share: items by output index, and the ending."""

    def __init__(self) -> None:
        self.calls = False
        """A function call was answered: the turn ends for the client to run it."""
        self.open_text: dict[int, set[int]] = {}
        self.argued: set[int] = set()
        """Function calls whose arguments came as deltas."""

    def item_added(self, index: int, item: dict[str, Any], out: list[ev.Event]) -> None:
        if item.get("type") == "function_call":
            self.calls = True
            call_id = str(item.get("call_id") or item.get("id") or index)
            out.append(ev.ToolCallStarted(("call", index), call_id, str(item.get("name") or "")))

    def text(self, index: int, part: int, delta: str, out: list[ev.Event]) -> None:
        self.open_text.setdefault(index, set()).add(part)
        if delta:
            out.append(ev.TextDelta(("text", index, part), delta))

    def item_done(self, index: int, item: dict[str, Any], out: list[ev.Event]) -> None:
        kind = item.get("type")
        if kind == "message":
            for part in sorted(self.open_text.pop(index, ())):
                out.append(ev.TextDone(("text", index, part)))
        elif kind == "reasoning":
            out.append(ev.ReasoningDone(("reasoning", index), reasoning_state(item)))
        elif kind == "function_call":
            whole = None if index in self.argued else str(item.get("arguments") or "")
            out.append(ev.ToolCallDone(("call", index), whole))
        else:  # OpenAI's hosted tools are never offered (upstream_request.py)
            out.append(ev.Unknown(f"output[{index}].{kind}"))

    def ended(self, event_type: str, response: Any, out: list[ev.Event]) -> None:
        response = response if isinstance(response, dict) else {}
        usage = usage_event(response.get("usage"))
        if usage is not None:
            out.append(usage)
        if event_type == "response.failed":
            found = failure(response.get("error"))
            out.append(ev.Failed(found.code, found.message))
        elif event_type == "response.incomplete":
            details = response.get("incomplete_details")
            reason = details.get("reason") if isinstance(details, dict) else None
            out.append(ev.Finished(INCOMPLETE.get(str(reason), "max_output_tokens")))
        else:
            out.append(ev.Finished("tool_calls" if self.calls else "stop"))


class ResponsesUpstreamDecoder(decoding.DataEvents):
    def __init__(self, translation: Translation | None = None) -> None:
        super().__init__()
        self._read = _Reader()
        self._started = False

    def close(self) -> list[ev.Event]:
        if self._done:
            return []
        out = decoding.each(lambda: [sse.data for sse in self._sse.close()], self._data)
        if not self._done and not decoding.ended(out):
            out.append(ev.Failed("server_error", "the Responses stream ended before response.completed"))
        self._done = True
        return out

    def _data(self, data: str, out: list[ev.Event]) -> None:
        if self._done or not data.strip() or data.strip() == "[DONE]":
            return
        try:
            event = wirejson.loads(data)
        except ValueError:
            raise UpstreamProtocolError(
                f"the Responses upstream sent a non-JSON event: {data[:120]!r}") from None
        if not isinstance(event, dict):
            raise UpstreamProtocolError("the Responses upstream sent an event that is not a JSON object")
        kind = event.get("type")
        if kind == "keepalive":
            out.append(ev.KeepAlive())
            return
        if kind == "error":
            self._done = True
            found = failure(event.get("error", event))
            out.append(ev.Failed(found.code, found.message))
            return
        if not self._started:
            self._started = True
            out.append(ev.Started())
        index = event.get("output_index", 0)
        match kind:
            case "response.output_item.added":
                self._read.item_added(index, _object(event.get("item")), out)
            case "response.output_item.done":
                self._read.item_done(index, _object(event.get("item")), out)
            case "response.output_text.delta" | "response.refusal.delta":
                self._read.text(index, event.get("content_index", 0), str(event.get("delta") or ""), out)
            case "response.reasoning_summary_part.added" if event.get("summary_index", 0):
                out.append(ev.ReasoningDelta(("reasoning", index), "\n\n"))  # between summary parts
            case "response.reasoning_summary_text.delta" | "response.reasoning_text.delta":
                if event.get("delta"):
                    out.append(ev.ReasoningDelta(("reasoning", index), str(event["delta"])))
            case "response.function_call_arguments.delta":
                self._read.argued.add(index)
                if event.get("delta"):
                    out.append(ev.ToolCallDelta(("call", index), str(event["delta"])))
            case "response.completed" | "response.incomplete" | "response.failed":
                self._done = True
                self._read.ended(kind, event.get("response"), out)
            case _:
                pass  # created, in_progress, the *.done and *.added echoes of what deltas said


def _object(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise UpstreamProtocolError("the Responses upstream sent an item that is not a JSON object")
    return value


def response_events(body: Any, translation: Translation) -> list[ev.Event]:
    """A whole `Response` object -> the events its stream would have given."""
    if not isinstance(body, dict):
        raise UpstreamProtocolError("the Responses upstream's answer is not a JSON object")
    if isinstance(body.get("error"), dict) and body.get("object") != "response":
        found = failure(body["error"])
        return [ev.Failed(found.code, found.message)]
    read = _Reader()
    out: list[ev.Event] = [ev.Started()]
    for index, item in enumerate(body.get("output") or []):
        item = _object(item)
        read.item_added(index, item, out)
        if item.get("type") == "message":
            for part, content in enumerate(item.get("content") or []):
                if isinstance(content, dict):
                    read.text(index, part, str(content.get("text") or content.get("refusal") or ""), out)
        elif item.get("type") == "reasoning":
            summary = [s for s in item.get("summary") or [] if isinstance(s, dict)]
            texts = [str(s["text"]) for s in summary if s.get("text")]
            if texts:
                out.append(ev.ReasoningDelta(("reasoning", index), "\n\n".join(texts)))
        read.item_done(index, item, out)
    status = body.get("status")
    endings = {"failed": "response.failed", "incomplete": "response.incomplete"}
    ending = endings.get(str(status), "response.completed")
    read.ended(ending, body, out)
    return out

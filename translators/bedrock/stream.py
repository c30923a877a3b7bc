"""Bedrock ConverseStream (binary event stream) -> IR events (docs/bedrock.md "Event-stream framing",
"ConverseStream events").

Frames come from botocore's decoder (framing.py); each carries `:message-type` (`event`,
`exception`, `error`) and, for events, `:event-type` with a JSON payload padded by a random
`"p"` key. Facts from the recorded streams that shape this decoder:
- only `toolUse` blocks get a `contentBlockStart`; text and reasoning blocks begin with a delta;
- a reasoning block's `signature` is its own delta just before `contentBlockStop`;
- `metadata` (the usage) comes after `messageStop`, so the finish waits for it (or for the end
  of the stream) to carry the usage.
"""

from __future__ import annotations

from typing import Any

from translators.bedrock import errors, wire
from translators.bedrock.framing import Frame, FrameError, FrameReader
from translators.core.errors import UpstreamProtocolError
from translators.ir import events as ev
from translators.ir.request import VendorState
from translators.wire import decoding, wirejson

# The block kind each contentBlockDelta key belongs to; text and reasoning blocks are opened by
# their first delta, toolUse blocks only by a contentBlockStart (it carries the id and name).
_DELTA_BLOCK = {"text": "text", "reasoningContent": "reasoning", "toolUse": "tool"}


class _Block:
    __slots__ = ("kind", "parts", "redacted", "signature")

    def __init__(self, kind: str) -> None:
        self.kind = kind
        """text | reasoning | tool | skip (a block already reported as unknown)."""
        self.parts: list[str] = []
        self.signature: list[str] = []
        self.redacted: list[str] = []


class BedrockDecoder:
    def __init__(self) -> None:
        self._frames = FrameReader()
        self._blocks: dict[int, _Block] = {}
        self._stop: object = None
        self._matched: str | None = None
        self._stopped = False
        self._usage_seen = False
        self._done = False

    def feed(self, data: bytes) -> list[ev.Event]:
        out: list[ev.Event] = []
        if self._done:
            return out
        try:
            frames = self._frames.feed(data)
        except FrameError as exc:
            self._frames_to_events(exc.frames, out)
            self._fail_protocol(exc, out)
            return out
        self._frames_to_events(frames, out)
        return out

    def close(self) -> list[ev.Event]:
        if self._done:
            return []
        self._done = True
        if self._stopped:
            out: list[ev.Event] = []
            if self._frames.pending:
                out.append(ev.Note(f"the Bedrock stream ended inside a frame after messageStop "
                                   f"({self._frames.pending} bytes); usage may be missing"))
            return out + wire.finish_events(self._stop, self._matched)
        cut = f" ({self._frames.pending} bytes of an unfinished frame)" if self._frames.pending else ""
        return [ev.Failed("server_error", f"the Bedrock stream ended before messageStop{cut}")]

    # -- frames -----------------------------------------------------------------------------
    def _frames_to_events(self, frames: list[Frame], out: list[ev.Event]) -> None:
        for frame in frames:
            if self._done:
                return
            try:
                self._frame(frame, out)
            except UpstreamProtocolError as exc:
                self._fail_protocol(exc, out)

    def _fail_protocol(self, exc: UpstreamProtocolError, out: list[ev.Event]) -> None:
        """Whatever came before the bad bytes stays; the response then ends, once."""
        if not self._done:
            self._done = True
            out.append(decoding.failure(exc))

    def _frame(self, frame: Frame, out: list[ev.Event]) -> None:
        headers = frame.headers
        kind = headers.get(":message-type")
        if kind == "event":
            name = headers.get(":event-type")
            handler = _HANDLERS.get(name)  # header values are str, bytes, int or bool: all hashable
            if handler is None:
                out.append(ev.Unknown(f"stream.{name}"))
                return
            handler(self, _payload(frame.payload), out)
        elif kind == "exception":
            self._done = True
            error_type = str(headers.get(":exception-type") or "exception")
            failure = errors.exception_failure(error_type, _payload(frame.payload))
            out.append(ev.Failed(failure.code, failure.message))
        elif kind == "error":
            self._done = True
            failure = errors.frame_failure(headers)
            out.append(ev.Failed(failure.code, failure.message))
        else:
            out.append(ev.Unknown(f"stream.message-type.{kind}"))

    # -- events -----------------------------------------------------------------------------
    def _on_messageStart(self, payload: dict[str, Any], out: list[ev.Event]) -> None:
        out.append(ev.Started())

    def _on_contentBlockStart(self, payload: dict[str, Any], out: list[ev.Event]) -> None:
        index = _index(payload)
        start = payload.get("start") or {}
        tool = start.get("toolUse") if isinstance(start, dict) else None
        if isinstance(tool, dict):
            self._blocks[index] = _Block("tool")
            call_id, name = str(tool.get("toolUseId") or ""), str(tool.get("name") or "")
            out.append(ev.ToolCallStarted(index, call_id, name))
            return
        # toolResult / image starts belong to server-side tools and image output: nothing the
        # client can replay, so the whole block is reported and its deltas are skipped
        self._blocks[index] = _Block("skip")
        for key in start if isinstance(start, dict) else ["?"]:
            out.append(ev.Unknown(f"stream.contentBlockStart.{key}"))

    def _on_contentBlockDelta(self, payload: dict[str, Any], out: list[ev.Event]) -> None:
        index = _index(payload)
        delta = payload.get("delta")
        if type(delta) is not dict:
            raise UpstreamProtocolError("Bedrock sent a contentBlockDelta without a delta object")
        blocks = self._blocks
        for key, value in delta.items():
            wanted = _DELTA_BLOCK.get(key)
            block = blocks.get(index)
            if block is None:
                if wanted != "text" and wanted != "reasoning":
                    # citation / image / toolResult deltas, or a toolUse delta for an unstarted block
                    out.append(ev.Unknown(f"stream.contentBlockDelta.{key}"))
                    continue
                block = blocks[index] = _Block(wanted)
            elif block.kind != wanted:
                if block.kind != "skip":
                    out.append(ev.Unknown(f"stream.contentBlockDelta.{key}"))
                continue
            if wanted == "text":
                out.append(ev.TextDelta(index, value if type(value) is str else ""))
            elif wanted == "tool":
                fragment = value.get("input") if type(value) is dict else None
                if type(fragment) is str and fragment:
                    block.parts.append(fragment)
                    out.append(ev.ToolCallDelta(index, fragment))
            elif type(value) is dict:  # reasoningContent: text | signature | redactedContent
                _reasoning(index, block, value, out)

    def _on_contentBlockStop(self, payload: dict[str, Any], out: list[ev.Event]) -> None:
        index = _index(payload)
        block = self._blocks.pop(index, None)
        if block is None or block.kind == "skip":
            return
        if block.kind == "text":
            out.append(ev.TextDone(index))
        elif block.kind == "tool":
            out.append(ev.ToolCallDone(index, "".join(block.parts) or "{}"))
        else:
            out.append(ev.ReasoningDone(index, VendorState(
                dialect="bedrock", text="".join(block.parts),
                signature="".join(block.signature) or None, redacted="".join(block.redacted) or None)))

    def _on_messageStop(self, payload: dict[str, Any], out: list[ev.Event]) -> None:
        self._stopped = True
        self._stop = payload.get("stopReason")
        self._matched, rest = wire.stop_sequence(payload.get("additionalModelResponseFields"))
        if _has_value(rest):
            out.append(ev.Unknown("stream.messageStop.additionalModelResponseFields"))
        self._maybe_finish(out)

    def _on_metadata(self, payload: dict[str, Any], out: list[ev.Event]) -> None:
        if isinstance(payload.get("usage"), dict):
            out.append(wire.usage_event(payload["usage"]))
        if payload.get("trace"):
            out.append(ev.Unknown("stream.metadata.trace"))  # guardrail / prompt-router trace
        self._usage_seen = True
        self._maybe_finish(out)

    def _maybe_finish(self, out: list[ev.Event]) -> None:
        """The finish needs both messageStop (the reason) and metadata (the usage)."""
        if self._stopped and self._usage_seen:
            self._done = True
            out.extend(wire.finish_events(self._stop, self._matched))


def _reasoning(index: int, block: _Block, value: dict[str, Any], out: list[ev.Event]) -> None:
    text = value.get("text")
    if isinstance(text, str):
        block.parts.append(text)
        out.append(ev.ReasoningDelta(index, text))
    if isinstance(value.get("signature"), str):
        block.signature.append(value["signature"])
    if isinstance(value.get("redactedContent"), str):
        block.redacted.append(value["redactedContent"])


def _payload(raw: bytes) -> dict[str, Any]:
    try:
        value = wirejson.loads(raw) if raw else {}
    except ValueError:
        raise UpstreamProtocolError(
            f"Bedrock sent an event payload that is not JSON: {raw[:120]!r}") from None
    if type(value) is not dict:
        raise UpstreamProtocolError("Bedrock sent an event payload that is not a JSON object")
    # random-length padding against traffic analysis (docs/bedrock.md "ConverseStream events")
    value.pop("p", None)
    return value


def _index(payload: dict[str, Any]) -> int:
    index = payload.get("contentBlockIndex")
    if type(index) is not int:  # JSON numbers come out as int or float; bool is not an index
        raise UpstreamProtocolError(f"Bedrock sent a content block event without an index: {index!r}")
    return index


def _has_value(value: Any) -> bool:
    """True if a structure holds anything but nulls (`{"delta":{"stop_sequence":null}}` does not)."""
    if isinstance(value, dict):
        return any(_has_value(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_value(v) for v in value)
    return value is not None


# `:event-type` -> handler; any other event type is reported as unknown.
_HANDLERS = {
    "messageStart": BedrockDecoder._on_messageStart,
    "contentBlockStart": BedrockDecoder._on_contentBlockStart,
    "contentBlockDelta": BedrockDecoder._on_contentBlockDelta,
    "contentBlockStop": BedrockDecoder._on_contentBlockStop,
    "messageStop": BedrockDecoder._on_messageStop,
    "metadata": BedrockDecoder._on_metadata,
}

"""The anthropic SDK as the judge of what the client receives: its stream event types, its own
stream accumulation (`accumulate_event`, what `client.messages.stream()` runs), its `Message`."""

from __future__ import annotations

from functools import cache
from typing import Any

from anthropic.lib.streaming._messages import accumulate_event
from anthropic.types import Message, RawMessageStreamEvent
from anthropic.types.shared import ErrorResponse
from pydantic import TypeAdapter

from tests.translators.messages_client.recordings import sse_events


@cache
def event_adapter() -> TypeAdapter[Any]:
    return TypeAdapter(RawMessageStreamEvent)


def validate_stream(data: bytes) -> tuple[Message | None, dict[str, Any] | None]:
    """Every event validates against the SDK's `RawMessageStreamEvent` (or, an `error`, against its
    `ErrorResponse`); `message_start` opens, exactly one end closes (`message_stop`, or an `error`),
    and the SDK's accumulator builds a valid `Message` from the events. A `ping` may come anywhere
    and is skipped, as the SDK's `Stream` skips it before any type is read. -> (message, error)."""
    events = sse_events(data)
    assert all(payload == {"type": "ping"} for name, payload in events if name == "ping")
    events = [(name, payload) for name, payload in events if name != "ping"]
    assert events, "no events"
    names = [name for name, _ in events]
    ends = [n for n in names if n in ("message_stop", "error")]
    assert len(ends) == 1 and names[-1] == ends[0], names
    snapshot = None
    buffers: dict[int, bytes] = {}
    for name, payload in events:
        if name == "error":
            return (
                Message.model_validate(snapshot.model_dump()) if snapshot else None,
                ErrorResponse.model_validate(payload).model_dump(),
            )
        event = event_adapter().validate_python(payload)
        snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=buffers)
    assert names[0] == "message_start" and names.count("message_delta") == 1, names
    assert snapshot is not None
    return Message.model_validate(snapshot.model_dump()), None

"""text/event-stream framing, both ways (WHATWG HTML §9.2 "Server-sent events").

The decoder works on bytes and only decodes whole lines, so a multi-byte UTF-8 character split
across two network chunks is never cut. Lines end in CRLF, LF or CR; a CR at the very end of the
buffer waits for the next chunk, since it may be the first half of a CRLF.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from translators import wirejson


@dataclass(frozen=True, slots=True)
class SSEEvent:
    event: str
    data: str


class SSEDecoder:
    __slots__ = ("_buffer", "_data", "_event")

    def __init__(self) -> None:
        self._buffer = b""
        self._event = ""
        self._data: list[str] = []

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        buffer = self._buffer + chunk if self._buffer else chunk
        if b"\r" in buffer:
            return self._feed_with_cr(buffer)
        events: list[SSEEvent] = []
        start = 0
        while True:
            end = buffer.find(b"\n", start)
            if end < 0:
                break
            self._line(buffer[start:end], events)
            start = end + 1
        self._buffer = buffer[start:]
        return events

    def _feed_with_cr(self, buffer: bytes) -> list[SSEEvent]:
        events: list[SSEEvent] = []
        start = 0
        size = len(buffer)
        while start < size:
            lf = buffer.find(b"\n", start)
            cr = buffer.find(b"\r", start)
            if cr < 0 or (0 <= lf < cr):
                if lf < 0:
                    break
                self._line(buffer[start:lf], events)
                start = lf + 1
                continue
            if cr == size - 1:
                break  # maybe half of a CRLF: wait for the next byte
            self._line(buffer[start:cr], events)
            start = cr + 2 if buffer[cr + 1: cr + 2] == b"\n" else cr + 1
        self._buffer = buffer[start:]
        return events

    def close(self) -> list[SSEEvent]:
        """End of stream. An event without its closing blank line is discarded, as the spec says
        ("if the file ends in the middle of an event ... the incomplete event is not dispatched"):
        a cut upstream must not pass half an event off as a whole one."""
        self._buffer = b""
        self._data = []
        self._event = ""
        return []

    @property
    def pending(self) -> bool:
        """True when bytes of an incomplete event are held."""
        return bool(self._buffer or self._data)

    def _line(self, raw: bytes, events: list[SSEEvent]) -> None:
        if not raw:
            self._dispatch(events)
            return
        line = raw.decode("utf-8", "replace")
        if line[0] == ":":
            return
        field, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._data.append(value)
        elif field == "event":
            self._event = value

    def _dispatch(self, events: list[SSEEvent]) -> None:
        if self._data:
            events.append(SSEEvent(self._event or "message", "\n".join(self._data)))
        self._data = []
        self._event = ""


def encode_event(event_type: str, payload: dict[str, Any]) -> bytes:
    """One Responses SSE event: `event: <type>` then `data: <json>` (notes/dialects.md §F).

    A lone surrogate (an upstream may send `"\\ud800"`, which json.loads accepts) cannot be UTF-8;
    it only ever sits inside a JSON string here, and is written as the JSON escape `\\ud800` it
    came as (`wirejson.dumps`), so the client still gets valid UTF-8 and the same string.
    """
    return b"event: %b\ndata: %b\n\n" % (event_type.encode(), wirejson.dumps(payload))

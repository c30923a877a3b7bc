"""text/event-stream framing, both ways (WHATWG HTML §9.2 "Server-sent events").

The decoder works on bytes and only decodes whole lines, so a multi-byte UTF-8 character split
across two network chunks is never cut. Lines end in CRLF, LF or CR; a CR at the very end of the
buffer waits for the next chunk, since it may be the first half of a CRLF.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from translators import wirejson


class SSEEvent(NamedTuple):
    event: str
    data: str


_ONE_EVENT = re.compile(rb"(?:event: ([^\r\n]*+)\r?\n)?data: ([^\r\n]*+)\r?\n\r?\n")
"""A chunk that is exactly one event (`event:` and `data:` lines, LF or CRLF line ends); possessive,
so a chunk that is not one fails at once instead of backtracking over its data."""


class SSEDecoder:
    """Bytes in any chunking -> whole events. One pass over the lines of each chunk, without a
    call per line: on the proxy this runs once per upstream event, with cold caches (bench/)."""

    __slots__ = ("_buffer", "_data", "_event", "idle")

    def __init__(self) -> None:
        self._buffer = b""
        self._event = ""
        self._data: list[str] = []
        self.idle = True
        """True between events: nothing held, so the next chunk starts a new event (an attribute,
        not a property: it is read once per upstream event)."""

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        if self.idle:
            whole = _ONE_EVENT.fullmatch(chunk)
            if whole is not None:
                # the usual chunk, one upstream write: exactly one whole event; the same event
                # the line loop below makes of it, in one C call
                name, data = whole.groups()
                return [SSEEvent(name.decode("utf-8", "replace") if name else "message",
                                 data.decode("utf-8", "replace"))]
        buffer = self._buffer + chunk if self._buffer else chunk
        if b"\r" in buffer:
            lines = self._split_with_cr(buffer)
        else:
            end = buffer.rfind(b"\n") + 1
            self._buffer = buffer[end:]
            lines = buffer[:end - 1].split(b"\n") if end else []
        events: list[SSEEvent] = []
        data, event = self._data, self._event
        for raw in lines:
            if not raw:  # a blank line dispatches the event
                if data:
                    events.append(SSEEvent(event or "message", "\n".join(data)))
                    data = []
                event = ""
            elif raw.startswith(b"data: "):
                data.append(raw[6:].decode("utf-8", "replace"))
            elif raw.startswith(b"event: "):
                event = raw[7:].decode("utf-8", "replace")
            elif raw[0] != 0x3A:  # not a `:` comment: a field written without the space, or id/retry
                field, sep, value = raw.decode("utf-8", "replace").partition(":")
                if sep and value.startswith(" "):
                    value = value[1:]
                if field == "data":
                    data.append(value)
                elif field == "event":
                    event = value
        self._data, self._event = data, event
        self.idle = not (self._buffer or data or event)
        return events

    def _split_with_cr(self, buffer: bytes) -> list[bytes]:
        lines: list[bytes] = []
        start = 0
        size = len(buffer)
        while start < size:
            lf = buffer.find(b"\n", start)
            cr = buffer.find(b"\r", start)
            if cr < 0 or (0 <= lf < cr):
                if lf < 0:
                    break
                lines.append(buffer[start:lf])
                start = lf + 1
                continue
            if cr == size - 1:
                break  # maybe half of a CRLF: wait for the next byte
            lines.append(buffer[start:cr])
            start = cr + 2 if buffer[cr + 1: cr + 2] == b"\n" else cr + 1
        self._buffer = buffer[start:]
        return lines

    def close(self) -> list[SSEEvent]:
        """End of stream. An event without its closing blank line is discarded, as the spec says
        ("if the file ends in the middle of an event ... the incomplete event is not dispatched"):
        a cut upstream must not pass half an event off as a whole one."""
        self._buffer = b""
        self._data = []
        self._event = ""
        self.idle = True
        return []



def encode_event(event_type: str, payload: dict[str, Any]) -> bytes:
    """One Responses SSE event: `event: <type>` then `data: <json>` (docs/responses.md "Event order").

    A lone surrogate (an upstream may send `"\\ud800"`, which json.loads accepts) cannot be UTF-8;
    it only ever sits inside a JSON string here, and is written as the JSON escape `\\ud800` it
    came as (`wirejson.dumps`), so the client still gets valid UTF-8 and the same string.
    """
    return b"event: %b\ndata: %b\n\n" % (event_type.encode(), wirejson.dumps(payload))

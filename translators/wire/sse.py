"""text/event-stream framing, both ways (WHATWG HTML §9.2 "Server-sent events").

The decoder works on bytes and only decodes whole lines, so a multi-byte UTF-8 character split
across two network chunks is never cut. Lines end in CRLF, LF or CR; a CR at the very end of the
buffer waits for the next chunk, since it may be the first half of a CRLF.
"""

from __future__ import annotations

import re
import secrets
from typing import Any, NamedTuple

import orjson

from translators.core.errors import UpstreamProtocolError
from translators.wire import wirejson


class SSEEvent(NamedTuple):
    event: str
    data: str


COMMENT = ""
"""The `event` of a comment line (`: ping`, `: keep-alive`), its text the `data`, from a decoder
asked for comments: a dispatched event is never named "" (unnamed, it is `message`)."""


_ONE_EVENT = re.compile(rb"(?:event: ([^\r\n]*+)\r?\n)?data: ([^\r\n]*+)\r?\n\r?\n")
"""A chunk that is exactly one event (`event:` and `data:` lines, LF or CRLF line ends); possessive,
so a chunk that is not one fails at once instead of backtracking over its data."""


MAX_EVENT_BYTES = 16 * 1024 * 1024
"""One upstream event's bound (docs/design.md "Limits"): the largest real events, a whole tool
input of an apply_patch in one delta, are a few MB; past this the stream ends with
`upstream_event_too_large` instead of the proxy holding an unbounded event."""


class EventTooLarge(UpstreamProtocolError):
    code = "upstream_event_too_large"


class SSEDecoder:
    """Bytes in any chunking -> whole events. One pass over the lines of each chunk, without a
    call per line: on the proxy this runs once per upstream event, with cold caches (bench/).

    Linear in the bytes fed, whatever the chunking: a line still incomplete is kept as a list
    of its pieces, joined once when its end arrives, and only the new bytes are searched for it."""

    __slots__ = ("_comments", "_data", "_error", "_event", "_held", "_held_size", "_max", "_size", "idle")

    def __init__(self, max_event: int = MAX_EVENT_BYTES, *, comments: bool = False) -> None:
        self._comments = comments
        """Comment lines come out too, in their place among the events (`COMMENT`): an upstream's
        keep-alive, which the spec has the client ignore and a gateway may pass on."""
        self._held: list[bytes] = []
        """The incomplete line: its pieces, in order (a CR at its end may be half a CRLF)."""
        self._held_size = 0
        self._event = ""
        self._data: list[str] = []
        self._size = 0
        """Bytes of the current event's complete lines."""
        self._max = max_event
        self._error: EventTooLarge | None = None
        self.idle = True
        """True between events: nothing held, so the next chunk starts a new event (an attribute,
        not a property: it is read once per upstream event)."""

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        if self.idle:
            whole = _ONE_EVENT.fullmatch(chunk)
            if whole is not None and len(chunk) <= self._max:
                # the usual chunk, one upstream write: exactly one whole event; the same event
                # the line loop below makes of it, in one C call
                name, data = whole.groups()
                return [SSEEvent(name.decode("utf-8", "replace") if name else "message",
                                 data.decode("utf-8", "replace"))]
        if self._max < 0:  # over the bound before: the stream is over, the rest is dropped
            return self._raise_once()
        held = self._held
        if held and b"\n" not in chunk and b"\r" not in chunk and not held[-1].endswith(b"\r"):
            # more of a long line: nothing to split until its end arrives
            held.append(chunk)
            self._held_size += len(chunk)
            self._check([])
            return []
        if held and not held[-1].endswith(b"\r") and b"\r" not in chunk:
            # the held line ends in this chunk (held pieces hold no CR but a last one): its
            # pieces are joined once, with the chunk's first line, and nothing else is copied
            lines = chunk.split(b"\n")
            lines[0] = b"".join((*held, lines[0]))
            rest = lines.pop()
        else:
            buffer = b"".join((*held, chunk)) if held else chunk
            if b"\r" in buffer:
                lines, rest = _split_with_cr(buffer)
            else:  # the last piece is what follows the last line end: the incomplete rest
                lines = buffer.split(b"\n")
                rest = lines.pop()
        held.clear()
        if rest:
            held.append(rest)
        self._held_size = len(rest)
        events: list[SSEEvent] = []
        data, event, size = self._data, self._event, self._size
        for raw in lines:
            if not raw:  # a blank line dispatches the event
                if data:
                    if size > self._max:
                        self._data, self._event = data, event
                        self._size = size
                        return self._check(events)
                    events.append(SSEEvent(event or "message", "\n".join(data)))
                    data = []
                event = ""
                size = 0
            elif raw.startswith(b"data: "):
                # a long line is decoded in place, not copied first
                data.append(raw[6:].decode("utf-8", "replace") if len(raw) < _LONG
                            else str(memoryview(raw)[6:], "utf-8", "replace"))
                size += len(raw)
            elif raw.startswith(b"event: "):
                event = raw[7:].decode("utf-8", "replace")
            elif raw[0] != 0x3A:  # not a `:` comment: a field written without the space, or id/retry
                field, sep, value = raw.decode("utf-8", "replace").partition(":")
                if sep and value.startswith(" "):
                    value = value[1:]
                if field == "data":
                    data.append(value)
                    size += len(raw)
                elif field == "event":
                    event = value
            elif self._comments:
                events.append(SSEEvent(COMMENT, raw[1:].decode("utf-8", "replace").strip()))
        self._data, self._event, self._size = data, event, size
        self.idle = not (held or data or event)
        return self._check(events)

    def _check(self, events: list[SSEEvent]) -> list[SSEEvent]:
        """Past the bound, the event and everything after it are dropped; the error is raised
        now, or, when whole events came before it in the same chunk, at the next call, so those
        still reach the client."""
        if self._size + self._held_size <= self._max:
            return events
        self._error = EventTooLarge(
            f"the upstream sent an event larger than {self._max} bytes; the gateway ends the stream "
            "rather than hold it")
        self._max = -1
        self._held, self._held_size, self._data, self._size, self._event = [], 0, [], 0, ""
        self.idle = False
        return events if events else self._raise_once()

    def _raise_once(self) -> list[SSEEvent]:
        error, self._error = self._error, None
        if error is not None:
            raise error
        return []

    def close(self) -> list[SSEEvent]:
        """End of stream. An event without its closing blank line is discarded, as the spec says
        ("if the file ends in the middle of an event ... the incomplete event is not dispatched"):
        a cut upstream must not pass half an event off as a whole one."""
        self._held = []
        self._held_size = 0
        self._data = []
        self._size = 0
        self._event = ""
        if self._max < 0:
            return self._raise_once()
        self.idle = True
        return []


def _split_with_cr(buffer: bytes) -> tuple[list[bytes], bytes]:
    """Lines ended by CRLF, LF or CR, and the incomplete rest (a CR at the very end waits: it
    may be the first half of a CRLF)."""
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
    return lines, buffer[start:]


_LONG = 64 * 1024
"""A string or line this long takes the paths that copy it least."""


class LongStrings:
    """The JSON of long strings, written once and spliced into every event that repeats them.

    A Responses answer repeats an item's whole text in four done events after its deltas
    (docs/responses.md "Event order"): for a 16 MB text written in one delta, five writes of
    16 MB inside one stream callable, on the proxy's event loop. The same string object is in
    each payload, so its JSON is kept by identity. The bytes are `encode_event`'s: orjson writes
    each string on its own, so the JSON of a payload is that of its parts."""

    __slots__ = ("_known", "_placeholder", "_written")

    def __init__(self) -> None:
        self._known: dict[int, tuple[str, bytes]] = {}
        # a stand-in no upstream can write: a NUL (escaped in JSON) and a random nonce
        self._placeholder = f"\x00{secrets.token_hex(12)}\x00"
        self._written = wirejson.dumps(self._placeholder)

    def json(self, text: str) -> bytes | None:
        """The JSON string of `text`; None when orjson refuses it (a lone surrogate)."""
        known = self._known.get(id(text))
        if known is not None and known[0] is text:
            return known[1]
        try:
            written = orjson.dumps(text)
        except TypeError:
            return None
        self._known[id(text)] = (text, written)  # the string is held, so its id stays its own
        return written

    def encode_event(self, event_type: str, payload: dict[str, Any]) -> bytes:
        return b"".join(self.event_parts(event_type, payload))

    def event_parts(self, event_type: str, payload: dict[str, Any]) -> list[bytes]:
        """`encode_event`'s bytes in pieces, the long strings' JSON among them as they are, so
        that a caller joining all its events copies them once."""
        found: list[bytes] = []
        try:
            stripped = self._strip(payload, found)
        except _Unwritable:
            return [encode_event(event_type, payload)]
        if not found:
            return [encode_event(event_type, payload)]
        pieces = wirejson.dumps(stripped).split(self._written)
        out = [b"event: %b\ndata: %b" % (event_type.encode(), pieces[0])]
        for written, piece in zip(found, pieces[1:], strict=True):
            out += (written, piece)
        out.append(b"\n\n")
        return out

    def _strip(self, value: Any, found: list[bytes]) -> Any:
        """`value` with each long string replaced by the placeholder, its JSON added to `found`
        in the order a writer meets them (dicts in insertion order, lists in order)."""
        if type(value) is str:
            if len(value) < _LONG:
                return value
            written = self.json(value)
            if written is None:
                raise _Unwritable
            found.append(written)
            return self._placeholder
        if type(value) is dict:
            return {key: self._strip(item, found) for key, item in value.items()}
        if type(value) is list:
            return [self._strip(item, found) for item in value]
        return value


class _Unwritable(Exception):
    """A long string orjson refuses: the whole payload is written the usual way."""


def encode_event(event_type: str, payload: dict[str, Any]) -> bytes:
    """One Responses SSE event: `event: <type>` then `data: <json>` (docs/responses.md "Event order").

    A lone surrogate (an upstream may send `"\\ud800"`, which json.loads accepts) cannot be UTF-8;
    it only ever sits inside a JSON string here, and is written as the JSON escape `\\ud800` it
    came as (`wirejson.dumps`), so the client still gets valid UTF-8 and the same string.
    """
    return b"event: %b\ndata: %b\n\n" % (event_type.encode(), wirejson.dumps(payload))

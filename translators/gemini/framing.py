"""The two ways `streamGenerateContent` frames its chunks (docs/gemini.md "Endpoints and auth"):

- with `?alt=sse`: `data: {GenerateContentResponse}` events, no event names, no `[DONE]`;
- without it: one JSON array written element by element (`[{...}\\n,\\n{...}\\n]`).

The framing is told by the first non-space byte: `[` is the array, `{` a bare JSON object (an
error body, or a whole answer sent where a stream was expected), anything else SSE. Both
framings hand out whole payloads only, found by scanning bytes: every structural character is
ASCII and never a UTF-8 continuation byte, so a multi-byte character split across network
chunks is never cut, and the output does not depend on where the chunks break.
"""

from __future__ import annotations

import re
from typing import Protocol

from translators.core.errors import UpstreamProtocolError
from translators.wire.sse import MAX_EVENT_BYTES, EventTooLarge, SSEDecoder

_BOM = b"\xef\xbb\xbf"
_WHITESPACE = b" \t\r\n"
_OUTSIDE = re.compile(rb'["\[\]{}]')
_INSIDE = re.compile(rb'["\\]')


class Framing(Protocol):
    def feed(self, data: bytes) -> list[str]: ...

    def close(self) -> tuple[list[str], bool]:
        """(last payloads, whether the framing ended cleanly)."""
        ...


class SSEFraming:
    __slots__ = ("_sse",)

    def __init__(self) -> None:
        self._sse = SSEDecoder()

    def feed(self, data: bytes) -> list[str]:
        return [e.data for e in self._sse.feed(data) if e.data.strip() != "[DONE]"]

    def close(self) -> tuple[list[str], bool]:
        return [e.data for e in self._sse.close() if e.data.strip() != "[DONE]"], True


class JsonSequence:
    """Top-level JSON values out of `[v, v, ...]` (array=True) or `v v ...` (array=False)."""

    __slots__ = ("_array", "_buf", "_depth", "_error", "_in_string", "_max", "_pos", "_start", "_state")

    def __init__(self, array: bool, max_value: int = MAX_EVENT_BYTES) -> None:
        self._max = max_value
        self._error: EventTooLarge | None = None
        self._array = array
        self._buf = bytearray()
        self._pos = 0
        self._start = 0
        self._depth = 0
        self._in_string = False
        # open: before `[`; first: after `[`; value: inside one; after: after one; end: after `]`
        self._state = "open" if array else "after"

    def feed(self, data: bytes) -> list[str]:
        if self._max < 0:  # over the bound before: the stream is over, the rest is dropped
            return self._raise_once()
        self._buf += data
        out: list[str] = []
        while self._pos < len(self._buf):
            if self._state == "value":
                if not self._scan_value(out):
                    break
                continue
            byte = self._buf[self._pos:self._pos + 1]
            if byte in _WHITESPACE:
                self._pos += 1
                continue
            self._punctuation(byte)
        keep = self._start if self._state == "value" else self._pos
        del self._buf[:keep]
        self._pos -= keep
        self._start = 0
        if len(self._buf) > self._max:
            # one value past the bound: raised now, or at the next call when whole values came
            # before it in this chunk (they still reach the client)
            self._error = EventTooLarge(f"Gemini sent a chunk larger than {self._max} bytes; the gateway "
                                        "ends the stream rather than hold it")
            self._max = -1
            self._buf = bytearray()
            return out if out else self._raise_once()
        return out

    def _raise_once(self) -> list[str]:
        error, self._error = self._error, None
        if error is not None:
            raise error
        return []

    def close(self) -> tuple[list[str], bool]:
        if self._max < 0:
            return self._raise_once(), True
        clean = self._state == ("end" if self._array else "after")
        return [], clean

    def _punctuation(self, byte: bytes) -> None:
        state = self._state
        if state == "open" and byte == b"[":
            self._state = "first"
        elif state in ("first", "comma") and byte in b"{[":
            self._begin_value()
        elif (state == "first" or (state == "after" and self._array)) and byte == b"]":
            self._state = "end"
        elif state == "after" and self._array and byte == b",":
            self._state = "comma"
        elif state == "after" and not self._array and byte == b"{":
            self._begin_value()
        else:
            raise UpstreamProtocolError(
                f"Gemini's JSON stream has {byte.decode('latin-1')!r} where the framing allows none")
        if self._state != "value":
            self._pos += 1

    def _begin_value(self) -> None:
        self._state = "value"
        self._start = self._pos
        self._depth = 0

    def _scan_value(self, out: list[str]) -> bool:
        """Advance through the current value; True once it is complete and handed out."""
        buf = self._buf
        while True:
            if self._in_string:
                match = _INSIDE.search(buf, self._pos)
                if match is None:
                    self._pos = len(buf)
                    return False
                if match.group() == b"\\":
                    if match.end() >= len(buf):
                        self._pos = match.start()  # the escaped byte is still to come
                        return False
                    self._pos = match.end() + 1
                    continue
                self._in_string = False
                self._pos = match.end()
                continue
            match = _OUTSIDE.search(buf, self._pos)
            if match is None:
                self._pos = len(buf)
                return False
            self._pos = match.end()
            char = match.group()
            if char == b'"':
                self._in_string = True
            elif char in b"{[":
                self._depth += 1
            else:
                self._depth -= 1
                if self._depth == 0:
                    out.append(self._text(bytes(buf[self._start:self._pos])))
                    self._state = "after"
                    return True

    @staticmethod
    def _text(raw: bytes) -> str:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise UpstreamProtocolError("Gemini's JSON stream is not UTF-8") from None


def strip_bom(head: bytes) -> bytes | None:
    """`head` without a leading UTF-8 byte-order mark; None while it may still be one."""
    if len(head) < len(_BOM) and _BOM.startswith(head):
        return None
    return head.removeprefix(_BOM)


def detect(body: bytes) -> Framing | None:
    """The framing that `body` (the bytes so far, BOM removed) begins, or None while it is only
    whitespace."""
    body = body.lstrip(_WHITESPACE)
    if not body:
        return None
    if body[:1] == b"[":
        return JsonSequence(array=True)
    if body[:1] == b"{":
        return JsonSequence(array=False)
    return SSEFraming()

"""`application/vnd.amazon.eventstream` framing, read with botocore's own decoder.

Each message is `total_length:u32 | headers_length:u32 | prelude_crc:u32 | headers | payload |
message_crc:u32` (docs/bedrock.md "Event-stream framing"). botocore's `EventStreamBuffer` holds partial frames
across `add_data` calls and checks both CRCs, so this module never parses bytes itself: it only
counts what botocore consumed (to tell a clean end from a frame cut in half) and turns botocore's
errors into this package's `UpstreamProtocolError`.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from functools import lru_cache
from typing import NamedTuple

from botocore.eventstream import EventStreamBuffer, EventStreamHeaderParser, ParserError

from translators.core.errors import UpstreamProtocolError
from translators.wire.sse import MAX_EVENT_BYTES

# A frame is at least prelude (12 bytes) + message CRC (4 bytes); a smaller declared length
# would make the buffer consume nothing and loop on the same bytes.
_MIN_FRAME = 16
_PRELUDE = 12


class Frame(NamedTuple):
    headers: Mapping[str, object]
    """Shared between frames with the same header bytes: read it, never change it."""
    payload: bytes


@lru_cache(maxsize=64)
def _headers(raw: bytes) -> Mapping[str, object]:
    """botocore's parse of one header block. A stream repeats a handful of blocks (`:event-type`,
    `:content-type`, `:message-type`; only the event type varies), and parsing them was most of the
    framing cost, so equal bytes are parsed once. The message CRC that botocore checks before the
    headers covers these bytes, so equal bytes are the same headers. Errors are not cached."""
    return EventStreamHeaderParser().parse(raw)


class _Buffer(EventStreamBuffer):
    """botocore's buffer, its header blocks parsed through `_headers`. `_parse_headers`, `_data`
    and `_prelude` are botocore internals (no public hook parses headers): botocore is pinned in
    `pyproject.toml` and `tests/translators/bedrock/test_framing.py` fails, naming them, if they
    change. Were the hook renamed, frames would still decode, only with a parse per frame (the
    recorded streams then take 1.6 times as long)."""

    def _parse_headers(self) -> Mapping[str, object]:
        return _headers(self._data[_PRELUDE:self._prelude.headers_end])


class FrameReader:
    """Linear in the bytes fed, whatever the chunking: botocore's buffer copies everything it
    holds on each `add_data`, so the pieces of a frame are held here as a list and handed over
    once the whole frame (its length is in its first four bytes) is in."""

    __slots__ = ("_buffer", "_consumed", "_fed", "_held", "_held_size", "_max", "_need")

    def __init__(self, max_frame: int = MAX_EVENT_BYTES) -> None:
        self._buffer = _Buffer()
        self._fed = 0
        self._consumed = 0
        self._held: list[bytes] = []
        self._held_size = 0
        self._need = 1
        """Held bytes that make the next frame whole (or at least its length readable)."""
        self._max = max_frame

    @property
    def pending(self) -> int:
        """Bytes received that are not yet part of a whole frame."""
        return self._fed - self._consumed

    def feed(self, data: bytes) -> list[Frame]:
        """Every frame completed by `data`. Raises `UpstreamProtocolError` on a bad frame; the
        frames completed before it are given by `FrameError.frames`."""
        self._fed += len(data)
        if self._held or len(data) < self._need:
            self._held.append(data)
            self._held_size += len(data)
            if self._held_size < self._need:
                return []
            data = b"".join(self._held)
            self._held.clear()
            self._held_size = 0
        buffer = self._buffer
        buffer.add_data(data)
        frames: list[Frame] = []
        try:
            # botocore says "no whole frame yet" by raising StopIteration; when every byte fed
            # is in a frame already (the usual end of a chunk), it is not asked
            while self._fed - self._consumed >= _PRELUDE:
                message = next(buffer, None)
                if message is None:
                    break
                length = message.prelude.total_length
                if length < _MIN_FRAME:
                    raise UpstreamProtocolError(f"Bedrock event-stream frame declares {length} bytes")
                self._consumed += length
                frames.append(Frame(message.headers, message.payload))
        except UpstreamProtocolError as exc:
            raise FrameError(exc.message, frames) from None
        except (ParserError, KeyError, IndexError, struct.error, UnicodeDecodeError) as exc:
            # ChecksumMismatch, InvalidHeadersLength, DuplicateHeader...; KeyError is an unknown
            # header type, struct/Unicode errors come from a header cut short inside a valid CRC
            raise FrameError(f"Bedrock sent a bad event-stream frame: {type(exc).__name__}: {exc}",
                             frames) from None
        self._wait_for_next(frames)
        return frames

    def _wait_for_next(self, frames: list[Frame]) -> None:
        pending = self._fed - self._consumed
        if pending < _PRELUDE:
            self._need = _PRELUDE - pending
            return
        # botocore has checked the prelude's CRC by now (it reads one as soon as 12 bytes are in)
        length = int.from_bytes(self._buffer._data[:4], "big")
        if length > self._max:
            error = FrameError(f"the upstream sent an event larger than {self._max} bytes; the gateway "
                               "ends the stream rather than hold it", frames)
            error.code = "upstream_event_too_large"
            raise error
        self._need = max(1, length - pending)


class FrameError(UpstreamProtocolError):
    """A frame that botocore refused; `frames` are the good ones decoded before it in the same
    call, so the caller can still act on them (output must not depend on chunk boundaries)."""

    def __init__(self, message: str, frames: list[Frame]) -> None:
        super().__init__(message)
        self.frames = frames

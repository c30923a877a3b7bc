"""A chunked answer body (RFC 9112 7.1) decoded in one pass per read (docs/pools.md "The client").

h11 reads a chunked body as one `Data` event per chunk, each through its state machine: ~6.6 µs a
chunk, and a model's stream is one chunk per event (docs/benchmarks.md "Where a paced turn's CPU
goes"). The client (addon/upstream/client.py) lets h11 read the answer's head, then decodes a
chunked body here: what one read brings, every chunk's data in it joined, for ~1 µs a chunk.
It reads what h11 reads (h11 `_readers.ChunkedReader`, `_abnf.chunk_header`):

    chunked-body = *( chunk-size [ ";" ext ] OWS CRLF chunk-data CRLF )
                   "0" [ ";" ext ] OWS CRLF *( trailer-line CRLF ) CRLF

a chunk size of at most 20 hex digits, extensions and trailer lines read and dropped (the
gateway passes no trailer on), a trailer line ending in a bare LF accepted as h11 accepts it.
Sans-I/O: bytes in, body bytes out; `ChunkedError` for what is not a chunked body, and for a
size line or trailer section longer than `max_line` (the bound on an incomplete event h11 keeps).
`is_chunked` and `keeps_alive` read, from an answer's head, what h11 would: whether its body is
chunked, and whether the connection goes on after it.
"""

from __future__ import annotations

import re

import h11

_SIZE = re.compile(rb"([0-9A-Fa-f]{1,20})(?:;.*)?[ \t]*")
"""A chunk's size line without its CRLF (h11's `chunk_header`: its extension `;.*` takes all)."""
_FIELD = re.compile(rb"[-!#$%&'*+.^_`|~0-9a-zA-Z]+:[ \t]*(?:[^\x00\s]+(?:[ \t]+[^\x00\s]+)*)?[ \t]*")
"""A trailer line (h11's `header_field`: token ":" OWS field-value OWS)."""
_FOLD = re.compile(rb"[ \t]+")
"""A line that continues the one before (obs-fold, which h11 accepts after a first line)."""


class ChunkedError(Exception):
    """The bytes are not a chunked body (or one past the bounds)."""


class Chunked:
    """`feed(data)` -> the body bytes `data` completes; `done` once the last chunk and the trailer
    section were read, `rest` then the bytes that came after them (none from a server that waits
    for the next request)."""

    __slots__ = ("_buffer", "_crlf", "_left", "_lines", "_trailer", "done", "max_line", "rest")

    def __init__(self, max_line: int) -> None:
        self.max_line = max_line
        self._buffer = b""
        self._left = 0
        """Bytes of the current chunk's data still to come."""
        self._crlf = 0
        """Bytes of the CRLF after a chunk's data still to come (2, 1 or 0)."""
        self._trailer: int | None = None
        """Bytes of the trailer section read so far, once the last chunk came."""
        self._lines = 0
        """Trailer lines read."""
        self.done = False
        self.rest = b""

    def feed(self, data: bytes | bytearray) -> bytes:
        if self.done:
            self.rest += data
            return b""
        buffer = self._buffer + data if self._buffer else bytes(data)
        out: list[bytes] = []
        at, end = 0, len(buffer)
        while at < end:
            if self._left:
                take = min(self._left, end - at)
                out.append(buffer[at:at + take])
                at += take
                self._left -= take
                if not self._left:
                    self._crlf = 2
            elif self._crlf:
                got = buffer[at:at + self._crlf]
                if got != b"\r\n"[2 - self._crlf:2 - self._crlf + len(got)]:
                    raise ChunkedError(f"malformed chunk footer: {got!r} (expected b'\\r\\n')")
                at += len(got)
                self._crlf -= len(got)
            elif self._trailer is not None:
                after = self._trailer_line(buffer, at, end)
                if after < 0:
                    break  # the incomplete line stays in the buffer
                at = after
                if self.done:
                    self.rest = bytes(buffer[at:end])
                    at = end
                    break
            else:
                line_end = buffer.find(b"\r\n", at)
                if line_end < 0:
                    if end - at > self.max_line:
                        raise ChunkedError(f"a chunk size line passed {self.max_line} bytes")
                    break
                size = _SIZE.fullmatch(buffer, at, line_end)
                if size is None:
                    raise ChunkedError(f"illegal chunk header: {buffer[at:line_end + 2][:100]!r}")
                at = line_end + 2
                left = int(size[1], 16)
                if not left:
                    self._trailer = 0
                elif at + left + 2 <= end:  # the whole chunk is here (a stream's usual case)
                    out.append(buffer[at:at + left])
                    at += left
                    if buffer[at:at + 2] != b"\r\n":
                        footer = buffer[at:at + 2]
                        raise ChunkedError(f"malformed chunk footer: {footer!r} (expected b'\\r\\n')")
                    at += 2
                else:
                    self._left = left
        self._buffer = buffer = buffer[at:] if at else buffer
        if self._trailer is not None and len(buffer) + self._trailer > self.max_line:
            raise ChunkedError(f"the trailer section passed {self.max_line} bytes")
        return out[0] if len(out) == 1 else b"".join(out)

    def _trailer_line(self, buffer: bytes, at: int, end: int) -> int:
        """One line of the trailer section read: where the next begins; -1 while it is incomplete
        (kept in the buffer). An empty line ends the body."""
        line_end = buffer.find(b"\n", at, end)
        if line_end < 0:
            return -1
        line = buffer[at:line_end]
        if line.endswith(b"\r"):
            line = line[:-1]
        self._trailer = (self._trailer or 0) + line_end + 1 - at
        if self._trailer > self.max_line:
            raise ChunkedError(f"the trailer section passed {self.max_line} bytes")
        if not line:
            self.done = True
        elif not (_FIELD.fullmatch(line) or (self._lines and _FOLD.match(line))):
            raise ChunkedError(f"illegal trailer line: {line[:100]!r}")
        self._lines += 1
        return line_end + 1


def frame(data: bytes) -> bytes:
    """`data` as one chunk of a chunked body: how the loopback server writes a piece of a stream
    to mitmproxy, and how mitmproxy's HTTP/1 server writes it on to the client (so the body relay,
    addon/patches/body_relay.py, writes these very bytes to the client)."""
    return b"%x\r\n%b\r\n" % (len(data), data)


def is_chunked(head: h11.Response, method: str) -> bool:
    """The answer has a chunked body (h11's `_body_framing`: none for HEAD, 204, 304 or a CONNECT's
    2xx; h11 refuses any transfer-encoding but chunked)."""
    if method == "HEAD" or head.status_code in (204, 304) or (method == "CONNECT" and head.status_code < 300):
        return False
    return any(name == b"transfer-encoding" for name, _ in head.headers)


def keeps_alive(head: h11.Response) -> bool:
    """The server keeps the connection after this answer (h11's `_keep_alive`: HTTP/1.1 without
    `connection: close`; the gateway's request never asks to close)."""
    if head.http_version < b"1.1":
        return False
    return not any(name == b"connection" and b"close" in [t.strip().lower() for t in value.split(b",")]
                   for name, value in head.headers)

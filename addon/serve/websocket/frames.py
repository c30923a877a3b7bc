"""The frames the gateway writes on a socket it serves (RFC 6455 5.2): a server's frames are never
masked and the gateway sends each message in one frame, so a frame is its header and the payload.
No extension is negotiated (docs/websocket.md "Limits": `permessage-deflate` declined)."""

from __future__ import annotations

import struct

PING = b"\x89\x00"
"""A ping without payload."""


def _frame(opcode: int, payload: bytes) -> bytes:
    size = len(payload)
    if size < 126:
        head = bytes((0x80 | opcode, size))
    elif size < 1 << 16:
        head = struct.pack("!BBH", 0x80 | opcode, 126, size)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 127, size)
    return head + payload


def text(payload: bytes) -> bytes:
    """One text frame; `payload` is UTF-8 (the gateway's JSON)."""
    return _frame(0x1, payload)


def close(code: int, reason: str) -> bytes:
    """A close frame with its status code and reason (at most 123 bytes of it, RFC 6455 5.5)."""
    return _frame(0x8, struct.pack("!H", code) + reason.encode()[:123])

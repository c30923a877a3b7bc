"""What ends a client's stream when the gateway itself fails inside it (docs/design.md "Errors").

The stream translator never raises, but the proxy's stream callable around it can still break
(addon/serve/streaming.py): it then writes one event after what the client already got, unless that
already holds a terminal event. Each client dialect brings its writer (a `StreamError`) and names
its terminal events (`ClientDialect.stream_error`, `stream_terminals`, in its own folder); this
module holds the writer's signature and the scans of written SSE both need.
"""

from __future__ import annotations

from typing import Protocol

from translators.core.ids import IdFactory


class StreamError(Protocol):
    def __call__(self, sent: bytes, message: str, *, also_sent: int, now: float,
                 new_id: IdFactory) -> bytes:
        """`sent`: the client's stream so far (as kept); `also_sent`: events it got that are not
        in `sent` (the kept copy is bounded); `now`: unix seconds; -> the one event that ends it."""
        ...


def events_in(out: bytes | bytearray) -> int:
    """The `event:` lines of written SSE: one C scan (a multiline regular expression tries
    every position of a 16 MB event, a second or more on the event loop)."""
    return out.count(b"\nevent: ") + out.startswith(b"event: ")


def has_terminal(out: bytes | bytearray, terminals: tuple[str, ...]) -> bool:
    """Whether written SSE holds the `event:` line of one of `terminals`."""
    for name in terminals:
        line = b"event: " + name.encode()
        at = out.find(line)
        while at >= 0:
            end = at + len(line)
            if (at == 0 or out[at - 1] == 0x0A) and (end == len(out) or out[end] == 0x0A):
                return True
            at = out.find(line, end)
    return False

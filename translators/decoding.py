"""The loop every stream decoder runs over the whole upstream events of one chunk."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from translators.errors import UpstreamProtocolError
from translators.ir.events import Event


def each[T](items: Iterable[T], handle: Callable[[T, list[Event]], None]) -> list[Event]:
    """Decode every whole upstream event in order. When one is bad, the good ones before it in
    the same chunk still reach the client (they travel on the error), so the output does not
    depend on where the network happened to split the stream."""
    out: list[Event] = []
    try:
        for item in items:
            handle(item, out)
    except UpstreamProtocolError as exc:
        exc.decoded = out
        raise
    return out

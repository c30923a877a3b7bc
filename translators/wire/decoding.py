"""The one failure convention of every stream decoder, and the loop that applies it.

A decoder never raises for what the upstream sent: bytes that do not follow the dialect end the
decoded stream with one `ev.Failed` (code `upstream_protocol_error` unless the error says
otherwise), after the events decoded before them, and the decoder decodes nothing more. The
stream translator then has one thing to do with it, encode it (docs/design.md "Errors")."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from translators.core.errors import UpstreamProtocolError
from translators.ir import events as ev
from translators.wire.sse import COMMENT, SSEDecoder, SSEEvent


def each[T](read: Callable[[], Iterable[T]], handle: Callable[[T, list[ev.Event]], None]) -> list[ev.Event]:
    """Decode every whole upstream event `read()` gives, in order. When the framing or one event
    is bad, the good ones before it in the same chunk still reach the client, then the failure,
    so the output does not depend on where the network happened to split the stream."""
    out: list[ev.Event] = []
    try:
        for item in read():
            handle(item, out)
    except UpstreamProtocolError as exc:
        out.append(failure(exc))
    return out


def failure(exc: UpstreamProtocolError) -> ev.Failed:
    return ev.Failed(exc.code, exc.message)


def ended(out: list[ev.Event]) -> bool:
    """Whether these events end the stream with a failure (the decoder then stops)."""
    return bool(out) and type(out[-1]) is ev.Failed


class DataEvents:
    """The feeding half of a decoder whose SSE events carry their meaning in `data:` alone (Chat
    chunks, the Responses upstream's typed events): each event's data goes to `_data` in order,
    under the failure convention above; after a failure nothing more is decoded. A comment line
    (`: keep-alive`, OpenRouter's `: OPENROUTER PROCESSING`) is the upstream's keep-alive
    (docs/claude-code.md "Keep-alives")."""

    def __init__(self) -> None:
        self._sse = SSEDecoder(comments=True)
        self._done = False

    def feed(self, data: bytes) -> list[ev.Event]:
        if self._done:
            return []
        out = each(lambda: self._sse.feed(data), self._event)
        self._done = self._done or ended(out)
        return out

    def _event(self, sse: SSEEvent, out: list[ev.Event]) -> None:
        if sse.event == COMMENT:
            if not self._done:
                out.append(ev.KeepAlive())
            return
        self._data(sse.data, out)

    def _data(self, data: str, out: list[ev.Event]) -> None:
        raise NotImplementedError

"""The callable mitmproxy calls per upstream body chunk (docs/mitmproxy.md "Streaming callables").

mitmproxy facts it lives with: return `[]`, never `b""`, when there is nothing to send (an empty
chunk ends an HTTP/1.1 chunked body); an exception inside the callable silently loses the chunk,
so nothing may escape; the end of the body is one more call with `b""`.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from addon.upstream.credentials import scrub_bytes
from addon.work.limits import MAX_KEPT_BYTES, cut_note
from translators import PassthroughTranslator, StreamTranslator, client_dialects
from translators.client_dialects import ClientDialect
from translators.core.ids import random_ids
from translators.wire.stream_failure import events_in, has_terminal

Translator = StreamTranslator | PassthroughTranslator


class StreamHook:
    def __init__(self, translator: Translator, on_end: Callable[[StreamHook], None] | None = None,
                 secrets: tuple[str, ...] = (), max_kept: int = MAX_KEPT_BYTES,
                 speaks: ClientDialect | None = None) -> None:
        self.translator = translator
        self.speaks = speaks or client_dialects.get(client_dialects.DEFAULT)
        """The client's dialect: how its stream ends when this hook fails (`_fail`)."""
        self.secrets = secrets
        """The credentials sent upstream: an event that repeats one (an error message) reaches
        the client without it. Translators emit whole events, so no value spans two chunks."""
        self.upstream = bytearray()
        """The upstream's own bytes, kept for the saved flow and the views (the first `max_kept`)."""
        self.client = bytearray()
        """What the client got (whole chunks, up to `max_kept` bytes)."""
        self.max_kept = max_kept
        self.upstream_dropped = 0
        """Upstream bytes past the bound: passed on, not kept."""
        self.client_dropped = 0
        self._dropped_events = 0
        self._dropped_terminal = False
        self.ended = False
        self.error: str | None = None
        self.first_token_at: float | None = None
        """When the first client bytes carrying content went out (epoch seconds): the turn's time
        to first token (docs/metrics.md), its opening events before content not counted."""
        self._on_end = on_end

    def __call__(self, data: bytes) -> bytes | list[bytes | memoryview]:
        if data:
            if len(self.upstream) + len(data) <= self.max_kept:
                self.upstream += data
            else:
                self._drop_upstream(data)
        try:
            if not data:
                parts = self._end_parts()
            elif self.ended:
                parts = []  # after a failure the client's stream is over; later bytes are only kept
            else:
                parts = self.translator.feed_parts(data)
        except Exception as exc:
            parts = [self._fail(repr(exc))]
        return self._send(parts)

    def _send(self, parts: list[bytes]) -> bytes | list[bytes | memoryview]:
        """The translator's output scrubbed, kept and cut for mitmproxy: the usual few events as
        one chunk, a long text as views of itself (`pieces`)."""
        size = len(parts[0]) if len(parts) == 1 else sum(map(len, parts))
        if not size:
            return []
        if self.first_token_at is None and getattr(self.translator, "content_started", True):
            self.first_token_at = time.time()
        if size <= SEND_PIECE:
            out = scrub_bytes(parts[0] if len(parts) == 1 else b"".join(parts), self.secrets)
            self._keep((out,), len(out))
            return out
        parts = scrub_parts(parts, self.secrets)
        self._keep(parts, sum(map(len, parts)))
        return pieces(parts)

    def _drop_upstream(self, data: bytes) -> None:
        room = max(0, self.max_kept - len(self.upstream))
        self.upstream += data[:room]
        self.upstream_dropped += len(data) - room

    def _keep(self, parts: Sequence[bytes], size: int) -> None:
        """Keep what the client got, up to the bound; past it, only what `_fail` needs to know
        about the dropped chunks (their events and whether one was terminal). A long text is one
        object repeated in several parts (`sse.LongStrings`): each is read once."""
        if len(self.client) + size <= self.max_kept:
            for part in parts:
                self.client += part
            return
        self.client_dropped += size
        repeats = Counter(map(id, parts))
        unique = {id(part): part for part in parts}
        self._dropped_events += sum(events_in(part) * repeats[key] for key, part in unique.items())
        # a translator writes a terminal event only as it finishes: no scan of the other chunks
        finished = getattr(self.translator, "finished", True)
        self._dropped_terminal = self._dropped_terminal or (
            finished and any(has_terminal(part, self.speaks.stream_terminals) for part in unique.values()))

    @property
    def was_cut(self) -> bool:
        return bool(self.upstream_dropped or self.client_dropped)

    def saved_upstream(self) -> bytes:
        """The upstream bytes for the saved flow, with a marker where they were cut."""
        return bytes(self.upstream) + _marker(self.upstream_dropped, self.max_kept)

    def saved_client(self) -> bytes:
        """What the client got, for the saved flow, with a marker where it was cut (an SSE
        comment, so the saved body still reads as a stream)."""
        return bytes(self.client) + _marker(self.client_dropped, self.max_kept)

    def timing(self) -> dict[str, float]:
        """For the flow's record: `first_token_at`, once content went out."""
        return {} if self.first_token_at is None else {"first_token_at": self.first_token_at}

    def cut_note(self) -> str | None:
        if not self.was_cut:
            return None
        return (f"saved copy cut at gateway_max_kept_bytes={self.max_kept}: {self.upstream_dropped} "
                f"upstream and {self.client_dropped} client bytes were streamed but not kept")

    def final_response(self) -> dict[str, Any] | None:
        """The Responses object the client's stream ended with, as the translator holds it: read
        back from the bytes sent, it was a parse of its terminal event on the event loop (a 1 MB
        answer: 10-25 ms), and lost when the saved copy was cut before it. None for a
        translator that keeps none (a passthrough) or that has not finished."""
        if not self.translator.finished:
            return None
        return self.translator.response()

    @property
    def delivered_whole(self) -> bool:
        """The client's answer went out whole: the translator wrote its terminal event and nothing
        broke before (addon/team/accounting.py: such a turn is a success, whoever closes first)."""
        return bool(self.translator.finished) and self.error is None

    def usage_so_far(self) -> dict[str, Any] | None:
        """The usage the upstream reported so far, in the client's shape; None when it reported
        none (or the translator keeps no answer: a passthrough)."""
        try:
            response = self.translator.response()
        except Exception:
            return None
        used = response.get("usage") if isinstance(response, dict) else None
        return used if isinstance(used, dict) else None

    def end(self) -> bytes:
        """End of the upstream body (or the upstream cut it): flush, and guarantee a terminal event."""
        return b"".join(self._end_parts())

    def _end_parts(self) -> list[bytes]:
        if self.ended:
            return []
        self.ended = True
        out = self.translator.close_parts()
        if self._on_end is not None:
            self._on_end(self)
        return out

    def cut(self, reason: str) -> bytes:
        """The upstream connection broke mid-body: what the client still gets before the end."""
        self.error = reason
        try:
            parts = self._end_parts()
        except Exception as exc:
            parts = [self._fail(repr(exc))]
        out = self._send(parts)
        return out if isinstance(out, bytes) else b"".join(out)

    def _fail(self, reason: str) -> bytes:
        """The translator raised: it is not called again, and unless the client already has a
        terminal event it gets one in its own dialect (a Responses client `response.failed`, a
        Messages client an `error` event: `ClientDialect.stream_error`), so it never waits for an
        end that will not come."""
        self.error = reason
        self.ended = True
        if self._dropped_terminal or has_terminal(self.client, self.speaks.stream_terminals):
            return b""
        message = f"gateway error while translating the stream: {reason}"
        return self.speaks.stream_error(bytes(self.client), message, also_sent=self._dropped_events,
                                        now=time.time(), new_id=random_ids())


def _marker(dropped: int, kept: int) -> bytes:
    if not dropped:
        return b""
    return b"\n: %s\n\n" % cut_note(dropped, kept, "streamed").encode()


SEND_PIECE = 1 << 20
"""Output handed to mitmproxy in pieces of at most this many bytes. asyncio queues a chunk
written while the socket is busy as the bytes object it is, and each partial send then copies
what is left of it: 64 MB of done events after a 16 MB text were copied again at every
write-ready turn, 20-40 ms each (docs/design.md "Limits")."""


def scrub_parts(parts: list[bytes], secrets: tuple[str, ...]) -> list[bytes]:
    """`scrub_bytes` of each part, a part repeated by identity (a long text) read once. No secret
    spans two parts: a part ends an event or a JSON string, and no credential holds a quote."""
    if not secrets:
        return parts
    done: dict[int, bytes] = {}
    out = []
    for part in parts:
        clean = done.get(id(part))
        if clean is None:
            clean = done[id(part)] = scrub_bytes(part, secrets)
        out.append(clean)
    return out


def pieces(parts: list[bytes]) -> list[bytes | memoryview]:
    """The chunks mitmproxy sends (a stream callable may return a list, docs/mitmproxy.md
    "Streaming callables"): consecutive small parts joined up to `SEND_PIECE`, a long one as
    views of `SEND_PIECE` bytes, never copied here."""
    out: list[bytes | memoryview] = []
    small: list[bytes] = []
    held = 0
    for part in parts:
        if held + len(part) <= SEND_PIECE:
            small.append(part)
            held += len(part)
            continue
        if small:
            out.append(b"".join(small))
            small, held = [], 0
        if len(part) <= SEND_PIECE:
            small, held = [part], len(part)
            continue
        view = memoryview(part)
        out += [view[at:at + SEND_PIECE] for at in range(0, len(part), SEND_PIECE)]
    if small:
        out.append(small[0] if len(small) == 1 else b"".join(small))
    return out

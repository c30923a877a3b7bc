"""addon/upstream/chunked.py against h11, which it stands in for: every body whole, byte by byte and
at every split point, the same bytes out and the same bodies refused."""

from __future__ import annotations

import h11
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from addon.upstream.chunked import Chunked, ChunkedError

HEAD = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
MAX = 1024


def by_h11(body: bytes) -> tuple[bytes, bool] | None:
    """The body h11 reads from `body` and whether it ended; None when h11 refuses it."""
    connection = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX)
    connection.send(h11.Request(method="GET", target="/", headers=[("host", "x")]))
    connection.send(h11.EndOfMessage())
    connection.receive_data(HEAD + body)
    out = b""
    try:
        while True:
            event = connection.next_event()
            if isinstance(event, h11.Data):
                out += event.data
            elif isinstance(event, h11.EndOfMessage):
                return out, True
            elif event is h11.NEED_DATA:
                return out, False
    except h11.ProtocolError:
        return None


def by_us(pieces: list[bytes]) -> tuple[bytes, bool, bytes] | None:
    decoder = Chunked(MAX)
    out = b""
    try:
        for piece in pieces:
            out += decoder.feed(piece)
    except ChunkedError:
        return None
    return out, decoder.done, decoder.rest


def splits(body: bytes) -> list[list[bytes]]:
    return [[body], [body[i:i + 1] for i in range(len(body))],
            *([body[:at], body[at:]] for at in range(1, len(body)))]


CASES = [
    b"9\r\ndata: 1\n\n\r\n9\r\ndata: 2\n\n\r\n0\r\n\r\n",
    b"A\r\n0123456789\r\n0\r\n\r\n",
    b"a;name=value\r\n0123456789\r\n000\r\n\r\n",
    b"3 \t\r\nabc\r\n0;last\r\n\r\n",
    b"3\r\nabc\r\n0\r\nx-trailer: 1\r\nx-other:  two words \r\n\r\n",
    b"3\r\nabc\r\n0\r\nx-trailer: 1\n\n",
    b"3\r\nabc\r\n0\r\nx-trailer: 1\r\n  folded\r\n\r\n",
    b"3\r\nabc\r\n0\r\n\n",
    b"3\r\nabc\r\n",  # not ended
    b"3\r\nab",  # mid chunk
    b"3\r\nabc\r",  # mid footer
    b"0\r\nx-trailer: 1\r\n",  # mid trailers
    # refused
    b"3\r\nabcX\r\n",
    b"g\r\nabc\r\n",
    b"\r\nabc\r\n",
    b"-3\r\nabc\r\n",
    b"123456789012345678901\r\n",
    b"3\r\nabc\r\n0\r\nnot a header\r\n\r\n",
    b"3\r\nabc\r\n0\r\n folded first\r\n\r\n",
    b"3\r\nabc\r\n0\r\nbad name: 1\r\n\r\n",
    b"1" * (MAX + 10),
]


@pytest.mark.parametrize("body", CASES)
def test_the_body_is_what_h11_reads_at_every_split(body: bytes) -> None:
    expected = by_h11(body)
    for pieces in splits(body):
        got = by_us(pieces)
        if expected is None:
            assert got is None, pieces
        else:
            assert got is not None and got[:2] == expected, pieces


def test_what_comes_after_the_body_is_kept_apart() -> None:
    decoder = Chunked(MAX)
    assert decoder.feed(b"3\r\nabc\r\n0\r\n\r\nHTTP/1.1") == b"abc"
    assert decoder.done and decoder.rest == b"HTTP/1.1"
    assert decoder.feed(b" 200") == b"" and decoder.rest == b"HTTP/1.1 200"


def test_a_trailer_section_past_the_bound_is_refused() -> None:
    decoder = Chunked(64)
    decoder.feed(b"0\r\n")
    with pytest.raises(ChunkedError, match="trailer"):
        for _ in range(10):
            decoder.feed(b"x-t: " + b"a" * 10 + b"\r\n")


chunk = st.binary(min_size=1, max_size=40).map(lambda data: b"%x\r\n%s\r\n" % (len(data), data))


@settings(max_examples=200, deadline=None)
@given(st.lists(chunk, max_size=6), st.booleans(), st.integers(min_value=0, max_value=200))
def test_any_chunked_body_is_read_as_h11_reads_it(chunks: list[bytes], ends: bool, cut: int) -> None:
    body = b"".join(chunks) + (b"0\r\n\r\n" if ends else b"")
    body = body[:cut] if cut < len(body) else body
    expected = by_h11(body)
    for pieces in ([body], [body[:len(body) // 2], body[len(body) // 2:]]):
        got = by_us(pieces)
        assert (got[:2] if got else None) == expected

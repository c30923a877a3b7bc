"""The chunked body reader mitmproxy makes once the trailers patch is installed
(addon/patches/trailers.py): a body's trailer fields are read, checked and dropped; the rest is
h11's reader unchanged. The whole way through mitmproxy: tests/reliability/test_hostile_bodies.py."""

from __future__ import annotations

import h11
import pytest
from h11._receivebuffer import ReceiveBuffer
from mitmproxy.proxy.layers.http import _http1

from addon.patches import trailers


def _events(body: bytes, split: int) -> list[object]:
    """Every event the reader mitmproxy makes gives for `body`, fed in two reads at `split`."""
    trailers.install()
    reader = _http1.make_body_reader(None)
    buf, events = ReceiveBuffer(), []
    for part in (body[:split], body[split:]):
        buf += part
        while (event := reader(buf)) is not None:
            events.append(event)
            if isinstance(event, h11.EndOfMessage):
                return events
    return events


BODY = b"3\r\nabc\r\n4;ext=1\r\ndefg\r\n0\r\nx-checksum: 1\r\nx-other: two\r\n\r\n"


@pytest.mark.parametrize("split", range(len(BODY) + 1))
def test_a_body_with_trailer_fields_ends_without_them(split: int) -> None:
    events = _events(BODY, split)
    assert b"".join(bytes(e.data) for e in events if isinstance(e, h11.Data)) == b"abcdefg"
    assert events[-1] == h11.EndOfMessage()


def test_a_body_without_trailers_reads_as_h11_reads_it() -> None:
    events = _events(b"3\r\nabc\r\n0\r\n\r\n", 5)
    assert [type(e).__name__ for e in events] == ["Data", "Data", "EndOfMessage"]


def test_malformed_trailer_fields_are_still_refused() -> None:
    with pytest.raises(h11.ProtocolError):
        _events(b"3\r\nabc\r\n0\r\nno colon here\r\n\r\n", 0)


def test_lengths_and_bodies_up_to_the_close_are_mitmproxys_own_readers() -> None:
    trailers.install()
    assert type(_http1.make_body_reader(10)).__name__ == "ContentLengthReader"
    assert type(_http1.make_body_reader(-1)).__name__ == "Http10Reader"

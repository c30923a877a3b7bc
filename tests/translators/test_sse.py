"""translators/sse.py: text/event-stream framing (WHATWG HTML §9.2), in any chunking."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from translators.sse import SSEDecoder, SSEEvent, encode_event

SAMPLE = (
    b'event: a\r\ndata: {"t": "\xc3\xa9\xf0\x9f\xa6\x85"}\r\n\r\n'
    b": a comment\n"
    b"event: b\rdata: one\rdata: two\r\r"
    b"data:no-space\n\n"
    b"event: c\ndata: x"
)


def decode_all(chunks: list[bytes]) -> list[SSEEvent]:
    decoder = SSEDecoder()
    out = [e for c in chunks for e in decoder.feed(c)]
    return out + decoder.close()


EXPECTED = [SSEEvent("a", '{"t": "é🦅"}'), SSEEvent("b", "one\ntwo"), SSEEvent("message", "no-space")]
"""The last event of SAMPLE has no closing blank line, so it is never dispatched."""


def test_event_and_data_lines_make_one_event():
    assert decode_all([b"event: ping\ndata: {}\n\n"]) == [SSEEvent("ping", "{}")]


def test_lf_crlf_and_cr_line_endings_comments_and_multi_line_data():
    assert decode_all([SAMPLE]) == EXPECTED


def test_every_two_way_split_gives_the_same_events():
    for at in range(len(SAMPLE) + 1):
        assert decode_all([SAMPLE[:at], SAMPLE[at:]]) == EXPECTED, at


def test_one_byte_at_a_time_gives_the_same_events():
    assert decode_all([SAMPLE[i : i + 1] for i in range(len(SAMPLE))]) == EXPECTED


def test_a_multi_byte_character_split_across_chunks_is_not_mangled():
    data = "data: 🦅é\n\n".encode()
    cut = data.index(b"\xf0") + 2  # inside the 4-byte eagle
    assert decode_all([data[:cut], data[cut:]]) == [SSEEvent("message", "🦅é")]


def test_a_cr_at_the_end_of_a_chunk_waits_for_a_possible_lf():
    decoder = SSEDecoder()
    assert decoder.feed(b"data: x\r") == []
    assert decoder.feed(b"\n\r\n") == [SSEEvent("message", "x")]


def test_the_event_name_does_not_leak_into_the_next_event():
    assert decode_all([b"event: a\ndata: 1\n\ndata: 2\n\n"]) == [SSEEvent("a", "1"), SSEEvent("message", "2")]


def test_an_event_with_no_data_is_not_dispatched():
    assert decode_all([b"event: a\n\nretry: 10\nid: 3\n\n"]) == []


def test_close_discards_an_event_without_its_closing_blank_line():
    # WHATWG §9.2.6: "if the file ends in the middle of an event ... the incomplete event is not dispatched"
    decoder = SSEDecoder()
    assert decoder.feed(b"data: complete\n\ndata: partial\n") == [SSEEvent("message", "complete")]
    assert not decoder.idle
    assert decoder.close() == []
    assert decoder.idle


def test_encode_event_writes_event_and_compact_data_lines():
    assert encode_event("response.created", {"a": "é", "b": [1]}) == (
        'event: response.created\ndata: {"a":"é","b":[1]}\n\n'.encode()
    )


@given(st.lists(st.integers(min_value=0, max_value=len(SAMPLE)), max_size=8))
def test_any_chunking_gives_the_same_events(cuts):
    points = sorted(set(cuts))
    chunks = [SAMPLE[a:b] for a, b in zip([0, *points], [*points, len(SAMPLE)], strict=True)]
    assert decode_all(chunks) == EXPECTED


def test_idle_only_between_events():
    decoder = SSEDecoder()
    assert decoder.idle
    assert decoder.feed(b"data: par") == [] and not decoder.idle
    assert decoder.feed(b"tial\n") == [] and not decoder.idle
    assert decoder.feed(b"\n") == [SSEEvent("message", "partial")] and decoder.idle
    assert decoder.feed(b"event: x\n") == [] and not decoder.idle
    assert decoder.feed(b"data: 1\n\n") == [SSEEvent("x", "1")] and decoder.idle

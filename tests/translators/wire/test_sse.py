"""translators/wire/sse.py: text/event-stream framing (WHATWG HTML §9.2), in any chunking."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.translators.growth import LINEAR_BOUND, growth
from translators.core.errors import UpstreamProtocolError
from translators.wire.sse import COMMENT, LongStrings, SSEDecoder, SSEEvent, encode_event

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


def decode_with_comments(chunks: list[bytes]) -> list[SSEEvent]:
    decoder = SSEDecoder(comments=True)
    out = [e for c in chunks for e in decoder.feed(c)]
    return out + decoder.close()


WITH_COMMENT = [EXPECTED[0], SSEEvent(COMMENT, "a comment"), *EXPECTED[1:]]
"""SAMPLE's comment line in its place, for a decoder asked for comments (an upstream keep-alive)."""


def test_a_decoder_asked_for_comments_gives_each_in_its_place_at_every_split():
    for at in range(len(SAMPLE) + 1):
        assert decode_with_comments([SAMPLE[:at], SAMPLE[at:]]) == WITH_COMMENT, at
    assert decode_with_comments([SAMPLE[i : i + 1] for i in range(len(SAMPLE))]) == WITH_COMMENT


def test_keep_alive_comments_alone_and_inside_an_event() -> None:
    data = b": ping\n\n:\ndata: one\n: keep-alive\ndata: two\n\n"
    assert decode_with_comments([data]) == [SSEEvent(COMMENT, "ping"), SSEEvent(COMMENT, ""),
                                            SSEEvent(COMMENT, "keep-alive"), SSEEvent("message", "one\ntwo")]
    assert decode_all([data]) == [SSEEvent("message", "one\ntwo")]


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


# -- bounds and cost (docs/design.md "Limits") ---------------------------------------------------

def _one_long_event(size: int, piece: int = 512) -> list[bytes]:
    raw = b'event: e\ndata: "' + b"x" * size + b'"\n\n'
    return [raw[i:i + piece] for i in range(0, len(raw), piece)]


def test_one_long_event_costs_time_linear_in_its_size():
    def decode(chunks: list[bytes]) -> None:
        decoder = SSEDecoder()
        for chunk in chunks:
            decoder.feed(chunk)

    assert growth(_one_long_event, decode, 64 * 1024) < LINEAR_BOUND


def test_a_long_event_in_pieces_is_the_same_event():
    (event,) = decode_all(_one_long_event(100_000, piece=333))
    assert event == SSEEvent("e", '"' + "x" * 100_000 + '"')


def test_an_event_past_the_bound_ends_the_stream_once():
    decoder = SSEDecoder(max_event=100)
    assert decoder.feed(b"data: " + b"x" * 60) == []
    with pytest.raises(UpstreamProtocolError) as caught:
        decoder.feed(b"x" * 60)
    assert caught.value.code == "upstream_event_too_large"
    assert decoder.feed(b"\n\ndata: after\n\n") == []  # the stream is over: the rest is dropped
    assert decoder.close() == []


def test_many_lines_of_one_event_count_towards_the_bound():
    decoder = SSEDecoder(max_event=100)
    with pytest.raises(UpstreamProtocolError):
        for _ in range(10):
            decoder.feed(b"data: " + b"y" * 20 + b"\n")


def test_whole_events_before_an_oversized_one_still_arrive():
    decoder = SSEDecoder(max_event=100)
    assert decoder.feed(b"data: small\n\ndata: " + b"z" * 200) == [SSEEvent("message", "small")]
    with pytest.raises(UpstreamProtocolError):
        decoder.feed(b"z")


def test_an_event_at_the_bound_passes():
    decoder = SSEDecoder(max_event=len(b"data: " + b"w" * 50))
    assert decoder.feed(b"data: " + b"w" * 25) == []
    assert decoder.feed(b"w" * 25 + b"\n\n") == [SSEEvent("message", "w" * 50)]


def test_long_strings_written_once_give_the_bytes_of_encode_event() -> None:
    text = "é\"\\\n\x00 😀" * 20_000
    other = "x" * 70_000
    part = {"type": "output_text", "text": text, "annotations": []}
    payloads = [
        {"type": "response.output_text.done", "text": text, "logprobs": [], "sequence_number": 3},
        {"type": "response.completed", "response": {"output": [{"content": [part, part]}, other],
                                                    "usage": None, "note": "short"}},
        {"type": "response.output_text.done", "text": text + "\ud800"},  # orjson refuses it
        {"type": "response.created", "response": {"id": "resp_1"}},
    ]
    strings = LongStrings()
    for payload in payloads:
        assert strings.encode_event(payload["type"], payload) == encode_event(payload["type"], payload)


def test_a_long_line_split_over_many_chunks_is_one_event_whatever_follows_it() -> None:
    line = b"data: " + b"v" * 300_000
    pieces = [line[i:i + 65536] for i in range(0, len(line), 65536)]
    decoder = SSEDecoder()
    events = [e for piece in pieces for e in decoder.feed(piece)]
    events += decoder.feed(b"\n\ndata: next\n")
    events += decoder.feed(b"\n")
    assert events == [SSEEvent("message", "v" * 300_000), SSEEvent("message", "next")]

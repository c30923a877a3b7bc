"""translators/bedrock/framing.py: botocore's decoder behind a chunk-agnostic reader."""

from __future__ import annotations

import inspect
import struct
import zlib

import pytest
from botocore.eventstream import EventStreamBuffer, MessagePrelude

from tests.translators.bedrock.frames import decode, encode_frame, event, fixture
from tests.translators.growth import SAME_COST_BOUND, slower
from translators.bedrock import framing
from translators.bedrock.framing import FrameError, FrameReader
from translators.core.errors import UpstreamProtocolError


def test_test_encoder_writes_frames_botocore_decodes() -> None:
    frame = encode_frame({":message-type": "exception", ":exception-type": "throttlingException"}, b'{"a":1}')
    [(headers, payload)] = decode(frame)
    assert headers == {":message-type": "exception", ":exception-type": "throttlingException"}
    assert payload == {"a": 1}


def test_frames_come_out_whole_whatever_the_chunking() -> None:
    data = fixture("converse_stream_text.eventstream")
    whole = FrameReader().feed(data)
    reader = FrameReader()
    pieces = [frame for i in range(len(data)) for frame in reader.feed(data[i:i + 1])]
    assert pieces == whole
    assert [f.headers[":event-type"] for f in whole][:2] == ["messageStart", "contentBlockDelta"]


def test_pending_counts_the_bytes_of_an_unfinished_frame() -> None:
    data = event("messageStart", {"role": "assistant"}) + event("messageStop", {"stopReason": "end_turn"})
    reader = FrameReader()
    assert len(reader.feed(data[:-5])) == 1
    assert reader.pending == len(data) - 5 - len(event("messageStart", {"role": "assistant"}))
    assert len(reader.feed(data[-5:])) == 1
    assert reader.pending == 0


def test_bad_crc_raises_the_package_error_with_the_frames_before_it() -> None:
    good = event("messageStart", {"role": "assistant"})
    bad = bytearray(event("messageStop", {"stopReason": "end_turn"}))
    bad[-6] ^= 0x01  # a payload byte: the message CRC no longer matches
    with pytest.raises(FrameError) as caught:
        FrameReader().feed(good + bytes(bad))
    assert isinstance(caught.value, UpstreamProtocolError)
    assert "ChecksumMismatch" in caught.value.message
    assert [f.headers[":event-type"] for f in caught.value.frames] == ["messageStart"]


def test_frame_shorter_than_prelude_and_crc_is_refused() -> None:
    # total_length 12 with a valid prelude CRC: botocore accepts it, but it holds no message CRC
    prelude = struct.pack(">II", 12, 0)
    frame = prelude + struct.pack(">I", zlib.crc32(prelude) & 0xFFFFFFFF)
    with pytest.raises(FrameError, match="declares 12 bytes"):
        FrameReader().feed(frame)


def _delta(payload: bytes) -> bytes:
    return encode_frame({":message-type": "event", ":event-type": "contentBlockDelta"}, payload)


def test_one_long_frame_in_pieces_costs_about_what_as_many_small_frames_cost() -> None:
    """The pieces of a frame are handed to botocore (which copies all it holds per call) once
    the whole frame is in (docs/design.md "Limits")."""
    big = _delta(b"b" * 1_600_000)
    pieces = [big[i:i + 256] for i in range(0, len(big), 256)]
    small = [_delta(b"s" * (256 - len(_delta(b"")))) for _ in pieces]

    def feed(chunks: list[bytes]) -> None:
        reader = FrameReader()
        for chunk in chunks:
            reader.feed(chunk)

    assert slower(lambda: feed(pieces), lambda: feed(small)) < SAME_COST_BOUND


def test_a_frame_past_the_bound_is_refused_with_the_frames_before_it() -> None:
    ok, big = _delta(b"{}"), _delta(b"x" * 200)
    with pytest.raises(FrameError) as caught:
        FrameReader(max_frame=100).feed(ok + big[:20])
    assert caught.value.code == "upstream_event_too_large"
    assert [f.payload for f in caught.value.frames] == [b"{}"]


def test_a_long_frame_fed_in_pieces_comes_out_whole() -> None:
    frame = _delta(b"z" * 10_000)
    reader = FrameReader()
    out = [f for i in range(0, len(frame), 333) for f in reader.feed(frame[i:i + 333])]
    assert [f.payload for f in out] == [b"z" * 10_000] and reader.pending == 0


# -- the botocore internals framing.py relies on (botocore is pinned in pyproject.toml) -----------
# Parsing header blocks through the cache halves the framing cost: the three recorded streams take
# 730 µs with it and 1,185 µs with botocore's public EventStreamBuffer alone (bench recordings).


def test_botocore_parses_each_frames_headers_through_the_overridden_hook() -> None:
    frames = event("messageStart", {"role": "assistant"}) + event("contentBlockStop",
                                                                  {"contentBlockIndex": 0})
    framing._headers.cache_clear()
    read = [f.headers[":event-type"] for f in FrameReader().feed(frames)]
    assert read == ["messageStart", "contentBlockStop"]
    assert framing._headers.cache_info().misses == 2, (
        "botocore.eventstream.EventStreamBuffer no longer parses headers through _parse_headers(): "
        "framing._Buffer's cache is bypassed")


def test_botocore_buffer_keeps_the_fields_the_override_reads() -> None:
    buffer = EventStreamBuffer()
    assert isinstance(buffer._data, bytes), "botocore.eventstream.EventStreamBuffer._data is gone"
    assert hasattr(buffer, "_prelude"), "botocore.eventstream.EventStreamBuffer._prelude is gone"
    assert callable(getattr(EventStreamBuffer, "_parse_headers", None)), (
        "botocore.eventstream.EventStreamBuffer._parse_headers is gone")
    assert isinstance(getattr(MessagePrelude, "headers_end", None), property), (
        "botocore.eventstream.MessagePrelude.headers_end is gone")
    assert "self._data[_PRELUDE_LENGTH" in inspect.getsource(EventStreamBuffer._parse_headers), (
        "botocore.eventstream.EventStreamBuffer._parse_headers no longer reads the headers at "
        "_data[12:prelude.headers_end]")

"""addon/serve/bodies.py: request bodies decoded once and within a bound, kept within the kept bound."""

from __future__ import annotations

import gzip
import json
import sys
import tracemalloc
import zlib
from collections.abc import Callable

import brotli
import pytest
from mitmproxy.net import encoding as mitmproxy_encoding

from addon.serve import bodies

if sys.version_info >= (3, 14):
    from compression import zstd
else:
    from backports import zstd

MiB = 1024 * 1024
BODY = json.dumps({"model": "gpt-5.5", "input": [{"type": "message", "role": "user",
                                                  "content": [{"type": "input_text", "text": "héllo"}]}] * 50,
                   "stream": True}, ensure_ascii=False).encode()


def _zstd_zeros(size: int) -> bytes:
    compressor = zstd.ZstdCompressor()
    block = bytes(MiB)
    return b"".join([compressor.compress(block) for _ in range(size // MiB)] + [compressor.flush()])


def _zlib_zeros(size: int, wbits: int) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, wbits)
    block = bytes(MiB)
    return b"".join([compressor.compress(block) for _ in range(size // MiB)] + [compressor.flush()])


BOMBS: dict[str, Callable[[int], bytes]] = {
    "zstd": _zstd_zeros,
    "gzip": lambda size: _zlib_zeros(size, 31),
    "deflate": lambda size: _zlib_zeros(size, 15),
    "br": lambda size: brotli.compress(bytes(size), quality=5),
}


@pytest.mark.parametrize("coding", sorted(BOMBS))
def test_a_bomb_stops_at_the_bound_without_decoding_it_whole(coding: str) -> None:
    bomb = BOMBS[coding](256 * MiB)
    assert len(bomb) < MiB
    tracemalloc.start()
    try:
        with pytest.raises(bodies.TooLarge, match=coding):
            bodies.decoded(bomb, coding, 4 * MiB)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * MiB


@pytest.mark.parametrize("coding", ["zstd", "gzip", "deflate", "br", "identity"])
def test_every_coding_mitmproxy_reads_decodes_to_the_same_bytes(coding: str) -> None:
    encoded = mitmproxy_encoding.encode(BODY, coding)
    assert bodies.decoded(encoded, coding, len(BODY)) == BODY


def test_raw_deflate_and_concatenated_zstd_frames_decode_like_mitmproxy() -> None:
    raw = zlib.compressobj(6, zlib.DEFLATED, -15)
    deflated = raw.compress(BODY) + raw.flush()
    assert bodies.decoded(deflated, "deflate", MiB) == mitmproxy_encoding.decode(deflated, "deflate")
    frames = zstd.compress(BODY[:100]) + zstd.compress(BODY[100:])
    assert bodies.decoded(frames, "zstd", MiB) == BODY


def test_a_list_of_codings_is_undone_last_first() -> None:
    assert bodies.decoded(zstd.compress(gzip.compress(BODY)), "gzip, zstd", MiB) == BODY


def test_a_body_one_byte_past_the_bound_is_too_large_and_at_it_is_not() -> None:
    assert bodies.decoded(zstd.compress(BODY), "zstd", len(BODY)) == BODY
    with pytest.raises(bodies.TooLarge):
        bodies.decoded(zstd.compress(BODY), "zstd", len(BODY) - 1)
    with pytest.raises(bodies.TooLarge, match="as sent"):
        bodies.decoded(BODY, None, len(BODY) - 1)


@pytest.mark.parametrize(("data", "coding"), [(b"not zstd", "zstd"), (zstd.compress(BODY)[:-5], "zstd"),
                                              (b"not gzip", "gzip"), (brotli.compress(BODY)[:-3], "br"),
                                              (BODY, "compress")])
def test_bad_or_cut_data_and_unknown_codings_are_value_errors(data: bytes, coding: str) -> None:
    with pytest.raises(ValueError):
        bodies.decoded(data, coding, MiB)


def test_a_length_past_the_bound_is_refused_before_the_body_is_read() -> None:
    assert "gateway_max_request_bytes" in (bodies.declared_too_large({"content-length": "101"}, 100) or "")
    assert bodies.declared_too_large({"content-length": "100"}, 100) is None
    assert bodies.declared_too_large({}, 100) is None


def test_a_body_within_the_kept_bound_is_kept_whole_in_its_own_encoding() -> None:
    body = '{"model": "gpt-5.5", "input": "é🦅"}'
    assert bodies.kept_text(body.encode(), 1024) == body
    assert bodies.kept_text(body.encode("utf-16"), 1024) == body  # JSON's encodings, whatever the charset


def test_a_body_past_the_kept_bound_is_cut_and_says_how_much_was_not_kept() -> None:
    data = json.dumps({"input": "x" * 5000}).encode()
    kept = bodies.kept_text(data, 1000)
    assert kept.startswith(data[:1000].decode())
    assert f"{len(data) - 1000} more bytes were read but not kept (gateway_max_kept_bytes=1000)" in kept
    assert len(kept) < 1200

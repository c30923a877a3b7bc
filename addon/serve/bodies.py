"""Request bodies read within bounds: decoded once, with a streaming decompressor that stops at
the limit (addon/work/limits.py), and kept for the saved flow within the kept bound.

mitmproxy's own `get_content()` decodes the whole body at once, and keeps its last result in a
module cache (docs/mitmproxy.md "Compressed bodies").
"""

from __future__ import annotations

import sys
import zlib
from typing import Any

import brotli

from addon.work.limits import cut_note
from translators.wire import wirejson

if sys.version_info >= (3, 14):
    from compression import zstd
else:
    from backports import zstd

_STEP = 1024 * 1024
"""Decoded bytes produced per decompressor call."""


class TooLarge(Exception):
    def __init__(self, limit: int, encoding: str | None) -> None:
        self.limit, self.encoding = limit, encoding
        how = f"decoded from {encoding}" if encoding else "as sent"
        super().__init__(f"the request body is larger than {limit} bytes ({how}); the gateway reads "
                         "at most gateway_max_request_bytes")

    def __reduce__(self) -> tuple[type[TooLarge], tuple[int, str | None]]:
        return TooLarge, (self.limit, self.encoding)  # raised in a worker process, it crosses back


def decoded(raw: bytes, encoding: str | None, limit: int) -> bytes:
    """The body under its `Content-Encoding` (a list is undone last first). Raises `TooLarge`
    past `limit`, before producing more than one step beyond it, and `ValueError` for bad data
    or an unknown coding."""
    codings = [c.strip().lower() for c in (encoding or "").split(",") if c.strip()]
    data = raw
    for coding in reversed(codings):
        if len(data) > limit:
            raise TooLarge(limit, encoding)
        decode = _DECODERS.get(coding)
        if decode is None:
            raise ValueError(f"unsupported content-encoding {coding!r}")
        data = decode(data, limit) if data else b""
    if len(data) > limit:
        raise TooLarge(limit, encoding)
    return data


def _zlib(data: bytes, limit: int, wbits: int) -> bytes:
    decompressor = zlib.decompressobj(wbits)
    try:
        out = decompressor.decompress(data, limit + 1)
        if len(out) > limit or decompressor.unconsumed_tail:
            raise TooLarge(limit, "gzip" if wbits == 47 else "deflate")
        out += decompressor.flush()
    except zlib.error as exc:
        raise ValueError(f"bad compressed body: {exc}") from None
    return out


def _gzip(data: bytes, limit: int) -> bytes:
    return _zlib(data, limit, 47)  # gzip or zlib header, as mitmproxy reads it


def _deflate(data: bytes, limit: int) -> bytes:
    try:
        return _zlib(data, limit, 15)
    except ValueError:
        return _zlib(data, limit, -15)  # raw deflate, without the zlib header


def _brotli(data: bytes, limit: int) -> bytes:
    decompressor = brotli.Decompressor()
    try:
        out = decompressor.process(data, output_buffer_limit=limit + 1)
    except brotli.error as exc:
        raise ValueError(f"bad brotli body: {exc}") from None
    if len(out) > limit:
        raise TooLarge(limit, "br")
    if not decompressor.is_finished():
        raise ValueError("the brotli body ends early")
    return out


def _zstd(data: bytes, limit: int) -> bytes:
    parts: list[bytes] = []
    size = 0
    rest = data
    while rest:  # one decompressor per frame, as zstd.decompress reads concatenated frames
        decompressor = zstd.ZstdDecompressor()
        try:
            while not decompressor.eof:
                piece = decompressor.decompress(rest, max_length=_STEP)
                rest = b""
                size += len(piece)
                if size > limit:
                    raise TooLarge(limit, "zstd")
                parts.append(piece)
                if not piece and decompressor.needs_input:
                    raise ValueError("the zstd body ends inside a frame")
        except zstd.ZstdError as exc:
            raise ValueError(f"bad zstd body: {exc}") from None
        rest = decompressor.unused_data
    return b"".join(parts)


_DECODERS = {"identity": lambda data, limit: data, "none": lambda data, limit: data,
             "gzip": _gzip, "x-gzip": _gzip, "deflate": _deflate, "br": _brotli, "zstd": _zstd}


def read(raw: bytes, encoding: str | None, limit: int, kept: int) -> tuple[bytes, Any, str]:
    """A request body as the gateway reads it, in the proxy or in a worker: decoded within
    `limit` (`decoded`), parsed (`wirejson.loads`, raising `ValueError` or `RecursionError` when
    it is not JSON), and its text for the saved flow (`kept_text`)."""
    data = decoded(raw, encoding, limit)
    return data, wirejson.loads(data), kept_text(data, kept)


def kept_text(data: bytes, kept: int) -> str:
    """The body's text for the saved flow (`gateway.client_request`): in JSON's own encoding
    (`wirejson.decode_text`), cut past `kept` bytes with a note saying so, like the saved copy of
    a stream (addon/serve/streaming.py): a saved flow stays bounded whatever the client sent."""
    if len(data) <= kept:
        return wirejson.decode_text(data)
    return wirejson.decode_text(data[:kept]) + f"\n[{cut_note(len(data) - kept, kept, 'read')}]"


def declared_too_large(headers: Any, limit: int) -> str | None:
    """Why a request whose `Content-Length` is already past the bound is refused before its body
    is read, or None. A body without a length (chunked) is buffered by mitmproxy and checked once
    read; mitmproxy's `body_size_limit` bounds that buffer (docs/mitmproxy.md)."""
    length = headers.get("content-length", "")
    if length.isdigit() and int(length) > limit:
        return (f"the request body is {length} bytes; the gateway reads at most {limit} "
                "(gateway_max_request_bytes)")
    return None

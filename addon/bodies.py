"""Request bodies read within bounds: decoded once, with a streaming decompressor that stops at
the limit, and parsed or written in pieces when large, so no single call holds the
interpreter for the whole body while other flows wait (addon/limits.py).

mitmproxy's own `get_content()` decodes the whole body at once, and keeps its last result in a
module cache (docs/mitmproxy.md "Compressed bodies").
"""

from __future__ import annotations

import json
import sys
import zlib
from typing import Any

import brotli
import orjson

from translators import wirejson

if sys.version_info >= (3, 14):
    from compression import zstd
else:
    from backports import zstd

_STEP = 1024 * 1024
"""Decoded bytes produced per decompressor call."""
_PIECE = 64 * 1024
"""A body up to this size is parsed or written in one call."""


class TooLarge(Exception):
    def __init__(self, limit: int, encoding: str | None) -> None:
        how = f"decoded from {encoding}" if encoding else "as sent"
        super().__init__(f"the request body is larger than {limit} bytes ({how}); the gateway reads "
                         "at most gateway_max_request_bytes")


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


def _int(digits: str) -> int | float:
    """orjson reads an integer beyond 64 bits as a float (translators/wirejson.py); so does this."""
    value = int(digits)
    return value if -(1 << 63) <= value < (1 << 64) else float(digits)


_DECODER = json.JSONDecoder(parse_int=_int)
_SPACE = json.decoder.WHITESPACE.match


def loads(data: bytes) -> Any:
    """`wirejson.loads(data)`, but a large top-level object is read member by member and its
    arrays item by item, each a call of its own: the parse of a 10 MB request is then many
    short calls a worker thread can be interrupted between, not one of half a second."""
    if len(data) <= _PIECE:
        return wirejson.loads(data)
    try:
        text = data.decode("utf-8")
        return _object(text)
    except (ValueError, IndexError):
        return wirejson.loads(data)  # not an object of the usual shape: one call, same errors


def _object(text: str) -> dict[str, Any]:
    at = _SPACE(text, 0).end()
    if text[at] != "{":
        raise ValueError("not an object")
    out: dict[str, Any] = {}
    at = _SPACE(text, at + 1).end()
    if text[at] == "}":
        at += 1
    else:
        while True:
            key, at = _DECODER.raw_decode(text, at)
            if not isinstance(key, str):
                raise ValueError("not a key")
            at = _SPACE(text, at).end()
            if text[at] != ":":
                raise ValueError("no colon")
            at = _SPACE(text, at + 1).end()
            out[key], at = _array(text, at) if text[at] == "[" else _DECODER.raw_decode(text, at)
            at = _SPACE(text, at).end()
            if text[at] == "}":
                at += 1
                break
            if text[at] != ",":
                raise ValueError("no comma")
            at = _SPACE(text, at + 1).end()
    if _SPACE(text, at).end() != len(text):
        raise ValueError("extra data")
    return out


def _array(text: str, at: int) -> tuple[list[Any], int]:
    items: list[Any] = []
    at = _SPACE(text, at + 1).end()
    if text[at] == "]":
        return items, at + 1
    while True:
        item, at = _DECODER.raw_decode(text, at)
        items.append(item)
        at = _SPACE(text, at).end()
        if text[at] == "]":
            return items, at + 1
        if text[at] != ",":
            raise ValueError("no comma")
        at = _SPACE(text, at + 1).end()


def dumps(value: Any) -> bytes:
    """`wirejson.dumps(value)`, the same bytes, with a large object's list members written item by
    item (compact JSON of a list is its items' JSON joined by commas)."""
    if not isinstance(value, dict) or not any(isinstance(v, list) and len(v) > 64 for v in value.values()) \
            or not all(isinstance(k, str) for k in value):
        return wirejson.dumps(value)
    members = []
    try:
        for key, item in value.items():
            if isinstance(item, list):
                written = b"[" + b",".join([orjson.dumps(x) for x in item]) + b"]"
            else:
                written = orjson.dumps(item)
            members.append(orjson.dumps(key) + b":" + written)
    except TypeError:  # what orjson refuses anywhere, wirejson writes the whole body its other way
        return wirejson.dumps(value)
    return b"{" + b",".join(members) + b"}"


def declared_too_large(headers: Any, limit: int) -> str | None:
    """Why a request whose `Content-Length` is already past the bound is refused before its body
    is read, or None. A body without a length (chunked) is buffered by mitmproxy and checked once
    read; mitmproxy's `body_size_limit` bounds that buffer (docs/mitmproxy.md)."""
    length = headers.get("content-length", "")
    if length.isdigit() and int(length) > limit:
        return (f"the request body is {length} bytes; the gateway reads at most {limit} "
                "(gateway_max_request_bytes)")
    return None

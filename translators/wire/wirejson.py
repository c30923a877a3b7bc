"""JSON at the wire edge: every body and stream event this package reads or writes.

orjson does the work (its parser and writer are several times faster than the standard library's,
and JSON is most of what a translation costs: bench/). The standard library takes over for the
little orjson refuses, so what it accepts and writes does not change:

- reading: `NaN`/`Infinity` and lone surrogate escapes (`"\\ud800"`), which Python's `json`
  accepts and an upstream may send;
- writing: strings holding a lone surrogate (they can only have come from such an escape; written
  back as the same escape, see `sse.encode_event`) and integers beyond 64 bits.

Output is compact (`,` and `:` without spaces) and UTF-8, not ASCII-escaped: the same bytes as
`json.dumps(value, ensure_ascii=False, separators=(",", ":"))` for every value orjson writes,
except that floats use Python's shortest repr either way. Integers beyond 64 bits in an input are
read as floats by orjson (the same number to 17 significant digits); no model API takes such.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

_compact = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

text = json.JSONEncoder(ensure_ascii=False).encode
"""JSON inside a string field (tool-call arguments, a freeform call wrapped as `{"input": ...}`):
`json.dumps(value, ensure_ascii=False)`, Python's default spacing, without building an encoder per
call. It is text the model or the client reads back as JSON, never a wire body."""


def loads(data: bytes | bytearray | memoryview | str) -> Any:
    """Parse JSON text; raises `ValueError` (a `json.JSONDecodeError`) when it is not JSON, or
    `RecursionError` when it nests deeper than Python's parser goes."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        # orjson also refuses what `json` reads (NaN, lone surrogates, nesting past 1024): let
        # the standard parser decide, and raise its own error if it is really not JSON
        return json.loads(data if isinstance(data, str | bytes | bytearray) else bytes(data))


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON bytes."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return _compact(value).encode("utf-8", "backslashreplace")



def decode_text(data: bytes) -> str:
    """JSON bytes as text, in JSON's own encoding (UTF-8, or the UTF-16/32 `json` detects), never
    in a charset a content-type claims: JSON has no charset parameter (RFC 8259 §8.1, §11)."""
    return data.decode(json.detect_encoding(data), "replace")

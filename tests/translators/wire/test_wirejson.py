"""JSON at the wire edge: orjson's speed, the standard library's acceptance."""

from __future__ import annotations

import json

import pytest

from translators.wire import wirejson


def test_reads_what_the_standard_parser_reads_even_where_orjson_refuses() -> None:
    text = '{"a": NaN, "b": "\\ud800", "c": [1, 2.5, "é"]}'
    value = wirejson.loads(text)
    assert value["b"] == "\ud800"
    assert value["c"] == [1, 2.5, "é"]
    assert value["a"] != value["a"]  # NaN


def test_reads_bytes_and_bytearrays() -> None:
    assert wirejson.loads(b'{"x": "\xc3\xa9"}') == {"x": "é"}
    assert wirejson.loads(bytearray(b"[1]")) == [1]


def test_text_that_is_not_json_raises_a_value_error() -> None:
    with pytest.raises(ValueError):
        wirejson.loads(b'{"unterminated": ')


def test_writes_compact_utf8_like_the_standard_library() -> None:
    value = {"text": "é \u2028 \"q\" \\ \n\t\x01", "n": [1, -2, 0.5, True, None]}
    assert wirejson.dumps(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def test_a_lone_surrogate_is_written_as_its_json_escape() -> None:
    out = wirejson.dumps({"t": "a\ud800b"})
    assert out == b'{"t":"a\\ud800b"}'
    assert json.loads(out) == {"t": "a\ud800b"}


def test_integers_beyond_64_bits_are_written_exactly() -> None:
    assert wirejson.dumps({"n": 2**70}) == b'{"n":1180591620717411303424}'


def test_json_inside_a_string_field_is_written_as_json_dumps_writes_it_unescaped() -> None:
    value = {"path": "docs/café.md", "lines": [1, 2.5], "ok": True, "none": None}
    assert wirejson.text(value) == json.dumps(value, ensure_ascii=False)
    assert wirejson.text(value) == '{"path": "docs/café.md", "lines": [1, 2.5], "ok": true, "none": null}'

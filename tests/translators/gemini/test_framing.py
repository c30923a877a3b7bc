"""The two stream framings and their detection (translators/gemini/framing.py)."""

from __future__ import annotations

import itertools
import json

import pytest

from translators.core.errors import UpstreamProtocolError
from translators.gemini.framing import JsonSequence, SSEFraming, detect, strip_bom

ELEMENTS = [{"a": "x]y}z,\"[{"}, {"b": ["é", "🦜", {"c": "\\"}]}, {"n": [1, [2, [3]]]}]
ARRAY = ("[" + "\n,\r\n".join(json.dumps(e, ensure_ascii=False) for e in ELEMENTS) + "\n]\n").encode()


def _split(data: bytes, cuts: list[int]) -> list[bytes]:
    bounds = [0, *cuts, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


def _elements(pieces: list[bytes], array: bool = True) -> list[object]:
    sequence = JsonSequence(array=array)
    texts = [t for piece in pieces for t in sequence.feed(piece)]
    return [json.loads(t) for t in texts]


def test_array_framing_is_detected_from_its_first_byte() -> None:
    assert isinstance(detect(b"  \n[{"), JsonSequence)


def test_sse_framing_is_detected_from_anything_else() -> None:
    assert isinstance(detect(b"data: {}"), SSEFraming)


def test_framing_is_undecided_while_only_whitespace_came() -> None:
    assert detect(b" \r\n\t") is None


def test_byte_order_mark_is_removed_and_awaited_when_partial() -> None:
    assert strip_bom(b"\xef\xbb") is None
    assert strip_bom(b"\xef\xbb\xbf[") == b"["


def test_array_elements_come_out_whole_with_brackets_and_quotes_inside_strings() -> None:
    assert _elements([ARRAY]) == ELEMENTS


def test_array_elements_are_the_same_fed_one_byte_at_a_time() -> None:
    assert _elements([ARRAY[i:i + 1] for i in range(len(ARRAY))]) == ELEMENTS


def test_array_elements_are_the_same_split_at_every_byte_including_inside_utf8() -> None:
    for at in range(1, len(ARRAY)):
        assert _elements(_split(ARRAY, [at])) == ELEMENTS, at


def test_element_is_handed_out_as_soon_as_it_closes() -> None:
    sequence = JsonSequence(array=True)
    assert sequence.feed(b'[{"a": 1}') == ['{"a": 1}']


def test_closed_array_ends_cleanly() -> None:
    sequence = JsonSequence(array=True)
    sequence.feed(ARRAY)
    assert sequence.close() == ([], True)


def test_array_cut_off_before_its_bracket_does_not_end_cleanly() -> None:
    sequence = JsonSequence(array=True)
    sequence.feed(ARRAY[:-3])
    assert sequence.close()[1] is False


def test_bare_objects_are_read_one_after_another() -> None:
    assert _elements([b'{"a": 1}\n{"b": 2}'], array=False) == [{"a": 1}, {"b": 2}]


@pytest.mark.parametrize("data", [b'[{"a": 1} {"b": 2}]', b'[{"a": 1}] x', b"[1, 2]", b"x[", b'[{"a": 1},]'])
def test_bytes_outside_the_framing_are_a_protocol_error(data: bytes) -> None:
    with pytest.raises(UpstreamProtocolError):
        JsonSequence(array=True).feed(data)


def test_element_that_is_not_utf8_is_a_protocol_error() -> None:
    with pytest.raises(UpstreamProtocolError):
        JsonSequence(array=True).feed(b'[{"a": "\xff"}]')


def test_sse_framing_drops_a_done_marker() -> None:
    assert SSEFraming().feed(b'data: {"a": 1}\n\ndata: [DONE]\n\n') == ['{"a": 1}']


def test_a_json_value_past_the_bound_ends_the_stream_once() -> None:
    sequence = JsonSequence(array=True, max_value=100)
    assert sequence.feed(b'[{"a":1},') == ['{"a":1}']
    with pytest.raises(UpstreamProtocolError) as caught:
        sequence.feed(b'{"b":"' + b"x" * 200)
    assert caught.value.code == "upstream_event_too_large"
    assert sequence.feed(b'"}]') == []

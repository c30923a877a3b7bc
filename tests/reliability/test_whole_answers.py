"""Whole (non-streamed) upstream answers and upstream HTTP errors, broken every way.

What holds: `translate_response` never raises (translators/core/errors.py: callers "never see a foreign
exception type") and always returns a Responses object that is completed, incomplete or failed;
`translate_error` never raises, keeps the status and retry-after, and always gives a
Responses-shaped error. (Bounding a huge upstream message is the addon's job; test_faults.py
checks what the client gets.)
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.reliability.budget import STREAM_FUZZ, fuzz
from tests.reliability.fault_upstream import error_body
from tests.reliability.mutations import _mutate_tree, byte_level, json_values
from tests.reliability.recorded import DECODER_DIALECTS, translation_for
from tests.support import conformance
from translators import translate_error, translate_response
from translators.core.ids import sequential_ids

DEEP = b"[" * 100_000 + b"]" * 100_000
"""Deeper than Python's json parser goes: it raises RecursionError, which is not a ValueError."""


@st.composite
def broken_whole(draw: st.DrawFn, dialect: str) -> bytes:
    kind = draw(st.sampled_from(["tree", "tree", "bytes", "json"]))
    if kind == "json":
        return json.dumps(draw(json_values)).encode()
    body = conformance.of(dialect).whole
    for _ in range(draw(st.integers(1, 3))):
        body = draw(_mutate_tree(body))
    data = json.dumps(body).encode()
    return draw(byte_level(data)) if kind == "bytes" else data


def _answer(dialect: str, body: bytes) -> dict[str, Any]:
    translation = translation_for(dialect).model_copy(update={"stream": False})
    return translate_response(dialect, translation, body, new_id=sequential_ids(), clock=lambda: 0)


@pytest.mark.parametrize("dialect", DECODER_DIALECTS)
def test_well_formed_whole_answer_is_a_completed_response(dialect: str) -> None:
    response = _answer(dialect, json.dumps(conformance.of(dialect).whole).encode())
    assert response["status"] == "completed"
    assert response["output"][0]["content"][0]["text"] == "Hello whole."


def _assert_finished(response: dict[str, Any]) -> None:
    json.dumps(response)
    assert response["object"] == "response"
    assert response["status"] in ("completed", "incomplete", "failed")
    assert isinstance(response["output"], list)
    if response["status"] == "failed":
        assert response["error"]["message"]


@pytest.mark.parametrize("dialect", DECODER_DIALECTS)
@fuzz(STREAM_FUZZ)
@given(data=st.data())
def test_broken_whole_answer_never_raises_and_is_a_finished_response(
    dialect: str, data: st.DataObject
) -> None:
    _assert_finished(_answer(dialect, data.draw(broken_whole(dialect), label="body")))


@pytest.mark.parametrize("dialect", DECODER_DIALECTS)
def test_whole_answer_nested_too_deep_is_a_failed_response(dialect: str) -> None:
    response = _answer(dialect, DEEP)
    _assert_finished(response)
    assert response["status"] == "failed"


def test_whole_anthropic_answer_whose_text_is_not_a_string_is_a_failed_response() -> None:
    """Found by the property above: a `text` block with a list for its text got past the
    decoder and made the Responses encoder raise TypeError out of translate_response."""
    body = {**conformance.of("anthropic").whole, "content": [{"type": "text", "text": [None]}]}
    _assert_finished(_answer("anthropic", json.dumps(body).encode()))


error_bodies = st.one_of(
    st.binary(max_size=64),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.sampled_from(
        [
            b"",
            b"<html>502 Bad Gateway</html>",
            b'{"error": "a string"}',
            b'{"error": {"message": null}}',
            b'{"message": null}',
            b'{"error": {"type": []}}',
            b'{"error": {"message": "' + b"x" * 1_000_000 + b'"}}',
            b"\xff\xfe",
        ]
    ),
)


@pytest.mark.parametrize("dialect", [*DECODER_DIALECTS, "responses"])
@fuzz(STREAM_FUZZ)
@given(
    status=st.sampled_from([400, 401, 403, 404, 408, 413, 422, 429, 499, 500, 502, 503, 504, 529, 599]),
    body=error_bodies,
    headers=st.dictionaries(
        st.sampled_from(["retry-after", "Retry-After", "retry-after-ms", "x-other"]),
        st.text(max_size=8),
        max_size=3,
    ),
)
def test_any_upstream_error_becomes_a_responses_shaped_error_with_its_status(
    dialect: str, status: int, body: bytes, headers: dict[str, str]
) -> None:
    error = translate_error(dialect, status, body, headers)
    assert error.status == status
    assert set(error.body) == {"error"} and isinstance(error.body["error"], dict)
    if dialect != "responses":  # a Responses upstream's own error object goes through as it is
        assert isinstance(error.body["error"].get("message"), str) and error.body["error"]["message"]
        assert isinstance(error.body["error"].get("code"), str)
    lowered = {k.lower(): v for k, v in headers.items()}
    for name in ("retry-after", "retry-after-ms"):
        assert error.headers.get(name) == lowered.get(name)


@pytest.mark.parametrize("dialect", [*DECODER_DIALECTS, "responses"])
def test_upstream_error_nested_too_deep_keeps_its_status(dialect: str) -> None:
    error = translate_error(dialect, 429, DEEP, {"retry-after": "3"})
    assert (error.status, error.headers) == (429, {"retry-after": "3"})
    assert error.body["error"]["code"] == "rate_limit_exceeded"


@pytest.mark.parametrize("dialect", DECODER_DIALECTS)
def test_upstream_error_whose_message_is_not_a_string_keeps_its_status(dialect: str) -> None:
    """Found by the property above (Anthropic: TypeError in code_for)."""
    for body in (
        b'{"type":"error","error":{"type":"rate_limit_error","message":5}}',
        b'{"error":{"message":5,"type":"rate_limit_error","code":7}}',
        b'{"message":5}',
    ):
        error = translate_error(dialect, 429, body, {})
        assert error.status == 429
        assert isinstance(error.body["error"]["message"], str)


@pytest.mark.parametrize("dialect", DECODER_DIALECTS)
@pytest.mark.parametrize("status", [429, 500, 503, 529])
def test_each_dialects_own_error_shape_keeps_its_message(dialect: str, status: int) -> None:
    _, body = error_body(dialect, status, "the upstream's words")
    error = translate_error(dialect, status, body, {})
    assert "the upstream's words" in error.body["error"]["message"]

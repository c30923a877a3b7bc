"""Whole Gemini answers and error bodies (translators/gemini/response.py, failures.py)."""

from __future__ import annotations

import json

import pytest

from tests.translators.gemini.support import call, chunk, function_tool, recorded_chunks, text, translation
from translators import translate_error, translate_response
from translators.core.ids import sequential_ids
from translators.core.report import Report

TRANSLATION = translation(tools=[function_tool("get_capital"), function_tool("lookup")], stream=False)


def _response(body: object) -> dict:
    return translate_response("gemini", TRANSLATION, json.dumps(body).encode(), new_id=sequential_ids(),
                              clock=lambda: 0, report=Report())


def test_whole_answer_text_becomes_a_completed_message() -> None:
    usage = {"promptTokenCount": 7, "candidatesTokenCount": 2}
    answer = _response(chunk(text("Paris."), finish="STOP", usage=usage))
    assert answer["status"] == "completed"
    assert answer["output"][0]["content"][0]["text"] == "Paris."
    assert (answer["usage"]["input_tokens"], answer["usage"]["output_tokens"]) == (7, 2)


def test_whole_answer_call_becomes_a_function_call() -> None:
    answer = _response(chunk(call("lookup", {"q": 1}, call_id="x1"), finish="STOP"))
    item, = answer["output"]
    assert (item["type"], item["call_id"], json.loads(item["arguments"])) == ("function_call", "x1", {"q": 1})


def test_recorded_chunk_read_whole_gives_its_call() -> None:
    answer = _response(recorded_chunks("sse_function_call_gemini2.sse")[0])
    calls = [(i["name"], json.loads(i["arguments"])) for i in answer["output"]]
    assert calls == [("get_capital", {"country": "France"})]


def test_whole_answer_that_is_a_list_of_chunks_is_read_in_order() -> None:
    answer = _response([chunk(text("a")), chunk(text("b"), finish="STOP")])
    assert answer["output"][0]["content"][0]["text"] == "ab"


def test_whole_answer_without_candidates_or_feedback_fails() -> None:
    assert _response({"modelVersion": "x"})["status"] == "failed"


def test_whole_answer_that_is_not_an_object_fails_as_a_protocol_error() -> None:
    answer = _response("nonsense")
    assert answer["status"] == "failed"
    assert "not a GenerateContentResponse" in answer["error"]["message"]


EXHAUSTED = {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "Quota exceeded."}


def _error(status: int, body: object, headers: dict[str, str] | None = None) -> dict:
    return translate_error("gemini", status, json.dumps(body).encode(), headers).body["error"]


def test_resource_exhausted_is_a_rate_limit() -> None:
    error = _error(429, {"error": EXHAUSTED})
    assert error["code"] == "rate_limit_exceeded"
    assert "RESOURCE_EXHAUSTED" in error["message"]


def test_retry_delay_from_the_details_is_said_in_the_message() -> None:
    details = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "28s"}]
    error = _error(429, {"error": {**EXHAUSTED, "details": details}})
    assert "try again in 28s" in error["message"]


def test_token_count_over_the_limit_is_a_context_overflow() -> None:
    message = "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."
    error = _error(400, {"error": {"code": 400, "status": "INVALID_ARGUMENT", "message": message}})
    assert error["code"] == "context_length_exceeded"


@pytest.mark.parametrize(("status", "name", "code"), [
    (400, "INVALID_ARGUMENT", "invalid_request_error"), (403, "PERMISSION_DENIED", "permission_denied"),
    (404, "NOT_FOUND", "model_not_found"), (500, "INTERNAL", "server_error"),
    (503, "UNAVAILABLE", "server_is_overloaded")])
def test_google_status_maps_to_the_client_code(status: int, name: str, code: str) -> None:
    assert _error(status, {"error": {"code": status, "status": name, "message": "m"}})["code"] == code


def test_error_wrapped_in_the_array_framing_is_read() -> None:
    error = _error(429, [{"error": EXHAUSTED}])
    assert "Quota exceeded." in error["message"]


def test_error_body_that_is_not_json_is_kept_as_text() -> None:
    error = translate_error("gemini", 502, b"<html>Bad Gateway</html>").body["error"]
    assert "Bad Gateway" in error["message"]

"""Codex-shaped exchanges over two turns: Gemini's thought signatures go to the client inside
Responses items and come back, byte for byte, on the part Gemini expects them on."""

from __future__ import annotations

import copy
import json
from typing import Any

from tests.translators.bodies import PATCH
from tests.translators.gemini.support import (
    call,
    chunk,
    function_tool,
    recorded,
    recorded_chunks,
    responses_body,
    sse,
    text,
)
from tests.translators.streamcheck import (
    assert_chunking_invariant,
    assert_valid_responses_stream,
    codex_request,
    done_items,
    terminal,
)
from translators import translate_request

MODEL = "gemini-3-flash-preview"
SIG = "EpwICpkIAXLI2nxlU6gs+WZaZHRYkX1orzuM8vSUFwaAt1JRxEC2/hJzPAcAu3PWaKz7X=="


def _user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def _turn(request: dict[str, Any], upstream: bytes) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One turn: the Gemini body sent, and the output items the client keeps."""
    translation = translate_request(request, "gemini", MODEL)
    payloads = assert_valid_responses_stream(assert_chunking_invariant("gemini", translation, upstream,
                                                                       every_split=False))
    assert terminal(payloads)["type"] == "response.completed"
    return translation.body, done_items(payloads)


def _next_request(request: dict[str, Any], items: list[dict[str, Any]],
                  outputs: dict[str, str]) -> dict[str, Any]:
    """What Codex sends next: the history, its echoed output items, then one output per call."""
    following = copy.deepcopy(request)
    following["input"] = [*following["input"], *copy.deepcopy(items)]
    for item in items:
        if item["type"] == "function_call":
            following["input"].append({"type": "function_call_output", "call_id": item["call_id"],
                                       "output": outputs[item["name"]]})
        elif item["type"] == "custom_tool_call":
            following["input"].append({"type": "custom_tool_call_output", "call_id": item["call_id"],
                                       "output": outputs[item["name"]]})
    return following


def _last_model_turn(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in body["contents"] if c["role"] == "model"][-1]["parts"]


def _codex_tool_calls() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    request = codex_request("request_classic_gpt55.json")
    upstream = sse(chunk(text("I'll list files and add one.", thought=True)),
                   chunk(call("exec_command", {"cmd": "ls"}, call_id="fc-1", signature=SIG),
                         call("apply_patch", {"input": PATCH}, call_id="fc-2")),
                   chunk(text(""), finish="STOP", usage={"promptTokenCount": 900, "candidatesTokenCount": 40,
                                                         "thoughtsTokenCount": 30}))
    return _turn(request, upstream)


def test_codex_tool_calls_come_back_as_a_function_call_and_a_custom_tool_call() -> None:
    _, items = _codex_tool_calls()
    assert [(i["type"], i.get("name")) for i in items] == [
        ("reasoning", None), ("function_call", "exec_command"), ("custom_tool_call", "apply_patch")]
    assert items[2]["input"] == PATCH


def test_codex_next_request_replays_the_signature_on_the_signed_call_only() -> None:
    _, items = _codex_tool_calls()
    following = _next_request(codex_request("request_classic_gpt55.json"), items,
                              {"exec_command": "a.txt\n", "apply_patch": "Success."})
    body = translate_request(following, "gemini", MODEL).body
    parts = _last_model_turn(body)
    assert [p["functionCall"]["name"] for p in parts] == ["exec_command", "apply_patch"]
    assert parts[0]["thoughtSignature"] == SIG
    assert "thoughtSignature" not in parts[1]


def test_codex_next_request_answers_both_calls_by_id_and_name_in_one_turn() -> None:
    _, items = _codex_tool_calls()
    following = _next_request(codex_request("request_classic_gpt55.json"), items,
                              {"exec_command": "a.txt\n", "apply_patch": "Success."})
    body = translate_request(following, "gemini", MODEL).body
    responses = [p["functionResponse"] for p in body["contents"][-1]["parts"]]
    assert [(r["name"], r["id"], r["response"]) for r in responses] == [
        ("exec_command", "fc-1", {"output": "a.txt\n"}), ("apply_patch", "fc-2", {"output": "Success."})]


def test_recorded_signature_is_replayed_on_the_recorded_call() -> None:
    request = responses_body(_user("What is the capital of the country?"),
                             tools=[function_tool("get_country")])
    first_body, items = _turn(request, recorded("sse_function_call_thought_signature.sse"))
    signature = recorded_chunks("sse_function_call_thought_signature.sse")[0]["candidates"][0]["content"][
        "parts"][0]["thoughtSignature"]
    following = _next_request(request, items, {"get_country": "Mexico"})
    body = translate_request(following, "gemini", MODEL).body
    assert body["contents"][:len(first_body["contents"])] == first_body["contents"]
    call_part, = _last_model_turn(body)
    assert call_part == {"functionCall": {"name": "get_country", "args": {}}, "thoughtSignature": signature}
    assert body["contents"][-1]["parts"][0]["functionResponse"] == {"name": "get_country",
                                                                     "response": {"output": "Mexico"}}


def test_recorded_second_turn_answer_completes_the_exchange() -> None:
    request = responses_body(tools=[function_tool("get_country")])
    _, items = _turn(request, recorded("sse_function_call_thought_signature.sse"))
    _, answer = _turn(_next_request(request, items, {"get_country": "Mexico"}),
                      recorded("sse_text_after_function_response.sse"))
    assert answer[-1]["content"][0]["text"] == "The capital of Mexico is Mexico City."


def test_recorded_text_signature_is_replayed_on_the_answer_text() -> None:
    name = "text_with_trailing_signature_part.jsonl"
    request = responses_body()
    _, items = _turn(request, recorded(name))
    signature = recorded_chunks(name)[-1]["candidates"][0]["content"]["parts"][0]["thoughtSignature"]
    following = copy.deepcopy(request)
    following["input"] = [*following["input"], *items, _user("more")]
    parts = _last_model_turn(translate_request(following, "gemini", MODEL).body)
    assert [p.get("thoughtSignature") for p in parts] == [signature]
    assert parts[0]["text"] == items[0]["content"][0]["text"]
    assert json.dumps(parts).count(signature) == 1

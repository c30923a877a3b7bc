"""What a Messages client sends that crosses to Gemini: `top_k` and `stop_sequences` in
`generationConfig` (at most 5 stop sequences), a failed tool's result as the function response's
`error`, and `input_examples`, which Gemini has no field for (docs/gemini.md "Request")."""

from __future__ import annotations

from typing import Any

from google.genai import types

from tests.translators.messages_client.messages import assistant, body, tool, tool_result, tool_use, user
from translators import Translation, translate_request

MODEL = "gemini-2.5-flash"


def gemini(request_body: dict[str, Any]) -> Translation:
    return translate_request(request_body, "gemini", MODEL, client="messages")


def test_top_k_and_stop_sequences_are_generation_config() -> None:
    translation = gemini(body(top_k=40, stop_sequences=["END"]))
    config = translation.body["generationConfig"]
    assert (config["topK"], config["stopSequences"]) == (40, ["END"])
    assert translation.dropped == []
    # the SDK's own type reads them back under its names
    parsed = types.GenerationConfig.model_validate(config)
    assert (parsed.top_k, parsed.stop_sequences) == (40, ["END"])


def test_gemini_takes_five_stop_sequences_and_the_rest_are_reported() -> None:
    translation = gemini(body(stop_sequences=["a", "b", "c", "d", "e", "f"]))
    assert translation.body["generationConfig"]["stopSequences"] == ["a", "b", "c", "d", "e"]
    assert translation.dropped == ["stop_sequences[5]"]


def response_of(translation: Translation) -> dict[str, Any]:
    parts = translation.body["contents"][-1]["parts"]
    return next(p["functionResponse"] for p in parts if "functionResponse" in p)["response"]


def test_a_failed_tools_result_is_the_function_responses_error() -> None:
    translation = gemini(body(user("q"), assistant(tool_use("t1", "Bash")),
                              user(tool_result("t1", "exit 1", is_error=True)), tools=[tool("Bash")]))
    assert response_of(translation) == {"error": "exit 1"}
    assert translation.dropped == []


def test_a_result_that_is_no_error_is_the_output() -> None:
    translation = gemini(body(user("q"), assistant(tool_use("t1", "Bash")), user(tool_result("t1", "ok")),
                              tools=[tool("Bash")]))
    assert response_of(translation) == {"output": "ok"}


def test_input_examples_are_dropped() -> None:
    translation = gemini(body(tools=[tool("Read", input_examples=[{"x": "a"}])]))
    assert translation.dropped == ["tools[0].input_examples"]

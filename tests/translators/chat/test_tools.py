"""Chat `tools`: functions, freeform tools (native or emulated), wire names (docs/chat.md "Request";
docs/responses.md "Tools on other dialects")."""

from __future__ import annotations

import json
from typing import Any

from tests.translators.chat.chatdata import (
    chunk,
    client_stream,
    codex_request,
    function,
    responses_request,
    sse,
    tool_call,
)
from tests.translators.streamcheck import done_items
from translators import Translation, translate_request
from translators.chat.request import NAMES


def _chat(model: str, tools: list[dict[str, Any]], **extra: Any) -> Translation:
    return translate_request(responses_request(model, tools, **extra), "chat")


def _declared(translation: Translation, name: str) -> dict[str, Any]:
    return next(
        t for t in translation.body["tools"] if (t.get("function") or t.get("custom"))["name"] == name
    )


def _apply_patch() -> dict[str, Any]:
    return next(t for t in codex_request("request_classic_gpt55.json")["tools"] if t["type"] == "custom")


def test_function_tool_is_declared_with_its_json_schema() -> None:
    tool = function("get_weather", city="string")
    declared = _declared(_chat("deepseek-chat", [tool]), "get_weather")
    assert declared == {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": tool["description"],
            "parameters": tool["parameters"],
        },
    }


def test_freeform_tool_on_openai_is_a_native_custom_tool_with_its_grammar() -> None:
    patch = _apply_patch()
    declared = _declared(_chat("gpt-5.5", [patch]), "apply_patch")
    assert declared["type"] == "custom"
    assert declared["custom"]["format"] == {
        "type": "grammar",
        "grammar": {"syntax": patch["format"]["syntax"], "definition": patch["format"]["definition"]},
    }


def test_freeform_tool_without_grammar_on_openai_takes_text() -> None:
    declared = _declared(_chat("gpt-5.5", [{"type": "custom", "name": "note", "description": "d"}]), "note")
    assert declared["custom"]["format"] == {"type": "text"}


def test_freeform_tool_elsewhere_is_a_one_string_function_with_the_grammar_described() -> None:
    patch = _apply_patch()
    declared = _declared(_chat("deepseek-chat", [patch]), "apply_patch")["function"]
    assert declared["parameters"]["required"] == ["input"]
    assert declared["parameters"]["properties"]["input"]["type"] == "string"
    assert patch["format"]["definition"].strip() in declared["description"]


def test_forcing_a_native_freeform_tool_uses_the_custom_choice() -> None:
    body = _chat("gpt-5.5", [_apply_patch()], tool_choice={"type": "custom", "name": "apply_patch"}).body
    assert body["tool_choice"] == {"type": "custom", "custom": {"name": "apply_patch"}}


def test_hosted_tools_are_reported_dropped() -> None:
    translation = _chat("gpt-5.5", [function("f"), {"type": "web_search"}])
    assert [t["function"]["name"] for t in translation.body["tools"]] == ["f"]
    assert "tools[1]" in translation.dropped


def test_strict_functions_stay_strict() -> None:
    tool = {**function("f"), "strict": True}
    assert _declared(_chat("qwen3", [tool]), "f")["function"]["strict"] is True


def test_strict_for_deepseek_is_reported_dropped() -> None:
    translation = _chat("deepseek-chat", [{**function("f"), "strict": True}])
    assert "strict" not in _declared(translation, "f")["function"]
    assert "tools[0].strict" in translation.dropped


def _namespaced() -> list[dict[str, Any]]:
    return [
        {
            "type": "namespace",
            "name": "mcp__a_very_long_server_name_for_testing__",
            "description": "srv",
            "tools": [function("read_the_entire_repository_contents_recursively", path="string")],
        }
    ]


def test_namespaced_names_are_flattened_within_64_characters() -> None:
    names = [t["function"]["name"] for t in _chat("qwen3", _namespaced()).body["tools"]]
    assert all(len(n) <= NAMES.max_length for n in names)
    assert names[0] == NAMES.wire_name(
        "mcp__a_very_long_server_name_for_testing__read_the_entire_repository_contents_recursively"
    )


def test_a_call_by_wire_name_maps_back_to_the_client_name_and_namespace() -> None:
    translation = _chat("qwen3", _namespaced())
    wire = translation.body["tools"][0]["function"]["name"]
    data = sse(
        chunk({"tool_calls": [tool_call(0, "call_1", wire, '{"path": "."}')]}), chunk(finish="tool_calls")
    )
    item = done_items(client_stream(data, translation))[0]
    assert (item["name"], item["namespace"], json.loads(item["arguments"])) == (
        "read_the_entire_repository_contents_recursively",
        "mcp__a_very_long_server_name_for_testing__",
        {"path": "."},
    )

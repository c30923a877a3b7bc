"""Every tool and body Codex produces, once translated, is accepted by the google-genai SDK's own
request types (strict pydantic models, camelCase aliases; docs/gemini.md "Request")."""

from __future__ import annotations

import json
from typing import Any

import pytest
from google.genai import types

from tests.translators.streamcheck import codex_request
from translators import translate_request

CODEX_REQUESTS = ("request_classic_gpt55.json", "request_followup_after_apply_patch.json",
                  "request_lite_functions_namespace.json", "request_local_compaction.json",
                  "request_unknown_model.json")
HOSTED = {"web_search", "web_search_preview", "image_generation", "file_search"}


def _declared(tools: list[dict[str, Any]]) -> list[str]:
    """Names of the tools a JSON-only target can declare, namespaces opened."""
    out: list[str] = []
    for tool in tools:
        if tool["type"] == "namespace":
            out += _declared(tool["tools"])
        elif tool["type"] not in HOSTED:
            out.append(tool.get("name", tool["type"]))
    return out


def _codex_tools(request: dict[str, Any]) -> list[dict[str, Any]]:
    tools = list(request.get("tools") or [])
    for item in request["input"]:
        if item.get("type") in ("additional_tools", "tool_search_output"):
            tools += item["tools"]
    return tools


def _deferred_tools_request() -> dict[str, Any]:
    """A follow-up after tool_search: the namespace it loaded carries `defer_loading` (docs/codex.md
    "tool_search")."""
    request = codex_request("request_classic_gpt55.json")
    spawn = {"type": "function", "name": "spawn_agent", "description": "Spawn.", "strict": False,
             "defer_loading": True,
             "parameters": {"type": "object", "properties": {"message": {"type": "string"}},
                            "required": ["message"], "additionalProperties": False}}
    found = {"type": "namespace", "name": "multi_agent_v1", "description": "Tools for sub-agents.",
             "tools": [spawn]}
    request["input"] += [
        {"type": "tool_search_call", "call_id": "ts1", "execution": "client", "status": "completed",
         "arguments": {"query": "sub-agent", "limit": 2}},
        {"type": "tool_search_output", "call_id": "ts1", "status": "completed", "execution": "client",
         "tools": [found]}]
    return request


def _requests() -> list[tuple[str, dict[str, Any]]]:
    codex = [(name, codex_request(name)) for name in CODEX_REQUESTS]
    return [*codex, ("deferred", _deferred_tools_request())]


@pytest.mark.parametrize(("name", "request_body"), _requests(), ids=[n for n, _ in _requests()])
def test_every_codex_tool_is_a_declaration_the_sdk_accepts(name: str, request_body: dict[str, Any]) -> None:
    body = translate_request(request_body, "gemini", "gemini-3-pro-preview").body
    declarations = [d for tool in body.get("tools", []) for d in types.Tool.model_validate_json(
        json.dumps(tool)).function_declarations or []]
    assert len(declarations) == len(_declared(_codex_tools(request_body)))
    for declaration in declarations:
        types.JSONSchema.model_validate_json(json.dumps(declaration.parameters_json_schema))


@pytest.mark.parametrize(("name", "request_body"), _requests(), ids=[n for n, _ in _requests()])
def test_every_codex_request_body_is_accepted_by_the_sdk_types(name: str,
                                                               request_body: dict[str, Any]) -> None:
    body = translate_request(request_body, "gemini", "gemini-3-pro-preview").body
    for content in [*body["contents"], body["systemInstruction"]]:
        types.Content.model_validate_json(json.dumps(content))
    types.GenerationConfig.model_validate_json(json.dumps(body.get("generationConfig", {})))
    types.ToolConfig.model_validate_json(json.dumps(body.get("toolConfig", {})))
    assert set(body) <= {"contents", "systemInstruction", "tools", "toolConfig", "generationConfig"}


def test_forced_tool_choice_and_output_schema_are_accepted_by_the_sdk_types() -> None:
    request = codex_request("request_classic_gpt55.json")
    request["tool_choice"] = {"type": "function", "name": "exec_command"}
    request["text"] = {"format": {"type": "json_schema", "name": "out", "strict": True, "schema": {
        "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
        "properties": {"ok": {"type": "boolean"}}, "required": ["ok"], "additionalProperties": False}}}
    body = translate_request(request, "gemini", "gemini-2.5-flash").body
    config = types.ToolConfig.model_validate_json(json.dumps(body["toolConfig"]))
    assert config.function_calling_config is not None
    assert config.function_calling_config.allowed_function_names == ["exec_command"]
    generation = types.GenerationConfig.model_validate_json(json.dumps(body["generationConfig"]))
    types.JSONSchema.model_validate_json(json.dumps(generation.response_json_schema))

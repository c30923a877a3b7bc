"""What OpenAI's Responses API (`POST /v1/responses`, `/responses/compact`, `/responses/input_tokens`)
refuses, as OpenAI words it: 400 `{"error": {"message", "type": "invalid_request_error", "param",
"code"}}` (https://platform.openai.com/docs/api-reference/responses; docs/responses.md "Refusals").
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from tests.support.strict import JSON, Invalid, Issued, Refusal, parse_json, sse_payloads

MAX_TOOLS = 128
NAME = re.compile(r"^[a-zA-Z0-9_-]+$")
"""Function and custom tool names (the API's refusal names the pattern; openai/types/responses/
function_tool_param.py gives none)."""
# max_output_tokens per model (https://platform.openai.com/docs/models, "Max output tokens"); the
# API's floor is 16.
OUTPUT_LIMITS = (("gpt-4o", 16_384), ("gpt-4.1", 32_768), ("gpt-5", 128_000), ("o3", 100_000),
                 ("o4-mini", 100_000))
MIN_OUTPUT = 16
_CALLS = {"function_call_output": ("function_call", "function call output"),
          "custom_tool_call_output": ("custom_tool_call", "custom tool call output")}


def refusal(message: str, param: str | None = None, code: str | None = None) -> Refusal:
    body = {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}
    return 400, dict(JSON), json.dumps(body).encode()


def check(path: str, headers: Mapping[str, str], raw: bytes, *, issued: Issued) -> Refusal | None:
    try:
        _check(raw, issued)
    except Invalid as broken:
        return refusal(broken.message, broken.param, broken.code)
    return None


def _check(raw: bytes, issued: Issued) -> None:
    try:
        body = parse_json(raw)
    except ValueError:
        raise Invalid("We could not parse the JSON body of your request.") from None
    if not isinstance(body, dict):
        raise Invalid("Invalid request body: expected an object.")
    _tools(body.get("tools") or [])
    _output(body)
    items = body.get("input")
    if isinstance(items, list):
        chained = bool(body.get("previous_response_id") or body.get("conversation"))
        _items([i for i in items if isinstance(i, dict)], chained, issued)


def _tools(tools: list[Any]) -> None:
    if len(tools) > MAX_TOOLS:
        raise Invalid(f"Invalid 'tools': array too long. Expected an array with maximum length {MAX_TOOLS}, "
                      f"but got an array with length {len(tools)} instead.", "tools",
                      "array_above_max_length")
    for n, tool in enumerate(tools):
        named = isinstance(tool, dict) and tool.get("type") in ("function", "custom")
        if named and not NAME.match(tool.get("name") or ""):
            raise Invalid(f"Invalid 'tools[{n}].name': string does not match pattern. Expected a string that "
                          f"matches the pattern '{NAME.pattern}'.", f"tools[{n}].name", "invalid_value")


def _output(body: dict[str, Any]) -> None:
    value = body.get("max_output_tokens")
    if not isinstance(value, int):
        return
    if value < MIN_OUTPUT:
        raise Invalid("Invalid 'max_output_tokens': integer below minimum value. Expected a value >= "
                      f"{MIN_OUTPUT}, but got {value} instead.", "max_output_tokens",
                      "integer_below_min_value")
    model = str(body.get("model", ""))
    limit = next((n for prefix, n in OUTPUT_LIMITS if model.startswith(prefix)), None)
    if limit is not None and value > limit:
        raise Invalid("Invalid 'max_output_tokens': integer above maximum value. Expected a value <= "
                      f"{limit}, but got {value} instead.", "max_output_tokens", "integer_above_max_value")


def _items(items: list[dict[str, Any]], chained: bool, issued: Issued) -> None:
    """Each tool output answers a call earlier in `input` (unless the history is the stored
    response's), each call is answered, and reasoning comes back with content OpenAI encrypted."""
    for item in items:
        content = item.get("encrypted_content")
        if item.get("type") == "reasoning" and content and content not in issued.encrypted:
            shown = f"{content[:4]}...{content[-4:]}" if len(content) > 8 else content
            raise Invalid(f"The encrypted content {shown} could not be verified.", None,
                          "invalid_encrypted_content")
    if chained:
        return
    calls: dict[str, str] = {}
    answered: set[str] = set()
    for item in items:
        kind = item.get("type")
        if kind in ("function_call", "custom_tool_call"):
            calls[item.get("call_id", "")] = kind
        elif kind in _CALLS:
            call_kind, words = _CALLS[kind]
            if calls.get(item.get("call_id", "")) != call_kind:
                raise Invalid(f"No tool call found for {words} with call_id {item.get('call_id')}.", "input")
            answered.add(item.get("call_id", ""))
    for call_id, kind in calls.items():
        if call_id not in answered:
            words = "function call" if kind == "function_call" else "custom tool call"
            raise Invalid(f"No tool output found for {words} {call_id}.", "input")


def issued_in(answer: bytes) -> Issued:
    """Every reasoning item's `encrypted_content` in a Responses answer (stream or whole)."""
    out = Issued()
    for payload in sse_payloads(answer):
        if not isinstance(payload, dict):
            continue
        items = [payload.get("item")] if payload.get("item") else []
        items += (payload.get("response") or {}).get("output") or []
        items += payload.get("output") or []
        for item in items:
            if isinstance(item, dict) and item.get("type") == "reasoning" and item.get("encrypted_content"):
                out.encrypted.add(item["encrypted_content"])
    return out

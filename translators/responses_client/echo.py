"""The request fields every Responses object repeats (docs/responses.md "The Response object").

OpenAI's Responses objects echo the request's configuration, each field with the API's default
where the client sent none (real answers: tests/data/openai_responses), and the Open Responses
`ResponseResource` schema requires every one of them, some non-null. `from_request` computes the
echo once per request (translators/api.py `Translation.echo`); `response_fields` fills in the
defaults, so an echo saved by an older gateway (three keys) still gives a whole object.
"""

from __future__ import annotations

import copy
from typing import Any

DEFAULTS: dict[str, Any] = {
    "background": False,
    "instructions": None,
    "max_output_tokens": None,
    "max_tool_calls": None,
    "parallel_tool_calls": True,
    "previous_response_id": None,
    "prompt_cache_key": None,
    "reasoning": {"effort": None, "summary": None},
    "safety_identifier": None,
    "service_tier": "default",
    "store": True,
    "temperature": 1.0,
    "text": {"format": {"type": "text"}, "verbosity": "medium"},
    "tool_choice": "auto",
    "tools": [],
    "top_logprobs": 0,
    "top_p": 1.0,
    "truncation": "disabled",
    "user": None,
    "metadata": {},
    "presence_penalty": 0.0,
    "frequency_penalty": 0.0,
    "conversation": None,
    "prompt_cache_retention": None,
}
"""Field -> the value a Responses object carries when the request did not set it: the Responses
API's defaults, as OpenAI's answers show them (docs/responses.md)."""

NOTHING_KNOWN = ("access_programs", "image", "input_transformations", "moderation", "prompt",
                 "prompt_cache_diagnostics", "prompt_cache_options", "tool_usage")
"""The openai SDK `Response` fields the gateway has nothing to say about (OpenAI's own programs,
moderation, tool usage and cache diagnostics): written as null, so the object has every field."""

_KINDS: dict[str, tuple[type, ...]] = {
    "background": (bool,), "instructions": (str, list), "max_output_tokens": (int,),
    "max_tool_calls": (int,), "parallel_tool_calls": (bool,), "previous_response_id": (str,),
    "prompt_cache_key": (str,), "safety_identifier": (str,), "service_tier": (str,), "store": (bool,),
    "temperature": (int, float), "top_logprobs": (int,), "top_p": (int, float), "truncation": (str,),
    "user": (str,), "metadata": (dict,), "presence_penalty": (int, float),
    "frequency_penalty": (int, float), "prompt_cache_retention": (str,), "tool_choice": (str, dict),
}
"""The fields echoed as the client wrote them, and the JSON types they may have; a value of
another type (the decoder refuses or reports it) leaves the default."""

_NUMBERS = {"temperature", "top_p", "presence_penalty", "frequency_penalty"}


def from_request(body: dict[str, Any]) -> dict[str, Any]:
    """The echo of one client request body (only what the client set; `response_fields` adds
    the defaults)."""
    echo: dict[str, Any] = {}
    for key, kinds in _KINDS.items():
        value = body.get(key)
        if isinstance(value, kinds) and (not isinstance(value, bool) or bool in kinds):
            echo[key] = float(value) if key in _NUMBERS else value
    if isinstance(body.get("tools"), list):
        echo["tools"] = [_tool(tool) for tool in body["tools"]]
    if isinstance(body.get("reasoning"), dict):
        echo["reasoning"] = _reasoning(body["reasoning"])
    if isinstance(body.get("text"), dict):
        echo["text"] = _text(body["text"])
    conversation = body.get("conversation")
    if isinstance(conversation, str) and conversation:
        echo["conversation"] = {"id": conversation}
    elif isinstance(conversation, dict) and isinstance(conversation.get("id"), str):
        echo["conversation"] = {"id": conversation["id"]}
    return echo


def response_fields(echo: dict[str, Any] | None) -> dict[str, Any]:
    """Every echoed field of a Responses object: the echo over the defaults (copies of them: an
    object is the caller's to change, `DEFAULTS` never)."""
    return {**copy.deepcopy(DEFAULTS), **(echo or {})}


def _tool(tool: Any) -> Any:
    """A tool in its full form, as OpenAI echoes it: a function tool with `description`,
    `parameters` and `strict` (the Responses API's default for `strict` is true), a namespace's
    functions likewise; any other tool as the client wrote it."""
    if not isinstance(tool, dict):
        return tool
    if tool.get("type") == "function":
        strict = tool.get("strict")
        return {"type": "function", "name": tool.get("name"), "description": tool.get("description"),
                "parameters": tool.get("parameters"), "strict": strict if isinstance(strict, bool) else True,
                **{k: v for k, v in tool.items() if k not in ("type", "name", "description", "parameters",
                                                               "strict")}}
    if tool.get("type") == "namespace" and isinstance(tool.get("tools"), list):
        return {**tool, "tools": [_tool(inner) for inner in tool["tools"]]}
    return tool


def _reasoning(value: dict[str, Any]) -> dict[str, Any]:
    """`effort` and `summary` always (ResponseResource's `Reasoning` requires both, nullable);
    the deprecated `generate_summary` read as `summary`."""
    effort = value.get("effort")
    summary = value.get("summary") or value.get("generate_summary")
    return {"effort": effort if isinstance(effort, str) else None,
            "summary": summary if isinstance(summary, str) else None}


def _text(value: dict[str, Any]) -> dict[str, Any]:
    """`format` always (default text); a json_schema format with `description` and `strict`
    (ResponseResource's `JsonSchemaResponseFormat` requires both; the API's default for
    `strict` is false)."""
    fmt = value.get("format")
    if not isinstance(fmt, dict) or not isinstance(fmt.get("type"), str):
        fmt = DEFAULTS["text"]["format"]
    elif fmt["type"] == "json_schema":
        fmt = {"description": None, **fmt, "strict": fmt.get("strict") is True}
    verbosity = value.get("verbosity")
    return {"format": fmt,
            "verbosity": verbosity if isinstance(verbosity, str) else DEFAULTS["text"]["verbosity"]}

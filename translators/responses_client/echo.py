"""The request fields every Responses object repeats (docs/responses.md "The Response object").

OpenAI's Responses objects echo the request's configuration. `from_request` computes the echo of
one request once (`ClientDialect.echo`, kept in `Translation.echo`); the defaults of the fields
the client did not set are added when an object is written (translators/wire/response_object.py).
"""

from __future__ import annotations

from typing import Any

from translators.wire.response_object import DEFAULTS

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
    """The echo of one client request body (only what the client set; `response_fields` of
    translators/wire/response_object.py adds the defaults)."""
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

"""What strict Responses clients check, written out by hand: the openai SDK's own types (pydantic
`TypeAdapter`s of `Response` and `ResponseStreamEvent`) and the rules of the Open Responses OpenAPI
document (openresponses/openresponses `public/openapi/openapi.json`, 2.3.0; docs/responses.md
"Strict clients"), each rule naming the schema it comes from. The document itself is not copied.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from openai.types.responses import Response, ResponseStreamEvent
from pydantic import TypeAdapter

Check = Callable[[Any], bool]


def _string(v: Any) -> bool:
    return isinstance(v, str)


def _integer(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _boolean(v: Any) -> bool:
    return isinstance(v, bool)


def _object(v: Any) -> bool:
    return isinstance(v, dict)


def _array(v: Any) -> bool:
    return isinstance(v, list)


def _anything(_v: Any) -> bool:
    return True


def _or_null(check: Check) -> Check:
    return lambda v: v is None or check(v)


# `ResponseResource`: every member is required; these may be null, the others may not.
RESPONSE_RESOURCE: dict[str, Check] = {
    "id": _string,
    "object": lambda v: v == "response",
    "created_at": _integer,
    "completed_at": _or_null(_integer),
    "status": _string,
    "incomplete_details": _or_null(_object),
    "model": _string,
    "previous_response_id": _or_null(_string),
    "instructions": _or_null(_string),
    "output": _array,
    "error": _or_null(_object),
    "tools": _array,
    # `ToolChoiceValueEnum` or one of the tool-choice objects
    "tool_choice": lambda v: v in ("none", "auto", "required") or _object(v),
    "truncation": lambda v: v in ("auto", "disabled"),  # `TruncationEnum`
    "parallel_tool_calls": _boolean,
    "text": _object,
    "top_p": _number,
    "presence_penalty": _number,
    "frequency_penalty": _number,
    "top_logprobs": _integer,
    "temperature": _number,
    "reasoning": _or_null(_object),
    "usage": _or_null(_object),
    "max_output_tokens": _or_null(_integer),
    "max_tool_calls": _or_null(_integer),
    "store": _boolean,
    "background": _boolean,
    "service_tier": _string,
    "metadata": _anything,  # required, of no stated type
    "safety_identifier": _or_null(_string),
    "prompt_cache_key": _or_null(_string),
}

# Required members of the objects a ResponseResource holds, by schema name.
NESTED: dict[str, tuple[str, ...]] = {
    "TextField": ("format",),
    "Reasoning": ("effort", "summary"),
    "Usage": ("input_tokens", "output_tokens", "total_tokens", "input_tokens_details",
              "output_tokens_details"),
    "InputTokensDetails": ("cached_tokens",),
    "OutputTokensDetails": ("reasoning_tokens",),
    "Error": ("code", "message"),
    "IncompleteDetails": ("reason",),
    "FunctionTool": ("type", "name", "description", "parameters", "strict"),
    "JsonSchemaResponseFormat": ("type", "name", "description", "schema", "strict"),
    "Message": ("type", "id", "status", "role", "content"),
    "OutputTextContent": ("type", "text", "annotations"),
    "FunctionCall": ("type", "id", "call_id", "name", "arguments", "status"),
    "ReasoningBody": ("type", "id", "summary"),
}
ITEM_SCHEMA = {"message": "Message", "function_call": "FunctionCall", "reasoning": "ReasoningBody"}
"""Output item type -> its schema in `ItemField` (the item kinds the gateway writes that the
document describes)."""

# The streaming events' required members beyond `type` and `sequence_number`, by event type
# (`Response…StreamingEvent` schemas).
_RESPONSE = ("response",)
_ITEM = ("output_index", "item")
_PART = ("item_id", "output_index", "content_index", "part")
_SUMMARY_PART = ("item_id", "output_index", "summary_index", "part")
EVENTS: dict[str, tuple[str, ...]] = {
    "response.created": _RESPONSE,  # ResponseCreatedStreamingEvent
    "response.in_progress": _RESPONSE,  # ResponseInProgressStreamingEvent
    "response.completed": _RESPONSE,  # ResponseCompletedStreamingEvent
    "response.failed": _RESPONSE,  # ResponseFailedStreamingEvent
    "response.incomplete": _RESPONSE,  # ResponseIncompleteStreamingEvent
    "response.output_item.added": _ITEM,  # ResponseOutputItemAddedStreamingEvent
    "response.output_item.done": _ITEM,  # ResponseOutputItemDoneStreamingEvent
    "response.content_part.added": _PART,  # ResponseContentPartAddedStreamingEvent
    "response.content_part.done": _PART,  # ResponseContentPartDoneStreamingEvent
    "response.output_text.delta": ("item_id", "output_index", "content_index", "delta"),
    "response.output_text.done": ("item_id", "output_index", "content_index", "text"),
    # ResponseOutputTextAnnotationAddedStreamingEvent
    "response.output_text.annotation.added": ("item_id", "output_index", "content_index", "annotation_index",
                                              "annotation"),
    "response.function_call_arguments.delta": ("item_id", "output_index", "delta"),
    "response.function_call_arguments.done": ("item_id", "output_index", "arguments"),
    "response.reasoning_summary_part.added": _SUMMARY_PART,
    "response.reasoning_summary_part.done": _SUMMARY_PART,
    "response.reasoning_summary_text.delta": ("item_id", "output_index", "summary_index", "delta"),
    "response.reasoning_summary_text.done": ("item_id", "output_index", "summary_index", "text"),
    "response.web_search_call.in_progress": ("output_index", "item_id"),
    "response.web_search_call.searching": ("output_index", "item_id"),
    "response.web_search_call.completed": ("output_index", "item_id"),
}
OUTSIDE_THE_DOCUMENT = frozenset({"response.custom_tool_call_input.delta",
                                  "response.custom_tool_call_input.done"})
"""Event types of the openai SDK the document does not list (custom tools): checked by the SDK only."""


@cache
def _response_adapter() -> TypeAdapter[Response]:
    return TypeAdapter(Response)


@cache
def _event_adapter() -> TypeAdapter[Any]:
    return TypeAdapter(ResponseStreamEvent)


def _missing(value: Any, schema: str) -> list[str]:
    if not isinstance(value, dict):
        return [f"{schema} is not an object: {value!r}"]
    return [f"{schema} lacks {key}" for key in NESTED[schema] if key not in value]


def resource_problems(response: Any) -> list[str]:
    """Every way `response` breaks `ResponseResource` (and the objects it holds); [] when none."""
    if not isinstance(response, dict):
        return [f"not an object: {response!r}"]
    problems = [f"ResponseResource.{key}: missing" for key in RESPONSE_RESOURCE if key not in response]
    problems += [f"ResponseResource.{key}: {response[key]!r}" for key, check in RESPONSE_RESOURCE.items()
                 if key in response and not check(response[key])]
    if problems:
        return problems
    problems += _missing(response["text"], "TextField")
    fmt = response["text"].get("format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        problems += _missing(fmt, "JsonSchemaResponseFormat")
    if response["reasoning"] is not None:
        problems += _missing(response["reasoning"], "Reasoning")
    if response["usage"] is not None:
        problems += _missing(response["usage"], "Usage")
        problems += _missing(response["usage"].get("input_tokens_details"), "InputTokensDetails")
        problems += _missing(response["usage"].get("output_tokens_details"), "OutputTokensDetails")
    if response["error"] is not None:
        problems += _missing(response["error"], "Error")
    if response["incomplete_details"] is not None:
        problems += _missing(response["incomplete_details"], "IncompleteDetails")
    for tool in response["tools"]:
        if isinstance(tool, dict) and tool.get("type") == "function":
            problems += _missing(tool, "FunctionTool")
    for item in response["output"]:
        problems += item_problems(item)
    return problems


def item_problems(item: Any) -> list[str]:
    """An output item against its `ItemField` schema, a message's text parts against
    `OutputTextContent`."""
    schema = ITEM_SCHEMA.get(item.get("type")) if isinstance(item, dict) else None
    if schema is None:
        return []
    problems = _missing(item, schema)
    if schema == "Message":
        for part in item.get("content") or []:
            if isinstance(part, dict) and part.get("type") == "output_text":
                problems += _missing(part, "OutputTextContent")
    return problems


def assert_valid_response(response: dict[str, Any]) -> None:
    """Valid for the openai SDK's `Response`, with every field it declares present, and for
    `ResponseResource`."""
    _response_adapter().validate_python(response)
    fields = {field.alias or name for name, field in Response.model_fields.items()}
    assert fields <= set(response), f"openai Response fields missing: {sorted(fields - set(response))}"
    assert resource_problems(response) == []


def assert_valid_event(payload: dict[str, Any]) -> None:
    """One event: the SDK's `ResponseStreamEvent` union, then the document's required members."""
    _event_adapter().validate_python(payload)
    kind = payload["type"]
    assert isinstance(payload.get("sequence_number"), int), payload
    if kind in OUTSIDE_THE_DOCUMENT:
        return
    assert kind in EVENTS, f"{kind}: not a streaming event of the Open Responses document"
    missing = [key for key in EVENTS[kind] if key not in payload]
    assert missing == [], f"{kind} lacks {missing}"
    if "response" in payload:
        assert_valid_response(payload["response"])
    if "item" in payload:
        assert item_problems(payload["item"]) == [], payload["item"]


def assert_valid_stream(payloads: list[dict[str, Any]]) -> None:
    """Every event valid, numbered from 0; `response.created` then `response.in_progress` first
    (the order of ResponseCreatedStreamingEvent and ResponseInProgressStreamingEvent in OpenAI's own
    streams); every function call's arguments in at least one `response.function_call_arguments.delta`
    before its `.done` (what the Open Responses compliance suite checks of a streamed tool call)."""
    for payload in payloads:
        assert_valid_event(payload)
    assert [p["sequence_number"] for p in payloads] == list(range(len(payloads)))
    assert [p["type"] for p in payloads[:2]] == ["response.created", "response.in_progress"]
    deltas: set[str] = set()
    for payload in payloads:
        if payload["type"] in _INPUT_DELTAS:
            deltas.add(payload["item_id"])
        elif payload["type"] in _INPUT_DONE and (payload.get("arguments") or payload.get("input")):
            assert payload["item_id"] in deltas, f"no input delta before the done of {payload['item_id']}"


_INPUT_DELTAS = {"response.function_call_arguments.delta", "response.custom_tool_call_input.delta"}
_INPUT_DONE = {"response.function_call_arguments.done", "response.custom_tool_call_input.done"}

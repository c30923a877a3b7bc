"""The whole Responses object (docs/responses.md "The Response object"): what the Responses client's
encoder writes (translators/responses_client/stream.py), what the Responses passthrough writes when it
ends a stream it cannot read (translators/responses/passthrough.py), and what the store's
`GET /v1/responses/{id}` answers. Both sides of the Responses wire share it, so it lives here.

OpenAI's Responses objects echo the request's configuration, each field with the API's default
where the client sent none (real answers: tests/data/openai_responses), and the Open Responses
`ResponseResource` schema requires every one of them, some non-null. `response_fields` fills in
the defaults, so an echo saved by an older gateway (three keys) still gives a whole object.
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

_MUTABLE = tuple(name for name, value in DEFAULTS.items() if isinstance(value, (dict, list)))

NOTHING_KNOWN = ("access_programs", "image", "input_transformations", "moderation", "prompt",
                 "prompt_cache_diagnostics", "prompt_cache_options", "tool_usage")
"""The openai SDK `Response` fields the gateway has nothing to say about (OpenAI's own programs,
moderation, tool usage and cache diagnostics): written as null, so the object has every field."""


def response_fields(echo: dict[str, Any] | None) -> dict[str, Any]:
    """Every echoed field of a Responses object: the echo over the defaults (copies of them: an
    object is the caller's to change, `DEFAULTS` never). Only the defaults the echo leaves are
    copied: a Codex echo sets most of them, and a stream writes the object five times."""
    fields = {**DEFAULTS, **echo} if echo else dict(DEFAULTS)
    for name in _MUTABLE:
        if fields[name] is DEFAULTS[name]:
            fields[name] = copy.deepcopy(DEFAULTS[name])
    return fields


def response_object(response_id: str, created_at: float, status: str, model: str,
                    output: list[dict[str, Any]], *, error: dict[str, Any] | None = None,
                    incomplete: dict[str, Any] | None = None,
                    usage: dict[str, Any] | None = None,
                    echo: dict[str, Any] | None = None,
                    completed_at: float | None = None) -> dict[str, Any]:
    """A whole Responses object: every field of the `openai` SDK's `Response` and every field the
    Open Responses `ResponseResource` requires (docs/responses.md "The Response object"). `echo`:
    what the request set of the fields the object repeats (`from_request` of
    translators/responses_client/echo.py), the Responses API's defaults for the rest."""
    fields = response_fields(echo)
    return {
        "id": response_id,
        "object": "response",
        "created_at": created_at,
        "status": status,
        "background": fields["background"],
        "completed_at": completed_at,
        "error": error,
        "incomplete_details": incomplete,
        "instructions": fields["instructions"],
        "max_output_tokens": fields["max_output_tokens"],
        "max_tool_calls": fields["max_tool_calls"],
        "model": model,
        "output": output,
        "parallel_tool_calls": fields["parallel_tool_calls"],
        "previous_response_id": fields["previous_response_id"],
        "prompt_cache_key": fields["prompt_cache_key"],
        "reasoning": fields["reasoning"],
        "safety_identifier": fields["safety_identifier"],
        "service_tier": fields["service_tier"],
        "store": fields["store"],
        "temperature": fields["temperature"],
        "text": fields["text"],
        "tool_choice": fields["tool_choice"],
        "tools": fields["tools"],
        "top_logprobs": fields["top_logprobs"],
        "top_p": fields["top_p"],
        "truncation": fields["truncation"],
        "usage": usage,
        "user": fields["user"],
        "metadata": fields["metadata"],
        "presence_penalty": fields["presence_penalty"],
        "frequency_penalty": fields["frequency_penalty"],
        "conversation": fields["conversation"],
        "prompt_cache_retention": fields["prompt_cache_retention"],
        **dict.fromkeys(NOTHING_KNOWN),
    }


def with_every_field(response: dict[str, Any]) -> dict[str, Any]:
    """A Responses object as kept by an earlier gateway, which wrote fewer fields: the ones it
    lacks added at their defaults (what `response_object` writes when the request set none)."""
    return {**response_object("", 0, "completed", "", []), **response}

"""Request bodies checked against the vendors' own SDK descriptions: the anthropic SDK's
`MessageCreateParams` TypedDicts and botocore's Bedrock Runtime service model."""

from __future__ import annotations

from typing import Any, get_type_hints

import botocore.session
from anthropic.types import (
    DocumentBlockParam,
    message_create_params,
    output_config_param,
    thinking_config_param,
)
from botocore.validate import ParamValidator
from pydantic import TypeAdapter

_ANTHROPIC = {True: TypeAdapter(message_create_params.MessageCreateParamsStreaming),
              False: TypeAdapter(message_create_params.MessageCreateParamsNonStreaming)}
_THINKING = {"enabled": thinking_config_param.ThinkingConfigEnabledParam,
             "adaptive": thinking_config_param.ThinkingConfigAdaptiveParam,
             "disabled": thinking_config_param.ThinkingConfigDisabledParam}


# The SDK describes anthropic-version 2026-10-21, which removed the sampling knobs; the gateway
# writes its bodies for 2023-06-01, where they exist (docs/anthropic.md "Versions").
_PINNED_VERSION_KEYS = {"temperature", "top_p", "top_k"}


def _known_keys(value: dict[str, Any], typed: type, where: str,
                allowed: frozenset[str] = frozenset()) -> None:
    # a TypedDict accepts unknown keys when validated; the API does not
    unknown = set(value) - set(get_type_hints(typed)) - allowed
    assert not unknown, f"{where}: keys the SDK does not know: {sorted(unknown)}"


def assert_anthropic_request(body: dict[str, Any]) -> None:
    """Valid for the anthropic SDK's `messages.create` params, with no key it does not know at the
    top level, in `thinking` and in `output_config`."""
    _ANTHROPIC[bool(body.get("stream"))].validate_python(body)
    stream = message_create_params.MessageCreateParamsStreaming if body.get("stream") else \
        message_create_params.MessageCreateParamsNonStreaming
    _known_keys(body, stream, "body", frozenset(_PINNED_VERSION_KEYS))
    if "thinking" in body:
        _known_keys(body["thinking"], _THINKING[body["thinking"]["type"]], "thinking")
    if "output_config" in body:
        _known_keys(body["output_config"], output_config_param.OutputConfigParam, "output_config")


def assert_converse_request(body: dict[str, Any], model: str, *, stream: bool = True) -> None:
    """Valid for botocore's `Converse`/`ConverseStream` input shape (unknown keys are errors there)."""
    operation = "ConverseStream" if stream else "Converse"
    shape = botocore.session.get_session().get_service_model("bedrock-runtime").operation_model(
        operation).input_shape
    report = ParamValidator().validate({**body, "modelId": model}, shape)
    assert not report.has_errors(), report.generate_report()


def assert_anthropic_document(block: dict[str, Any]) -> None:
    """A `document` block as the anthropic SDK's `DocumentBlockParam` describes it, with no key it
    does not know."""
    TypeAdapter(DocumentBlockParam).validate_python(block)
    _known_keys(block, DocumentBlockParam, "document")

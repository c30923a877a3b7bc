"""Responses request decoding, top-level fields (issue 2, Build 3, last bullet)."""

from __future__ import annotations

import pytest

from tests.translators.bodies import body, decoded, user
from tests.translators.streamcheck import codex_request
from translators import dialect, translate_request
from translators.core.errors import MalformedRequest
from translators.ir.request import ReasoningConfig, ToolChoice

CLIENT_METADATA = {"session_id": "s", "x-codex-installation-id": "i", "x-codex-turn-metadata": "{}"}


def test_sampling_limits_and_reasoning_are_carried():
    request, report = decoded(
        body(
            user("q"),
            temperature=0.2,
            top_p=0.9,
            max_output_tokens=500,
            parallel_tool_calls=False,
            reasoning={"effort": "high", "summary": "detailed"},
        )
    )
    assert (request.temperature, request.top_p, request.max_output_tokens) == (0.2, 0.9, 500)
    assert request.parallel_tool_calls is False
    assert request.reasoning == ReasoningConfig(effort="high", summary="detailed")
    assert report.dropped == []


def test_an_integer_temperature_is_a_float_in_the_ir():
    request, _ = decoded(body(user("q"), temperature=1, top_p=1))
    assert (repr(request.temperature), repr(request.top_p)) == ("1.0", "1.0")


@pytest.mark.parametrize("key", ["temperature", "top_p"])
def test_a_number_past_a_float_is_refused_with_its_field(key):
    with pytest.raises(MalformedRequest) as refused:  # the standard parser reads such integers exactly
        decoded(body(user("q"), **{key: 10**400}))
    assert refused.value.param == key


def test_verbosity_is_carried_in_the_ir():
    request, report = decoded(body(user("q"), text={"verbosity": "low"}))
    assert request.verbosity == "low"
    assert report.dropped == []


def test_a_json_schema_text_format_is_the_output_schema():
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    request, _ = decoded(
        body(
            user("q"),
            text={"format": {"type": "json_schema", "name": "out", "strict": True, "schema": schema}},
        )
    )
    assert request.output_schema == {"name": "out", "schema": schema, "strict": True}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("auto", ToolChoice()),
        ("none", ToolChoice(mode="none")),
        ("required", ToolChoice(mode="required")),
        ({"type": "function", "name": "exec_command"}, ToolChoice(mode="tool", name="exec_command")),
        ({"type": "custom", "name": "apply_patch"}, ToolChoice(mode="tool", name="apply_patch")),
        (
            {"type": "function", "name": "sleep", "namespace": "clock"},
            ToolChoice(mode="tool", name="sleep", namespace="clock"),
        ),
    ],
)
def test_tool_choice_is_decoded(value, expected):
    request, _ = decoded(body(user("q"), tool_choice=value))
    assert request.tool_choice == expected


@pytest.mark.parametrize(
    "field", ["store", "prompt_cache_key", "stream_options", "include", "client_metadata"]
)
def test_storage_cache_and_bookkeeping_fields_are_not_reported(field):
    value = {
        "store": False,
        "prompt_cache_key": "k",
        "stream_options": {"include_obfuscation": False},
        "include": ["reasoning.encrypted_content"],
        "client_metadata": CLIENT_METADATA,
    }[field]
    _, report = decoded(body(user("q"), **{field: value}))
    assert report.dropped == []


def test_reasoning_context_is_not_reported():
    _, report = decoded(body(user("q"), reasoning={"effort": "medium", "context": "all_turns"}))
    assert report.dropped == []


@pytest.mark.parametrize("tier", ["auto", "default"])
def test_service_tier_auto_or_default_is_not_reported(tier):
    _, report = decoded(body(user("q"), service_tier=tier))
    assert report.dropped == []


@pytest.mark.parametrize("tier", ["flex", "priority"])
def test_any_other_service_tier_is_reported(tier):
    _, report = decoded(body(user("q"), service_tier=tier))
    assert report.dropped == ["service_tier"]


def test_an_unknown_top_level_field_is_reported():
    _, report = decoded(body(user("q"), truncation="auto"))
    assert report.dropped == ["truncation"]


@pytest.mark.parametrize("target", dialect.names())
def test_client_metadata_is_never_forwarded(target):
    request = codex_request("request_classic_gpt55.json")
    assert request["client_metadata"]
    translation = translate_request(request, target)
    assert "client_metadata" not in translation.body
    assert "x-codex-installation-id" not in repr(translation.body)
    assert "client_metadata" not in translation.dropped


def test_the_end_user_id_is_the_safety_identifier_or_the_deprecated_user():
    assert decoded(body(user("q"), safety_identifier="u-hash"))[0].user == "u-hash"
    request, report = decoded(body(user("q"), user="u-old"))
    assert (request.user, report.dropped) == ("u-old", [])


def test_a_user_beside_a_different_safety_identifier_is_dropped():
    request, report = decoded(body(user("q"), safety_identifier="u-new", user="u-old"))
    assert (request.user, report.dropped) == ("u-new", ["user"])


@pytest.mark.parametrize(("target", "sent", "dropped"), [
    ("chat", {"user": "u-hash"}, []),
    ("anthropic", {"metadata": {"user_id": "u-hash"}}, []),
    ("gemini", {}, ["user"]),
    ("bedrock", {}, ["user"]),
])
def test_the_end_user_id_goes_where_the_target_has_a_field_for_it(target, sent, dropped):
    translation = translate_request(body(user("q"), safety_identifier="u-hash"), target, "m")
    assert {key: translation.body[key] for key in sent} == sent
    assert "u-hash" not in str({k: v for k, v in translation.body.items() if k not in sent})
    assert translation.dropped == dropped

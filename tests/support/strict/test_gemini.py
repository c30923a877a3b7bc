"""The strict Gemini fake refuses what `generateContent` refuses, in Gemini's words
(tests/support/strict/gemini.py)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.support.strict import Issued, gemini

SIG = "ZmFrZS10aG91Z2h0LXNpZ25hdHVyZQ=="
PATH = "/v1beta/models/gemini-3-flash-preview:streamGenerateContent?alt=sse"
ISSUED = Issued(thought_signatures={SIG})


def base() -> dict[str, Any]:
    return {
        "contents": [
            {"role": "user", "parts": [{"text": "list files"}]},
            {
                "role": "model",
                "parts": [
                    {"functionCall": {"name": "exec_command", "args": {"cmd": "ls"}}, "thoughtSignature": SIG}
                ],
            },
            {
                "role": "user",
                "parts": [{"functionResponse": {"name": "exec_command", "response": {"output": "a.txt"}}}],
            },
        ],
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "tools": [
            {
                "functionDeclarations": [
                    {
                        "name": "exec_command",
                        "description": "run",
                        "parametersJsonSchema": {"type": "object", "properties": {"cmd": {"type": "string"}}},
                    }
                ]
            }
        ],
        "generationConfig": {"maxOutputTokens": 8192, "thinkingConfig": {"includeThoughts": True}},
    }


def refused(body: dict[str, Any], path: str = PATH) -> str | None:
    answer = gemini.check(path, {}, json.dumps(body).encode(), issued=ISSUED)
    if answer is None:
        return None
    status, headers, raw = answer
    error = json.loads(raw)["error"]
    assert status == 400 and headers["content-type"] == "application/json"
    assert (error["code"], error["status"]) == (400, "INVALID_ARGUMENT")
    message: str = error["message"]
    return message


def edit(change: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
    body = copy.deepcopy(base())
    change(body)
    return body


def test_a_valid_request_passes() -> None:
    assert refused(base()) is None


def unsigned(body: dict[str, Any]) -> None:
    del body["contents"][1]["parts"][0]["thoughtSignature"]


CASES: list[tuple[str, dict[str, Any], str]] = [
    (
        "maxOutputTokens above the model's limit",
        edit(lambda b: b["generationConfig"].update(maxOutputTokens=128_000)),
        "Unable to submit request because it has a maxOutputTokens value of 128000 but the supported range "
        "is from 1 (inclusive) to 65537 (exclusive). Update the value and try again.",
    ),
    (
        "an unknown field",
        edit(lambda b: b["generationConfig"].update(reasoningEffort="high")),
        "Invalid JSON payload received. Unknown name \"reasoningEffort\" at 'generation_config': Cannot "
        "find field.",
    ),
    (
        "an unknown part field",
        edit(lambda b: b["contents"][0]["parts"][0].update(cache_control={})),
        "Invalid JSON payload received. Unknown name \"cache_control\" at 'contents[0].parts[0]': Cannot "
        "find field.",
    ),
    (
        "an unknown top-level field",
        edit(lambda b: b.update(stream=True)),
        'Invalid JSON payload received. Unknown name "stream": Cannot find field.',
    ),
    (
        "a function name with a slash",
        edit(lambda b: b["tools"][0]["functionDeclarations"][0].update(name="a/b")),
        "* GenerateContentRequest.tools[0].function_declarations[0].name: Invalid function name. Must start "
        "with a letter or an underscore.",
    ),
    (
        "a function name of 65 characters",
        edit(lambda b: b["tools"][0]["functionDeclarations"][0].update(name="f" * 65)),
        "with a maximum length of 64.",
    ),
    (
        "a schema keyword the OpenAPI form lacks",
        edit(
            lambda b: b["tools"][0]["functionDeclarations"][0].update(
                parameters={"type": "OBJECT", "$schema": "x"}, parametersJsonSchema=None
            )
        ),
        'Invalid JSON payload received. Unknown name "$schema"',
    ),
    (
        "required naming no property",
        edit(
            lambda b: b["tools"][0]["functionDeclarations"][0].update(
                parameters={"type": "OBJECT", "properties": {}, "required": ["cmd"]},
                parametersJsonSchema=None,
            )
        ),
        "* GenerateContentRequest.tools[0].function_declarations[0].parameters.required[0]: property is not "
        "defined",
    ),
    (
        "a role Gemini has not",
        edit(lambda b: b["contents"][1].update(role="assistant")),
        "Please use a valid role: user, model.",
    ),
    (
        "an empty parts list",
        edit(lambda b: b["contents"][0].update(parts=[])),
        "* GenerateContentRequest.contents[0].parts: contents.parts must not be empty.",
    ),
    (
        "a call right after a model turn",
        edit(lambda b: b["contents"].insert(1, {"role": "model", "parts": [{"text": "I will look."}]})),
        "Please ensure that function call turn comes immediately after a user turn or after a function "
        "response turn.",
    ),
    (
        "a response after no call",
        edit(lambda b: b["contents"][1]["parts"].__setitem__(0, {"text": "no call"})),
        "Please ensure that function response turn comes immediately after a function call turn.",
    ),
    (
        "two responses for one call",
        edit(lambda b: b["contents"][2]["parts"].append(copy.deepcopy(b["contents"][2]["parts"][0]))),
        "Please ensure that the number of function response parts is equal to the number of function call "
        "parts of the function call turn.",
    ),
    (
        "a current-turn call without its signature",
        edit(unsigned),
        "Function call is missing a thought_signature in functionCall parts. This is required for tools to "
        "work correctly, and missing thought_signature may lead to degraded model performance. Additional "
        "data, function call `default_api:exec_command` , position 2. Please refer to "
        "https://ai.google.dev/gemini-api/docs/thought-signatures for more details.",
    ),
    (
        "a signature Gemini never issued",
        edit(lambda b: b["contents"][1]["parts"][0].update(thoughtSignature="Zm9yZ2Vk")),
        "Corrupted thought signature.",
    ),
]


@pytest.mark.parametrize(("body", "wording"), [(b, w) for _, b, w in CASES], ids=[c[0] for c in CASES])
def test_refused_with_geminis_wording(body: dict[str, Any], wording: str) -> None:
    message = refused(body)
    assert message is not None and wording in message, message


def test_signatures_are_gemini_3s_rule_and_their_encoding_is_free() -> None:
    assert refused(edit(unsigned), PATH.replace("gemini-3-flash-preview", "gemini-2.5-flash")) is None
    assert (
        refused(
            edit(
                lambda b: b["contents"][1]["parts"][0].update(
                    thoughtSignature=SIG.replace("=", "").replace("+", "-")
                )
            )
        )
        is None
    )  # URL-safe, unpadded
    skip = gemini.SKIP_SIGNATURE
    assert refused(edit(lambda b: b["contents"][1]["parts"][0].update(thoughtSignature=skip))) is None


def test_an_earlier_turns_call_needs_no_signature() -> None:
    body = edit(unsigned)
    body["contents"] += [
        {"role": "model", "parts": [{"text": "a.txt"}]},
        {"role": "user", "parts": [{"text": "thanks"}]},
    ]
    assert refused(body) is None


def test_a_token_count_is_checked_inside_its_wrapper() -> None:
    path = "/v1beta/models/gemini-3-flash-preview:countTokens"
    body = {"generateContentRequest": {"model": "models/gemini-3-flash-preview", **base()}}
    assert refused(body, path) is None
    body["generateContentRequest"]["contents"][0]["role"] = "system"
    assert refused(body, path) == "Please use a valid role: user, model."


def test_what_an_answer_hands_out_is_read_back() -> None:
    chunk = {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [{"functionCall": {"name": "f", "args": {}}, "thoughtSignature": SIG}],
                }
            }
        ]
    }
    assert gemini.issued_in(b"data: " + json.dumps(chunk).encode() + b"\r\n\r\n").thought_signatures == {SIG}


def test_a_part_holding_nothing_is_refused() -> None:
    body = edit(lambda b: b["contents"][0]["parts"].append({"thought": True}))
    assert refused(body) == (
        "* GenerateContentRequest.contents[0].parts[1].data: required oneof field 'data' must have one "
        "initialized field\n"
    )

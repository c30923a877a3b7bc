"""The strict Responses fake refuses what OpenAI's Responses API refuses, in its words
(tests/support/strict/responses.py)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.support.strict import Issued, responses

ENCRYPTED = "gAAAAABoEncryptedByTheFake=="
ISSUED = Issued(encrypted={ENCRYPTED})


def base() -> dict[str, Any]:
    return {
        "model": "gpt-5.5",
        "stream": True,
        "max_output_tokens": 4096,
        "tools": [{"type": "function", "name": "exec_command", "parameters": {"type": "object"}}],
        "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "ls"}]},
            {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": ENCRYPTED},
            {"type": "function_call", "call_id": "call_1", "name": "exec_command", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "a.txt"},
        ],
    }


def refused(body: dict[str, Any]) -> dict[str, Any] | None:
    answer = responses.check("/v1/responses", {}, json.dumps(body).encode(), issued=ISSUED)
    if answer is None:
        return None
    status, _, raw = answer
    assert status == 400
    error: dict[str, Any] = json.loads(raw)["error"]
    assert error["type"] == "invalid_request_error"
    return error


def edit(change: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
    body = copy.deepcopy(base())
    change(body)
    return body


def test_a_valid_request_passes() -> None:
    assert refused(base()) is None


CASES: list[tuple[str, dict[str, Any], str]] = [
    (
        "an output for no call",
        edit(lambda b: b["input"].__delitem__(2)),
        "No tool call found for function call output with call_id call_1.",
    ),
    (
        "a call without its output",
        edit(lambda b: b["input"].pop()),
        "No tool output found for function call call_1.",
    ),
    (
        "reasoning OpenAI never encrypted",
        edit(lambda b: b["input"][1].update(encrypted_content="ZW5jcnlwdGVk")),
        "The encrypted content ZW5j...dGVk could not be verified.",
    ),
    (
        "a tool name with a dot",
        edit(lambda b: b["tools"][0].update(name="shell.exec")),
        "Invalid 'tools[0].name': string does not match pattern. Expected a string that matches the pattern "
        "'^[a-zA-Z0-9_-]+$'.",
    ),
    (
        "129 tools",
        edit(lambda b: b.update(tools=[copy.deepcopy(b["tools"][0]) for _ in range(129)])),
        "Invalid 'tools': array too long. Expected an array with maximum length 128",
    ),
    (
        "max_output_tokens above the model's limit",
        edit(lambda b: b.update(max_output_tokens=200_000)),
        "Invalid 'max_output_tokens': integer above maximum value. Expected a value <= 128000, but got "
        "200000 instead.",
    ),
    (
        "max_output_tokens under 16",
        edit(lambda b: b.update(max_output_tokens=8)),
        "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got 8 "
        "instead.",
    ),
]


@pytest.mark.parametrize(("body", "wording"), [(b, w) for _, b, w in CASES], ids=[c[0] for c in CASES])
def test_refused_with_openais_wording(body: dict[str, Any], wording: str) -> None:
    error = refused(body)
    assert error is not None and wording in error["message"], error


def test_a_chained_request_answers_calls_of_the_stored_response() -> None:
    assert (
        refused(edit(lambda b: (b["input"].__delitem__(2), b.update(previous_response_id="resp_1")))) is None
    )


def test_what_a_stream_hands_out_is_read_back() -> None:
    done = {
        "type": "response.output_item.done",
        "output_index": 0,
        "item": {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": ENCRYPTED},
    }
    stream = b"event: response.output_item.done\ndata: " + json.dumps(done).encode() + b"\n\n"
    assert responses.issued_in(stream).encrypted == {ENCRYPTED}

"""Bedrock's token count, `CountTokens` (docs/claude-code.md "Token counts"): the Converse turn's
input under `input.converse`, checked against botocore's bedrock-runtime service model (its path
and its input shape); `inputTokens` is the count."""

from __future__ import annotations

from typing import Any

import botocore.session
import pytest
from botocore.validate import ParamValidator

from translators import dialect, translate_request

COUNTER = dialect.get("bedrock").codec.count_tokens
MODEL = "us.anthropic.claude-sonnet-4-6"
OPERATION = botocore.session.get_session().get_service_model("bedrock-runtime").operation_model("CountTokens")
TOOL = {"name": "exec_command", "description": "Run a command.",
        "input_schema": {"type": "object", "properties": {"cmd": {"type": "string"}}}}


def turn() -> dict[str, Any]:
    body = {"model": "claude-x", "max_tokens": 100, "temperature": 0.2, "system": "Be brief.",
            "tools": [TOOL], "messages": [{"role": "user", "content": "count me"}]}
    return translate_request(body, "bedrock", MODEL, client="messages").body


def test_the_count_validates_against_the_count_tokens_operation() -> None:
    assert COUNTER is not None
    sent = turn()
    path, body = COUNTER.encode(sent, MODEL)
    assert OPERATION.http["method"] == "POST"
    assert path == OPERATION.http["requestUri"].replace("{modelId}", MODEL)
    report = ParamValidator().validate({**body, "modelId": MODEL}, OPERATION.input_shape)
    assert not report.has_errors(), report.generate_report()
    converse = body["input"]["converse"]
    assert converse["messages"] == sent["messages"] and converse["system"] == sent["system"]
    assert converse["toolConfig"] == sent["toolConfig"]
    assert "inferenceConfig" in sent and "inferenceConfig" not in converse  # counts no token


def test_a_model_arn_is_one_path_segment() -> None:
    assert COUNTER is not None
    path, _ = COUNTER.encode({"messages": []}, "arn:aws:bedrock:us-east-1:1:inference-profile/x")
    assert path == "/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Ainference-profile%2Fx/count-tokens"


def test_the_answer_is_its_input_tokens() -> None:
    assert COUNTER is not None
    assert "inputTokens" in OPERATION.output_shape.required_members
    assert COUNTER.parse({"inputTokens": 77}) == 77


@pytest.mark.parametrize("answer", [{}, {"inputTokens": "7"}, {"usage": {"inputTokens": 7}}, None])
def test_another_body_is_no_count(answer: Any) -> None:
    assert COUNTER is not None
    with pytest.raises(ValueError):
        COUNTER.parse(answer)

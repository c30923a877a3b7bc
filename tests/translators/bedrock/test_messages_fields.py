"""What a Messages client sends that crosses to Bedrock Converse: `stop_sequences` as
`inferenceConfig.stopSequences` for every model, `top_k` through `additionalModelRequestFields`
for Claude only, a failed tool's result as `toolResult.status: "error"` where the model takes it
(Claude, Nova) and as marked text elsewhere, `input_examples` dropped; and back, the stop sequence
that matched (docs/bedrock.md "Request", "Stop sequences")."""

from __future__ import annotations

from typing import Any

import botocore.session
import pytest
from botocore.validate import ParamValidator

from tests.translators.bedrock.frames import event
from tests.translators.bedrock.support import CLAUDE, NOVA
from tests.translators.messages_client.messages import assistant, body, tool, tool_result, tool_use, user
from tests.translators.messages_client.sdk import validate_stream
from translators import Translation, stream_translator, translate_request
from translators.core.ids import sequential_ids

LLAMA = "meta.llama3-3-70b-instruct-v1:0"


def bedrock(request_body: dict[str, Any], model: str = CLAUDE) -> Translation:
    translation = translate_request(request_body, "bedrock", model, client="messages")
    shape = botocore.session.get_session().get_service_model("bedrock-runtime").operation_model(
        "ConverseStream").input_shape
    found = ParamValidator().validate({**translation.body, "modelId": model}, shape)
    assert not found.has_errors(), found.generate_report()
    return translation


@pytest.mark.parametrize("model", [CLAUDE, NOVA, LLAMA])
def test_stop_sequences_are_the_inference_configs(model: str) -> None:
    translation = bedrock(body(stop_sequences=["END", "###"]), model)
    assert translation.body["inferenceConfig"]["stopSequences"] == ["END", "###"]
    assert translation.dropped == []


def test_claude_is_asked_which_stop_sequence_matched() -> None:
    paths = bedrock(body(stop_sequences=["END"])).body["additionalModelResponseFieldPaths"]
    assert paths == ["/stop_sequence"]
    assert "additionalModelResponseFieldPaths" not in bedrock(body(stop_sequences=["END"]), LLAMA).body
    assert "additionalModelResponseFieldPaths" not in bedrock(body()).body


def test_top_k_goes_to_claude_as_its_own_field() -> None:
    translation = bedrock(body(top_k=40))
    assert translation.body["additionalModelRequestFields"] == {"top_k": 40}
    assert translation.dropped == []


@pytest.mark.parametrize("model", [NOVA, LLAMA])
def test_top_k_is_dropped_for_other_models(model: str) -> None:
    translation = bedrock(body(top_k=40), model)
    assert "additionalModelRequestFields" not in translation.body
    assert translation.dropped == ["top_k"]


def result_of(translation: Translation) -> dict[str, Any]:
    return next(b["toolResult"] for b in translation.body["messages"][-1]["content"] if "toolResult" in b)


def failed_call() -> dict[str, Any]:
    failed = tool_result("t1", "exit 1", is_error=True)
    return body(user("q"), assistant(tool_use("t1", "Bash")), user(failed), tools=[tool("Bash")])


@pytest.mark.parametrize("model", [CLAUDE, NOVA])
def test_a_failed_tools_result_has_status_error_where_the_model_takes_it(model: str) -> None:
    result = result_of(bedrock(failed_call(), model))
    assert result["status"] == "error"
    assert result["content"] == [{"text": "exit 1"}]


def test_a_model_without_status_reads_the_failure_in_the_text() -> None:
    translation = bedrock(failed_call(), LLAMA)
    result = result_of(translation)
    assert "status" not in result
    assert result["content"] == [{"text": "Error: exit 1"}]
    assert translation.dropped == []


def test_input_examples_are_dropped() -> None:
    translation = bedrock(body(tools=[tool("Read", input_examples=[{"x": "a"}])]))
    assert translation.dropped == ["tools[0].input_examples"]


# -- the stop sequence back -----------------------------------------------------------------------

def turn(stop: dict[str, Any]) -> bytes:
    return b"".join([
        event("messageStart", {"role": "assistant"}),
        event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "one two"}}),
        event("contentBlockStop", {"contentBlockIndex": 0}),
        event("messageStop", stop),
        event("metadata", {"usage": {"inputTokens": 5, "outputTokens": 2, "totalTokens": 7}}),
    ])


def through(data: bytes) -> tuple[Any, list[str]]:
    translation = bedrock(body(stop_sequences=["three"]))
    translator = stream_translator("bedrock", translation, new_id=sequential_ids())
    message, _ = validate_stream(translator.feed(data) + translator.close())
    return message, translator.report.dropped


@pytest.mark.parametrize("fields", [{"delta": {"stop_sequence": "three"}}, {"stop_sequence": "three"}])
def test_claudes_matched_stop_sequence_reaches_a_messages_client(fields: dict[str, Any]) -> None:
    message, dropped = through(turn({"stopReason": "stop_sequence", "additionalModelResponseFields": fields}))
    assert (message.stop_reason, message.stop_sequence) == ("stop_sequence", "three")
    assert dropped == []


def test_a_stop_sequence_bedrock_does_not_name_is_still_a_stop_sequence() -> None:
    message, _ = through(turn({"stopReason": "stop_sequence"}))
    assert (message.stop_reason, message.stop_sequence) == ("stop_sequence", None)


def test_other_additional_response_fields_are_still_reported() -> None:
    fields = {"delta": {"stop_sequence": None}, "trace": "x"}
    message, dropped = through(turn({"stopReason": "end_turn", "additionalModelResponseFields": fields}))
    assert message.stop_reason == "end_turn"
    assert dropped == ["stream.messageStop.additionalModelResponseFields"]

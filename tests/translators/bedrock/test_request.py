"""translators/bedrock/request.py (+ messages.py, tools.py): Responses -> Converse request."""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

import botocore.session
import pytest
from botocore.validate import ParamValidator

from tests.translators.bedrock.support import (
    CLAUDE,
    NOVA,
    OLD_CLAUDE,
    SHELL,
    assistant,
    bedrock,
    blocks,
    call,
    codex_request,
    kinds,
    output,
    request,
    user,
)

CODEX_FILES = ["request_classic_gpt55.json", "request_followup_after_apply_patch.json",
               "request_lite_functions_namespace.json", "request_local_compaction.json",
               "request_unknown_model.json"]
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
TOOL_USE_ID = re.compile(r"[a-zA-Z0-9_.:-]{1,64}")


# -- endpoint and shape --------------------------------------------------------------------------
def test_streaming_request_posts_to_converse_stream_with_the_model_id_url_encoded() -> None:
    translation = bedrock(request("hi"), CLAUDE)
    assert translation.path == "/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/converse-stream"


def test_non_streaming_request_posts_to_converse() -> None:
    assert bedrock(request("hi", stream=False), NOVA).path.endswith("/converse")


def test_model_id_travels_in_the_path_only() -> None:
    translation = bedrock(request("hi"), CLAUDE)
    assert "model" not in translation.body and "modelId" not in translation.body


@pytest.mark.parametrize("model", [CLAUDE, NOVA])
@pytest.mark.parametrize("name", CODEX_FILES)
def test_codex_requests_validate_against_the_bedrock_service_model(name: str, model: str) -> None:
    translation = bedrock(codex_request(name), model)
    shape = botocore.session.get_session().get_service_model("bedrock-runtime").operation_model(
        "ConverseStream").input_shape
    report = ParamValidator().validate({**translation.body, "modelId": model}, shape)
    assert not report.has_errors(), report.generate_report()


@pytest.mark.parametrize("name", CODEX_FILES)
def test_tool_names_and_tool_use_ids_match_bedrock_patterns(name: str) -> None:
    translation = bedrock(codex_request(name))
    specs = translation.body.get("toolConfig", {}).get("tools", [])
    assert all(TOOL_NAME.fullmatch(s["toolSpec"]["name"]) for s in specs)
    ids = [b.get("toolUse", b.get("toolResult", {})).get("toolUseId") for b in blocks(translation)]
    assert all(TOOL_USE_ID.fullmatch(i) for i in ids if i is not None)


# -- system prompt and caching -------------------------------------------------------------------
def test_developer_messages_become_system_text_blocks() -> None:
    body = codex_request("request_classic_gpt55.json")
    developer = ["\n".join(p["text"] for p in item["content"])
                 for item in body["input"] if item.get("role") == "developer"]
    system = bedrock(body, NOVA).body["system"]
    assert [b["text"] for b in system] == developer


def test_system_prompt_ends_with_a_cache_point_for_claude() -> None:
    system = bedrock(request("hi", instructions="Be brief."), CLAUDE).body["system"]
    assert system == [{"text": "Be brief."}, {"cachePoint": {"type": "default"}}]


def test_last_message_ends_with_a_cache_point_for_claude() -> None:
    messages = bedrock(request([user("a"), assistant("b"), user("c")]), CLAUDE).body["messages"]
    assert messages[-1]["content"][-1] == {"cachePoint": {"type": "default"}}
    assert sum("cachePoint" in b for m in messages for b in m["content"]) == 1


@pytest.mark.parametrize("model", [NOVA, OLD_CLAUDE])
def test_models_without_prompt_caching_get_no_cache_points(model: str) -> None:
    body = bedrock(request([user("a")], instructions="Be brief."), model).body
    assert "cachePoint" not in json.dumps(body)


# -- conversation shape ----------------------------------------------------------------------------
@pytest.mark.parametrize("name", CODEX_FILES)
def test_roles_alternate_and_the_conversation_opens_with_user(name: str) -> None:
    roles = [m["role"] for m in bedrock(codex_request(name)).body["messages"]]
    assert roles[0] == "user"
    assert all(a != b for a, b in itertools.pairwise(roles))


def test_conversation_opening_with_an_assistant_turn_gets_a_user_turn_first() -> None:
    translation = bedrock(request([assistant("earlier answer"), user("go on")]))
    assert [m["role"] for m in translation.body["messages"]] == ["user", "assistant", "user"]
    assert any("open with a user turn" in note for note in translation.notes)


def test_results_of_parallel_calls_share_one_user_message_ahead_of_new_text() -> None:
    items = [user("go"), call("c1"), call("c2"), output("c1"), output("c2"), user("next")]
    translation = bedrock(request(items, tools=[SHELL]), NOVA)
    assistant_turn, results = translation.body["messages"][1:]
    assert kinds(assistant_turn) == ["toolUse", "toolUse"]
    assert kinds(results) == ["toolResult", "toolResult", "text"]
    assert [b["toolResult"]["toolUseId"] for b in results["content"][:2]] == ["c1", "c2"]


def test_history_function_call_becomes_tool_use_with_an_object_input() -> None:
    translation = bedrock(request([user("go"), call("c1", arguments='{"cmd": "ls -la"}'), output("c1")],
                                  tools=[SHELL]))
    [tool_use] = [b["toolUse"] for b in blocks(translation, "assistant")]
    assert tool_use == {"toolUseId": "c1", "name": "shell", "input": {"cmd": "ls -la"}}


def test_tool_result_carries_the_output_text() -> None:
    translation = bedrock(request([user("go"), call("c1"), output("c1", "file.txt")], tools=[SHELL]))
    [result] = [b["toolResult"] for b in blocks(translation, "user") if "toolResult" in b]
    assert result["content"] == [{"text": "file.txt"}]


def test_call_ids_bedrock_cannot_take_are_rewritten_alike_on_call_and_result() -> None:
    bad = "call/with spaces/" + "x" * 80
    translation = bedrock(request([user("go"), call(bad), output(bad)], tools=[SHELL]))
    use = next(b["toolUse"]["toolUseId"] for b in blocks(translation) if "toolUse" in b)
    result = next(b["toolResult"]["toolUseId"] for b in blocks(translation) if "toolResult" in b)
    assert use == result
    assert TOOL_USE_ID.fullmatch(use)
    assert bedrock(request([user("go"), call(bad), output(bad)], tools=[SHELL])).body == translation.body


def test_call_ids_that_differ_only_in_invalid_characters_stay_distinct() -> None:
    translation = bedrock(request([user("go"), call("a/b"), call("a b"), output("a/b"), output("a b")],
                                  tools=[SHELL]))
    ids = [b["toolUse"]["toolUseId"] for b in blocks(translation) if "toolUse" in b]
    assert len(set(ids)) == 2


def test_valid_call_ids_pass_unchanged() -> None:
    translation = bedrock(request([user("go"), call("tooluse_AbC-1.2:3"), output("tooluse_AbC-1.2:3")],
                                  tools=[SHELL]))
    [tool_use] = [b["toolUse"] for b in blocks(translation) if "toolUse" in b]
    assert tool_use["toolUseId"] == "tooluse_AbC-1.2:3"


def test_empty_tool_output_is_sent_as_a_placeholder_text() -> None:
    translation = bedrock(request([user("go"), call("c1"), output("c1", "")], tools=[SHELL]))
    [result] = [b["toolResult"] for b in blocks(translation) if "toolResult" in b]
    assert result["content"] and result["content"][0]["text"].strip()


def test_blank_text_parts_are_not_sent() -> None:
    translation = bedrock(request([user("  "), user("real")]))
    assert [b for b in blocks(translation) if "text" in b] == [{"text": "real"}]


def test_assistant_phase_is_reported() -> None:
    item = {**assistant("thinking aloud"), "phase": "commentary"}
    assert "input[1].phase" in bedrock(request([user("go"), item, user("more")])).dropped


# -- images ---------------------------------------------------------------------------------------
def image(url: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "see"},
                                                          {"type": "input_image", "image_url": url}]}


def test_data_url_image_becomes_an_image_block_with_its_bytes() -> None:
    translation = bedrock(request([image(f"data:image/png;base64,{PNG}")]))
    assert {"image": {"format": "png", "source": {"bytes": PNG}}} in blocks(translation)


def test_http_image_url_is_reported_and_not_sent() -> None:
    translation = bedrock(request([image("https://example.com/cat.png")]))
    assert not any("image" in b for b in blocks(translation))
    assert "input[0].content[1]" in translation.dropped
    assert any("http(s) URLs cannot be sent" in note for note in translation.notes)


def test_image_of_a_type_bedrock_lacks_is_reported() -> None:
    translation = bedrock(request([image(f"data:image/bmp;base64,{PNG}")]))
    assert not any("image" in b for b in blocks(translation))
    assert "input[0].content[1]" in translation.dropped


def test_image_in_a_tool_output_is_sent_inside_the_tool_result() -> None:
    out = output("c1", [{"type": "input_image", "image_url": f"data:image/jpeg;base64,{PNG}"}])
    translation = bedrock(request([user("look"), call("c1"), out], tools=[SHELL]))
    [result] = [b["toolResult"] for b in blocks(translation) if "toolResult" in b]
    assert result["content"] == [{"image": {"format": "jpeg", "source": {"bytes": PNG}}}]

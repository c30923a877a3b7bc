"""translators/bedrock/messages.py: items -> alternating Converse messages, ids, images, reasoning replay."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest

from tests.translators.bedrock.support import (
    CLAUDE,
    CODEX_FILES,
    NOVA,
    SHELL,
    assistant,
    bedrock,
    blocks,
    call,
    codex_request,
    kinds,
    output,
    reasoning,
    request,
    user,
)
from translators.ir.request import VendorState

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
TOOL_USE_ID = re.compile(r"[a-zA-Z0-9_.:-]{1,64}")
SIGNED = VendorState(dialect="bedrock", text="I should list files.", signature="c2lnbmF0dXJl")


def thinking(body: dict[str, Any]) -> dict[str, Any] | None:
    return body.get("additionalModelRequestFields", {}).get("thinking")


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


# -- reasoning replay -------------------------------------------------------------------------------
def tool_loop(state: VendorState) -> dict[str, Any]:
    return request([user("list files"), reasoning(state), call("c1"), output("c1")],
                   tools=[SHELL], reasoning={"effort": "medium"})


def test_signed_reasoning_is_replayed_before_the_tool_use_in_the_assistant_turn() -> None:
    translation = bedrock(tool_loop(SIGNED), CLAUDE)
    turn = translation.body["messages"][1]
    assert kinds(turn) == ["reasoningContent", "toolUse"]
    assert turn["content"][0]["reasoningContent"]["reasoningText"] == {"text": SIGNED.text,
                                                                       "signature": SIGNED.signature}
    assert thinking(translation.body) is not None


def test_redacted_reasoning_is_replayed_as_redacted_content() -> None:
    state = VendorState(dialect="bedrock", redacted="b3BhcXVl")
    turn = bedrock(tool_loop(state), CLAUDE).body["messages"][1]
    assert turn["content"][0] == {"reasoningContent": {"redactedContent": "b3BhcXVl"}}


def test_reasoning_from_another_dialect_is_reported_not_replayed() -> None:
    foreign = VendorState(dialect="anthropic", text="t", signature="s")
    translation = bedrock(request([user("a"), reasoning(foreign), assistant("b"), user("c")],
                                  reasoning={"effort": "medium"}), CLAUDE)
    assert not any("reasoningContent" in b for b in blocks(translation))
    assert "input[1]" in translation.dropped


def test_open_tool_turn_without_signed_reasoning_turns_thinking_off() -> None:
    translation = bedrock(request([user("list files"), call("c1"), output("c1")], tools=[SHELL],
                                  reasoning={"effort": "medium"}), CLAUDE)
    assert thinking(translation.body) is None
    assert any("no signed reasoning" in note for note in translation.notes)


def test_reasoning_is_not_replayed_when_thinking_is_off() -> None:
    translation = bedrock(tool_loop(SIGNED), NOVA)
    assert not any("reasoningContent" in b for b in blocks(translation))
    assert "input[1]" in translation.dropped


def test_a_model_other_than_claude_and_nova_gets_its_tool_results_alone_in_their_turn() -> None:
    # Llama refuses "Conversation blocks and tool result blocks cannot be provided in the same turn"
    # (docs/bedrock.md "Refusals"): the text that follows the results rides in the last result
    items = [user("go"), call("c1"), call("c2"), output("c1"), output("c2", "done"), user("next")]
    translation = bedrock(request(items, tools=[SHELL]), "meta.llama3-70b-instruct-v1:0")
    results = translation.body["messages"][2]
    assert kinds(results) == ["toolResult", "toolResult"]
    assert results["content"][1]["toolResult"]["content"] == [{"text": "done"}, {"text": "next"}]
    assert any("tool results alone" in note for note in translation.notes)
    nova = bedrock(request(items, tools=[SHELL]), NOVA)
    assert kinds(nova.body["messages"][2]) == ["toolResult", "toolResult", "text"]

"""IR items -> Chat `messages` (docs/chat.md "Request", "DeepSeek")."""

from __future__ import annotations

import json
from typing import Any

from tests.translators.chat.chatdata import assert_chat_request, codex_request, function, responses_request
from tests.translators.messages_client.messages import claude_code_request
from translators import Translation, translate_request
from translators.chat.messages import MAX_CALL_ID
from translators.features import vendor_state
from translators.ir.request import VendorState

PNG = "data:image/png;base64,iVBORw0KGgo="


def _chat(model: str, items: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> Translation:
    return translate_request(
        responses_request(model, tools if tools is not None else [function("f")], input=items), "chat"
    )


def _user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def _call(call_id: str, name: str = "f", arguments: str = "{}") -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": arguments}


def _output(call_id: str, output: Any = "ok") -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def _reasoning(text: str | None, dialect: str = "chat") -> dict[str, Any]:
    encrypted = vendor_state.encode(VendorState(dialect=dialect, text=text)) if text is not None else None
    return {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": text or "..."}],
        "encrypted_content": encrypted,
    }


def _roles(translation: Translation) -> list[str]:
    return [m["role"] for m in translation.body["messages"]]


def test_opening_developer_messages_become_one_leading_system_message() -> None:
    request = codex_request("request_classic_gpt55.json")
    developer = [p["text"] for i in request["input"] if i.get("role") == "developer" for p in i["content"]]
    messages = translate_request(request, "chat").body["messages"]
    assert [m["role"] for m in messages].count("system") == 1
    assert messages[0]["role"] == "system"
    assert all(text in messages[0]["content"] for text in developer)


def test_namespace_descriptions_are_added_to_the_system_message() -> None:
    tools = [
        {
            "type": "namespace",
            "name": "mcp__docs__",
            "description": "Search the product docs.",
            "tools": [function("search")],
        }
    ]
    system = _chat("qwen3", [_user("hi")], tools).body["messages"][0]
    assert system["role"] == "system" and "Search the product docs." in system["content"]


# -- system first (docs/chat.md "System first") ------------------------------------------------


MOVED = ("system message moved into the opening system message (chat templates of open models take a "
         "system message only first)")


def _developer(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": text}]}


def test_a_developer_message_mid_conversation_is_joined_into_the_opening_system_message() -> None:
    translated = _chat("qwen3", [_user("a"), _developer("rule"), _user("b")])
    assert [(m["role"], m["content"]) for m in translated.body["messages"]] == [
        ("system", "rule"), ("user", "a"), ("user", "b")]
    assert translated.notes == [f"input[1]: {MOVED}"]


def test_every_system_text_is_in_the_one_opening_message_in_order_a_blank_line_apart() -> None:
    items = [_developer("opening"), _user("a"), {"type": "message", "role": "assistant",
                                                  "content": [{"type": "output_text", "text": "ok"}]},
             _developer("later"), _user("b"), _developer("last")]
    translated = _chat("qwen3", items, tools=[])
    messages = translated.body["messages"]
    assert messages[0] == {"role": "system", "content": "opening\n\nlater\n\nlast"}
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert translated.notes == [f"input[3], input[5]: {MOVED}"]


def test_a_system_message_between_an_assistant_text_and_its_calls_leaves_one_assistant_message() -> None:
    said = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "looking"}]}
    items = [_user("a"), said, _developer("rule"), _call("c1"), _output("c1")]
    body = _chat("qwen3", items).body
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "tool"]
    assert body["messages"][2]["content"] == "looking" and body["messages"][2]["tool_calls"][0]["id"] == "c1"
    assert_chat_request(body)


def test_codex_developer_message_mid_input_goes_first_and_the_request_stays_valid() -> None:
    """Codex's real follow-up, with a developer message after the turn began (the recorded
    requests open with theirs; any later one, as a client sends when its instructions change
    mid-session, must go first too)."""
    request = codex_request("request_followup_after_apply_patch.json")
    rule = "<permissions instructions>approval: never</permissions instructions>"
    request["input"].append(_developer(rule))
    request["input"].append(_user("go on"))
    translated = translate_request(request, "chat", "qwen3-coder")
    messages = translated.body["messages"]
    assert messages[0]["role"] == "system"
    assert messages[0]["content"].endswith(rule)
    assert [m["role"] for m in messages].count("system") == 1
    assert_chat_request(translated.body)


def test_claude_codes_system_message_after_the_users_turn_goes_first() -> None:
    raw = claude_code_request()
    translated = translate_request(raw, "chat", "deepseek-chat", client="messages")
    messages = translated.body["messages"]
    late = raw["messages"][1]["content"][0]["text"]
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"] == "\n\n".join([*(b["text"] for b in raw["system"][1:]), late])
    assert f"messages[1]: {MOVED}" in translated.notes
    assert_chat_request(translated.body)


def test_user_images_become_image_url_parts() -> None:
    items = [
        {
            "type": "message",
            "role": "user",
            "content": [
                {"type": "input_text", "text": "look"},
                {"type": "input_image", "image_url": PNG, "detail": "low"},
            ],
        }
    ]
    assert _chat("gpt-4o", items).body["messages"][0]["content"] == [
        {"type": "text", "text": "look"},
        {"type": "image_url", "image_url": {"url": PNG, "detail": "low"}},
    ]


def test_image_detail_chat_does_not_know_is_reported_dropped() -> None:
    items = [
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_image", "image_url": PNG, "detail": "original"}],
        }
    ]
    translation = _chat("gpt-4o", items)
    assert translation.body["messages"][0]["content"] == [{"type": "image_url", "image_url": {"url": PNG}}]
    assert "input[0].content[0].detail" in translation.dropped


def test_images_for_deepseek_are_reported_dropped() -> None:
    items = [
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "look"}, {"type": "input_image", "image_url": PNG}],
        }
    ]
    translation = _chat("deepseek-chat", items)
    assert translation.body["messages"][0]["content"] == "look"
    assert "input[0].content[1]" in translation.dropped


def test_assistant_text_and_its_calls_are_one_message_followed_by_tool_messages_in_call_order() -> None:
    items = [
        _user("go"),
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Both."}]},
        _call("c1"),
        _call("c2"),
        _output("c2", "two"),
        _output("c1", "one"),
    ]
    messages = _chat("qwen3", items).body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool"]
    assert messages[1]["content"] == "Both."
    assert [c["id"] for c in messages[1]["tool_calls"]] == ["c1", "c2"]
    assert [(m["tool_call_id"], m["content"]) for m in messages[2:]] == [("c1", "one"), ("c2", "two")]


def test_sequential_tool_steps_stay_separate_assistant_messages() -> None:
    items = [_user("go"), _call("c1"), _output("c1"), _call("c2"), _output("c2")]
    assert _roles(_chat("qwen3", items)) == ["user", "assistant", "tool", "assistant", "tool"]


def test_function_arguments_are_sent_as_the_model_wrote_them() -> None:
    arguments = '{ "cmd" : "ls",  "n": 1 }'
    messages = _chat("qwen3", [_user("go"), _call("c1", arguments=arguments), _output("c1")]).body["messages"]
    assert messages[1]["tool_calls"][0]["function"]["arguments"] == arguments


def test_tool_result_images_follow_the_tool_messages_in_a_user_message() -> None:
    output = [{"type": "input_text", "text": "shot"}, {"type": "input_image", "image_url": PNG}]
    items = [
        _user("go"),
        _call("c1"),
        _call("c2"),
        _output("c1", output),
        _output("c2", "fine"),
        _user("next"),
    ]
    messages = _chat("gpt-4o", items).body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "user", "user"]
    assert messages[2]["content"] == "shot"
    assert {"type": "image_url", "image_url": {"url": PNG}} in messages[4]["content"]


def test_tool_result_images_for_deepseek_are_reported_dropped() -> None:
    items = [_user("go"), _call("c1"), _output("c1", [{"type": "input_image", "image_url": PNG}])]
    translation = _chat("deepseek-chat", items)
    assert _roles(translation) == ["user", "assistant", "tool"]
    assert "input[2].output[0]" in translation.dropped


def test_phase_is_reported_dropped() -> None:
    items = [
        _user("go"),
        {
            "type": "message",
            "role": "assistant",
            "phase": "commentary",
            "content": [{"type": "output_text", "text": "hm"}],
        },
    ]
    assert "input[1].phase" in _chat("qwen3", items).dropped


def test_long_call_ids_are_cut_alike_on_the_call_and_its_result() -> None:
    long_id = "toolu_" + "x" * 60
    messages = _chat("gpt-4o", [_user("go"), _call(long_id), _output(long_id)]).body["messages"]
    sent = messages[1]["tool_calls"][0]["id"]
    assert len(sent) <= MAX_CALL_ID and messages[2]["tool_call_id"] == sent


def test_freeform_call_in_history_is_native_custom_for_openai() -> None:
    request = codex_request("request_followup_after_apply_patch.json")
    call = next(i for i in request["input"] if i["type"] == "custom_tool_call")
    sent = translate_request(request, "chat", "gpt-5.5").body["messages"][-2]["tool_calls"][0]
    assert sent == {
        "id": call["call_id"],
        "type": "custom",
        "custom": {"name": "apply_patch", "input": call["input"]},
    }


def test_freeform_call_in_history_is_wrapped_for_emulating_targets() -> None:
    request = codex_request("request_followup_after_apply_patch.json")
    call = next(i for i in request["input"] if i["type"] == "custom_tool_call")
    sent = translate_request(request, "chat", "deepseek-chat").body["messages"][-2]["tool_calls"][0]
    assert sent["type"] == "function" and json.loads(sent["function"]["arguments"]) == {
        "input": call["input"]
    }


def test_reasoning_for_targets_that_take_none_is_reported_dropped() -> None:
    translation = _chat("gpt-5.5", [_user("go"), _reasoning("because"), _call("c1"), _output("c1")])
    assert "reasoning_content" not in translation.body["messages"][1]
    assert "input[1]" in translation.dropped


def test_deepseek_tool_call_message_carries_its_reasoning_content() -> None:
    messages = _chat("deepseek-chat", [_user("go"), _reasoning("because"), _call("c1"), _output("c1")]).body[
        "messages"
    ]
    assert messages[1]["reasoning_content"] == "because"


def test_deepseek_tool_call_message_without_reasoning_gets_an_empty_reasoning_content() -> None:
    messages = _chat("deepseek-chat", [_user("go"), _call("c1"), _output("c1")]).body["messages"]
    assert messages[1]["reasoning_content"] == ""


def test_foreign_reasoning_for_deepseek_is_dropped_and_replaced_by_an_empty_one() -> None:
    translation = _chat(
        "deepseek-chat", [_user("go"), _reasoning("signed", dialect="anthropic"), _call("c1"), _output("c1")]
    )
    assert translation.body["messages"][1]["reasoning_content"] == ""
    assert "input[1]" in translation.dropped

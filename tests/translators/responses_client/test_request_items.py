"""Responses request decoding, history items: every input item Codex 0.169 sends (docs/codex.md "Input
items")."""

from __future__ import annotations

import json

import pytest

from tests.translators.bodies import (
    PATCH,
    assistant,
    body,
    custom_call,
    custom_output,
    decoded,
    developer,
    function_call,
    function_output,
    user,
)
from translators.core.errors import MalformedRequest
from translators.features import vendor_state
from translators.ir.request import Image, Message, Reasoning, Text, ToolCall, ToolResult, VendorState

PNG = "data:image/png;base64,iVBORw0KGgo="


def test_a_string_input_is_one_user_message():
    request, _ = decoded(body() | {"input": "say hi"})
    assert request.items == [Message(role="user", parts=[Text(text="say hi")], origin="input")]


def test_leading_developer_messages_become_the_system_prompt_in_order():
    request, _ = decoded(body(developer("base prompt"), developer("permissions", "skills"), user("hi")))
    assert request.system == ["base prompt", "permissions\nskills"]
    assert [i.role for i in request.items] == ["user"]


def test_top_level_instructions_come_before_developer_messages():
    request, _ = decoded(body(developer("dev"), user("hi"), instructions="instr"))
    assert request.system == ["instr", "dev"]


def test_a_developer_message_after_the_conversation_started_stays_in_place_as_system():
    request, _ = decoded(body(user("hi"), developer("sandbox changed")))
    assert request.items[1] == Message(role="system", parts=[Text(text="sandbox changed")], origin="input[1]")


def test_an_assistant_message_keeps_its_phase():
    request, report = decoded(
        body(user("hi"), assistant("working on it", phase="commentary", status="completed"))
    )
    assert request.items[1] == Message(
        role="assistant", parts=[Text(text="working on it")], phase="commentary", origin="input[1]"
    )
    assert report.dropped == []


def test_ids_status_and_codex_turn_metadata_on_replayed_items_are_bookkeeping():
    _, report = decoded(
        body(
            user("q"),
            assistant(
                "a", id="msg_1", status="completed", internal_chat_message_metadata_passthrough={"turn": 1}
            ),
        )
    )
    assert report.dropped == []


def test_an_unknown_field_on_an_item_is_reported():
    _, report = decoded(body(user("q"), assistant("a", sparkle=True)))
    assert report.dropped == ["input[1].sparkle"]


def test_unknown_fields_are_reported_in_the_order_the_request_has_them():
    names = ["zeta", "alpha", "mu", "beta", "omega", "kappa", "delta", "iota"]
    _, report = decoded(body(user("q"), assistant("a", **dict.fromkeys(names, True))))
    assert report.dropped == [f"input[1].{name}" for name in names]


def test_an_input_image_part_is_an_image():
    request, _ = decoded(
        body(
            {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "look"},
                    {"type": "input_image", "image_url": PNG, "detail": "high"},
                ],
            }
        )
    )
    assert request.items[0].parts == [
        Text(text="look"),
        Image(url=PNG, detail="high", origin="input[0].content[1]"),
    ]


def test_an_audio_part_is_reported_dropped():
    request, report = decoded(
        body(
            {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "hear"},
                    {"type": "input_audio", "audio_url": "data:audio/wav;base64,AA=="},
                ],
            }
        )
    )
    assert request.items[0].parts == [Text(text="hear")]
    assert report.dropped == ["input[0].content[1]"]


def test_an_agent_message_is_a_user_turn_with_its_text():
    request, _ = decoded(
        body(
            {
                "type": "agent_message",
                "author": "/root/worker",
                "recipient": "/root",
                "content": [{"type": "input_text", "text": "done: 3 files"}],
            }
        )
    )
    assert request.items == [Message(role="user", parts=[Text(text="done: 3 files")], origin="input[0]")]


def test_reasoning_written_by_this_gateway_carries_its_vendor_state():
    state = VendorState(dialect="anthropic", signature="sig==", text="think")
    request, _ = decoded(
        body(
            user("q"),
            {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": "s"}],
                "encrypted_content": vendor_state.encode(state),
            },
        )
    )
    assert request.items[1] == Reasoning(summary=["s"], state=state, origin="input[1]")


def test_openai_encrypted_reasoning_is_kept_opaque():
    request, _ = decoded(
        body(
            user("q"),
            {"type": "reasoning", "summary": [], "content": None, "encrypted_content": "gAAAAB-openai"},
        )
    )
    assert request.items[1] == Reasoning(opaque="gAAAAB-openai", origin="input[1]")


def test_a_function_call_and_its_string_output():
    request, _ = decoded(
        body(user("q"), function_call("c1", "exec_command", '{"cmd":"ls"}'), function_output("c1", "a.txt"))
    )
    assert request.items[1:] == [
        ToolCall(
            kind="function", call_id="c1", name="exec_command", arguments='{"cmd":"ls"}', origin="input[1]"
        ),
        ToolResult(kind="function", call_id="c1", parts=[Text(text="a.txt")], origin="input[2]"),
    ]


def test_a_namespaced_function_call_keeps_its_namespace():
    request, _ = decoded(
        body(user("q"), function_call("c1", "sleep", "{}", namespace="clock"), function_output("c1", "slept"))
    )
    assert request.items[1].namespace == "clock"


def test_a_tool_output_array_of_input_text_and_input_image():
    request, _ = decoded(
        body(
            user("q"),
            function_call("c1", "view_image", '{"path":"a.png"}'),
            function_output(
                "c1",
                [{"type": "input_text", "text": "the image:"}, {"type": "input_image", "image_url": PNG}],
            ),
        )
    )
    assert request.items[2].parts == [Text(text="the image:"), Image(url=PNG, origin="input[2].output[1]")]


def test_a_custom_tool_call_keeps_its_raw_input_and_output():
    request, _ = decoded(
        body(
            user("q"),
            custom_call("p1", "apply_patch", PATCH, id="ctc_1", status="completed"),
            custom_output("p1", [{"type": "input_text", "text": "Exit code: 0"}]),
        )
    )
    assert request.items[1:] == [
        ToolCall(kind="custom", call_id="p1", name="apply_patch", arguments=PATCH, origin="input[1]"),
        ToolResult(kind="custom", call_id="p1", parts=[Text(text="Exit code: 0")], origin="input[2]"),
    ]


def test_a_local_shell_call_is_paired_with_its_output():
    action = {"type": "exec", "command": ["ls", "-la"], "timeout_ms": 1000, "working_directory": "/w"}
    request, _ = decoded(
        body(
            user("q"),
            {
                "type": "local_shell_call",
                "id": "lsh_1",
                "call_id": "sh1",
                "status": "completed",
                "action": action,
            },
            {"type": "function_call_output", "call_id": "sh1", "output": "total 0"},
        )
    )
    call, result = request.items[1:]
    assert (call.kind, call.call_id, call.name) == ("local_shell", "sh1", "local_shell")
    assert json.loads(call.arguments) == {
        "command": ["ls", "-la"],
        "timeout_ms": 1000,
        "working_directory": "/w",
    }
    assert (result.kind, result.call_id, result.parts) == ("local_shell", "sh1", [Text(text="total 0")])


def test_a_tool_search_call_and_its_output_are_a_call_and_a_result():
    request, _ = decoded(
        body(
            user("q"),
            {
                "type": "tool_search_call",
                "call_id": "ts1",
                "execution": "client",
                "status": "completed",
                "arguments": {"query": "calendar", "limit": 2},
            },
            {
                "type": "tool_search_output",
                "call_id": "ts1",
                "execution": "client",
                "status": "completed",
                "tools": [],
            },
        )
    )
    call, result = request.items[1:]
    assert (call.kind, call.call_id, call.name) == ("tool_search", "ts1", "tool_search")
    assert json.loads(call.arguments) == {"query": "calendar", "limit": 2}
    assert (result.kind, result.call_id) == ("tool_search", "ts1")


def test_the_last_configuration_update_sets_the_reasoning_effort():
    request, report = decoded(
        body(
            user("q"),
            {"type": "configuration_update", "reasoning": {"effort": "low"}},
            user("again"),
            {"type": "configuration_update", "reasoning": {"effort": "high"}},
            reasoning={"effort": "medium"},
        )
    )
    assert request.reasoning.effort == "high"
    assert [i.type for i in request.items] == ["message", "message"]
    assert report.dropped == []


def test_no_orphaned_tool_output_survives_decoding():
    request, report = decoded(body(user("q"), function_output("gone", "x"), custom_output("gone2", "y")))
    assert [i for i in request.items if isinstance(i, ToolResult)] == []
    assert report.dropped == ["input[1]", "input[2]"]


def test_a_tool_output_without_call_id_is_dropped_and_reported():
    request, report = decoded(body(user("q"), {"type": "function_call_output", "output": "x"}))
    assert len(request.items) == 1
    assert report.dropped == ["input[1]"]


def test_a_function_call_without_call_id_is_dropped_and_reported():
    request, report = decoded(body(user("q"), {"type": "function_call", "name": "f", "arguments": "{}"}))
    assert len(request.items) == 1
    assert report.dropped == ["input[1]"]


@pytest.mark.parametrize("kind", ["image_generation_call", "file_search_call"])
def test_hosted_tool_calls_in_history_are_dropped_and_reported(kind):
    request, report = decoded(
        body(user("q"), {"type": kind, "id": "x1", "status": "completed"}, user("next"))
    )
    assert [i.parts[0].text for i in request.items] == ["q", "next"]
    assert report.dropped == ["input[1]"]


def test_a_context_compaction_without_encrypted_content_is_dropped_and_reported():
    request, report = decoded(body(user("q"), {"type": "context_compaction"}))
    assert len(request.items) == 1
    assert report.dropped == ["input[1]"]


def test_an_unknown_item_type_is_a_malformed_request():
    with pytest.raises(MalformedRequest) as info:
        decoded(body({"type": "hologram"}))
    assert info.value.param == "input[0].type"

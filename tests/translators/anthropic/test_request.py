"""IR -> Anthropic Messages request body (issue 2, Build 4; docs/anthropic.md "Headers and auth", "Request",
"Conversation rules", "Tool names")."""

from __future__ import annotations

import base64
import re

import pytest

from tests.translators.bodies import (
    APPLY_PATCH_GRAMMAR,
    PATCH,
    additional_tools,
    assistant,
    body,
    custom,
    custom_call,
    custom_output,
    developer,
    function,
    function_call,
    function_output,
    namespace,
    tool_search,
    tool_search_call,
    tool_search_output,
    user,
)
from translators import translate_request
from translators.features import vendor_state
from translators.ir.request import VendorState

SIGNATURE = "EqkECkYIBxgCKkA8AZ4n/+==sig"
THINKING = "Let me think… about 925 ÷ 5.\n"


def anthropic(request_body, model=None):
    return translate_request(request_body, "anthropic", model)


def thinking_item(signature=SIGNATURE, text=THINKING, **extra):
    state = VendorState(dialect="anthropic", signature=signature, text=text)
    return {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": text}],
        "encrypted_content": vendor_state.encode(state),
        **extra,
    }


def blocks(message):
    return [b["type"] for b in message["content"]]


# -- envelope -------------------------------------------------------------------------------------


def test_the_request_goes_to_v1_messages_with_anthropic_version_2023_06_01():
    translation = anthropic(body(user("hi")))
    assert translation.path == "/v1/messages"
    assert translation.headers["anthropic-version"] == "2023-06-01"


def test_the_upstream_model_is_the_one_asked_for_or_the_clients():
    assert anthropic(body(user("hi")), "claude-sonnet-4-6").body["model"] == "claude-sonnet-4-6"
    assert anthropic(body(user("hi"), model="claude-opus-4-1")).body["model"] == "claude-opus-4-1"


def test_stream_is_set_only_for_a_streamed_request():
    assert anthropic(body(user("hi"))).body["stream"] is True
    assert "stream" not in anthropic(body(user("hi"), stream=False)).body


def test_max_tokens_comes_from_max_output_tokens():
    assert anthropic(body(user("hi"), max_output_tokens=1234)).body["max_tokens"] == 1234


def test_max_tokens_is_always_present_since_anthropic_requires_it():
    assert anthropic(body(user("hi"))).body["max_tokens"] == 32000


# -- system and messages --------------------------------------------------------------------------


def test_developer_messages_and_instructions_are_the_system_blocks():
    translation = anthropic(body(developer("base"), developer("perms"), user("hi"), instructions="instr"))
    assert [b["text"] for b in translation.body["system"]] == ["instr", "base", "perms"]
    assert translation.body["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert translation.body["messages"][0]["content"][0]["text"] == "hi"


def test_namespace_descriptions_go_into_the_system_prompt_but_codex_filler_does_not():
    translation = anthropic(
        body(
            user("hi"),
            tools=[
                namespace(
                    "multi_agent_v1", function("spawn_agent"), description="Tools for spawning sub-agents."
                ),
                namespace("clock", function("sleep"), description="Tools in the clock namespace."),
            ],
        )
    )
    system = "\n".join(b["text"] for b in translation.body["system"])
    assert "Tools for spawning sub-agents." in system
    assert "multi_agent_v1" in system
    assert "clock namespace" not in system


def test_no_system_key_without_system_text():
    assert "system" not in anthropic(body(user("hi"))).body


def test_consecutive_same_role_items_merge_into_one_turn():
    translation = anthropic(body(user("a"), user("b"), assistant("c"), assistant("d"), user("e")))
    assert [(m["role"], [b["text"] for b in m["content"]]) for m in translation.body["messages"]] == [
        ("user", ["a", "b"]),
        ("assistant", ["c", "d"]),
        ("user", ["e"]),
    ]


def test_a_later_developer_message_is_sent_as_user_text_in_place():
    translation = anthropic(body(user("a"), assistant("b"), developer("now read-only"), user("c")))
    assert [(m["role"], [b["text"] for b in m["content"]]) for m in translation.body["messages"]] == [
        ("user", ["a"]),
        ("assistant", ["b"]),
        ("user", ["now read-only", "c"]),
    ]


def test_an_assistant_phase_has_no_anthropic_equivalent_and_is_reported():
    translation = anthropic(body(user("a"), assistant("b", phase="commentary")))
    assert "input[1].phase" in translation.dropped


def test_the_newest_block_and_the_end_of_the_previous_request_are_cache_breakpoints():
    messages = anthropic(body(user("a"), assistant("b"), user("c"))).body["messages"]
    assert messages[-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert messages[0]["content"][0]["cache_control"] == {"type": "ephemeral"}  # the last request ended there
    assert "cache_control" not in messages[1]["content"][0]


# -- tools ----------------------------------------------------------------------------------------


def test_function_tools_become_anthropic_tools_with_input_schema():
    tool = function("exec_command", "Run.", {"cmd": {"type": "string"}})
    translation = anthropic(body(user("hi"), tools=[tool]))
    assert translation.body["tools"] == [
        {
            "name": "exec_command",
            "description": "Run.",
            "input_schema": tool["parameters"],
            "cache_control": {"type": "ephemeral"},
        }
    ]


def test_a_freeform_tool_becomes_one_required_string_input_with_the_grammar_in_the_description():
    translation = anthropic(
        body(user("hi"), tools=[custom("apply_patch", "Edit files.", APPLY_PATCH_GRAMMAR)])
    )
    tool = translation.body["tools"][0]
    assert tool["name"] == "apply_patch"
    assert tool["input_schema"]["required"] == ["input"]
    assert tool["input_schema"]["properties"]["input"]["type"] == "string"
    assert "Edit files." in tool["description"]
    assert "lark" in tool["description"]
    assert APPLY_PATCH_GRAMMAR.strip() in tool["description"]


def test_client_tool_search_becomes_a_function_tool():
    tool = tool_search("Find tools.")
    translation = anthropic(body(user("hi"), tools=[tool]))
    assert translation.body["tools"][0]["name"] == "tool_search"
    assert translation.body["tools"][0]["description"] == "Find tools."
    assert translation.body["tools"][0]["input_schema"] == tool["parameters"]


def test_tools_a_tool_search_output_loaded_are_declared_to_anthropic():
    translation = anthropic(
        body(
            user("spawn a helper"),
            tool_search_call("ts1", "agent"),
            tool_search_output("ts1", namespace("multi_agent_v1",
                                                function("spawn_agent", "Spawn.", defer_loading=True))),
            tools=[tool_search()],
        )
    )
    assert [t["name"] for t in translation.body["tools"]] == ["tool_search", "multi_agent_v1__spawn_agent"]
    use, result = translation.body["messages"][1]["content"][0], translation.body["messages"][2]["content"][0]
    assert (use["name"], use["input"], result["tool_use_id"]) == ("tool_search", {"query": "agent"}, "ts1")


def test_hosted_web_search_is_dropped_and_reported():
    translation = anthropic(body(user("hi"), tools=[function("f"), {"type": "web_search"}]))
    assert [t["name"] for t in translation.body["tools"]] == ["f"]
    assert "tools[1]" in translation.dropped


def test_namespaced_tools_are_flattened_and_map_back():
    translation = anthropic(
        body(
            user("hi"),
            additional_tools(
                namespace("functions", function("exec_command")),
                namespace("mcp__codex_apps__calendar", function("_create_event")),
                namespace("clock", function("sleep")),
            ),
        )
    )
    assert [t["name"] for t in translation.body["tools"]] == [
        "exec_command",
        "mcp__codex_apps__calendar_create_event",
        "clock__sleep",
    ]
    back = translation.tools.lookup("mcp__codex_apps__calendar_create_event")
    assert (back.namespace, back.name) == ("mcp__codex_apps__calendar", "_create_event")
    assert translation.tools.lookup("exec_command").namespace is None


def test_tool_names_stay_within_64_characters_and_history_calls_use_the_same_name():
    ns, name = "mcp__a_rather_long_server_name_here", "a_rather_long_tool_name_as_well_x"
    translation = anthropic(
        body(
            user("hi"),
            function_call("c1", name, "{}", namespace=ns),
            function_output("c1", "ok"),
            tools=[namespace(ns, function(name))],
        )
    )
    wire = translation.body["tools"][0]["name"]
    assert len(wire) == 64
    assert translation.body["messages"][1]["content"][0]["name"] == wire
    assert (translation.tools.lookup(wire).namespace, translation.tools.lookup(wire).name) == (ns, name)


def test_strict_has_no_anthropic_equivalent_and_is_reported():
    translation = anthropic(body(user("hi"), tools=[function("f") | {"strict": True}]))
    assert "tools[0].strict" in translation.dropped


def test_a_parameters_schema_without_object_root_is_wrapped_in_an_object():
    tool = {"type": "function", "name": "f", "parameters": {"properties": {"a": {"type": "string"}}}}
    schema = anthropic(body(user("hi"), tools=[tool])).body["tools"][0]["input_schema"]
    assert schema == {"type": "object", "properties": {"a": {"type": "string"}}}


# -- tool_choice ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("none", {"type": "none"}),
        ("required", {"type": "any"}),
        (
            {"type": "function", "name": "sleep", "namespace": "clock"},
            {"type": "tool", "name": "clock__sleep"},
        ),
    ],
)
def test_tool_choice_maps_to_anthropic(choice, expected):
    translation = anthropic(
        body(user("hi"), tool_choice=choice, tools=[namespace("clock", function("sleep"))])
    )
    assert translation.body["tool_choice"] == expected


def test_auto_tool_choice_is_the_default_and_not_written():
    assert "tool_choice" not in anthropic(body(user("hi"), tool_choice="auto", tools=[function("f")])).body


def test_parallel_tool_calls_false_disables_parallel_tool_use():
    translation = anthropic(body(user("hi"), parallel_tool_calls=False, tools=[function("f")]))
    assert translation.body["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}


def test_a_forced_tool_choice_turns_thinking_off():
    translation = anthropic(
        body(user("hi"), tool_choice="required", reasoning={"effort": "high"}, tools=[function("f")])
    )
    assert "thinking" not in translation.body
    assert "reasoning.effort" in translation.dropped


def test_tool_choice_naming_an_undeclared_tool_is_reported():
    translation = anthropic(
        body(user("hi"), tool_choice={"type": "function", "name": "ghost"}, tools=[function("f")])
    )
    assert "tool_choice" not in translation.body
    assert "tool_choice" in translation.dropped


# -- history: calls, results, thinking ------------------------------------------------------------


def test_a_tool_call_and_its_result_are_tool_use_then_tool_result_first_in_the_next_user_turn():
    translation = anthropic(
        body(
            user("q"),
            assistant("calling"),
            function_call("call_1", "f", '{"a": 1}'),
            function_output("call_1", "done"),
            user("thanks"),
            tools=[function("f")],
        )
    )
    messages = translation.body["messages"]
    assert messages[1] == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "calling"},
            {"type": "tool_use", "id": "call_1", "name": "f", "input": {"a": 1}},
        ],
    }
    assert blocks(messages[2]) == ["tool_result", "text"]
    assert messages[2]["content"][0]["tool_use_id"] == "call_1"
    assert messages[2]["content"][0]["content"] == [{"type": "text", "text": "done"}]


def test_parallel_results_come_first_in_call_order_before_any_user_text():
    translation = anthropic(
        body(
            user("q"),
            function_call("a", "f"),
            function_call("b", "f"),
            user("wait"),
            function_output("b", "B"),
            function_output("a", "A"),
            tools=[function("f")],
        )
    )
    turn = translation.body["messages"][2]
    assert [b.get("tool_use_id") or b["text"] for b in turn["content"]] == ["a", "b", "wait"]


def test_a_call_id_anthropic_rejects_is_rewritten_the_same_way_on_both_sides():
    translation = anthropic(
        body(
            user("q"),
            function_call("call.1:x", "f"),
            function_output("call.1:x", "ok"),
            tools=[function("f")],
        )
    )
    use = translation.body["messages"][1]["content"][0]
    result = translation.body["messages"][2]["content"][0]
    assert use["id"] == result["tool_use_id"]
    assert re.fullmatch(r"[A-Za-z0-9_-]+", use["id"])
    assert use["id"].startswith("call_1_x_")


def test_call_ids_that_differ_only_in_punctuation_stay_two_calls():
    translation = anthropic(
        body(
            user("q"),
            function_call("call.1", "f"),
            function_call("call:1", "f"),
            function_output("call.1", "a"),
            function_output("call:1", "b"),
            tools=[function("f")],
        )
    )
    uses = [b["id"] for b in translation.body["messages"][1]["content"] if b["type"] == "tool_use"]
    results = [b["tool_use_id"] for b in translation.body["messages"][2]["content"]]
    assert len(set(uses)) == 2
    assert results == uses


def test_a_valid_call_id_reaches_anthropic_unchanged():
    translation = anthropic(body(user("q"), function_call("toolu_01A-b_c", "f"),
                                 function_output("toolu_01A-b_c", "ok"), tools=[function("f")]))
    assert translation.body["messages"][1]["content"][0]["id"] == "toolu_01A-b_c"


def test_a_custom_tool_call_in_history_is_a_tool_use_with_its_raw_text_as_input():
    translation = anthropic(
        body(
            user("q"),
            custom_call("p1", "apply_patch", PATCH),
            custom_output("p1", "Exit code: 0"),
            tools=[custom("apply_patch", definition=APPLY_PATCH_GRAMMAR)],
        )
    )
    assert translation.body["messages"][1]["content"][0]["input"] == {"input": PATCH}


def test_history_arguments_that_are_not_json_are_sent_wrapped_and_noted():
    translation = anthropic(
        body(user("q"), function_call("c", "f", "{broken"), function_output("c", "x"), tools=[function("f")])
    )
    assert translation.body["messages"][1]["content"][0]["input"] == {"arguments": "{broken"}
    assert any("input[1]" in note for note in translation.notes)


def test_a_tool_output_image_goes_into_the_tool_result():
    png = base64.b64encode(b"\x89PNG\r\n").decode()
    translation = anthropic(
        body(
            user("q"),
            function_call("c", "view_image"),
            function_output(
                "c",
                [
                    {"type": "input_text", "text": "here"},
                    {"type": "input_image", "image_url": f"data:image/png;base64,{png}"},
                ],
            ),
            tools=[function("view_image")],
        )
    )
    assert translation.body["messages"][2]["content"][0]["content"] == [
        {"type": "text", "text": "here"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}},
    ]


def test_an_empty_tool_output_still_gives_a_tool_result():
    translation = anthropic(
        body(user("q"), function_call("c", "f"), function_output("c", ""), tools=[function("f")])
    )
    result = translation.body["messages"][2]["content"][0]
    assert result["type"] == "tool_result"
    assert result["content"][0]["text"]


def test_thinking_is_replayed_byte_exact_before_the_tool_use_it_belongs_to():
    translation = anthropic(
        body(
            user("q"),
            thinking_item(),
            function_call("c", "f"),
            function_output("c", "ok"),
            reasoning={"effort": "medium"},
            tools=[function("f")],
        )
    )
    turn = translation.body["messages"][1]
    assert turn["content"][0] == {"type": "thinking", "thinking": THINKING, "signature": SIGNATURE}
    assert blocks(turn) == ["thinking", "tool_use"]
    assert translation.body["thinking"]["type"] == "enabled"


def test_two_consecutive_tool_turns_with_thinking_stay_two_turns():
    # Regression (pairing): the second turn's thinking and tool_use were merged into the first
    # assistant turn, after a tool_use whose result the model had already seen.
    translation = anthropic(
        body(
            user("q"),
            thinking_item(signature="sig1", text="first"),
            function_call("a", "f"),
            function_output("a", "A"),
            thinking_item(signature="sig2", text="second"),
            function_call("b", "f"),
            function_output("b", "B"),
            reasoning={"effort": "medium"},
            tools=[function("f")],
        )
    )
    turns = [
        (m["role"], [b.get("signature") or b.get("id") or b.get("tool_use_id") for b in m["content"]])
        for m in translation.body["messages"][1:]
    ]
    assert turns == [
        ("assistant", ["sig1", "a"]),
        ("user", ["a"]),
        ("assistant", ["sig2", "b"]),
        ("user", ["b"]),
    ]
    assert translation.body["thinking"]["type"] == "enabled"


def test_redacted_thinking_is_replayed_as_it_came():
    state = VendorState(dialect="anthropic", redacted="EqkEopaque==")
    item = {"type": "reasoning", "summary": [], "encrypted_content": vendor_state.encode(state)}
    translation = anthropic(
        body(
            user("q"),
            item,
            function_call("c", "f"),
            function_output("c", "ok"),
            reasoning={"effort": "low"},
            tools=[function("f")],
        )
    )
    assert translation.body["messages"][1]["content"][0] == {
        "type": "redacted_thinking",
        "data": "EqkEopaque==",
    }


def test_reasoning_anthropic_cannot_read_is_dropped_and_reported():
    translation = anthropic(
        body(
            user("q"),
            {"type": "reasoning", "summary": [], "encrypted_content": "gAAAA"},
            assistant("hi"),
            reasoning={"effort": "medium"},
        )
    )
    assert "input[1]" in translation.dropped
    assert blocks(translation.body["messages"][1]) == ["text"]


def unsigned_tool_loop():
    """A thinking request inside a tool loop whose call came without signed thinking."""
    return anthropic(
        body(
            user("q"),
            function_call("c", "f"),
            function_output("c", "ok"),
            reasoning={"effort": "medium"},
            tools=[function("f")],
        )
    )


def test_thinking_is_turned_off_when_the_open_tool_turn_has_no_signed_thinking():
    translation = unsigned_tool_loop()
    assert "thinking" not in translation.body
    assert any("thinking turned off" in note for note in translation.notes)


def test_the_effort_is_reported_dropped_when_thinking_is_turned_off_for_the_open_tool_turn():
    assert "reasoning.effort" in unsigned_tool_loop().dropped


def test_thinking_blocks_are_not_sent_when_thinking_is_off():
    translation = anthropic(body(user("q"), thinking_item(), assistant("a"), user("more")))
    assert "thinking" not in translation.body
    assert blocks(translation.body["messages"][1]) == ["text"]
    assert "input[1]" in translation.dropped


# -- reasoning effort and sampling ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("effort", "budget"),
    [("minimal", 1024), ("low", 2048), ("medium", 8192), ("high", 16384), ("xhigh", 24576)],
)
def test_reasoning_effort_sets_the_thinking_budget(effort, budget):
    translation = anthropic(body(user("q"), reasoning={"effort": effort}))
    assert translation.body["thinking"] == {"type": "enabled", "budget_tokens": budget}
    assert translation.body["thinking"]["budget_tokens"] < translation.body["max_tokens"]


def test_effort_none_means_no_thinking_and_nothing_to_report():
    translation = anthropic(body(user("q"), reasoning={"effort": "none"}))
    assert "thinking" not in translation.body
    assert translation.dropped == []


def test_the_thinking_budget_stays_below_max_tokens():
    translation = anthropic(body(user("q"), reasoning={"effort": "high"}, max_output_tokens=4096))
    assert translation.body["thinking"]["budget_tokens"] == 4096 - 1024


def test_a_configuration_update_changes_the_thinking_budget():
    translation = anthropic(
        body(
            user("q"),
            {"type": "configuration_update", "reasoning": {"effort": "low"}},
            reasoning={"effort": "high"},
        )
    )
    assert translation.body["thinking"]["budget_tokens"] == 2048


def test_a_model_without_extended_thinking_gets_no_thinking_and_the_effort_is_reported():
    translation = anthropic(body(user("q"), reasoning={"effort": "high"}), "claude-3-5-haiku-latest")
    assert "thinking" not in translation.body
    assert "reasoning.effort" in translation.dropped


def test_temperature_and_top_p_are_sent_under_the_pinned_2023_06_01_version():
    translation = anthropic(body(user("q"), temperature=0.3, top_p=0.8))
    assert (translation.body["temperature"], translation.body["top_p"]) == (0.3, 0.8)
    assert translation.headers["anthropic-version"] == "2023-06-01"


def test_temperature_is_dropped_and_reported_when_thinking_is_on():
    translation = anthropic(body(user("q"), temperature=0.3, reasoning={"effort": "low"}))
    assert "temperature" not in translation.body
    assert "temperature" in translation.dropped


def test_verbosity_has_no_anthropic_equivalent_and_is_reported():
    translation = anthropic(body(user("q"), text={"verbosity": "low"}))
    assert translation.dropped == ["text.verbosity"]
    assert "low" not in repr({k: v for k, v in translation.body.items() if k != "messages"})


# -- images ---------------------------------------------------------------------------------------


def test_a_data_url_image_becomes_a_base64_source():
    data = base64.b64encode(b"\xff\xd8\xff\xe0jpeg").decode()
    translation = anthropic(
        body(
            {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_image", "image_url": f"data:image/jpeg;base64,{data}"},
                    {"type": "input_text", "text": "?"},
                ],
            }
        )
    )
    assert translation.body["messages"][0]["content"][0] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/jpeg", "data": data},
    }


def test_an_http_image_becomes_a_url_source_and_a_detail_is_reported():
    translation = anthropic(
        body(
            {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_image", "image_url": "https://example.com/a.png", "detail": "high"}
                ],
            }
        )
    )
    assert translation.body["messages"][0]["content"][0]["source"] == {
        "type": "url",
        "url": "https://example.com/a.png",
    }
    assert "input[0].content[0].detail" in translation.dropped

"""translators/bedrock/tools.py: tool declarations and tool choice in `toolConfig`."""

from __future__ import annotations

import json
from typing import Any

from tests.translators.bedrock.frames import event
from tests.translators.bedrock.support import NOVA, SHELL, bedrock, call, codex_request, output, request, user
from tests.translators.streamcheck import done_items, events, run, whole


def specs(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["toolSpec"]["name"]: t["toolSpec"] for t in body["toolConfig"]["tools"] if "toolSpec" in t}


def test_function_tool_becomes_a_tool_spec_with_its_json_schema() -> None:
    spec = specs(bedrock(request("hi", tools=[SHELL]), NOVA).body)["shell"]
    assert spec == {"name": "shell", "description": SHELL["description"],
                    "inputSchema": {"json": SHELL["parameters"]}}


def test_freeform_tool_is_declared_with_one_required_string_input() -> None:
    spec = specs(bedrock(codex_request("request_classic_gpt55.json")).body)["apply_patch"]
    schema = spec["inputSchema"]["json"]
    assert schema["required"] == ["input"] and schema["properties"]["input"]["type"] == "string"


def test_hosted_tools_are_reported_not_declared() -> None:
    translation = bedrock(codex_request("request_classic_gpt55.json"))
    assert "tools[9]" in translation.dropped  # web_search
    assert "web_search" not in specs(translation.body)


def test_strict_flag_is_reported() -> None:
    translation = bedrock(request("hi", tools=[{**SHELL, "strict": True}]))
    assert "strict" not in specs(translation.body)["shell"]
    assert "tools[0].strict" in translation.dropped


def test_long_namespaced_tool_name_is_cut_to_64_and_maps_back() -> None:
    namespace = "mcp__" + "very_long_server_name_" * 3
    tools = [{"type": "namespace", "name": namespace, "description": "d",
              "tools": [{**SHELL, "name": "read_the_file_at_the_given_path"}]}]
    translation = bedrock(request("hi", tools=tools))
    [wire] = specs(translation.body)
    assert len(wire) <= 64
    stream = b"".join([
        event("messageStart", {"role": "assistant"}),
        event("contentBlockStart", {"contentBlockIndex": 0,
                                    "start": {"toolUse": {"toolUseId": "t", "name": wire}}}),
        event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": "{}"}}}),
        event("contentBlockStop", {"contentBlockIndex": 0}),
        event("messageStop", {"stopReason": "tool_use"}),
    ])
    [item] = done_items(events(run("bedrock", translation, whole(stream))))
    assert (item["name"], item["namespace"]) == ("read_the_file_at_the_given_path", namespace)


def test_auto_tool_choice_is_left_to_bedrocks_default() -> None:
    assert "toolChoice" not in bedrock(request("hi", tools=[SHELL], tool_choice="auto")).body["toolConfig"]


def test_required_tool_choice_becomes_any() -> None:
    config = bedrock(request("hi", tools=[SHELL], tool_choice="required")).body["toolConfig"]
    assert config["toolChoice"] == {"any": {}}


def test_named_tool_choice_names_the_wire_tool() -> None:
    config = bedrock(request("hi", tools=[SHELL], tool_choice={"type": "function", "name": "shell"})).body
    assert config["toolConfig"]["toolChoice"] == {"tool": {"name": "shell"}}


def test_tool_choice_none_sends_no_tools_and_says_so() -> None:
    translation = bedrock(request("hi", tools=[SHELL], tool_choice="none"))
    assert "toolConfig" not in translation.body
    assert any("no 'none' tool choice" in note for note in translation.notes)


def test_tool_choice_none_with_tool_history_declares_only_stubs() -> None:
    translation = bedrock(request([user("go"), call("c1"), output("c1"), user("now answer")],
                                  tools=[SHELL, {**SHELL, "name": "other"}], tool_choice="none"))
    [spec] = specs(translation.body).values()
    assert spec["name"] == "shell" and "Do not call" in spec["description"]
    assert "toolChoice" not in translation.body["toolConfig"]


def test_tool_history_without_tools_declares_the_called_tools_as_stubs() -> None:
    body = codex_request("request_local_compaction.json")  # tools: [] and an apply_patch call in history
    called = {i["name"] for i in body["input"] if i["type"] == "custom_tool_call"}
    translation = bedrock(body)
    assert set(specs(translation.body)) == called
    assert any("stubs" in note for note in translation.notes)


def test_no_tools_and_no_tool_history_send_no_tool_config() -> None:
    assert "toolConfig" not in bedrock(request("hi")).body


def test_parallel_tool_calls_false_is_reported() -> None:
    assert "parallel_tool_calls" in bedrock(request("hi", tools=[SHELL], parallel_tool_calls=False)).dropped


def test_tool_spec_schema_without_object_root_is_wrapped_as_object() -> None:
    odd = {**SHELL, "parameters": {"properties": {"cmd": {"type": "string"}}}}
    schema = specs(bedrock(request("hi", tools=[odd])).body)["shell"]["inputSchema"]["json"]
    assert schema["type"] == "object" and schema["properties"] == {"cmd": {"type": "string"}}
    assert json.dumps(schema)  # still plain JSON

"""The Responses API's client-run tools, `shell` (local environment) and `apply_patch`, on other
upstreams (translators/responses_client/client_tools.py; docs/agents-sdk.md "Client-run tools"): declared
as functions, their calls written as the openai SDK's own items, their outputs read back."""

from __future__ import annotations

import json

import pytest
from openai.types.responses import (
    ResponseApplyPatchToolCall,
    ResponseComputerToolCall,
    ResponseFunctionShellToolCall,
)

from tests.translators.bodies import body, decoded, user
from tests.translators.streamcheck import assert_valid_responses_stream, done_items
from translators import translate_request
from translators.core.ids import sequential_ids
from translators.core.report import Report
from translators.features.naming import ToolIndex, ToolRef
from translators.ir import events as ev
from translators.responses_client import client_tools
from translators.responses_client.stream import ResponsesEncoder

SHELL = {"type": "shell", "environment": {"type": "local"}}
APPLY_PATCH = {"type": "apply_patch"}
TARGETS = ["anthropic", "chat", "gemini", "bedrock"]


def functions(translation) -> dict[str, dict]:
    body_ = translation.body
    if "toolConfig" in body_:
        return {t["toolSpec"]["name"]: t["toolSpec"] for t in body_["toolConfig"]["tools"]}
    if "contents" in body_:
        return {f["name"]: f for g in body_.get("tools") or [] for f in g.get("functionDeclarations", [])}
    return {(t.get("function") or t)["name"]: t for t in body_.get("tools") or []}


# -- declarations -------------------------------------------------------------------------------

@pytest.mark.parametrize("target", TARGETS)
def test_both_tools_are_functions_on_every_upstream(target: str) -> None:
    translation = translate_request(body(user("hi"), tools=[SHELL, APPLY_PATCH]), target, "m")
    assert set(functions(translation)) == {"shell", "apply_patch"}
    assert translation.dropped == []
    assert {ref.kind for ref in translation.tools.by_wire.values()} == {"shell", "apply_patch"}


def test_a_shell_without_environment_runs_on_the_client_too() -> None:
    request, report = decoded(body(user("hi"), tools=[{"type": "shell"}]))
    (tool,) = request.tools
    assert (tool.kind, tool.name, tool.parameters) == ("shell", "shell", client_tools.SHELL_SCHEMA)
    assert report.dropped == []


@pytest.mark.parametrize("environment", [{"type": "container_auto"},
                                         {"type": "container_reference", "container_id": "cntr_1"}])
def test_a_shell_in_openais_container_stays_openai_only(environment: dict) -> None:
    translation = translate_request(body(user("hi"), tools=[{"type": "shell", "environment": environment}]),
                                    "anthropic", "m")
    assert "tools" not in translation.body
    assert translation.dropped == ["tools[0]"]


@pytest.mark.parametrize("kind", ["code_interpreter", "image_generation", "file_search", "mcp",
                                  "programmatic_tool_calling"])
def test_the_tools_openai_runs_or_trained_for_are_reported(kind: str) -> None:
    translation = translate_request(body(user("hi"), tools=[{"type": kind}]), "anthropic", "m")
    assert translation.dropped == ["tools[0]"]


def test_local_skills_are_named_in_the_shells_description() -> None:
    skill = {"name": "pdf-tools", "description": "Read and split PDF files", "path": "/skills/pdf"}
    request, _ = decoded(body(user("hi"), tools=[{"type": "shell",
                                                  "environment": {"type": "local", "skills": [skill]}}]))
    assert "- pdf-tools: Read and split PDF files (in /skills/pdf)" in request.tools[0].description


def test_programmatic_callers_are_reported() -> None:
    callers = ["direct", "programmatic"]
    _, report = decoded(body(user("hi"), tools=[{**APPLY_PATCH, "allowed_callers": callers}]))
    assert report.dropped == ["tools[0].allowed_callers"]
    _, report = decoded(body(user("hi"), tools=[{**APPLY_PATCH, "allowed_callers": ["direct"]}]))
    assert report.dropped == []


@pytest.mark.parametrize(("choice", "expected"), [({"type": "shell"}, "shell"),
                                                  ({"type": "apply_patch"}, "apply_patch")])
def test_a_forced_choice_forces_the_function(choice: dict, expected: str) -> None:
    translation = translate_request(body(user("hi"), tools=[SHELL, APPLY_PATCH], tool_choice=choice),
                                    "anthropic", "m")
    assert translation.body["tool_choice"] == {"type": "tool", "name": expected}


# -- the calls and outputs the client sends back -----------------------------------------------

SHELL_CALL = {"type": "shell_call", "id": "sh_1", "call_id": "call_sh", "status": "completed",
              "action": {"commands": ["ls", "echo hi"], "timeout_ms": None, "max_output_length": 4000},
              "environment": {"type": "local"}}
SHELL_OUTPUT = {"type": "shell_call_output", "call_id": "call_sh", "max_output_length": 4000,
                "output": [{"stdout": "a.txt\n", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}},
                           {"stdout": "", "stderr": "boom\n", "outcome": {"type": "timeout"}}]}
PATCH_CALL = {"type": "apply_patch_call", "id": "apc_1", "call_id": "call_ap", "status": "completed",
              "operation": {"type": "update_file", "path": "a.txt", "diff": "@@\n-a\n+b\n"}}
PATCH_FAILED = {"type": "apply_patch_call_output", "call_id": "call_ap", "status": "failed",
                "output": "context not found"}


def test_a_shell_call_and_its_output_are_a_call_and_its_result() -> None:
    request, report = decoded(body(user("hi"), SHELL_CALL, SHELL_OUTPUT, tools=[SHELL]))
    _, call, result = request.items
    assert (call.kind, call.name, call.call_id) == ("shell", "shell", "call_sh")
    assert json.loads(call.arguments) == {"commands": ["ls", "echo hi"], "max_output_length": 4000}
    assert (result.kind, result.call_id, result.is_error) == ("shell", "call_sh", False)
    assert result.parts[0].text == "exit code 0\nstdout:\na.txt\n\n\ntimed out\nstderr:\nboom\n"
    assert report.dropped == []


def test_a_failed_patch_is_an_error_result() -> None:
    request, report = decoded(body(user("hi"), PATCH_CALL, PATCH_FAILED, tools=[APPLY_PATCH]))
    _, call, result = request.items
    assert json.loads(call.arguments) == PATCH_CALL["operation"]
    assert (result.kind, result.is_error, result.parts[0].text) == ("apply_patch", True, "context not found")
    assert report.dropped == []


def test_the_upstream_reads_what_the_shell_printed() -> None:
    request = body(user("hi"), SHELL_CALL, SHELL_OUTPUT, tools=[SHELL])
    messages = translate_request(request, "anthropic", "m").body["messages"]
    call, result = messages[1]["content"][0], messages[2]["content"][0]
    assert (call["type"], call["name"], call["input"]["commands"]) == ("tool_use", "shell", ["ls", "echo hi"])
    assert result["type"] == "tool_result" and "a.txt" in result["content"][0]["text"]


def test_an_item_without_its_action_is_reported() -> None:
    request, report = decoded(body(user("hi"), {"type": "shell_call", "call_id": "c"}, tools=[SHELL]))
    assert len(request.items) == 1
    assert report.dropped == ["input[1]"]


# -- the calls out --------------------------------------------------------------------------------

def encode(*stream: ev.Event) -> tuple[list[dict], Report]:
    index = ToolIndex()
    index.add("shell", ToolRef(name="shell", kind="shell"))
    index.add("apply_patch", ToolRef(name="apply_patch", kind="apply_patch"))
    report = Report()
    encoder = ResponsesEncoder(model="gpt-5.5", tools=index, report=report, new_id=sequential_ids(),
                               clock=lambda: 1_700_000_000)
    return assert_valid_responses_stream(encoder.encode([ev.Started(), *stream]) + encoder.finish()), report


def test_a_call_to_shell_is_a_shell_call_item() -> None:
    payloads, _ = encode(ev.ToolCallStarted(0, "toolu_1", "shell"),
                         ev.ToolCallDone(0, '{"commands": ["ls -la"], "timeout_ms": 5000}'),
                         ev.Finished("tool_calls"))
    (item,) = done_items(payloads)
    call = ResponseFunctionShellToolCall.model_validate(item)
    assert (call.call_id, call.action.commands, call.action.timeout_ms, call.status) == (
        "toolu_1", ["ls -la"], 5000, "completed")
    assert payloads[-1]["response"]["output"] == [item]


def test_a_call_to_apply_patch_is_an_apply_patch_call_item() -> None:
    arguments = {"type": "create_file", "path": "n.txt", "diff": "+hi"}
    payloads, _ = encode(ev.ToolCallStarted(0, "toolu_2", "apply_patch"),
                         ev.ToolCallDone(0, json.dumps(arguments)), ev.Finished("tool_calls"))
    (item,) = done_items(payloads)
    call = ResponseApplyPatchToolCall.model_validate(item)
    assert call.operation.model_dump() == arguments
    assert item["operation"] == arguments


def test_a_delete_carries_no_diff() -> None:
    payloads, _ = encode(ev.ToolCallStarted(0, "t", "apply_patch"),
                         ev.ToolCallDone(0, '{"type": "delete_file", "path": "n.txt", "diff": ""}'),
                         ev.Finished("tool_calls"))
    assert done_items(payloads)[0]["operation"] == {"type": "delete_file", "path": "n.txt"}


def test_commands_given_as_one_string_become_a_list_with_a_note() -> None:
    payloads, report = encode(ev.ToolCallStarted(0, "t", "shell"), ev.ToolCallDone(0, '{"commands": "pwd"}'),
                              ev.Finished("tool_calls"))
    assert done_items(payloads)[0]["action"]["commands"] == ["pwd"]
    assert any("one string" in note for note in report.notes)


# -- computer use -----------------------------------------------------------------------------------

PREVIEW = {"type": "computer_use_preview", "environment": "browser", "display_width": 1024,
           "display_height": 768}
SCREENSHOT = ("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHg"
              "gJ/PchI7wAAAABJRU5ErkJggg==")


@pytest.mark.parametrize("declaration", [PREVIEW, {"type": "computer"}], ids=["preview", "ga"])
@pytest.mark.parametrize("target", TARGETS)
def test_computer_use_is_a_function_with_the_screen_in_its_description(target: str,
                                                                      declaration: dict) -> None:
    translation = translate_request(body(user("hi"), tools=[declaration]), target, "m")
    assert set(functions(translation)) == {"computer"}
    assert translation.dropped == []
    request, _ = decoded(body(user("hi"), tools=[PREVIEW]))
    assert "a browser screen of 1024x768 pixels" in request.tools[0].description


def test_a_call_to_computer_is_a_computer_call_item() -> None:
    index = ToolIndex()
    index.add("computer", ToolRef(name="computer", kind="computer"))
    encoder = ResponsesEncoder(model="gpt-5.5", tools=index, report=Report(), new_id=sequential_ids(),
                               clock=lambda: 0)
    actions = [{"type": "click", "x": 10, "y": 20, "button": "left"}, {"type": "type", "text": "hello"}]
    out = encoder.encode([ev.Started(), ev.ToolCallStarted(0, "toolu_c", "computer"),
                          ev.ToolCallDone(0, json.dumps({"actions": actions})), ev.Finished("tool_calls")])
    (item,) = done_items(assert_valid_responses_stream(out + encoder.finish()))
    call = ResponseComputerToolCall.model_validate(item)
    assert [a.type for a in call.actions or []] == ["click", "type"]
    assert call.pending_safety_checks == [] and "action" not in item


def test_one_action_is_also_the_preview_models_action() -> None:
    index = ToolIndex()
    index.add("computer", ToolRef(name="computer", kind="computer"))
    encoder = ResponsesEncoder(model="gpt-5.5", tools=index, report=Report(), new_id=sequential_ids(),
                               clock=lambda: 0)
    out = encoder.encode([ev.Started(), ev.ToolCallStarted(0, "t", "computer"),
                          ev.ToolCallDone(0, '{"actions": [{"type": "screenshot"}]}'),
                          ev.Finished("tool_calls")])
    (item,) = done_items(assert_valid_responses_stream(out + encoder.finish()))
    assert item["action"] == {"type": "screenshot"} and item["actions"] == [{"type": "screenshot"}]


def test_a_screenshot_goes_back_as_the_upstreams_image() -> None:
    call = {"type": "computer_call", "id": "cu_1", "call_id": "call_cu", "status": "completed",
            "action": {"type": "screenshot"}, "pending_safety_checks": []}
    output = {"type": "computer_call_output", "call_id": "call_cu", "acknowledged_safety_checks": [],
              "output": {"type": "computer_screenshot", "image_url": SCREENSHOT}}
    request, report = decoded(body(user("look"), call, output, tools=[PREVIEW]))
    _, tool_call, result = request.items
    assert json.loads(tool_call.arguments) == {"actions": [{"type": "screenshot"}]}
    assert result.parts[0].url == SCREENSHOT and report.dropped == []
    messages = translate_request(body(user("look"), call, output, tools=[PREVIEW]), "anthropic",
                                 "claude-sonnet-4-6").body["messages"]
    image = messages[2]["content"][0]["content"][0]
    assert image["type"] == "image" and image["source"]["media_type"] == "image/png"


def test_a_screenshot_in_openais_file_store_is_reported() -> None:
    output = {"type": "computer_call_output", "call_id": "call_cu",
              "output": {"type": "computer_screenshot", "file_id": "file_1"}}
    call = {"type": "computer_call", "id": "cu_1", "call_id": "call_cu", "status": "completed",
            "action": {"type": "screenshot"}, "pending_safety_checks": []}
    _, report = decoded(body(user("look"), call, output, tools=[PREVIEW]))
    assert report.dropped == ["input[2].output"]

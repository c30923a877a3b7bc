"""Codex's multi-agent tools on other upstreams (docs/codex.md "Multi-agent"): multi_agent_v2 marks
the `message` of `spawn_agent`, `send_message` and `followup_task` `encrypted`; a call to one of
them through this gateway says its arguments are plain (`encrypted_function_args: []`), which is
what makes Codex hand the message on as text. Recorded with the real Codex 0.169
(tests/data/codex/request_multi_agent_v2*.json)."""

from __future__ import annotations

import json

import pytest

from tests.data import CODEX
from tests.translators.bodies import decoded
from tests.translators.streamcheck import assert_valid_responses_stream, done_items
from translators import translate_request
from translators.core.ids import sequential_ids
from translators.core.report import Report
from translators.ir import events as ev
from translators.responses_client.stream import ResponsesEncoder

PARENT = json.loads((CODEX / "request_multi_agent_v2.json").read_text())
CHILD = json.loads((CODEX / "request_multi_agent_v2_child.json").read_text())
CHILD_SEALED = json.loads((CODEX / "request_multi_agent_v2_child_sealed.json").read_text())
SEALED = {"spawn_agent", "send_message", "followup_task"}
TARGETS = ["anthropic", "chat", "gemini", "bedrock"]


def test_the_encrypted_marks_are_read_and_left_out_of_the_schema() -> None:
    request, report = decoded(PARENT)
    collaboration = {t.name: t for t in request.tools if t.namespace == "collaboration"}
    assert {name for name, tool in collaboration.items() if tool.encrypted_args} == SEALED
    assert all(tool.encrypted_args == ["message"] for name, tool in collaboration.items() if name in SEALED)
    assert all("encrypted" not in tool.parameters["properties"]["message"] for name, tool in
               collaboration.items() if name in SEALED)
    assert not any(path.endswith("encrypted") for path in report.dropped)


@pytest.mark.parametrize("target", TARGETS)
def test_no_upstream_is_asked_to_encrypt(target: str) -> None:
    translation = translate_request(PARENT, target, "m")
    assert '"encrypted"' not in json.dumps(translation.body)
    marked = {ref.name for ref in translation.tools.by_wire.values() if ref.plaintext}
    assert marked == SEALED


@pytest.mark.parametrize("target", TARGETS)
def test_a_spawn_through_the_gateway_says_its_arguments_are_plain(target: str) -> None:
    translation = translate_request(PARENT, target, "m")
    wire = next(w for w, ref in translation.tools.by_wire.items() if ref.name == "spawn_agent")
    wait = next(w for w, ref in translation.tools.by_wire.items() if ref.name == "wait_agent")
    encoder = ResponsesEncoder(model="gpt-5.5", tools=translation.tools, report=Report(),
                               new_id=sequential_ids(), clock=lambda: 0)
    out = encoder.encode([ev.Started(), ev.ToolCallStarted(0, "call_1", wire),
                          ev.ToolCallDone(0, '{"task_name": "helper", "message": "count the files"}'),
                          ev.ToolCallStarted(1, "call_2", wait), ev.ToolCallDone(1, "{}"),
                          ev.Finished("tool_calls")])
    payloads = assert_valid_responses_stream(out)
    spawn, waiting = done_items(payloads)
    assert (spawn["name"], spawn["namespace"], spawn["encrypted_function_args"]) == (
        "spawn_agent", "collaboration", [])
    assert "encrypted_function_args" not in waiting
    added = [p["item"] for p in payloads if p["type"] == "response.output_item.added"]
    assert added[0]["encrypted_function_args"] == []


def test_a_passthrough_to_openai_keeps_the_marks() -> None:
    translation = translate_request(PARENT, "responses", "gpt-5.5")
    spawn = next(t for ns in translation.body["tools"] if ns.get("type") == "namespace" for t in ns["tools"]
                 if t["name"] == "spawn_agent")
    assert spawn["parameters"]["properties"]["message"]["encrypted"] is True


@pytest.mark.parametrize("child", [CHILD, CHILD_SEALED], ids=["plain", "sealed"])
def test_the_child_reads_its_task(child: dict) -> None:
    request, report = decoded(child)
    task = request.items[-1]
    said = "".join(part.text for part in task.parts)
    assert (task.type, task.role) == ("message", "user")
    assert said.startswith("Message Type: NEW_TASK\nTask name: /root/helper\nSender: /root\nPayload:\n")
    assert said.endswith("CHILD-TASK-XYZ: compute 6*7")
    assert report.dropped == []

"""The real Claude Code request: what crosses into the IR, and exactly what is reported."""

from __future__ import annotations

import json

import pytest

from tests.translators.messages_client.messages import claude_code_request, decoded
from translators import dialect as dialects
from translators.ir.request import CacheMark


def test_the_real_claude_code_request_reports_only_the_billing_line_and_keeps_its_breakpoints() -> None:
    request, report = decoded(claude_code_request())
    # the first system block is Claude Code's billing header line, read by Anthropic's billing,
    # not by the model: cosmetic
    assert report.dropped == report.cosmetic == ["system[0]"]
    # its cache breakpoints are kept where they were, for the upstreams that take them
    assert request.cache.present
    assert request.cache.system == {0: CacheMark(origin="system[1].cache_control"),
                                    1: CacheMark(origin="system[2].cache_control")}
    assert request.items[1].parts[0].cache == CacheMark(origin="messages[1].content[0].cache_control")
    # DeferredToolPlaceholder has defer_loading and no tool_reference loads it: the API leaves it out
    assert report.notes == [
        "deferred tools not loaded by a tool_reference were not offered: DeferredToolPlaceholder"
    ]


def test_the_real_claude_code_request_keeps_every_instruction_turn_and_tool() -> None:
    raw = claude_code_request()
    request, _ = decoded(raw)
    assert request.model == "claude-opus-5-5"
    assert request.system == [block["text"] for block in raw["system"][1:]]
    assert [(item.type, item.role) for item in request.items] == [("message", "user"), ("message", "system")]
    assert [part.text for part in request.items[0].parts] == [
        b["text"] for b in raw["messages"][0]["content"]
    ]
    assert request.items[1].parts[0].text == raw["messages"][1]["content"][0]["text"]
    assert [t.name for t in request.tools] == [t["name"] for t in raw["tools"] if not t.get("defer_loading")]
    assert [t.parameters for t in request.tools] == [
        t["input_schema"] for t in raw["tools"] if not t.get("defer_loading")
    ]
    assert request.max_output_tokens == 128000
    assert request.stream is True
    assert (request.reasoning.effort, request.reasoning.summary) == ("medium", None)
    assert request.user == raw["metadata"]["user_id"]
    assert json.loads(request.user)["session_id"]


@pytest.mark.parametrize(
    ("target", "model"),
    [
        ("chat", "deepseek-reasoner"),
        ("anthropic", "claude-opus-4-5"),
        ("bedrock", "anthropic.claude-sonnet-4-5"),
    ],
)
def test_the_real_claude_code_request_reaches_an_upstream_losing_nothing_the_model_reads(
    target, model
) -> None:
    request, report = decoded(claude_code_request())
    codec = dialects.get(target).codec
    assert codec is not None and codec.capabilities is not None
    encoded = codec.encode_request(request, model, report, codec.capabilities(model))
    assert report.lossy == []
    assert encoded.body

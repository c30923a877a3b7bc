"""The strict Bedrock fake refuses what Converse refuses, in Bedrock's words
(tests/support/strict/bedrock.py)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.support.strict import Issued, bedrock
from tests.translators.bedrock.frames import event

SIG = "EqQBCkYIBxgCKkBsignedbybedrock"
PATH = "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
ISSUED = Issued(thinking={SIG: "Run ls."})


def base() -> dict[str, Any]:
    return {
        "messages": [
            {"role": "user", "content": [{"text": "list files"}]},
            {
                "role": "assistant",
                "content": [
                    {"reasoningContent": {"reasoningText": {"text": "Run ls.", "signature": SIG}}},
                    {"toolUse": {"toolUseId": "tooluse_1", "name": "exec_command", "input": {"cmd": "ls"}}},
                ],
            },
            {
                "role": "user",
                "content": [{"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "a.txt"}]}}],
            },
        ],
        "system": [{"text": "Be brief."}],
        "inferenceConfig": {"maxTokens": 8192},
        "toolConfig": {
            "tools": [
                {
                    "toolSpec": {
                        "name": "exec_command",
                        "inputSchema": {
                            "json": {"type": "object", "properties": {"cmd": {"type": "string"}}}
                        },
                    }
                }
            ]
        },
        "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 2048}},
    }


def refused(body: dict[str, Any], path: str = PATH) -> str | None:
    answer = bedrock.check(path, {}, json.dumps(body).encode(), issued=ISSUED)
    if answer is None:
        return None
    status, headers, raw = answer
    assert status == 400 and headers["x-amzn-errortype"].startswith("ValidationException")
    message: str = json.loads(raw)["message"]
    return message


def edit(change: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
    body = copy.deepcopy(base())
    change(body)
    return body


def test_a_valid_request_passes() -> None:
    assert refused(base()) is None


CASES: list[tuple[str, dict[str, Any], str]] = [
    (
        "maxTokens above the model's limit",
        edit(lambda b: b["inferenceConfig"].update(maxTokens=128_000)),
        "The maximum tokens you requested exceeds the model limit of 64000. Try again with a maximum tokens "
        "value that is lower than 64000.",
    ),
    (
        "a tool name with a dot",
        edit(lambda b: b["toolConfig"]["tools"][0]["toolSpec"].update(name="shell.exec")),
        "1 validation error detected: Value 'shell.exec' at 'toolConfig.tools.1.member.toolSpec.name' "
        "failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+",
    ),
    (
        "a tool name of 65 characters",
        edit(lambda b: b["toolConfig"]["tools"][0]["toolSpec"].update(name="f" * 65)),
        "failed to satisfy constraint: Member must have length less than or equal to 64",
    ),
    (
        "an empty system text",
        edit(lambda b: b.update(system=[{"text": ""}])),
        "at 'system.1.member.text' failed to satisfy constraint: Member must have length greater than or "
        "equal to 1",
    ),
    (
        "a temperature above 1",
        edit(lambda b: b["inferenceConfig"].update(temperature=1.5)),
        "Member must have value less than or equal to 1",
    ),
    (
        "an unknown member",
        edit(lambda b: b["inferenceConfig"].update(max_tokens=5)),
        'Unknown parameter in inferenceConfig: "max_tokens"',
    ),
    (
        "two user turns in a row",
        edit(lambda b: b["messages"].append({"role": "user", "content": [{"text": "x"}]})),
        "A conversation must alternate between user and assistant roles. Make sure the conversation "
        "alternates between user and assistant roles and try again.",
    ),
    (
        "an assistant turn first",
        edit(lambda b: b["messages"].pop(0)),
        "A conversation must start with a user message. Try again with a conversation that starts with a "
        "user message.",
    ),
    (
        "tool blocks without toolConfig",
        edit(lambda b: b.pop("toolConfig")),
        "The toolConfig field must be defined when using toolUse and toolResult content blocks.",
    ),
    (
        "more results than calls",
        edit(lambda b: b["messages"][2]["content"].append(copy.deepcopy(b["messages"][2]["content"][0]))),
        "The number of toolResult blocks at messages.2.content exceeds the number of toolUse blocks of "
        "previous turn.",
    ),
    (
        "text before the result",
        edit(lambda b: b["messages"][2]["content"].insert(0, {"text": "here"})),
        "The model returned the following errors: messages.2: Did not find 1 `tool_result` block(s) at the "
        "beginning of this message. Messages following `tool_use` blocks must begin with a matching number "
        "of `tool_result` blocks.",
    ),
    (
        "a result for no call",
        edit(lambda b: b["messages"][2]["content"][0]["toolResult"].update(toolUseId="tooluse_9")),
        "The model returned the following errors: messages.2.content.0: unexpected `tool_use_id` found in "
        "`tool_result` blocks: tooluse_9.",
    ),
    (
        "reasoning dropped from the tool-use turn",
        edit(lambda b: b["messages"][1]["content"].pop(0)),
        "The model returned the following errors: messages.1.content.0.type: Expected `thinking` or "
        "`redacted_thinking`, but found `tool_use`.",
    ),
    (
        "a signature Bedrock never issued",
        edit(
            lambda b: b["messages"][1]["content"][0]["reasoningContent"]["reasoningText"].update(
                signature="forged"
            )
        ),
        "The model returned the following errors: messages.1.content.0: Invalid `signature` in `thinking` "
        "block",
    ),
    (
        "a budget not below maxTokens",
        edit(lambda b: b["inferenceConfig"].update(maxTokens=2048)),
        "`max_tokens` must be greater than `thinking.budget_tokens`.",
    ),
    (
        "temperature and topP on Claude",
        edit(
            lambda b: (
                b.pop("additionalModelRequestFields"),
                b["inferenceConfig"].update(temperature=0.5, topP=0.9),
            )
        ),
        "`temperature` and `top_p` cannot both be specified for this model. Please use only one.",
    ),
    (
        "a forced tool while thinking",
        edit(lambda b: b["toolConfig"].update(toolChoice={"any": {}})),
        "Thinking may not be enabled when tool_choice forces tool use.",
    ),
]


@pytest.mark.parametrize(("body", "wording"), [(b, w) for _, b, w in CASES], ids=[c[0] for c in CASES])
def test_refused_with_bedrocks_wording(body: dict[str, Any], wording: str) -> None:
    message = refused(body)
    assert message is not None and wording in message, message


def test_text_beside_tool_results_is_llamas_refusal_not_claudes() -> None:
    body = edit(
        lambda b: (
            b.pop("additionalModelRequestFields"),
            b["messages"][1]["content"].pop(0),
            b["messages"][2]["content"].append({"text": "go on"}),
        )
    )
    assert refused(body) is None
    assert (
        refused(body, "/model/meta.llama4-maverick-17b-instruct-v1%3A0/converse")
        == "messages.2.content: Conversation blocks and tool result blocks cannot be provided in the same "
        "turn."
    )


def test_what_a_stream_hands_out_is_read_back() -> None:
    frames = [
        event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "Run "}}}),
        event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "ls."}}}),
        event(
            "contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": SIG}}}
        ),
    ]
    found = bedrock.issued_in(b"".join(frames), "application/vnd.amazon.eventstream")
    assert found.thinking == {SIG: "Run ls."}


def test_a_blank_text_block_is_refused() -> None:
    body = edit(lambda b: b["messages"][0]["content"].append({"text": "  "}))
    assert refused(body) == (
        "The text field in the ContentBlock object at messages.0.content.1 is blank. Add text to the text "
        "field, and try again."
    )

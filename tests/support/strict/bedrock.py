"""What Bedrock's Converse / ConverseStream (`POST /model/{modelId}/converse[-stream]`) refuses, as
Bedrock words it: 400 with `x-amzn-errortype: ValidationException` and `{"message"}`
(https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html; docs/bedrock.md
"Errors", "Refusals").

The request's members are checked against botocore's service model
(botocore/data/bedrock-runtime/2023-09-30/service-2.json.gz): required members and types (its
`ParamValidator`), then each member's `min`/`max`/`pattern`/`enum` constraint in AWS's own wording
("1 validation error detected: Value ... at '...' failed to satisfy constraint: ..."). A Claude model
relays Anthropic's own refusals as "The model returned the following errors: ...".
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Mapping
from functools import cache
from typing import Any
from urllib.parse import unquote

import botocore.session
from botocore.eventstream import EventStreamBuffer
from botocore.model import Shape
from botocore.validate import ParamValidator

from tests.support.strict import JSON, Invalid, Issued, Refusal, parse_json
from tests.support.strict import anthropic as claude

ERROR_TYPE = "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/"
_CLAUDE = re.compile(r"(?:^|[./:])anthropic\.(claude-[a-z0-9.-]+?)(?:-v\d+)?(?::\d+)?(?:$|/)")
MODEL_ERRORS = "The model returned the following errors: "


def refusal(message: str) -> Refusal:
    headers = {**JSON, "x-amzn-errortype": ERROR_TYPE}
    return 400, headers, json.dumps({"message": message}).encode()


def claude_id(model: str) -> str | None:
    match = _CLAUDE.search(model)
    return match.group(1) if match else None


def check(path: str, headers: Mapping[str, str], raw: bytes, *, issued: Issued) -> Refusal | None:
    try:
        _check(path, raw, issued)
    except Invalid as broken:
        return refusal(broken.message)
    return None


def _check(path: str, raw: bytes, issued: Issued) -> None:
    try:
        body = parse_json(raw)
    except ValueError:
        raise Invalid("Malformed input request, please reformat your input and try again.") from None
    if not isinstance(body, dict):
        raise Invalid("Malformed input request, please reformat your input and try again.")
    bare = path.split("?", 1)[0]
    model = unquote(bare.split("/")[2])
    if bare.endswith("/count-tokens"):
        inner = ((body.get("input") or {}).get("converse")) or {}
        body = {**inner}
        if not body:
            return
        operation = "Converse"
    else:
        operation = "ConverseStream" if bare.endswith("/converse-stream") else "Converse"
    _shape(body, model, operation)
    messages = body.get("messages") or []
    claude_model = claude_id(model)
    _conversation(body, messages, claude_model is not None, model)
    if claude_model is not None and not bare.endswith("/count-tokens"):
        _claude(body, messages, claude_model, issued)


# -- the service model ----------------------------------------------------------------------------------
@cache
def _input_shape(operation: str) -> Shape:
    service = botocore.session.get_session().get_service_model("bedrock-runtime")
    return service.operation_model(operation).input_shape


def _shape(body: dict[str, Any], model: str, operation: str) -> None:
    shape = _input_shape(operation)
    _constraints(body, shape, "")  # first: the service words these, botocore words them too
    report = ParamValidator().validate({**body, "modelId": model}, shape)
    if report.has_errors():  # botocore's own wording of a missing, unknown or mistyped member
        raise Invalid(report.generate_report().replace("\n", " "))


def _constraint(value: Any, where: str, text: str) -> Invalid:
    shown = value if isinstance(value, (str, int, float)) else json.dumps(value)[:80]
    return Invalid(f"1 validation error detected: Value '{shown}' at '{where}' failed to satisfy constraint: "
                   f"{text}")


def _constraints(value: Any, shape: Shape, where: str) -> None:
    """Each member's `min`/`max`/`pattern`/`enum` (the service model's constraints, which the
    service enforces; paths as AWS prints them, list items as `.N.member` from 1)."""
    meta = shape.metadata
    kind = shape.type_name
    if kind == "structure" and isinstance(value, dict):
        for name, member in shape.members.items():
            if name in value:
                _constraints(value[name], member, f"{where}.{name}" if where else name)
        return
    if kind == "list" and isinstance(value, list):
        _length(value, len(value), meta, where)
        for n, item in enumerate(value, start=1):
            _constraints(item, shape.member, f"{where}.{n}.member")
        return
    if kind == "map" and isinstance(value, dict):
        _length(value, len(value), meta, where)
        for key, item in value.items():
            _constraints(item, shape.value, f"{where}.{key}")
        return
    if kind == "string" and isinstance(value, str):
        _length(value, len(value), meta, where)
        if "pattern" in meta and not re.fullmatch(meta["pattern"], value):
            raise _constraint(value, where, "Member must satisfy regular expression pattern: "
                                            f"{meta['pattern']}")
        if "enum" in meta and value not in meta["enum"]:
            allowed = ", ".join(meta["enum"])
            raise _constraint(value, where, f"Member must satisfy enum value set: [{allowed}]")
        return
    if kind in ("integer", "long", "float", "double") and isinstance(value, (int, float)):
        if "min" in meta and value < meta["min"]:
            raise _constraint(value, where, f"Member must have value greater than or equal to {meta['min']}")
        if "max" in meta and value > meta["max"]:
            raise _constraint(value, where, f"Member must have value less than or equal to {meta['max']}")


def _length(value: Any, size: int, meta: dict[str, Any], where: str) -> None:
    if "min" in meta and size < meta["min"]:
        raise _constraint(value, where, f"Member must have length greater than or equal to {meta['min']}")
    if "max" in meta and size > meta["max"]:
        raise _constraint(value, where, f"Member must have length less than or equal to {meta['max']}")


# -- the conversation (docs/bedrock.md "Refusals") ----------------------------------------------------
def _kinds(message: dict[str, Any]) -> list[str]:
    return [next(iter(block), "") for block in message.get("content") or [] if isinstance(block, dict)]


def _conversation(body: dict[str, Any], messages: list[dict[str, Any]], is_claude: bool, model: str) -> None:
    if messages and messages[0].get("role") != "user":
        raise Invalid("A conversation must start with a user message. Try again with a conversation that "
                      "starts with a user message.")
    for previous, message in itertools.pairwise(messages):
        if previous.get("role") == message.get("role"):
            raise Invalid("A conversation must alternate between user and assistant roles. Make sure the "
                          "conversation alternates between user and assistant roles and try again.")
    for i, message in enumerate(messages):
        for j, block in enumerate(message.get("content") or []):
            if isinstance(block, dict) and "text" in block and not str(block["text"]).strip():
                raise Invalid(f"The text field in the ContentBlock object at messages.{i}.content.{j} is "
                              "blank. Add text to the text field, and try again.")
    uses_tools = any(k in ("toolUse", "toolResult") for m in messages for k in _kinds(m))
    if uses_tools and not body.get("toolConfig"):
        raise Invalid("The toolConfig field must be defined when using toolUse and toolResult content "
                      "blocks.")
    for i, message in enumerate(messages):
        kinds = _kinds(message)
        results = [b["toolResult"] for b in message.get("content") or [] if "toolResult" in b]
        if not results:
            continue
        calls = [b["toolUse"] for b in messages[i - 1].get("content") or [] if "toolUse" in b] if i else []
        if len(results) > len(calls):
            raise Invalid(f"The number of toolResult blocks at messages.{i}.content exceeds the number of "
                          "toolUse blocks of previous turn.")
        alone = not is_claude and "amazon.nova" not in model
        if alone and any(k not in ("toolResult", "cachePoint") for k in kinds):
            # Llama and other models take tool results alone in their turn (reported for Llama 4)
            raise Invalid(f"messages.{i}.content: Conversation blocks and tool result blocks cannot be "
                          "provided in the same turn.")


def _claude(body: dict[str, Any], messages: list[dict[str, Any]], model: str, issued: Issued) -> None:
    """What Claude itself refuses, relayed by Bedrock: the same rules as the Messages API
    (tests/support/strict/anthropic.py), in Converse's words for the blocks."""
    inference = body.get("inferenceConfig") or {}
    max_tokens = inference.get("maxTokens")
    row = claude.family(model)
    if row is not None and isinstance(max_tokens, int) and max_tokens > claude.MAX_OUTPUT[row]:
        limit = claude.MAX_OUTPUT[row]
        raise Invalid(f"The maximum tokens you requested exceeds the model limit of {limit}. Try again with "
                      f"a maximum tokens value that is lower than {limit}.")
    for i, message in enumerate(messages):
        if i == 0 or message.get("role") != "user":
            continue
        calls = [b["toolUse"]["toolUseId"] for b in messages[i - 1].get("content") or [] if "toolUse" in b]
        leading = []
        for block in message.get("content") or []:
            if "toolResult" not in block:
                break
            leading.append(block["toolResult"].get("toolUseId"))
        for j, block in enumerate(message.get("content") or []):
            if "toolResult" in block and block["toolResult"].get("toolUseId") not in calls:
                raise Invalid(f"{MODEL_ERRORS}messages.{i}.content.{j}: unexpected `tool_use_id` found in "
                              f"`tool_result` blocks: {block['toolResult'].get('toolUseId')}. Each "
                              "`tool_result` block must have a corresponding `tool_use` block in the "
                              "previous message.")
        if calls and sorted(leading) != sorted(calls):
            raise Invalid(f"{MODEL_ERRORS}messages.{i}: Did not find {len(calls)} `tool_result` block(s) at "
                          "the beginning of this message. Messages following `tool_use` blocks must begin "
                          "with a matching number of `tool_result` blocks.")
    if messages and messages[-1].get("role") == "assistant" and "toolUse" in _kinds(messages[-1]):
        raise Invalid(f"{MODEL_ERRORS}messages.{len(messages) - 1}: `tool_use` ids were found without "
                      "`tool_result` blocks immediately after. Each `tool_use` block must have a "
                      "corresponding `tool_result` block in the next message.")
    if claude.ONE_SAMPLING_KNOB.match(model) and "temperature" in inference and "topP" in inference:
        raise Invalid(f"{MODEL_ERRORS}`temperature` and `top_p` cannot both be specified for this model. "
                      "Please use only one.")
    fields = body.get("additionalModelRequestFields") or {}
    thinking = fields.get("thinking") or {}
    kind = thinking.get("type")
    if kind == "enabled":
        if thinking.get("budget_tokens", 0) < 1024:
            raise Invalid(f"{MODEL_ERRORS}thinking.enabled.budget_tokens: Input should be greater than or "
                          "equal to 1024")
        if isinstance(max_tokens, int) and thinking.get("budget_tokens", 0) >= max_tokens:
            raise Invalid(f"{MODEL_ERRORS}`max_tokens` must be greater than `thinking.budget_tokens`. Please "
                          "consult our documentation at "
                          f"{claude.THINKING_DOCS}#max-tokens-and-context-window-size")
    choice = (body.get("toolConfig") or {}).get("toolChoice") or {}
    if kind in ("enabled", "adaptive") and ("any" in choice or "tool" in choice):
        raise Invalid(f"{MODEL_ERRORS}Thinking may not be enabled when tool_choice forces tool use.")
    if kind == "enabled":
        _thinking_first(messages)
    _signatures(messages, issued)


def _thinking_first(messages: list[dict[str, Any]]) -> None:
    last = messages[-1] if messages else {}
    answers = len(messages) >= 2 and last.get("role") == "user" and _kinds(last)[:1] == ["toolResult"]
    if not answers:
        return
    kinds = _kinds(messages[-2])
    if kinds and kinds[0] != "reasoningContent":
        found = {"toolUse": "tool_use", "text": "text"}.get(kinds[0], kinds[0])
        raise Invalid(f"{MODEL_ERRORS}messages.{len(messages) - 2}.content.0.type: Expected `thinking` or "
                      f"`redacted_thinking`, but found `{found}`. When `thinking` is enabled, a final "
                      "`assistant` message must start with a thinking block (preceeding the lastmost set of "
                      "`tool_use` and `tool_result` blocks). We recommend you include thinking blocks from "
                      "previous turns. To avoid this requirement, disable `thinking`. Please consult our "
                      f"documentation at {claude.THINKING_DOCS}")


def _signatures(messages: list[dict[str, Any]], issued: Issued) -> None:
    for i, message in enumerate(messages):
        for j, block in enumerate(message.get("content") or []):
            reasoning = block.get("reasoningContent") if isinstance(block, dict) else None
            if not isinstance(reasoning, dict):
                continue
            text = reasoning.get("reasoningText")
            if isinstance(text, dict):
                signature = text.get("signature")
                if signature not in issued.thinking or issued.thinking[signature] != text.get("text"):
                    raise Invalid(f"{MODEL_ERRORS}messages.{i}.content.{j}: Invalid `signature` in "
                                  "`thinking` block")
            elif "redactedContent" in reasoning and reasoning["redactedContent"] not in issued.redacted:
                raise Invalid(f"{MODEL_ERRORS}messages.{i}.content.{j}: Invalid `data` in "
                              "`redacted_thinking` block")


# -- what an answer hands out ----------------------------------------------------------------------------
def issued_in(answer: bytes, content_type: str) -> Issued:
    """The reasoning signatures (with their text) and redacted reasoning of a Converse answer: the
    binary event stream of ConverseStream, or Converse's whole JSON."""
    out = Issued()
    if "eventstream" not in content_type:
        try:
            whole = json.loads(answer)
        except ValueError:
            return out
        message = ((whole.get("output") or {}).get("message") or {}) if isinstance(whole, dict) else {}
        for block in message.get("content") or []:
            reasoning = block.get("reasoningContent") or {}
            text = reasoning.get("reasoningText") or {}
            if text.get("signature"):
                out.thinking[text["signature"]] = text.get("text", "")
            if reasoning.get("redactedContent"):
                out.redacted.add(reasoning["redactedContent"])
        return out
    buffer = EventStreamBuffer()
    buffer.add_data(answer)
    texts: dict[int, list[str]] = {}
    try:
        for frame in buffer:
            if frame.headers.get(":event-type") != "contentBlockDelta":
                continue
            payload = json.loads(frame.payload)
            reasoning = (payload.get("delta") or {}).get("reasoningContent") or {}
            index = payload.get("contentBlockIndex", 0)
            if "text" in reasoning:
                texts.setdefault(index, []).append(reasoning["text"])
            if "signature" in reasoning:
                out.thinking[reasoning["signature"]] = "".join(texts.get(index, []))
            if "redactedContent" in reasoning:
                out.redacted.add(reasoning["redactedContent"])
    except Exception:  # a fault test's broken frame: what came before it still counts
        return out
    return out

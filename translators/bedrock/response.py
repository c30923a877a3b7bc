"""Whole Converse answers and Bedrock HTTP error bodies (docs/bedrock.md "ConverseStream events").

A Converse answer is `{"output": {"message": {"role", "content": [blocks]}}, "stopReason",
"usage", "metrics"}`; an error body is read by errors.py.
"""

from __future__ import annotations

from typing import Any

from translators.bedrock import errors, wire
from translators.core.errors import UpstreamProtocolError
from translators.core.translation import Translation
from translators.dialect import ErrorInfo
from translators.ir import events as ev
from translators.ir.request import VendorState
from translators.wire import wirejson


def response_events(body: Any, translation: Translation) -> list[ev.Event]:
    output = body.get("output") if isinstance(body, dict) else None
    message = output.get("message") if isinstance(output, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        raise UpstreamProtocolError("the Bedrock answer has no output.message.content array")
    out: list[ev.Event] = [ev.Started()]
    for index, block in enumerate(content):
        out += _block(index, block)
    if isinstance(body.get("usage"), dict):
        out.append(wire.usage_event(body["usage"]))
    matched, _ = wire.stop_sequence(body.get("additionalModelResponseFields"))
    out += wire.finish_events(body.get("stopReason"), matched)
    return out


def _block(index: int, block: Any) -> list[ev.Event]:
    if not isinstance(block, dict):
        return [ev.Unknown("output.message.content")]
    if isinstance(block.get("text"), str):
        return [ev.TextDelta(index, block["text"]), ev.TextDone(index)]
    if isinstance(block.get("toolUse"), dict):
        tool = block["toolUse"]
        return [ev.ToolCallStarted(index, str(tool.get("toolUseId") or ""), str(tool.get("name") or "")),
                ev.ToolCallDone(index, wirejson.text(tool.get("input") or {}))]
    reasoning = block.get("reasoningContent")
    if isinstance(reasoning, dict):
        redacted = reasoning.get("redactedContent")
        if isinstance(redacted, str):
            return [ev.ReasoningDone(index, VendorState(dialect="bedrock", redacted=redacted))]
        signed = reasoning.get("reasoningText")
        signed = signed if isinstance(signed, dict) else {}
        text = str(signed.get("text") or "")
        return [ev.ReasoningDelta(index, text), ev.ReasoningDone(index, VendorState(
            dialect="bedrock", text=text, signature=signed.get("signature") or None))]
    # image / document / citationsContent / searchResult blocks: nothing a Responses client replays
    return [ev.Unknown(f"output.message.content.{key}") for key in block] or [
        ev.Unknown("output.message.content")]


def error_info(status: int, body: Any) -> ErrorInfo:
    failure = errors.body_failure(status, body)
    return ErrorInfo(failure.code, failure.message)

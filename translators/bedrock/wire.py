"""Bedrock Converse outcome tables shared by the stream and the whole-answer readers:
stop reasons and usage (docs/bedrock.md "ConverseStream events"); its errors are in errors.py."""

from __future__ import annotations

from typing import Any

from translators.ir import events as ev

STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop_sequence",
    "tool_use": "tool_calls",
    "max_tokens": "max_output_tokens",
    "guardrail_intervened": "content_filter",
    "content_filtered": "content_filter",
    "model_context_window_exceeded": "context_length_exceeded",
}
# The model produced something Bedrock could not parse: no answer the client can use.
MALFORMED_STOPS = {
    "malformed_model_output": "the model's output could not be parsed",
    "malformed_tool_use": "the model wrote a tool call that could not be parsed",
}

def usage_event(usage: dict[str, Any]) -> ev.Usage:
    """Bedrock's `inputTokens` excludes cache reads and writes (they are reported beside it, AWS
    prompt-caching guide); Responses' `input_tokens` includes both and details each."""
    read = _int(usage.get("cacheReadInputTokens"))
    write = _int(usage.get("cacheWriteInputTokens"))
    fresh = _int(usage.get("inputTokens"))
    output = _int(usage.get("outputTokens"))
    if fresh is None:
        return ev.Usage(output_tokens=output)
    details = usage.get("cacheDetails")  # writes by TTL, `CacheDetail` {ttl, inputTokens}
    hour = None
    if isinstance(details, list):
        hour = sum(_int(d.get("inputTokens")) or 0 for d in details
                   if isinstance(d, dict) and d.get("ttl") == "1h")
    return ev.Usage(input_tokens=fresh + (read or 0) + (write or 0), output_tokens=output,
                    cached_tokens=read or 0, cache_write_tokens=write or 0, cache_write_1h_tokens=hour)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def stop_sequence(fields: Any) -> tuple[str | None, Any]:
    """The stop sequence that matched, from `additionalModelResponseFields` (Claude's
    `{"delta": {"stop_sequence": ...}}`, or `{"stop_sequence": ...}` as the path
    `/stop_sequence` names it, docs/bedrock.md "Stop sequences"), and the fields without it."""
    if not isinstance(fields, dict):
        return None, fields
    rest = dict(fields)
    found = rest.pop("stop_sequence", None)
    delta = rest.get("delta")
    if isinstance(delta, dict) and "stop_sequence" in delta:
        delta = dict(delta)
        found = delta.pop("stop_sequence") if found is None else found
        rest["delta"] = delta
    return (found if isinstance(found, str) else None), rest


def finish_events(stop_reason: Any, matched: str | None = None) -> list[ev.Event]:
    key = stop_reason if isinstance(stop_reason, str) else ""
    if key in MALFORMED_STOPS:
        return [ev.Failed("server_error", f"Bedrock stopped with {key}: {MALFORMED_STOPS[key]}")]
    if key not in STOP_REASONS:
        return [ev.Note(f"unknown Bedrock stopReason {stop_reason!r} treated as end_turn"),
                ev.Finished("stop")]
    reason = STOP_REASONS[key]
    return [ev.Finished(reason, matched if reason == "stop_sequence" else None)]

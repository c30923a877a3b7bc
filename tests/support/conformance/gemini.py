"""Gemini in the shared suites (docs/gemini.md "Errors")."""

from __future__ import annotations

import re
from typing import Any

from tests.support.conformance import BodyReader, Conformance, Turns, json_error


def _error(status: int, message: str) -> tuple[dict[str, str], bytes]:
    state = {429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE", 500: "INTERNAL"}.get(status, "INVALID_ARGUMENT")
    return json_error({"error": {"code": status, "message": message, "status": state}})


def _wants_stream(path: str, body: Any) -> bool:
    return ":streamGenerateContent" in path


def _turns(body: dict[str, Any]) -> Turns:
    turns: Turns = []
    for content in body["contents"]:
        calls: list[tuple[str | None, str]] = [
            (p["functionCall"].get("id"), p["functionCall"]["name"])
            for p in content["parts"] if "functionCall" in p]
        results: list[str | None] = [
            p["functionResponse"].get("id") or "name:" + p["functionResponse"]["name"]
            for p in content["parts"] if "functionResponse" in p]
        turns.append((content["role"], calls, results))
    return turns


def _chosen(body: dict[str, Any]) -> str | None:
    names = ((body.get("toolConfig") or {}).get("functionCallingConfig") or {}).get("allowedFunctionNames")
    return names[0] if names else None


BODY = BodyReader(  # docs/gemini.md "Request", "Function names"
    tool_name=re.compile(r"^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$"),
    call_id=re.compile(r"^.+$", re.DOTALL),
    tool_names=lambda body: [d["name"] for t in body.get("tools", [])
                             for d in t.get("functionDeclarations", [])],
    chosen_tool=_chosen,
    turns=_turns,
)

CONFORMANCE = Conformance(
    dialect="gemini",
    model="gemini-2.5-flash",
    key_env="RELIABILITY_GEMINI_KEY",
    key="AIzaSyReliabilityUPSTREAMgemini0123456789",
    key_header=("x-goog-api-key", "{key}"),
    is_mine=lambda path: ":streamGenerateContent" in path or ":generateContent" in path,
    error=_error,
    whole={
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": "Hello whole."}]},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 2, "totalTokenCount": 5},
    },
    whole_tool_call={"candidates": [{"index": 0, "finishReason": "STOP", "content": {
        "role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}]}}],
        "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 5, "totalTokenCount": 14}},
    recordings=(
        "gemini/json_array_function_call_signature.json",
        "gemini/json_array_function_call_with_id.json",
        "gemini/sse_function_call_gemini2.sse",
        "gemini/sse_function_call_thought_signature.sse",
        "gemini/sse_text_after_function_response.sse",
        "gemini/text_with_trailing_signature_part.jsonl",
        "gemini/vertex_thought_then_streamed_args.jsonl",
    ),
    default_stream="sse_text_after_function_response.sse",
    finish_marker=rb'"finishReason"',
    wants_stream=_wants_stream,
    models=("gemini-2.5-flash", "gemini-3-pro-preview", "gemini-2.0-flash"),
    body=BODY,
    unknown_event=(
        b'data: {"candidates":[{"content":{"role":"model","parts":[{"mysteryPart":{"a":1}}]},"index":0}]}\n\n'
    ),
    reports_unknown=True,
)

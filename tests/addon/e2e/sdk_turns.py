"""One model turn of each local target, streamed or whole, for the Agents SDK's tool loops: a tool
call, or a text answer. Streams come from `tests/support/fake_upstream.py`; the whole bodies of a
tool call are written here in each vendor's shape (anthropic SDK `Message`, openai `ChatCompletion`,
google-genai `GenerateContentResponse`, botocore `ConverseResponse`), as its text answers are there."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from tests.addon.e2e.sdk_targets import BEDROCK_CLAUDE, CLAUDE, GEMINI, QWEN
from tests.e2e.claude_code_upstreams import SIGNATURE, THINKING_TOOL, THOUGHT
from tests.support import fake_upstream
from tests.support.fake_upstream import GEMINI_SIGNATURE, Reply, _gemini_chunk, json_reply, sse_reply

MODELS = {"anthropic": CLAUDE, "chat": QWEN, "gemini": GEMINI, "bedrock": BEDROCK_CLAUDE}


def tool_call(dialect: str, name: str, arguments: Mapping[str, Any], call_id: str, *, stream: bool) -> Reply:
    model = MODELS[dialect]
    if stream:
        if dialect == "anthropic":
            return fake_upstream.anthropic_tool_use(name, arguments, f"toolu_{call_id}", model=model)
        if dialect == "chat":
            return fake_upstream.chat_tool_call(name, arguments, f"call_{call_id}", model=model)
        if dialect == "gemini":
            return fake_upstream.gemini_function_call(name, arguments, model=model)
        return fake_upstream.bedrock_tool_use(name, arguments, f"tooluse_{call_id}")
    if dialect == "anthropic":
        use = {"type": "tool_use", "id": f"toolu_{call_id}", "name": name, "input": dict(arguments)}
        return json_reply(200, {"id": f"msg_{call_id}", "type": "message", "role": "assistant",
                                "model": model, "content": [use],
                                "stop_reason": "tool_use", "stop_sequence": None,
                                "usage": {"input_tokens": 42, "output_tokens": 9}})
    if dialect == "chat":
        call = {"id": f"call_{call_id}", "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)}}
        choice = {"index": 0, "finish_reason": "tool_calls",
                  "message": {"role": "assistant", "content": None, "tool_calls": [call]}}
        return json_reply(200, {"id": "chatcmpl-fake", "object": "chat.completion", "created": 1,
                                "model": model, "choices": [choice],
                                "usage": {"prompt_tokens": 42, "completion_tokens": 9, "total_tokens": 51}})
    if dialect == "gemini":
        part = {"functionCall": {"name": name, "args": dict(arguments)}, "thoughtSignature": GEMINI_SIGNATURE}
        candidate = {"content": {"parts": [part], "role": "model"}, "finishReason": "STOP", "index": 0}
        return json_reply(200, {"candidates": [candidate], "modelVersion": model, "responseId": f"g{call_id}",
                                "usageMetadata": {"promptTokenCount": 30, "candidatesTokenCount": 9,
                                                  "totalTokenCount": 39}})
    use = {"toolUse": {"toolUseId": f"tooluse_{call_id}", "name": name, "input": dict(arguments)}}
    return json_reply(200, {"output": {"message": {"role": "assistant", "content": [use]}},
                            "stopReason": "tool_use", "metrics": {"latencyMs": 100},
                            "usage": {"inputTokens": 30, "outputTokens": 9, "totalTokens": 39}})


def text(dialect: str, said: str, *, stream: bool) -> Reply:
    model = MODELS[dialect]
    if dialect == "anthropic":
        answer = fake_upstream.anthropic_text if stream else fake_upstream.anthropic_message
        return answer(said, model=model)
    if dialect == "chat":
        return (fake_upstream.chat_text if stream else fake_upstream.chat_message)(said, model=model)
    if dialect == "gemini":
        return (fake_upstream.gemini_text if stream else fake_upstream.gemini_message)(said, model=model)
    return (fake_upstream.bedrock_text if stream else fake_upstream.bedrock_message)(said)


def declared(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The functions a translated request declares, by name, whatever its dialect."""
    if "toolConfig" in body:
        return {t["toolSpec"]["name"]: t["toolSpec"] for t in body["toolConfig"]["tools"]}
    if "contents" in body:
        groups = body.get("tools") or []
        return {f["name"]: f for group in groups for f in group.get("functionDeclarations", [])}
    return {(t.get("function") or t)["name"]: t for t in body.get("tools") or []}


def thinking_tool_call(dialect: str, name: str, arguments: Mapping[str, Any], call_id: str, *,
                       stream: bool) -> Reply:
    """A tool call after reasoning that carries the vendor's own state (Anthropic's and Bedrock's
    signed thinking, DeepSeek's `reasoning_content`, Gemini's thought signature): streamed as
    tests/e2e/claude_code_upstreams.py writes it, or whole."""
    if stream and dialect == "gemini":
        # each answer its own responseId, as Gemini's are: the gateway makes call ids from it
        call = {"functionCall": {"name": name, "args": dict(arguments)}, "thoughtSignature": SIGNATURE}
        return sse_reply([_gemini_chunk([{"text": THOUGHT, "thought": True}], GEMINI, f"g{call_id}", 30, 5),
                          _gemini_chunk([call], GEMINI, f"g{call_id}", 30, 10),
                          _gemini_chunk([{"text": ""}], GEMINI, f"g{call_id}", 30, 10, "STOP")])
    if stream:
        return THINKING_TOOL[dialect](name, arguments, call_id)
    if dialect == "anthropic":
        blocks = [{"type": "thinking", "thinking": THOUGHT, "signature": SIGNATURE},
                  {"type": "tool_use", "id": call_id, "name": name, "input": dict(arguments)}]
        return json_reply(200, {"id": f"msg_{call_id}", "type": "message", "role": "assistant",
                                "model": CLAUDE, "content": blocks, "stop_reason": "tool_use",
                                "stop_sequence": None, "usage": {"input_tokens": 42, "output_tokens": 9}})
    if dialect == "chat":
        call = {"id": call_id, "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)}}
        message = {"role": "assistant", "content": None, "reasoning_content": THOUGHT, "tool_calls": [call]}
        return json_reply(200, {"id": "chatcmpl-fake", "object": "chat.completion", "created": 1,
                                "model": "deepseek-chat", "choices": [{"index": 0, "message": message,
                                                                       "finish_reason": "tool_calls"}],
                                "usage": {"prompt_tokens": 42, "completion_tokens": 9, "total_tokens": 51}})
    if dialect == "gemini":
        parts = [{"text": THOUGHT, "thought": True},
                 {"functionCall": {"name": name, "args": dict(arguments)}, "thoughtSignature": SIGNATURE}]
        candidate = {"content": {"parts": parts, "role": "model"}, "finishReason": "STOP", "index": 0}
        return json_reply(200, {"candidates": [candidate], "modelVersion": GEMINI,
                                "responseId": f"g{call_id}",
                                "usageMetadata": {"promptTokenCount": 30, "candidatesTokenCount": 9,
                                                  "totalTokenCount": 39}})
    blocks = [{"reasoningContent": {"reasoningText": {"text": THOUGHT, "signature": SIGNATURE}}},
              {"toolUse": {"toolUseId": call_id, "name": name, "input": dict(arguments)}}]
    return json_reply(200, {"output": {"message": {"role": "assistant", "content": blocks}},
                            "stopReason": "tool_use", "metrics": {"latencyMs": 100},
                            "usage": {"inputTokens": 30, "outputTokens": 9, "totalTokens": 39}})

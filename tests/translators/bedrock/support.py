"""Shared inputs for the Bedrock tests: real Codex requests and model ids."""

from __future__ import annotations

import json
from typing import Any

from tests.data import CODEX
from translators import Translation, translate_request
from translators.features.vendor_state import encode as encode_state
from translators.ir.request import VendorState

CLAUDE = "us.anthropic.claude-sonnet-4-20250514-v1:0"
NOVA = "us.amazon.nova-micro-v1:0"
LLAMA = "meta.llama3-3-70b-instruct-v1:0"
"""A model that takes no cache points (docs/bedrock.md "Prompt caching")."""
OLD_CLAUDE = "anthropic.claude-3-5-sonnet-20240620-v1:0"
CODEX_FILES = ["request_classic_gpt55.json", "request_followup_after_apply_patch.json",
               "request_lite_functions_namespace.json", "request_local_compaction.json",
               "request_unknown_model.json"]


def request(input_items: Any, **fields: Any) -> dict[str, Any]:
    return {"model": "gpt-5.5", "stream": True, "input": input_items, **fields}


def user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def assistant(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}


def call(call_id: str, name: str = "shell", arguments: str = '{"cmd": "ls"}') -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": arguments}


def output(call_id: str, value: Any = "ok") -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": value}


def reasoning(state: VendorState) -> dict[str, Any]:
    return {"type": "reasoning", "summary": [], "encrypted_content": encode_state(state)}


SHELL = {"type": "function", "name": "shell", "description": "Run a command",
         "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}}


def blocks(translation: Translation, role: str | None = None) -> list[dict[str, Any]]:
    """The content blocks, cache points left out (tests/translators/bedrock/test_caching.py)."""
    messages = translation.body["messages"]
    return [block for m in messages if role in (None, m["role"]) for block in m["content"]
            if "cachePoint" not in block]


def kinds(message: dict[str, Any]) -> list[str]:
    """The kinds of a message's content blocks, cache points left out."""
    return [next(iter(block)) for block in message["content"] if "cachePoint" not in block]


def codex_request(name: str) -> dict[str, Any]:
    return json.loads((CODEX / name).read_text())


def bedrock(body: dict[str, Any], model: str = CLAUDE) -> Translation:
    return translate_request(body, "bedrock", model)


def plain() -> Translation:
    """A request with no tools: for stream tests where tool names do not matter."""
    return bedrock({"model": "gpt-5.5", "input": "hi", "stream": True})

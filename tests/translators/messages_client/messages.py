"""Messages request bodies for the tests, written as a client writes them."""

from __future__ import annotations

import json
from typing import Any

from tests.data import DATA
from translators.core.report import Report
from translators.ir.request import Request
from translators.messages_client import decode

MODEL = "claude-opus-5-5"


def claude_code_request() -> dict[str, Any]:
    """The real Claude Code 2.1.328 `claude -p "say hi"` body (data/SOURCES.md)."""
    return json.loads((DATA / "claude_code" / "request_say_hi.json").read_bytes())


def body(*messages: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 1024, "messages": list(messages) or [user("hi")], **fields}


def user(*content: Any) -> dict[str, Any]:
    return {
        "role": "user",
        "content": content[0] if len(content) == 1 and isinstance(content[0], str) else list(content),
    }


def assistant(*content: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": list(content)}


def system_message(text: str, **fields: Any) -> dict[str, Any]:
    return {"role": "system", "content": [{"type": "text", "text": text}], **fields}


def text(value: str, **fields: Any) -> dict[str, Any]:
    return {"type": "text", "text": value, **fields}


def tool_use(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


def tool_result(call_id: str, content: Any, **fields: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": content, **fields}


def tool(name: str, **fields: Any) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"the {name} tool",
        "input_schema": {"type": "object", "properties": {"x": {"type": "string"}}},
        **fields,
    }


def decoded(request_body: dict[str, Any]) -> tuple[Request, Report]:
    report = Report()
    return decode(request_body, report), report

"""Small builders for Responses request bodies, shaped as Codex 0.169 sends them (docs/codex.md "Request",
"Input items")."""

from __future__ import annotations

from typing import Any

from translators.core.report import Report
from translators.ir.request import Request
from translators.responses_client.request import decode

APPLY_PATCH_GRAMMAR = """start: begin_patch hunk+ end_patch
begin_patch: "*** Begin Patch" LF
end_patch: "*** End Patch" LF?

hunk: add_hunk | delete_hunk | update_hunk
add_hunk: "*** Add File: " filename LF add_line+
delete_hunk: "*** Delete File: " filename LF
update_hunk: "*** Update File: " filename LF change_move? change?

filename: /(.+)/
add_line: "+" /(.*)/ LF -> line

change_move: "*** Move to: " filename LF
change: (change_context | change_line)+ eof_line?
change_context: ("@@" | "@@ " /(.+)/) LF
change_line: ("+" | "-" | " ") /(.*)/ LF
eof_line: "*** End of File" LF

%import common.LF
"""
"""Codex's apply_patch grammar (docs/codex.md "apply_patch")."""

PATCH = '*** Begin Patch\n*** Add File: hello.txt\n+hello "world" \\ tab\t ✓\n*** End Patch\n'
"""A patch that parses with APPLY_PATCH_GRAMMAR and needs JSON escaping (quote, backslash, tab, non-ASCII)."""


def body(*items: dict[str, Any], tools: list[dict[str, Any]] | None = None, **top: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"model": "gpt-5.5", "input": list(items), "stream": True}
    if tools is not None:
        out["tools"] = tools
    out.update(top)
    return out


def decoded(request_body: dict[str, Any]) -> tuple[Request, Report]:
    report = Report()
    return decode(request_body, report), report


# -- input items ----------------------------------------------------------------------------------


def message(role: str, *texts: str, **extra: Any) -> dict[str, Any]:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": t} for t in texts], **extra}


def user(*texts: str) -> dict[str, Any]:
    return message("user", *texts)


def developer(*texts: str) -> dict[str, Any]:
    return message("developer", *texts)


def assistant(text: str, **extra: Any) -> dict[str, Any]:
    return message("assistant", text, **extra)


def function_call(call_id: str, name: str, arguments: str = "{}", **extra: Any) -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": arguments, **extra}


def function_output(call_id: str, output: Any) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def custom_call(call_id: str, name: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "custom_tool_call", "call_id": call_id, "name": name, "input": text, **extra}


def custom_output(call_id: str, output: Any) -> dict[str, Any]:
    return {"type": "custom_tool_call_output", "call_id": call_id, "output": output}


def tool_search_call(call_id: str, query: str) -> dict[str, Any]:
    return {"type": "tool_search_call", "call_id": call_id, "execution": "client",
            "arguments": {"query": query}}


def tool_search_output(call_id: str, *tools: dict[str, Any]) -> dict[str, Any]:
    """What Codex sends back for a client tool search: the tools it found, in full."""
    return {"type": "tool_search_output", "call_id": call_id, "execution": "client", "status": "completed",
            "tools": list(tools)}


def additional_tools(*tools: dict[str, Any]) -> dict[str, Any]:
    return {"type": "additional_tools", "role": "developer", "tools": list(tools)}


# -- tool declarations ----------------------------------------------------------------------------


def function(
    name: str, description: str = "", properties: dict[str, Any] | None = None, **extra: Any
) -> dict[str, Any]:
    return {
        "type": "function",
        "name": name,
        "description": description,
        "strict": False,
        "parameters": {"type": "object", "properties": properties or {}, "additionalProperties": False},
        **extra,
    }


def custom(
    name: str, description: str = "", definition: str | None = None, syntax: str = "lark"
) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "custom", "name": name, "description": description}
    if definition is not None:
        out["format"] = {"type": "grammar", "syntax": syntax, "definition": definition}
    else:
        out["format"] = {"type": "text"}
    return out


def namespace(name: str, *tools: dict[str, Any], description: str = "") -> dict[str, Any]:
    return {"type": "namespace", "name": name, "description": description, "tools": list(tools)}


def tool_search(description: str = "Search deferred tools.") -> dict[str, Any]:
    return {
        "type": "tool_search",
        "execution": "client",
        "description": description,
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}, "limit": {"type": "number"}},
            "required": ["query"],
            "additionalProperties": False,
        },
    }

"""IR tools and tool_choice -> Chat Completions `tools` / `tool_choice` (docs/chat.md "Request").

Freeform tools go out as native `{type: "custom"}` tools where the target is OpenAI itself, and
as one-string-argument functions everywhere else (docs/responses.md "Tools on other dialects");
`toolset.build` names them either way, so
the stream decoder maps every wire name back through the same ToolIndex.
"""

from __future__ import annotations

from typing import Any

from translators.chat.models import Target
from translators.core.report import Report
from translators.features import toolset
from translators.ir.request import CustomTool, Request


def declarations(request: Request, tools: toolset.Toolset, target: Target,
                 report: Report) -> list[dict[str, Any]]:
    custom = _native_custom(request, tools, target)
    out: list[dict[str, Any]] = []
    for tool in tools.tools:
        if tool.wire in custom:
            out.append(_custom(tool.wire, custom[tool.wire]))
        else:
            out.append(_function(tool, target, report))
    return out


def _native_custom(request: Request, tools: toolset.Toolset, target: Target) -> dict[str, CustomTool]:
    """wire name -> the client's freeform tool, for the targets that take them natively."""
    if not target.native_custom_tools:
        return {}
    return {tools.wire(t.namespace, t.name): t for t in request.tools if isinstance(t, CustomTool)}


def _custom(wire: str, tool: CustomTool) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": wire}
    if tool.description:
        spec["description"] = tool.description
    if tool.definition:
        spec["format"] = {"type": "grammar", "grammar": {"syntax": tool.syntax or "lark",
                                                         "definition": tool.definition}}
    else:
        spec["format"] = {"type": "text"}
    return {"type": "custom", "custom": spec}


def _function(tool: toolset.JsonTool, target: Target, report: Report) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": tool.wire}
    if tool.description:
        spec["description"] = tool.description
    spec["parameters"] = tool.parameters
    if tool.strict:
        if target.deepseek:
            # DeepSeek's strict mode is a beta served only under /beta (api-docs.deepseek.com)
            report.drop(f"{tool.origin}.strict")
        else:
            spec["strict"] = True
    return {"type": "function", "function": spec}


def tool_choice(request: Request, tools: toolset.Toolset, target: Target,
                report: Report) -> str | dict[str, Any] | None:
    choice = request.tool_choice
    if choice.mode in ("none", "required"):
        return choice.mode
    if choice.mode == "tool" and choice.name:
        try:
            wire = tools.offered_wire(choice.namespace, choice.name)
        except KeyError:
            report.drop("tool_choice")
            return None
        if wire in _native_custom(request, tools, target):
            return {"type": "custom", "custom": {"name": wire}}
        return {"type": "function", "function": {"name": wire}}
    return None

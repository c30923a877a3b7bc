"""IR tools -> Converse `toolConfig` (docs/bedrock.md "Request", "Tool names and ids").

Names come from the shared toolset (freeform tools as one required `input` string, names cut
stably to `[a-zA-Z0-9_-]{1,64}`). Two Bedrock rules shape the rest:
- `toolChoice` has no `none` member, so "none" is said by not sending the tools;
- a request whose messages hold toolUse/toolResult blocks must define `toolConfig` ("The
  toolConfig field must be defined when using toolUse and toolResult content blocks", reported in
  langgenius/dify#17545, vxcontrol/pentagi#196); with no tools to offer, the tools called in the
  history are declared as stubs the model is told not to call.
"""

from __future__ import annotations

from typing import Any

from translators.core.report import Report
from translators.features import toolset
from translators.ir.request import Request

STUB_DESCRIPTION = ("Not available now: declared only because earlier messages call it. "
                    "Do not call this tool.")


def tool_config(request: Request, tools: toolset.Toolset, report: Report) -> dict[str, Any] | None:
    choice = request.tool_choice
    specs = [_spec(tool, report) for tool in tools.tools]
    if choice.mode == "none" and specs:
        report.note("Bedrock has no 'none' tool choice: the tools were not sent")
        specs = []
    if not specs and any(item.type == "tool_call" for item in request.items):
        specs = _stubs(request, tools)
        report.note("the history holds tool calls but no tools are offered: the called tools were "
                    "declared as stubs, since Bedrock requires toolConfig with toolUse blocks")
        if choice.mode in ("required", "tool"):
            report.drop("tool_choice")
        return {"tools": specs}
    if not specs:
        if choice.mode in ("required", "tool"):
            report.drop("tool_choice")
        return None
    config: dict[str, Any] = {"tools": specs}
    tool_choice = _tool_choice(request, tools, report)
    if tool_choice is not None:
        config["toolChoice"] = tool_choice
    if request.parallel_tool_calls is False:
        report.drop("parallel_tool_calls")  # Converse has no switch for parallel tool use
    return config


def _spec(tool: toolset.JsonTool, report: Report) -> dict[str, Any]:
    if tool.strict:
        # ToolSpecification has `strict`, but which models honour it is not documented (docs/bedrock.md
        # "Request")
        report.drop(f"{tool.origin}.strict")
    spec: dict[str, Any] = {"name": tool.wire, "inputSchema": {"json": tool.object_schema}}
    if tool.description:
        spec["description"] = tool.description
    return {"toolSpec": spec}


def _stubs(request: Request, tools: toolset.Toolset) -> list[dict[str, Any]]:
    wires = dict.fromkeys(tools.wire(i.namespace, i.name) for i in request.items if i.type == "tool_call")
    return [{"toolSpec": {"name": wire, "description": STUB_DESCRIPTION,
                          "inputSchema": {"json": {"type": "object", "properties": {}}}}} for wire in wires]


def _tool_choice(request: Request, tools: toolset.Toolset, report: Report) -> dict[str, Any] | None:
    choice = request.tool_choice
    if choice.mode == "required":
        return {"any": {}}
    if choice.mode == "tool" and choice.name:
        try:
            return {"tool": {"name": tools.offered_wire(choice.namespace, choice.name)}}
        except KeyError:
            report.drop("tool_choice")
    return None  # auto is Bedrock's default

"""IR tools -> the JSON-schema function list every non-OpenAI target takes, with wire names.

Shared by every JSON-only dialect: hosted tools are reported, freeform tools get the synthesized
one-string schema, tool_search becomes a function, and every name gets a wire name that maps back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from translators.core.report import Report
from translators.features import freeform
from translators.features.naming import DEFAULT_NAMESPACE, NamePolicy, ToolIndex, ToolRef, assign_wire_names
from translators.ir.request import (
    CustomTool,
    FunctionTool,
    Namespace,
    Part,
    Request,
    Text,
    ToolCall,
    ToolResult,
)


@dataclass(frozen=True, slots=True)
class JsonTool:
    wire: str
    description: str
    parameters: dict[str, Any]
    strict: bool | None
    origin: str
    input_examples: tuple[dict[str, Any], ...] = ()
    """Example inputs, kept only for a dialect that takes them (`build(..., examples=True)`)."""

    @property
    def object_schema(self) -> dict[str, Any]:
        """The parameters with an object at the root, which Anthropic and Bedrock require
        (docs/anthropic.md "Request" `input_schema`, docs/bedrock.md "Request" `inputSchema.json`)."""
        if self.parameters.get("type") == "object":
            return self.parameters
        rest = {k: v for k, v in self.parameters.items() if k != "type"}
        return {"type": "object", "properties": {}, **rest}


@dataclass(slots=True)
class Toolset:
    tools: list[JsonTool]
    index: ToolIndex
    names: dict[tuple[str | None, str], str]
    offered: frozenset[tuple[str | None, str]] = frozenset()
    """The tools declared to the upstream (names also holds tools only seen in history calls)."""

    def wire(self, namespace: str | None, name: str) -> str:
        return self.names[(_ns(namespace), name)]

    def offered_wire(self, namespace: str | None, name: str) -> str:
        """The wire name of a tool the upstream is offered; KeyError for one it is not: a
        forced choice of an undeclared tool is an upstream 400."""
        key = (_ns(namespace), name)
        if key not in self.offered:
            raise KeyError(key)
        return self.names[key]


def _ns(namespace: str | None) -> str | None:
    return None if namespace in (None, "", DEFAULT_NAMESPACE) else namespace


def build(request: Request, policy: NamePolicy, report: Report, *, examples: bool = False) -> Toolset:
    """`examples`: the dialect takes a tool's `input_examples` (Anthropic); elsewhere each tool's
    examples are reported dropped, here, once for every dialect."""
    # the web search tool is each dialect's business (translators/features/websearch.py)
    declared = [t for t in request.tools if t.kind not in ("hosted", "web_search")]
    for tool in request.tools:
        if tool.kind == "hosted":
            report.drop(tool.origin)
    calls = [item for item in request.items if item.type == "tool_call"]
    declared_keys = [(_ns(t.namespace), t.name) for t in declared]
    call_keys = [(_ns(c.namespace), c.name) for c in calls]
    names = assign_wire_names(declared_keys + call_keys, policy)
    index = ToolIndex()
    tools: list[JsonTool] = []
    for tool, key in zip(declared, declared_keys, strict=True):
        wire = names[key]
        if isinstance(tool, CustomTool):
            index.add(wire, ToolRef(name=tool.name, namespace=key[0], kind="custom",
                                    syntax=tool.syntax, definition=tool.definition))
            tools.append(JsonTool(wire, freeform.description(tool), freeform.schema(), None, tool.origin))
            continue
        sealed = isinstance(tool, FunctionTool) and bool(tool.encrypted_args)
        index.add(wire, ToolRef(name=tool.name, namespace=key[0], kind=tool.kind, plaintext=sealed))
        strict = tool.strict if isinstance(tool, FunctionTool) else None
        shown = tuple(tool.input_examples) if isinstance(tool, FunctionTool) else ()
        if shown and not examples:
            report.drop(f"{tool.origin}.input_examples")
            shown = ()
        tools.append(JsonTool(wire, tool.description, tool.parameters, strict, tool.origin, shown))
    for call, key in zip(calls, call_keys, strict=True):
        wire = names[key]
        if wire not in index.by_wire:
            index.add(wire, ToolRef(name=call.name, namespace=key[0], kind=call.kind))
    return Toolset(tools, index, names, frozenset(declared_keys))


def call_input(call: ToolCall, report: Report) -> dict[str, Any]:
    """A history call's arguments as the JSON object JSON-only targets want."""
    if call.kind == "custom":
        return {freeform.ARGUMENT: call.arguments}
    try:
        value = json.loads(call.arguments) if call.arguments.strip() else {}
    except ValueError:
        report.note(f"{call.origin}: arguments were not valid JSON; sent wrapped as {{\"arguments\": ...}}")
        return {"arguments": call.arguments}
    if isinstance(value, dict):
        return value
    report.note(f"{call.origin}: arguments were not a JSON object; sent wrapped as {{\"arguments\": ...}}")
    return {"arguments": value}


def system_texts(request: Request, tools: Toolset) -> list[str]:
    """The system prompt every JSON-only target gets: the client's instructions and opening
    developer messages, then the namespace descriptions."""
    texts = [t for t in request.system if t.strip()]
    preamble = namespace_preamble(request.namespaces)
    if preamble:
        texts.append(preamble)
    return texts


def namespace_preamble(namespaces: list[Namespace]) -> str | None:
    """Namespace descriptions have nowhere else to go once names are flattened."""
    if not namespaces:
        return None
    lines = ["# Tool namespaces",
             "Some tools are grouped in namespaces; their names start with the namespace:"]
    for ns in namespaces:
        lines.append(f"- `{ns.name}`: {ns.description.strip()}")
    return "\n".join(lines)


ERROR_MARK = "Error: "
"""What opens the text of a failed tool's result for a dialect without an error flag (Chat, the
Responses upstream, a Bedrock model without `toolResult.status`): the model still reads that the
call failed, not only what it printed (docs/claude-code.md "Tool errors")."""
ERROR_NOTE = ("a tool result's is_error was sent as an 'Error: ' opening its text: the upstream has no "
              "error flag on tool results")


def result_parts(result: ToolResult, report: Report) -> list[Part]:
    """A tool result's parts, for a dialect without an error flag: a failed one's text opens with
    `ERROR_MARK` (its first text part, or a part of its own before an image or a file)."""
    if not result.is_error:
        return result.parts
    report.note(ERROR_NOTE)
    first = result.parts[0] if result.parts else None
    if isinstance(first, Text):
        return [Text(text=ERROR_MARK + first.text), *result.parts[1:]]
    return [Text(text=ERROR_MARK.rstrip()), *result.parts]

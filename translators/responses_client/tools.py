"""Responses tool declarations -> IR tools (top-level `tools`, Lite `additional_tools`, and the
tools a `tool_search_output` makes callable). One decoder for all three (issue: "decoded the
same way, namespaces included")."""

from __future__ import annotations

from typing import Any

from translators.core.errors import MalformedRequest
from translators.core.report import Report
from translators.features.naming import DEFAULT_NAMESPACE
from translators.ir.request import (
    CustomTool,
    FunctionTool,
    HostedTool,
    LocalShellTool,
    Namespace,
    Tool,
    ToolSearchTool,
    WebSearchTool,
)
from translators.responses_client import client_tools

_HOSTED = "\x00hosted"
"""The key space of hosted tools in the collector (no namespace can be named so)."""
ToolKey = tuple[str | None, str]
"""A declared tool's place in the collector: (namespace, name), or (`_HOSTED`, name)."""

LOCAL_SHELL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {"type": "array", "items": {"type": "string"}, "description": "argv of the command"},
        "timeout_ms": {"type": "integer"},
        "working_directory": {"type": "string"},
        "env": {"type": "object", "additionalProperties": {"type": "string"}},
        "user": {"type": "string"},
    },
    "required": ["command"],
}

_FUNCTION_KEYS = {"type", "name", "description", "parameters", "strict"}
# defer_loading only says "not in context until searched": the gateway declares such tools only
# once a tool_search_output lists them, which is exactly that.
_SILENT_FUNCTION_KEYS = {"defer_loading"}
_READ_FUNCTION_KEYS = frozenset(_FUNCTION_KEYS | _SILENT_FUNCTION_KEYS)
_READ_CUSTOM_KEYS = frozenset({"type", "name", "description", "format"} | _SILENT_FUNCTION_KEYS)
_NAMESPACE_KEYS = frozenset({"type", "name", "description", "tools"})
_TOOL_SEARCH_KEYS = frozenset({"type", "execution", "description", "parameters"})
WEB_SEARCH_TYPES = frozenset({"web_search", "web_search_2025_08_26", "web_search_preview",
                              "web_search_preview_2025_03_11"})
"""The hosted web search tool's types (openai SDK `WebSearchToolParam`, `WebSearchPreviewToolParam`)."""
_WEB_SEARCH_KEYS = frozenset({"type", "external_web_access", "search_content_types", "filters",
                              "user_location", "search_context_size"})


def _filler(namespace: str, description: str) -> bool:
    """Codex's own placeholder adds nothing to the prompt."""
    text = description.strip()
    return not text or text == f"Tools in the {namespace} namespace."


class ToolCollector:
    """Accumulates declarations in order; a later declaration of the same (namespace, name)
    replaces the earlier one in place, so the tool list (a prompt-cache prefix) stays stable."""

    def __init__(self, report: Report) -> None:
        self.report = report
        self._tools: dict[ToolKey, Tool] = {}
        self._namespaces: dict[str, Namespace] = {}
        self._declared: list[ToolKey] = []

    @property
    def tools(self) -> list[Tool]:
        return list(self._tools.values())

    @property
    def namespaces(self) -> list[Namespace]:
        return list(self._namespaces.values())

    def declared(self) -> tuple[tuple[tuple[ToolKey, Tool], ...], tuple[tuple[str, Namespace], ...]]:
        """Every tool and namespace declared so far, in order (what `restore` takes)."""
        return tuple(self._tools.items()), tuple(self._namespaces.items())

    def restore(self, tools: tuple[tuple[ToolKey, Tool], ...],
                namespaces: tuple[tuple[str, Namespace], ...]) -> None:
        """Declare again, in order, what another collector declared (`declared`): a request
        reusing an item's decoding (translators/responses_client/reuse.py)."""
        self._tools.update(tools)
        self._namespaces.update(namespaces)

    def add_all(self, declarations: Any, path: str) -> list[Tool]:
        """Declare every tool of the array; returns the tools it declared (new or replacing)."""
        if not isinstance(declarations, list):
            raise MalformedRequest(f"{path} must be an array of tools", param=path)
        self._declared = []
        for i, declaration in enumerate(declarations):
            self.add(declaration, f"{path}[{i}]", namespace=None)
        return [self._tools[key] for key in dict.fromkeys(self._declared)]

    def add(self, decl: Any, path: str, namespace: str | None) -> None:
        if not isinstance(decl, dict) or not isinstance(decl.get("type"), str):
            raise MalformedRequest(f"{path} must be a tool object with a type", param=path)
        kind = decl["type"]
        if kind == "namespace":
            self._namespace(decl, path)
        elif kind == "function":
            self._put(self._function(decl, path, namespace))
        elif kind == "custom":
            self._put(self._custom(decl, path, namespace))
        elif kind == "tool_search":
            self._tool_search(decl, path)
        elif kind in WEB_SEARCH_TYPES:
            self._put(self._web_search(decl, path))
        elif kind == "local_shell":
            self._put(LocalShellTool(parameters=LOCAL_SHELL_SCHEMA, origin=path))
        elif kind in client_tools.DECLARED and (kind != "shell" or client_tools.runs_locally(decl)):
            self._put(client_tools.declared(client_tools.DECLARED[kind], decl, path, self.report))
        else:
            # every other type is a tool OpenAI runs itself (file_search, image_generation,
            # code_interpreter, mcp, a shell in a hosted container...): docs/agents-sdk.md
            # "Client-run tools"
            self._put(HostedTool(name=kind, raw=decl, origin=path))

    def _put(self, tool: Tool) -> None:
        # a hosted tool lives apart from client tools: a function called `web_search` and the
        # hosted web_search are two tools, and neither may silently replace the other
        key = (_HOSTED, tool.name) if tool.kind in ("hosted", "web_search") else (tool.namespace, tool.name)
        self._tools[key] = tool
        self._declared.append(key)

    def _namespace(self, decl: dict[str, Any], path: str) -> None:
        name = decl.get("name")
        if not isinstance(name, str) or not name:
            raise MalformedRequest(f"{path}.name must be a non-empty string", param=f"{path}.name")
        description = decl.get("description") or ""
        if not isinstance(description, str):
            raise MalformedRequest(f"{path}.description must be a string", param=f"{path}.description")
        if name != DEFAULT_NAMESPACE and not _filler(name, description):
            self._namespaces[name] = Namespace(name=name, description=description)
        self.report.drop_unread(decl, _NAMESPACE_KEYS, path)
        inner = decl.get("tools") or []
        if not isinstance(inner, list):
            raise MalformedRequest(f"{path}.tools must be an array", param=f"{path}.tools")
        nested = None if name == DEFAULT_NAMESPACE else name
        for i, tool in enumerate(inner):
            self.add(tool, f"{path}.tools[{i}]", namespace=nested)

    def _function(self, decl: dict[str, Any], path: str, namespace: str | None) -> FunctionTool:
        name = _name(decl, path)
        parameters = decl.get("parameters")
        if parameters is None:
            parameters = {"type": "object", "properties": {}}
        if not isinstance(parameters, dict):
            raise MalformedRequest(f"{path}.parameters must be a JSON schema object",
                                   param=f"{path}.parameters")
        self.report.drop_unread(decl, _READ_FUNCTION_KEYS, path)
        strict = decl.get("strict")
        parameters, sealed = _unsealed(parameters)
        return FunctionTool(name=name, namespace=namespace, description=_text(decl.get("description")),
                            parameters=parameters, strict=strict if isinstance(strict, bool) else None,
                            encrypted_args=sealed, origin=path)

    def _custom(self, decl: dict[str, Any], path: str, namespace: str | None) -> CustomTool:
        name = _name(decl, path)
        fmt = decl.get("format") or {"type": "text"}
        syntax = definition = None
        if isinstance(fmt, dict) and fmt.get("type") == "grammar":
            grammar = fmt.get("grammar") if isinstance(fmt.get("grammar"), dict) else fmt
            syntax = grammar.get("syntax") if grammar.get("syntax") in ("lark", "regex") else "lark"
            definition = grammar.get("definition") if isinstance(grammar.get("definition"), str) else None
        elif not (isinstance(fmt, dict) and fmt.get("type") == "text"):
            self.report.drop(f"{path}.format")
        self.report.drop_unread(decl, _READ_CUSTOM_KEYS, path)
        return CustomTool(name=name, namespace=namespace, description=_text(decl.get("description")),
                          syntax=syntax, definition=definition, origin=path)

    def _tool_search(self, decl: dict[str, Any], path: str) -> None:
        if decl.get("execution", "client") != "client":
            # server-side search runs on OpenAI's platform; only a Responses target can keep it
            self._put(HostedTool(name="tool_search", raw=decl, origin=path))
            return
        parameters = decl.get("parameters")
        if not isinstance(parameters, dict):
            parameters = {"type": "object", "properties": {"query": {"type": "string"}},
                          "required": ["query"]}
        self.report.drop_unread(decl, _TOOL_SEARCH_KEYS, path)
        self._put(ToolSearchTool(description=_text(decl.get("description")), parameters=parameters,
                                 origin=path))


    def _web_search(self, decl: dict[str, Any], path: str) -> WebSearchTool:
        """`external_web_access` is true when left out (openai SDK `WebSearchToolParam`). Text search
        is what every upstream does; a client that allows only image search loses its types."""
        self.report.drop_unread(decl, _WEB_SEARCH_KEYS, path)
        types = decl.get("search_content_types")
        if isinstance(types, list) and "text" not in types:
            self.report.drop(f"{path}.search_content_types")
        filters = decl.get("filters") if isinstance(decl.get("filters"), dict) else {}
        self.report.drop_unread(filters, {"allowed_domains"}, f"{path}.filters", skip_empty=True)
        domains = filters.get("allowed_domains")
        location = decl.get("user_location")
        size = decl.get("search_context_size")
        return WebSearchTool(live=decl.get("external_web_access") is not False,
                             allowed_domains=[d for d in domains if isinstance(d, str)]
                             if isinstance(domains, list) else [],
                             user_location=location if isinstance(location, dict) else None,
                             context_size=size if isinstance(size, str) else None, origin=path)


def _unsealed(parameters: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The schema without the `encrypted: true` marks on its properties, and the properties that
    had one. Codex 0.169 marks the `message` of multi_agent_v2's `spawn_agent`, `send_message` and
    `followup_task` so (recorded: tests/data/codex/request_multi_agent_v2.json): a request to
    OpenAI's backend to encrypt that argument, which means nothing to another model."""
    properties = parameters.get("properties")
    if not isinstance(properties, dict):
        return parameters, []
    sealed = [name for name, schema in properties.items()
              if isinstance(schema, dict) and schema.get("encrypted")]
    if not sealed:
        return parameters, []
    plain = {name: ({k: v for k, v in schema.items() if k != "encrypted"} if name in sealed else schema)
             for name, schema in properties.items()}
    return {**parameters, "properties": plain}, sealed


def _name(decl: dict[str, Any], path: str) -> str:
    name = decl.get("name")
    if not isinstance(name, str) or not name:
        raise MalformedRequest(f"{path}.name must be a non-empty string", param=f"{path}.name")
    return name


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def listing(tools: list[Tool]) -> str:
    """What a tool_search result tells a JSON-only model: the tools it can now call."""
    lines = ["Tools loaded by this search (now callable):"]
    for tool in tools:
        label = f"{tool.namespace}.{tool.name}" if tool.namespace else tool.name
        summary = getattr(tool, "description", "").strip().splitlines()
        lines.append(f"- {label}: {summary[0][:200]}" if summary else f"- {label}")
    return "\n".join(lines) if tools else "No tools matched this search."

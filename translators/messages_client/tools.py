"""Messages `tools` and `tool_choice` -> IR (docs/claude-code.md "Tools").

A client tool (no `type`, or `custom`) is a JSON-schema function: every upstream takes it. Of
the server tools, web search maps onto the IR's hosted search (translators/features/websearch.py serves
it from the upstream's own search where there is one); the other Anthropic-defined tools
(bash, text editor, computer, memory, code execution, web fetch, tool search, MCP toolsets) have
no definition another model knows, and are reported dropped.
"""

from __future__ import annotations

from typing import Any

from translators.core.errors import MalformedRequest
from translators.core.report import Report
from translators.ir.request import FunctionTool, Tool, ToolChoice, WebSearchTool
from translators.messages_client import cache

_FUNCTION_KEYS = frozenset({"type", "name", "description", "input_schema", "strict", "defer_loading",
                            "cache_control", "eager_input_streaming", "allowed_callers", "input_examples"})
_COSMETIC_TOOL_KEYS = frozenset({"eager_input_streaming"})
"""Input streaming granularity: the model sees the same tool."""
_WEB_SEARCH_KEYS = frozenset({"type", "name", "allowed_domains", "user_location", "cache_control"})
_CHOICE_KEYS = frozenset({"type", "name", "disable_parallel_tool_use"})


def is_web_search(tool_type: object) -> bool:
    return isinstance(tool_type, str) and tool_type.startswith("web_search_")


class Tools:
    """The declared tools, the deferred ones apart until a `tool_reference` loads them."""

    def __init__(self, report: Report) -> None:
        self.report = report
        self.tools: list[Tool] = []
        self.deferred: dict[str, FunctionTool] = {}
        """Name -> a tool with `defer_loading`: "only loaded when returned via tool_reference
        from tool search" (anthropic SDK `BetaToolParam`)."""

    def add_all(self, value: Any) -> None:
        if value is None:
            return
        if not isinstance(value, list):
            raise MalformedRequest("tools must be an array", param="tools")
        for i, raw in enumerate(value):
            path = f"tools[{i}]"
            if not isinstance(raw, dict):
                raise MalformedRequest(f"{path} must be an object", param=path)
            kind = raw.get("type")
            if kind in (None, "custom"):
                self._function(raw, path)
            elif is_web_search(kind):
                self._web_search(raw, path)
            else:
                self.report.drop(path)

    def _function(self, raw: dict[str, Any], path: str) -> None:
        name = raw.get("name")
        schema = raw.get("input_schema")
        if not isinstance(name, str) or not name:
            raise MalformedRequest(f"{path}.name must be a non-empty string", param=f"{path}.name")
        if not isinstance(schema, dict):
            raise MalformedRequest(f"{path}.input_schema must be an object", param=f"{path}.input_schema")
        description = raw.get("description")
        strict = raw.get("strict")
        for key, value in raw.items():
            if key in _COSMETIC_TOOL_KEYS and value is not None:
                self.report.drop(f"{path}.{key}", kind="cosmetic")
        if raw.get("allowed_callers") not in (None, ["direct"]):
            self.report.drop(f"{path}.allowed_callers")
        self.report.drop_unread(raw, _FUNCTION_KEYS, path, skip_empty=True)
        tool = FunctionTool(name=name, description=description if isinstance(description, str) else "",
                            parameters=schema, strict=strict if isinstance(strict, bool) else None,
                            input_examples=_examples(raw.get("input_examples"), f"{path}.input_examples"),
                            origin=path, cache=cache.read(raw, path, self.report))
        if raw.get("defer_loading") is True:
            self.deferred[name] = tool
        else:
            self.tools.append(tool)

    def _web_search(self, raw: dict[str, Any], path: str) -> None:
        domains = raw.get("allowed_domains")
        location = raw.get("user_location")
        if raw.get("cache_control") is not None:
            self.report.drop(f"{path}.cache_control", kind="cosmetic")
        # blocked_domains, max_uses, allowed_callers, defer_loading, strict: no other vendor's search
        # takes them
        self.report.drop_unread(raw, _WEB_SEARCH_KEYS, path, skip_empty=True)
        self.tools.append(WebSearchTool(
            allowed_domains=[d for d in domains if isinstance(d, str)] if isinstance(domains, list) else [],
            user_location=location if isinstance(location, dict) else None, origin=path))

    def load(self, name: str) -> bool:
        """A `tool_reference` named `name`: the deferred tool joins the declared ones (once)."""
        tool = self.deferred.pop(name, None)
        if tool is None:
            return any(getattr(t, "name", None) == name for t in self.tools)
        self.tools.append(tool)
        return True

    def finish(self) -> list[Tool]:
        """The tools the model is shown: never-loaded deferred tools stay out, as the API leaves
        them out of the prompt (said in a note)."""
        if self.deferred:
            names = ", ".join(sorted(self.deferred))
            self.report.note(f"deferred tools not loaded by a tool_reference were not offered: {names}")
        return self.tools


def tool_choice(value: Any, report: Report) -> tuple[ToolChoice, bool | None]:
    """`tool_choice` -> the IR's choice, and `parallel_tool_calls` (False when
    `disable_parallel_tool_use`, else unset)."""
    if value is None:
        return ToolChoice(), None
    if not isinstance(value, dict) or value.get("type") not in ("auto", "any", "tool", "none"):
        raise MalformedRequest("tool_choice.type must be auto, any, tool or none", param="tool_choice")
    report.drop_unread(value, _CHOICE_KEYS, "tool_choice")
    parallel = False if value.get("disable_parallel_tool_use") is True else None
    kind = value["type"]
    if kind == "tool":
        name = value.get("name")
        if not isinstance(name, str) or not name:
            raise MalformedRequest("tool_choice.name must name a tool", param="tool_choice.name")
        return ToolChoice(mode="tool", name=name), parallel
    return ToolChoice(mode={"auto": "auto", "any": "required", "none": "none"}[kind]), parallel


def _examples(value: Any, path: str) -> list[dict[str, Any]]:
    """`input_examples`: objects, each an input the tool takes (anthropic SDK `BetaToolParam`)."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(e, dict) for e in value):
        raise MalformedRequest(f"{path} must be an array of objects", param=path)
    return value

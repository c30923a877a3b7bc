"""IR request -> Anthropic Messages body (docs/anthropic.md "Request", "Conversation rules", "Tool names").

The body is written for `anthropic-version: 2023-06-01`, which every current model still takes:
version 2026-10-21 rejects `temperature`/`top_p`/`top_k` outright, which the Agents SDK and other
clients send, so the version is pinned with the body (docs/anthropic.md "Versions").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from translators.anthropic import caching, document
from translators.core.capabilities import ModelCapabilities
from translators.core.report import Report
from translators.core.translation import Encoded
from translators.families.claude import structured, turns
from translators.families.claude import thinking as claude
from translators.features import toolset, vendor_state, websearch
from translators.features.caching import system_marks
from translators.features.naming import NamePolicy, fnv1a_32
from translators.ir.request import (
    Image,
    Part,
    Reasoning,
    Request,
    ToolCall,
    ToolResult,
    WebSearchCall,
    WebSearchTool,
)

API_VERSION = "2023-06-01"
NAMES = NamePolicy(max_length=64)
_TOOL_ID = re.compile(r"[^A-Za-z0-9_-]")
_TOOL_ID_OK = re.compile(r"[A-Za-z0-9_-]{1,64}")


def tool_use_id(call_id: str) -> str:
    """Anthropic ids match `^[a-zA-Z0-9_-]+$`; ids from other vendors may not. A valid id passes
    unchanged; any other gets a stable hash of the original, so `call.1` and `call:1` stay two
    calls. The same mapping on both sides keeps tool_use and tool_result paired."""
    if _TOOL_ID_OK.fullmatch(call_id):
        return call_id
    return f"{_TOOL_ID.sub('_', call_id)[:48]}_{fnv1a_32(call_id)}"


def encode(request: Request, model: str, report: Report, caps: ModelCapabilities) -> Encoded:
    tools = toolset.build(request, NAMES, report, examples=True)
    max_tokens = claude.max_tokens(request, caps, report)
    plan = claude.plan(request, caps, max_tokens, report)
    blocks = _Blocks(tools, report, caps.image_input, caps.pdf_input)
    messages, thinking = turns.with_thinking(request, blocks, plan.thinking, report)
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "messages": messages}
    system = _system(request, tools)
    if system:
        body["system"] = system
    tool_marks = {t.origin: t.cache for t in request.tools if getattr(t, "cache", None) is not None}
    declared = [caching.mark(_tool(t, report), tool_marks.get(t.origin)) for t in tools.tools]
    search = websearch.declared(request)
    if search is not None and (server := _web_search_tool(search, tools, caps, report)) is not None:
        declared.append(server)
    if declared:
        body["tools"] = declared
        choice = _tool_choice(request, tools, thinking is not None, report)
        if choice:
            body["tool_choice"] = choice
    elif request.tool_choice.mode != "auto":
        report.drop("tool_choice")
    if thinking is not None:
        body["thinking"] = thinking
    sampling = claude.sampling(request, caps, thinking is not None, report)
    if "temperature" in sampling:
        body["temperature"] = min(sampling["temperature"], 1.0)
    if "top_p" in sampling:
        body["top_p"] = sampling["top_p"]
    if "top_k" in sampling:
        body["top_k"] = sampling["top_k"]
    if request.stop_sequences:
        body["stop_sequences"] = request.stop_sequences
    output_config = _output_config(request, caps, plan.effort, report)
    if output_config:
        body["output_config"] = output_config
    if request.verbosity is not None:
        report.drop("text.verbosity")
    if request.user is not None:
        body["metadata"] = {"user_id": request.user}  # for abuse detection (docs/anthropic.md "Request")
    if request.stream:
        body["stream"] = True
    caching.place(body, request.cache.auto, marked=request.cache.present)
    return Encoded(path="/v1/messages", body=body, tools=tools.index, cache_marks=True,
                   headers={"anthropic-version": API_VERSION, "content-type": "application/json"})


def _output_config(request: Request, caps: ModelCapabilities, effort: str | None,
                   report: Report) -> dict[str, Any]:
    """`output_config`: the effort word and the answer's JSON schema (docs/anthropic.md)."""
    out: dict[str, Any] = {}
    if effort is not None:
        out["effort"] = effort
    if request.output_schema is not None:
        if request.output_schema.get("description"):
            report.drop("text.format.description")  # Claude's format has no description
        if caps.structured_output:
            out["format"] = {"type": "json_schema",
                             "schema": structured.clean(request.output_schema["schema"], "text.format.schema",
                                                        report)}
        else:
            report.drop("text.format")
            report.note(f"text.format not enforced: {caps.model} has no structured output")
    return out


def _system(request: Request, tools: toolset.Toolset) -> list[dict[str, Any]]:
    texts = toolset.system_texts(request, tools)
    return [caching.mark({"type": "text", "text": text}, cache)
            for text, cache in zip(texts, system_marks(request), strict=False)]


def _tool(tool: toolset.JsonTool, report: Report) -> dict[str, Any]:
    if tool.strict:
        report.drop(f"{tool.origin}.strict")
    out: dict[str, Any] = {"name": tool.wire, "input_schema": tool.object_schema}
    if tool.description:
        out["description"] = tool.description
    if tool.input_examples:
        # a field of the API's own `ToolParam` (anthropic 2.15 SDK), no beta header needed
        out["input_examples"] = list(tool.input_examples)
    return out


WEB_SEARCH_VERSION = "web_search_20250305"
"""The web search tool every Claude with search takes. The newer versions (`web_search_20260209`,
`web_search_20260318`) filter results by running code: their answers carry code-execution blocks
this gateway does not map (docs/websearch.md)."""
_LOCATION_KEYS = ("city", "region", "country", "timezone")


def _web_search_tool(tool: WebSearchTool, tools: toolset.Toolset, caps: ModelCapabilities,
                     report: Report) -> dict[str, Any] | None:
    """Anthropic's server-side web search for the client's hosted `web_search` tool."""
    if not caps.web_search:
        report.drop(tool.origin)
        report.note(f"web search dropped: {caps.model} has no server-side web search")
        return None
    if any(t.wire == "web_search" for t in tools.tools):
        report.drop(tool.origin)
        report.note("web search dropped: a client tool is already named web_search upstream")
        return None
    out: dict[str, Any] = {"type": WEB_SEARCH_VERSION, "name": "web_search"}
    if tool.allowed_domains:
        out["allowed_domains"] = tool.allowed_domains
    if tool.user_location is not None:
        location = {k: v for k, v in tool.user_location.items() if k in _LOCATION_KEYS and isinstance(v, str)}
        report.drop_unread(tool.user_location, {"type", *_LOCATION_KEYS}, f"{tool.origin}.user_location",
                           skip_empty=True)
        out["user_location"] = {"type": "approximate", **location}
    if tool.context_size is not None:
        report.drop(f"{tool.origin}.search_context_size")
    return out


def _tool_choice(request: Request, tools: toolset.Toolset, thinking: bool,
                 report: Report) -> dict[str, Any] | None:
    choice = request.tool_choice
    parallel_off = request.parallel_tool_calls is False
    if choice.mode == "none":
        return {"type": "none"}
    if choice.mode == "required":
        out: dict[str, Any] = {"type": "any"}
    elif choice.mode == "tool" and choice.name:
        try:
            out = {"type": "tool", "name": tools.offered_wire(choice.namespace, choice.name)}
        except KeyError:
            report.drop("tool_choice")
            out = {"type": "auto"}
    else:
        out = {"type": "auto"}
    if parallel_off:
        out["disable_parallel_tool_use"] = True
    return out if out != {"type": "auto"} else None


@dataclass(frozen=True, slots=True)
class _Blocks:
    """Anthropic content blocks for `turns` (docs/anthropic.md "Conversation rules")."""

    tools: toolset.Toolset
    report: Report
    images: bool
    """The model reads images (its capabilities); else each image is reported dropped."""
    documents: bool
    """The model reads documents (`pdf_input`); else each document is reported dropped."""

    def parts(self, parts: list[Part], role: str) -> list[dict[str, Any]]:
        return _parts(parts, self.report, self.images, self.documents and role == "user")

    def reasoning(self, item: Reasoning) -> dict[str, Any] | None:
        state = vendor_state.replayable(item.state, "anthropic")
        if state is None:
            return None
        if state.redacted:
            return {"type": "redacted_thinking", "data": state.redacted}
        return {"type": "thinking", "thinking": state.text or "", "signature": state.signature}

    def tool_call(self, item: ToolCall) -> dict[str, Any]:
        return caching.mark({"type": "tool_use", "id": tool_use_id(item.call_id),
                             "name": self.tools.wire(item.namespace, item.name),
                             "input": toolset.call_input(item, self.report)}, item.cache)

    def web_search(self, item: WebSearchCall) -> list[dict[str, Any]]:
        """The search Claude ran, verbatim (websearch.prepare keeps only Anthropic's own)."""
        return list(item.state.blocks) if item.state is not None else []

    def tool_result(self, item: ToolResult) -> dict[str, Any]:
        content = _parts(item.parts, self.report, self.images, self.documents)
        out = {"type": "tool_result", "tool_use_id": tool_use_id(item.call_id),
               "content": content or [{"type": "text", "text": "(no output)"}]}
        if item.is_error:
            out["is_error"] = True
        return caching.mark(out, item.cache)

    def is_reasoning(self, block: dict[str, Any]) -> bool:
        return block["type"] in ("thinking", "redacted_thinking")

    def is_tool_result(self, block: dict[str, Any]) -> bool:
        return block["type"] == "tool_result"


def _parts(parts: list[Part], report: Report, images: bool, documents: bool) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in parts:
        if part.type == "text":
            if part.text:
                blocks.append(caching.mark({"type": "text", "text": part.text}, part.cache))
            elif part.cache is not None:
                report.drop(part.cache.origin, kind="cosmetic")  # an empty text takes no breakpoint
        elif part.type == "image":
            if images:
                blocks.append(caching.mark(_image(part, report), part.cache))
            else:
                report.drop(part.origin)
        elif documents:
            block = document.block(part, report)
            if block is not None:
                blocks.append(caching.mark(block, part.cache))
        else:
            # a model without document input, or an assistant turn (documents go in user turns)
            report.drop(part.origin)
    return blocks


def _image(part: Image, report: Report) -> dict[str, Any]:
    if part.detail not in (None, "auto"):
        report.drop(f"{part.origin}.detail")
    inline = part.inline
    if inline is not None:
        return {"type": "image", "source": {"type": "base64", "media_type": inline[0], "data": inline[1]}}
    return {"type": "image", "source": {"type": "url", "url": part.url}}

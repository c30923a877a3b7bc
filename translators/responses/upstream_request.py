"""IR request -> OpenAI Responses body, for a client that is not a Responses client (docs/responses.md
"As an upstream of other clients", docs/claude-code.md "Upstreams").

A Responses client's body passes through as it is (`passthrough.py`); a Messages client's goes
through the IR and is written here. Nothing is stored upstream (`store: false`), so the model's
encrypted reasoning is asked for (`include: ["reasoning.encrypted_content"]`) and carried by the
client to the next turn, where it goes back as a `reasoning` input item byte for byte. Tools are
JSON-schema functions only (toolset.py): the freeform and hosted tools of OpenAI are not offered
to a client that cannot declare them.
"""

from __future__ import annotations

from typing import Any

from translators.core.capabilities import ModelCapabilities
from translators.core.report import Report
from translators.core.translation import Encoded
from translators.features import fit, toolset, vendor_state, websearch
from translators.features.naming import NamePolicy
from translators.ir.request import Document, Image, Part, Reasoning, Request, Text, ToolCall, ToolResult
from translators.wire import wirejson

PATH = "/responses"
"""Relative to the base URL, which ends in /v1."""
NAMES = NamePolicy(max_length=64)
"""Function names: `^[a-zA-Z0-9_-]{1,64}$` (docs/responses.md "As an upstream of other clients")."""
DIALECT = "responses"
INCLUDE = ["reasoning.encrypted_content"]


def encode(request: Request, model: str, report: Report, caps: ModelCapabilities) -> Encoded:
    tools = toolset.build(request, NAMES, report)
    websearch.decline(request, report, "the Responses upstream is offered JSON function tools only")
    body: dict[str, Any] = {"model": model, "input": _input(request, tools, report),
                            "store": False, "include": list(INCLUDE)}
    system = toolset.system_texts(request, tools)
    if system:
        body["instructions"] = "\n\n".join(system)
    if tools.tools:
        body["tools"] = [_tool(tool) for tool in tools.tools]
        choice = _tool_choice(request, tools, report)
        if choice is not None:
            body["tool_choice"] = choice
        if request.parallel_tool_calls is not None:
            body["parallel_tool_calls"] = request.parallel_tool_calls
    else:
        if request.tool_choice.mode not in ("auto", "none"):
            report.drop("tool_choice", "cosmetic")
        if request.parallel_tool_calls is not None:
            report.drop("parallel_tool_calls", "cosmetic")
    limit = fit.output_limit(request, caps, report)  # the route's stated limit, when it gave one
    if limit is not None:
        body["max_output_tokens"] = limit
    for key in ("temperature", "top_p"):
        if getattr(request, key) is not None:
            body[key] = getattr(request, key)
    # the Responses API has neither (openai SDK `ResponseCreateParams`)
    if request.top_k is not None:
        report.drop("top_k")
    if request.stop_sequences:
        report.drop("stop_sequences")
    reasoning = _reasoning(request)
    if reasoning:
        body["reasoning"] = reasoning
    text = _text(request)
    if text:
        body["text"] = text
    if request.user is not None:
        body["safety_identifier"] = request.user
    if request.stream:
        body["stream"] = True
    return Encoded(path=PATH, body=body, tools=tools.index, headers={"content-type": "application/json"})


def _tool(tool: toolset.JsonTool) -> dict[str, Any]:
    # Responses takes `strict` as true when absent, which refuses most JSON schemas Claude Code
    # writes (optional properties): unsaid means not strict (docs/responses.md)
    out: dict[str, Any] = {"type": "function", "name": tool.wire, "parameters": tool.object_schema,
                           "strict": bool(tool.strict)}
    if tool.description:
        out["description"] = tool.description
    return out


def _tool_choice(request: Request, tools: toolset.Toolset, report: Report) -> Any:
    choice = request.tool_choice
    if choice.mode == "tool" and choice.name is not None:
        try:
            return {"type": "function", "name": tools.offered_wire(choice.namespace, choice.name)}
        except KeyError:
            report.drop("tool_choice")
            return None
    if choice.mode == "auto":
        return None  # the API's default
    return choice.mode


def _reasoning(request: Request) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if request.reasoning.effort is not None:
        out["effort"] = request.reasoning.effort
    if request.reasoning.summary not in (None, "none"):
        out["summary"] = request.reasoning.summary
    return out


def _text(request: Request) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if request.verbosity is not None:
        out["verbosity"] = request.verbosity
    schema = request.output_schema
    if schema is not None:
        fmt: dict[str, Any] = {"type": "json_schema", "name": schema.get("name") or "output",
                               "schema": schema["schema"], "strict": bool(schema.get("strict"))}
        if schema.get("description"):
            fmt["description"] = schema["description"]
        out["format"] = fmt
    return out


def _input(request: Request, tools: toolset.Toolset, report: Report) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for item in request.items:
        if item.type == "message":
            content = _parts(item.parts, item.role, report)
            if not content:
                continue
            role = "developer" if item.role == "system" else item.role
            message: dict[str, Any] = {"type": "message", "role": role, "content": content}
            if item.phase is not None and item.role == "assistant":
                message["phase"] = item.phase
            out.append(message)
        elif item.type == "reasoning":
            reasoning = _reasoning_item(item)
            if reasoning is None:
                # another vendor's reasoning (or none that can be replayed): GPT cannot read it
                report.drop(item.origin)
            else:
                out.append(reasoning)
        elif item.type == "tool_call":
            out.append(_call(item, tools, report))
        elif item.type == "tool_result":
            out.append({"type": "function_call_output", "call_id": item.call_id,
                        "output": _output(item, report)})
        else:  # a search another vendor ran: declined above, its record cannot be replayed
            report.drop(item.origin)
    return out


def _reasoning_item(item: Reasoning) -> dict[str, Any] | None:
    """GPT's own reasoning, its `encrypted_content` exactly as it came (docs/responses.md)."""
    state = vendor_state.replayable(item.state, DIALECT)
    encrypted = state.signature if state is not None else item.opaque
    if not encrypted:
        return None
    texts = item.summary or item.content
    return {"type": "reasoning", "encrypted_content": encrypted,
            "summary": [{"type": "summary_text", "text": text} for text in texts if text]}


def _call(item: ToolCall, tools: toolset.Toolset, report: Report) -> dict[str, Any]:
    arguments = item.arguments if item.kind == "function" else wirejson.text(toolset.call_input(item, report))
    return {"type": "function_call", "call_id": item.call_id,
            "name": tools.wire(item.namespace, item.name), "arguments": arguments}


def _output(item: ToolResult, report: Report) -> str | list[dict[str, Any]]:
    # `function_call_output` has no error flag: a failed tool's text says so (toolset.result_parts)
    parts = toolset.result_parts(item, report)
    if all(part.type == "text" for part in parts):
        return "".join(part.text for part in parts if isinstance(part, Text))
    return _parts(parts, "user", report)


def _parts(parts: list[Part], role: str, report: Report) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, Text):
            out.append({"type": "output_text" if role == "assistant" else "input_text", "text": part.text})
        elif role == "assistant":
            report.drop(part.origin)  # an assistant message holds text only
        elif isinstance(part, Image):
            image: dict[str, Any] = {"type": "input_image", "image_url": part.url}
            image["detail"] = part.detail or "auto"
            out.append(image)
        elif isinstance(part, Document):
            out.append(_file(part))
    return out


def _file(part: Document) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "input_file"}
    if part.data is not None:
        out["file_data"] = f"data:{part.media_type or 'application/octet-stream'};base64,{part.data}"
        out["filename"] = part.filename or "document"
    else:
        out["file_url"] = part.url
        if part.filename:
            out["filename"] = part.filename
    return out

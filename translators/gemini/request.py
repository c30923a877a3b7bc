"""IR request -> Gemini `generateContent` / `streamGenerateContent` body
(docs/gemini.md "Endpoints and auth", "Request", "Schema keywords Gemini rejects"; https://ai.google.dev/api/generate-content).

The API key (`x-goog-api-key`) is the caller's business; the body names no model (it is in the path).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from translators.core.capabilities import ModelCapabilities
from translators.core.report import Report
from translators.core.translation import Encoded
from translators.features import fit, toolset, websearch
from translators.features.naming import NamePolicy
from translators.gemini import contents, models, schema
from translators.ir.request import Request, WebSearchTool

# Gemini: start with a letter or `_`, at most 128 (SDK) or 64 (older docs): keep to 64 (docs/gemini.md
# "Function names").
NAMES = NamePolicy(max_length=64, must_start_with_letter=True)
# Responses tool_choice mode -> functionCallingConfig.mode (`auto` is Gemini's default: not sent).
MODES = {"none": "NONE", "required": "ANY", "tool": "ANY"}
MAX_STOP_SEQUENCES = 5
"""`generationConfig.stopSequences` takes up to 5 (docs/gemini.md "Request")."""


def path(model: str, stream: bool) -> str:
    name = quote(model.removeprefix("models/"), safe="-._~")
    if stream:
        return f"/v1beta/models/{name}:streamGenerateContent?alt=sse"
    return f"/v1beta/models/{name}:generateContent"


def encode(request: Request, model: str, report: Report, caps: ModelCapabilities) -> Encoded:
    tools = toolset.build(request, NAMES, report)
    body: dict[str, Any] = {"contents": contents.build(request, model, tools, report,
                                                       documents=caps.pdf_input)}
    system = _system(request, tools)
    if system:
        body["systemInstruction"] = {"parts": [{"text": text} for text in system]}
    search = websearch.declared(request)
    searching = search is not None and _searches(search, model, caps, bool(tools.tools), report)
    if tools.tools:
        body["tools"] = [{"functionDeclarations": [_declaration(t, report) for t in tools.tools]}]
        config = _tool_config(request, tools, report)
        if config:
            body["toolConfig"] = {"functionCallingConfig": config}
    elif request.tool_choice.mode != "auto":
        report.drop("tool_choice")
    if searching:
        body.setdefault("tools", []).append({"googleSearch": {}})
        if tools.tools:
            # Gemini 3 searches beside function calls only when it returns its server-side calls
            # (docs/websearch.md)
            body.setdefault("toolConfig", {})["includeServerSideToolInvocations"] = True
    if request.parallel_tool_calls is False:
        # Gemini has no switch for parallel calls; without tools there is nothing to call at once
        report.drop("parallel_tool_calls", "lossy" if tools.tools else "cosmetic")
    generation = _generation_config(request, model, fit.output_limit(request, caps, report), report)
    if generation:
        body["generationConfig"] = generation
    if request.user is not None:
        report.drop("user")
    return Encoded(path=path(model, request.stream), body=body, tools=tools.index,
                   headers={"content-type": "application/json"})


def _searches(tool: WebSearchTool, model: str, caps: ModelCapabilities, functions: bool,
              report: Report) -> bool:
    """Whether Gemini's `googleSearch` serves the client's web search: every Gemini 2 and 3 model
    has it, but only Gemini 3 takes it together with function declarations; where both cannot go,
    the functions stay (docs/websearch.md)."""
    if not caps.web_search:
        why = f"{model} has no Google Search grounding"
    elif functions and not models.uses_levels(model):
        why = (f"{model} cannot combine Google Search with function calling (Gemini 3 can); "
               "the functions were kept")
    else:
        # googleSearch takes no domains, place or context size
        for name, given in (("filters", tool.allowed_domains), ("user_location", tool.user_location),
                            ("search_context_size", tool.context_size)):
            if given:
                report.drop(f"{tool.origin}.{name}")
        return True
    report.drop(tool.origin)
    report.note(f"web search dropped: {why}")
    return False


def _system(request: Request, tools: toolset.Toolset) -> list[str]:
    return toolset.system_texts(request, tools)


def _declaration(tool: toolset.JsonTool, report: Report) -> dict[str, Any]:
    if tool.strict:
        report.drop(f"{tool.origin}.strict")
    out: dict[str, Any] = {"name": tool.wire}
    if tool.description:
        out["description"] = tool.description
    out["parametersJsonSchema"] = schema.parameters(tool.parameters, f"{tool.origin}.parameters", report)
    return out


def _tool_config(request: Request, tools: toolset.Toolset, report: Report) -> dict[str, Any] | None:
    choice = request.tool_choice
    mode = MODES.get(choice.mode)
    if mode is None:
        return None
    out: dict[str, Any] = {"mode": mode}
    if choice.mode == "tool":
        try:
            out["allowedFunctionNames"] = [tools.offered_wire(choice.namespace, choice.name or "")]
        except KeyError:
            report.drop("tool_choice")
            return None
    return out


def _generation_config(request: Request, model: str, limit: int | None, report: Report) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if limit is not None:
        out["maxOutputTokens"] = limit
    if request.temperature is not None:
        out["temperature"] = request.temperature
    if request.top_p is not None:
        out["topP"] = request.top_p
    if request.top_k is not None:
        out["topK"] = request.top_k
    if request.stop_sequences:
        # "The set of character sequences (up to 5) that will stop output generation"
        out["stopSequences"] = request.stop_sequences[:MAX_STOP_SEQUENCES]
        for i in range(MAX_STOP_SEQUENCES, len(request.stop_sequences)):
            report.drop(f"stop_sequences[{i}]")
    if request.output_schema is not None:
        out["responseMimeType"] = "application/json"
        out["responseJsonSchema"] = schema.clean(request.output_schema["schema"], "text.format.schema",
                                                 report)
        # `strict` needs no field: Gemini constrains its answer to responseJsonSchema, and what it
        # cannot enforce of the schema is reported keyword by keyword above (docs/gemini.md "Request")
        if request.output_schema.get("description"):
            report.drop("text.format.description")
    if request.verbosity is not None:
        report.drop("text.verbosity")
    thinking = _thinking(request, model, report)
    if thinking:
        out["thinkingConfig"] = thinking
    return out


def _thinking(request: Request, model: str, report: Report) -> dict[str, Any] | None:
    """Effort -> `thinkingLevel` (Gemini 3) or `thinkingBudget` (2.5), tables in `models.py`;
    thought summaries are asked for whenever the model thinks (they become reasoning items)."""
    effort, summary = request.reasoning.effort, request.reasoning.summary
    if not (models.uses_levels(model) or models.uses_budget(model)):
        if effort not in (None, "none"):
            report.drop("reasoning.effort")
        if summary not in (None, "none"):
            report.drop("reasoning.summary")
        return None
    out: dict[str, Any] = {}
    if effort is not None:
        if models.uses_levels(model):
            level = models.thinking_level(model, effort)
            if level is not None:
                out["thinkingLevel"] = level
        else:
            budget = models.thinking_budget(model, effort)
            if budget is not None:
                out["thinkingBudget"] = budget
        setting = out.get("thinkingLevel", out.get("thinkingBudget"))
        if not out:
            report.drop("reasoning.effort")
        elif effort == "none" and setting != 0:
            # the client asked for no reasoning; the model thinks anyway, but none reaches the client
            report.drop("reasoning.effort")
            report.note(f"reasoning effort 'none' not honoured: {model} cannot turn thinking off; "
                        f"sent {setting}, thoughts not returned")
        elif models.approximated(model, effort):
            report.note(f"reasoning effort {effort!r} has no exact Gemini equivalent on {model}; "
                        f"sent {setting}")
    if effort != "none" and out.get("thinkingBudget") != 0 and summary != "none":
        out["includeThoughts"] = True
    elif effort == "none" and summary not in (None, "none"):
        report.drop("reasoning.summary")
    return out or None

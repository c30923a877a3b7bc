"""IR request -> Chat Completions body, `POST {base}/chat/completions` (docs/chat.md "Request", "DeepSeek"). https://platform.openai.com/docs/api-reference/chat/create"""

from __future__ import annotations

from typing import Any

from translators.chat import caching, messages, settings, tools
from translators.chat.models import Target, target_for
from translators.core.capabilities import ModelCapabilities
from translators.core.errors import UnsupportedFeature
from translators.core.report import Report
from translators.core.translation import Encoded
from translators.features import fit, toolset, websearch
from translators.features.naming import NamePolicy
from translators.ir.request import Request
from translators.wire import wirejson

PATH = "/chat/completions"
"""Relative to a base URL that ends in /v1 (OpenAI, vLLM, Ollama) or not (DeepSeek)."""
# "a-z, A-Z, 0-9, underscores and dashes, maximum length 64" (docs/chat.md "Request")
NAMES = NamePolicy(max_length=64)

# DeepSeek's own table: it thinks at low, high or max (docs/chat.md "DeepSeek"; api-docs.deepseek.com
# thinking_mode).
DEEPSEEK_EFFORT = {"minimal": "low", "low": "low", "medium": "high", "high": "high", "xhigh": "high"}
# What compatible servers (vLLM, Ollama, OpenRouter) commonly accept.
GENERIC_EFFORT = {"minimal": "low", "low": "low", "medium": "medium", "high": "high", "xhigh": "high"}


def encode(request: Request, model: str, report: Report, caps: ModelCapabilities) -> Encoded:
    target = target_for(model, joins_parts=settings.joins_parts(caps), file_parts=settings.takes_files(caps))
    mode = _structured_mode(request, caps, target)
    if mode == "prompt":
        request = _schema_in_prompt(request, model, report)
    names = toolset.build(request, NAMES, report)
    websearch.decline(request, report, "Chat Completions has no search tool of its own (DeepSeek, vLLM and "
                      "Ollama offer none; OpenRouter's plugin is not a tool)")
    body: dict[str, Any] = {"model": model, "messages": messages.encode(request, names, target, report)}
    declared = tools.declarations(request, names, target, report)
    if declared:
        body["tools"] = declared
        choice = tools.tool_choice(request, names, target, report)
        if choice is not None:
            body["tool_choice"] = choice
        if request.parallel_tool_calls is not None:
            body["parallel_tool_calls"] = request.parallel_tool_calls
    else:
        # OpenAI refuses parallel_tool_calls without tools; with no tools neither steers anything
        if request.tool_choice.mode != "auto":
            report.drop("tool_choice", "cosmetic")
        if request.parallel_tool_calls is not None:
            report.drop("parallel_tool_calls", "cosmetic")
    limit = fit.output_limit(request, caps, report)
    if limit is not None:
        body[target.max_tokens_key] = limit
    body.update(_sampling(request, target, caps, report))
    body.update(_reasoning(request, target, report))
    if request.verbosity is not None:
        if target.verbosity:
            body["verbosity"] = request.verbosity
        else:
            report.drop("text.verbosity")
    if request.output_schema is not None and mode is not None:
        body["response_format"] = _response_format(request.output_schema, mode, report)
    if request.user is not None:
        body["user"] = request.user
    if request.stream:
        body["stream"] = True
        # without it no chunk carries usage (docs/chat.md "Streaming"); DeepSeek puts usage on the finish
        # chunk anyway
        body["stream_options"] = {"include_usage": True}
    if settings.takes_cache_control(caps):
        caching.place(body["messages"])
    return Encoded(path=PATH, body=body, tools=names.index, headers={"content-type": "application/json"})


def _sampling(request: Request, target: Target, caps: ModelCapabilities, report: Report) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("temperature", "top_p"):
        value = getattr(request, key)
        if value is None:
            continue
        if target.openai_reasoning:
            report.drop(key)  # OpenAI reasoning models reject sampling parameters
        else:
            out[key] = value
    if request.top_k is not None:
        if settings.sends_top_k(caps, target.openai or target.deepseek):
            out["top_k"] = request.top_k
        else:
            report.drop("top_k")
    stops = request.stop_sequences
    if stops:
        if target.openai_reasoning:
            report.drop("stop_sequences")  # "not supported with latest reasoning models" (docs/chat.md)
        else:
            limit = _stop_limit(target) or len(stops)
            out["stop"] = stops[:limit]
            for i in range(limit, len(stops)):
                report.drop(f"stop_sequences[{i}]")
    return out


def _stop_limit(target: Target) -> int | None:
    """OpenAI takes up to 4 stop sequences, DeepSeek up to 16; other servers state no bound
    (docs/chat.md "Sampling")."""
    if target.openai:
        return 4
    return 16 if target.deepseek else None


def _reasoning(request: Request, target: Target, report: Report) -> dict[str, Any]:
    effort = request.reasoning.effort
    summary = request.reasoning.summary
    if target.openai and summary not in (None, "none"):
        report.drop("reasoning.summary")  # OpenAI's Chat API never returns its reasoning
    if effort is None:
        return {}
    if target.deepseek:
        if effort == "none":
            return {"thinking": {"type": "disabled"}}
        if effort not in DEEPSEEK_EFFORT:
            report.drop("reasoning.effort")
            return {}
        return {"thinking": {"type": "enabled"}, "reasoning_effort": DEEPSEEK_EFFORT[effort]}
    if target.openai:
        if not target.openai_reasoning:
            report.drop("reasoning.effort")
            return {}
        return {"reasoning_effort": effort}
    if effort not in GENERIC_EFFORT:
        report.drop("reasoning.effort")
        return {}
    if GENERIC_EFFORT[effort] != effort:
        report.note(f"reasoning.effort {effort!r} sent as {GENERIC_EFFORT[effort]!r}, the nearest level "
                    "compatible servers accept")
    return {"reasoning_effort": GENERIC_EFFORT[effort]}


def _structured_mode(request: Request, caps: ModelCapabilities,
                     target: Target) -> settings.StructuredMode | None:
    """How this route writes `text.format` (translators/chat/settings.py); None without one."""
    if request.output_schema is None:
        return None
    mode = settings.structured_mode(caps, target.gguf)
    if mode is None:
        chosen = settings.chosen(caps, settings.STRUCTURED_OUTPUT)
        raise UnsupportedFeature(
            f"text.format cannot be sent: the route's structured_output {chosen!r} is no way to write it "
            f"for Chat Completions; set one of {', '.join(settings.STRUCTURED_MODES)}", param="text.format")
    return mode


def _response_format(schema: dict[str, Any], mode: settings.StructuredMode, report: Report) -> dict[str, Any]:
    """`response_format` in the route's mode (docs/chat.md "Server settings")."""
    if mode == "prompt":
        return {"type": "json_object"}  # JSON mode; the schema is in the system prompt
    if mode == "json_object":
        # llama-cpp-python's and llama.cpp's form: the schema is compiled into a grammar, which
        # always holds (strict); the format has no name or description
        _unnamed(schema, report)
        return {"type": "json_object", "schema": schema["schema"]}
    out: dict[str, Any] = {"name": schema["name"], "schema": schema["schema"], "strict": schema["strict"]}
    if schema.get("description"):
        out["description"] = schema["description"]
    return {"type": "json_schema", "json_schema": out}


SCHEMA_PROMPT = ("# Answer format\nAnswer with one JSON object and nothing else (no prose, no code "
                 "fence). It must follow this JSON schema:\n")


def _schema_in_prompt(request: Request, model: str, report: Report) -> Request:
    """The `prompt` mode, for a server whose `response_format` knows only `json_object` (DeepSeek,
    docs/chat.md): the JSON mode is asked for and the schema is written into the system prompt,
    where the model reads it but nothing enforces it."""
    schema = request.output_schema or {}
    report.note(f"text.format sent as json_object with the schema in the system prompt: {model} "
                "does not enforce a JSON schema")
    if schema.get("strict"):
        report.drop("text.format.strict")
    _unnamed(schema, report)
    prompt = SCHEMA_PROMPT + wirejson.text(schema["schema"])
    return request.model_copy(update={"system": [*request.system, prompt]})


def _unnamed(schema: dict[str, Any], report: Report) -> None:
    """A format without a name or description: the name only labels the schema (it is not
    reported: a client's plain `json_object` format has none either, docs/chat.md "Server
    settings"); a description the model would have read is lost."""
    if schema.get("description"):
        report.drop("text.format.description")

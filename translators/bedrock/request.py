"""IR request -> Bedrock Converse / ConverseStream body (docs/bedrock.md "Endpoint, signing and API keys",
"Request").

`POST /model/{modelId}/converse-stream` (or `/converse`), the model id URL-encoded in the path
and absent from the body. Signing is not done here: the body must be final first, and the
caller signs the exact bytes it sends (auth.py).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from translators.bedrock import caching
from translators.bedrock import messages as bedrock_messages
from translators.bedrock.models import cache_points, is_claude
from translators.bedrock.tools import tool_config
from translators.core.capabilities import ModelCapabilities
from translators.core.report import Report
from translators.core.translation import Encoded
from translators.families.claude import structured
from translators.families.claude import thinking as claude
from translators.features import fit, toolset, websearch
from translators.features.caching import system_marks
from translators.features.naming import NamePolicy
from translators.ir.request import Request
from translators.wire import wirejson

NAMES = NamePolicy(max_length=64)  # ToolName: [a-zA-Z0-9_-]{1,64} (docs/bedrock.md "Tool names and ids")
MAX_TEMPERATURE = 1.0  # InferenceConfiguration.temperature is 0..1 in the service model
MAX_STOP_SEQUENCES = 2500  # InferenceConfiguration.stopSequences, in the service model


def path_for(model: str, stream: bool) -> str:
    return f"/model/{quote(model, safe='')}/{'converse-stream' if stream else 'converse'}"


def encode(request: Request, model: str, report: Report, caps: ModelCapabilities) -> Encoded:
    claude_model = is_claude(model)
    tools = toolset.build(request, NAMES, report)
    websearch.decline(request, report, "Converse offers no Anthropic server tools for Claude, and "
                      "no web search of its own (docs/bedrock.md \"Request\")")
    # a Claude model must be given a limit (its own default is small); others keep Bedrock's;
    # either fits the model (translators/features/fit.py)
    max_tokens = claude.max_tokens(request, caps, report) if claude_model else fit.output_limit(request, caps,
                                                                                               report)
    plan = claude.plan(request, caps, max_tokens or claude.DEFAULT_MAX_TOKENS, report)
    messages, thinking = bedrock_messages.build(request, tools, plan.thinking, report,
                                                reads_documents=caps.pdf_input,
                                                error_status=bedrock_messages.takes_status(model))
    body: dict[str, Any] = {"messages": messages}
    texts = toolset.system_texts(request, tools)
    system = [caching.mark({"text": text}, cache)
              for text, cache in zip(texts, system_marks(request), strict=False)]
    if system:
        body["system"] = system
    config = tool_config(request, tools, report)
    if config is not None:
        body["toolConfig"] = config
        _mark_tools(request, tools, config)
    inference, top_k = _inference(request, caps, max_tokens, thinking is not None, report)
    if inference:
        body["inferenceConfig"] = inference
    fields: dict[str, Any] = {}
    if thinking is not None:
        fields["thinking"] = thinking
    if top_k is not None:
        if claude_model:
            fields["top_k"] = top_k  # Anthropic's own field, which Converse passes to Claude
        else:
            report.drop("top_k")
            report.note(f"top_k not sent: Converse has no top_k for every model, and {model} takes none "
                        "the gateway knows of")
    if fields:
        body["additionalModelRequestFields"] = fields
    if claude_model and request.stop_sequences:
        # the answer then says which sequence matched (docs/bedrock.md "Stop sequences")
        body["additionalModelResponseFieldPaths"] = ["/stop_sequence"]
    output = _output_config(request, caps, plan.effort, report)
    if output:
        body["outputConfig"] = output
    for field, path in (("verbosity", "text.verbosity"), ("user", "user")):
        if getattr(request, field) is not None:
            report.drop(path)
    points = cache_points(model)
    caching.place(body, points, request.cache.auto, report)
    return Encoded(path=path_for(model, request.stream), body=body, tools=tools.index,
                   cache_marks=points is not None, headers={"content-type": "application/json"})


def _mark_tools(request: Request, tools: toolset.Toolset, config: dict[str, Any]) -> None:
    """The client's breakpoints on its tools, on their `toolSpec` entries (stubs carry none)."""
    if not request.cache.present:
        return
    marks = {t.origin: t.cache for t in request.tools if getattr(t, "cache", None) is not None}
    specs = {entry["toolSpec"]["name"]: entry for entry in config["tools"] if "toolSpec" in entry}
    for tool in tools.tools:
        if (mark := marks.get(tool.origin)) is not None and tool.wire in specs:
            caching.mark(specs[tool.wire], mark)


def _output_config(request: Request, caps: ModelCapabilities, effort: str | None,
                   report: Report) -> dict[str, Any]:
    """`outputConfig`: effort and `textFormat` (a JSON schema sent as a string; docs/bedrock.md)."""
    out: dict[str, Any] = {}
    if effort is not None:
        out["effort"] = effort
    schema = request.output_schema
    if schema is not None:
        if not caps.structured_output:
            report.drop("text.format")
            report.note(f"text.format not enforced: {caps.model} has no structured output on Bedrock")
            return out
        definition: dict[str, Any] = {
            "schema": wirejson.text(structured.clean(schema["schema"], "text.format.schema", report)),
            "name": schema["name"]}
        if schema.get("description"):
            definition["description"] = schema["description"]
        out["textFormat"] = {"type": "json_schema", "structure": {"jsonSchema": definition}}
    return out


def _inference(request: Request, caps: ModelCapabilities, max_tokens: int | None, thinking: bool,
               report: Report) -> tuple[dict[str, Any], int | None]:
    """`inferenceConfig`, and the `top_k` to send (Converse has no field of its own for it)."""
    out: dict[str, Any] = {}
    if max_tokens is not None:
        out["maxTokens"] = max_tokens
    sampling = claude.sampling(request, caps, thinking, report)
    if "temperature" in sampling:
        temperature = min(max(sampling["temperature"], 0.0), MAX_TEMPERATURE)
        if temperature != request.temperature:
            report.note(f"temperature {request.temperature} clamped to Bedrock's range 0..1")
        out["temperature"] = temperature
    if "top_p" in sampling:
        out["topP"] = sampling["top_p"]
    stops = request.stop_sequences
    if stops:
        out["stopSequences"] = stops[:MAX_STOP_SEQUENCES]
        for i in range(MAX_STOP_SEQUENCES, len(stops)):
            report.drop(f"stop_sequences[{i}]")
    top_k = sampling.get("top_k")
    return out, int(top_k) if top_k is not None else None

"""IR request -> Bedrock Converse / ConverseStream body (notes/dialects.md §D.1-D.2).

`POST /model/{modelId}/converse-stream` (or `/converse`), the model id URL-encoded in the path
and absent from the body. Signing is not done here: the body must be final first, and the
caller signs the exact bytes it sends (auth.py).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from translators import claude, toolset
from translators.bedrock import messages as bedrock_messages
from translators.bedrock.models import Capabilities, capabilities
from translators.bedrock.tools import tool_config
from translators.ir.request import Request
from translators.naming import NamePolicy
from translators.report import Report
from translators.translation import Encoded

NAMES = NamePolicy(max_length=64)  # ToolName: [a-zA-Z0-9_-]{1,64} (§D.5)
MAX_TEMPERATURE = 1.0  # InferenceConfiguration.temperature is 0..1 in the service model
_CACHE_POINT = {"cachePoint": {"type": "default"}}


def path_for(model: str, stream: bool) -> str:
    return f"/model/{quote(model, safe='')}/{'converse-stream' if stream else 'converse'}"


def encode(request: Request, model: str, report: Report) -> Encoded:
    caps = capabilities(model)
    tools = toolset.build(request, NAMES, report)
    # Claude 3.7+ answers up to 64k tokens (32k for Opus 4); other models keep Bedrock's default
    max_tokens = request.max_output_tokens or (claude.DEFAULT_MAX_TOKENS if caps.thinking else None)
    thinking = claude.thinking(request, caps.thinking, max_tokens, report)
    messages, thinking = bedrock_messages.build(request, tools, thinking, report)
    body: dict[str, Any] = {"messages": messages}
    system = _system(request, tools, caps)
    if system:
        body["system"] = system
    config = tool_config(request, tools, report)
    if config is not None:
        body["toolConfig"] = config
    inference = _inference(request, max_tokens, thinking is not None, report)
    if inference:
        body["inferenceConfig"] = inference
    if thinking is not None:
        body["additionalModelRequestFields"] = {"thinking": thinking}
    for field, path in (("verbosity", "text.verbosity"), ("output_schema", "text.format"), ("user", "user")):
        if getattr(request, field) is not None:
            report.drop(path)
    if caps.cache_points and messages:
        # the whole history is next turn's reusable prefix (same reason as anthropic/request.py)
        messages[-1]["content"].append(dict(_CACHE_POINT))
    return Encoded(path=path_for(model, request.stream), body=body, tools=tools.index,
                   headers={"content-type": "application/json"})


def _system(request: Request, tools: toolset.Toolset, caps: Capabilities) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [{"text": t} for t in toolset.system_texts(request, tools)]
    if blocks and caps.cache_points:
        # tools come before the system prompt in Claude's cache prefix: one point covers both
        blocks.append(dict(_CACHE_POINT))
    return blocks


def _inference(request: Request, max_tokens: int | None, thinking: bool, report: Report) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if max_tokens is not None:
        out["maxTokens"] = max_tokens
    if thinking:
        for key in ("temperature", "top_p"):
            if getattr(request, key) is not None:
                report.drop(key)  # Claude's thinking requires the default sampling
        return out
    if request.temperature is not None:
        temperature = min(max(request.temperature, 0.0), MAX_TEMPERATURE)
        if temperature != request.temperature:
            report.note(f"temperature {request.temperature} clamped to Bedrock's range 0..1")
        out["temperature"] = temperature
    if request.top_p is not None:
        out["topP"] = request.top_p
    return out

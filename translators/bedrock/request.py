"""IR request -> Bedrock Converse / ConverseStream body (notes/dialects.md §D.1-D.2).

`POST /model/{modelId}/converse-stream` (or `/converse`), the model id URL-encoded in the path
and absent from the body. Signing is not done here: the body must be final first, and the
caller signs the exact bytes it sends (auth.py).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from translators import toolset
from translators.bedrock import messages as bedrock_messages
from translators.bedrock.models import Capabilities, capabilities
from translators.bedrock.tools import tool_config
from translators.ir.request import Request
from translators.naming import NamePolicy
from translators.report import Report
from translators.translation import Encoded

NAMES = NamePolicy(max_length=64)  # ToolName: [a-zA-Z0-9_-]{1,64} (§D.5)
# Claude 3.7+ answers up to 64k tokens (32k for Opus 4); other models keep Bedrock's default.
CLAUDE_MAX_TOKENS = 32000
# Thinking budget per Responses effort; Claude needs >= 1024 and < maxTokens (§A.2).
THINKING_BUDGET = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384, "xhigh": 24576}
MAX_TEMPERATURE = 1.0  # InferenceConfiguration.temperature is 0..1 in the service model
_CACHE_POINT = {"cachePoint": {"type": "default"}}


def path_for(model: str, stream: bool) -> str:
    return f"/model/{quote(model, safe='')}/{'converse-stream' if stream else 'converse'}"


def encode(request: Request, model: str, report: Report) -> Encoded:
    caps = capabilities(model)
    tools = toolset.build(request, NAMES, report)
    max_tokens = request.max_output_tokens or (CLAUDE_MAX_TOKENS if caps.thinking else None)
    thinking = _thinking(request, caps, max_tokens, report)
    messages = bedrock_messages.build(request, tools, thinking is not None, report)
    if thinking is not None and bedrock_messages.unsigned_tool_turn(messages):
        report.note("thinking turned off: the open tool turn carries no signed reasoning to replay")
        report.drop("reasoning.effort")
        thinking = None
        messages = bedrock_messages.build(request, tools, False, report)
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


def _thinking(request: Request, caps: Capabilities, max_tokens: int | None,
              report: Report) -> dict[str, Any] | None:
    effort = request.reasoning.effort
    budget = THINKING_BUDGET.get(effort or "")
    if budget is None or not caps.thinking:
        if effort not in (None, "none"):
            report.drop("reasoning.effort")
        if request.reasoning.summary not in (None, "none"):
            report.drop("reasoning.summary")
        return None
    if request.tool_choice.mode in ("required", "tool"):
        report.note("thinking turned off: Claude allows a forced tool choice only without thinking")
        report.drop("reasoning.effort")
        return None
    budget = min(budget, (max_tokens or CLAUDE_MAX_TOKENS) - 1024)
    if budget < 1024:
        report.note("thinking turned off: max_output_tokens leaves no room for a 1024-token budget")
        report.drop("reasoning.effort")
        return None
    return {"type": "enabled", "budget_tokens": budget}


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

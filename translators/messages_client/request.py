"""Anthropic Messages request body -> IR (`decode`), for every field Claude Code 2.1.328 and the
anthropic SDK send (docs/claude-code.md "The decoder's fields"). Each field is translated,
reported (`Report`, dotted paths) or refused (`MalformedRequest` / `UnsupportedFeature`, which
`errors.refusal` turns into Anthropic's 400)."""

from __future__ import annotations

from typing import Any

from translators.core.errors import MalformedRequest, UnsupportedFeature
from translators.core.report import Report
from translators.features import pairing
from translators.ir.request import CacheHints, CacheMark, ReasoningConfig, Request
from translators.messages_client import cache, context, paths
from translators.messages_client.content import Messages, blocks
from translators.messages_client.tools import Tools, tool_choice

BILLING_HEADER = "x-anthropic-billing-header:"
"""Claude Code's first system block is this line (version and entry point), read by Anthropic's
billing, not an instruction to the model (docs/claude-code.md "What Claude Code sends")."""

_READ = frozenset({"model", "messages", "max_tokens", "system", "tools", "tool_choice", "thinking",
                   "output_config", "temperature", "top_p", "top_k", "stop_sequences", "metadata",
                   "context_management", "stream", "cache_control"})
_COSMETIC_TOP = frozenset({"service_tier", "inference_geo", "speed", "diagnostics",
                           "fallback_credit_token", "billing_policy"})
"""Top-level fields about Anthropic's capacity, region, billing and diagnostics: nothing the model
reads or may do changes without them. (`cache_control` is read: translators/messages_client/cache.py.)"""
_REFUSED_TOP = {
    "compaction": "a compaction request asks Anthropic itself for a compaction block; send the "
                  "conversation instead",
}
EFFORTS = {"low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "xhigh"}
"""`output_config.effort` -> the IR's effort (`max` has no equal elsewhere: the highest there is)."""
BUDGET_EFFORTS = ((4_096, "low"), (16_384, "medium"), (32_768, "high"))
"""A `budget_tokens` below each bound -> that effort; above the last, `xhigh`."""
_THINKING_KEYS = frozenset({"type", "budget_tokens", "display"})
_OUTPUT_CONFIG_KEYS = frozenset({"effort", "format"})


def decode(body: Any, report: Report) -> Request:
    if not isinstance(body, dict):
        raise MalformedRequest("the request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise MalformedRequest("model must be a non-empty string", param="model")
    max_tokens = body.get("max_tokens")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 0:
        raise MalformedRequest("max_tokens must be a non-negative integer", param="max_tokens")
    _refuse(body)
    marked = cache.check(body)

    tools = Tools(report)
    tools.add_all(body.get("tools"))
    messages = Messages(report, tools)
    items = messages.decode(body.get("messages"))
    system, system_marks = _system(body.get("system"), report)
    while items and items[0].type == "message" and items[0].role == "system":
        # system messages before any turn are the system prompt, as the IR keeps it
        parts = [p for p in items.pop(0).parts if p.type == "text"]
        if (last := next((p.cache for p in reversed(parts) if p.cache is not None), None)) is not None:
            system_marks[len(system)] = last
        system.append("\n".join(p.text for p in parts))
    declared = tools.finish()
    items = context.apply(body.get("context_management"), items, system, declared, report)
    choice, parallel = tool_choice(body.get("tool_choice"), report)
    output = body.get("output_config")
    asked = _effort(output, messages.effort)
    # every value below was checked as it was read: built as it stands, not validated again,
    # each field with a default factory given (pydantic inspects a factory's signature per call)
    request = Request.model_construct(
        model=model,
        system=system,
        items=pairing.pair(items, report),
        tools=declared,
        namespaces=[],
        tool_choice=choice,
        parallel_tool_calls=parallel,
        max_output_tokens=max_tokens,
        temperature=_number(body, "temperature"),
        top_p=_number(body, "top_p"),
        top_k=_top_k(body.get("top_k")),
        stop_sequences=_stop_sequences(body.get("stop_sequences")),
        reasoning=_reasoning(body.get("thinking"), asked, report),
        output_schema=_output_schema(output, report),
        stream=body.get("stream") is True,
        user=_user(body.get("metadata"), report),
        cache=CacheHints(present=marked, system=system_marks, auto=cache.read(body, "", report)),
    )
    _report_top_level(body, report)
    # from here on, what an encoder drops is named by the Messages field it came from
    report.rename(paths.renamer(_effort_source(body.get("thinking"), asked)))
    return request


def shows_thinking(body: dict[str, Any]) -> bool:
    """Whether the client wants the thinking text: `thinking.display: "omitted"` asks for the
    signature alone (anthropic SDK `BetaThinkingConfigAdaptiveParam`), as Claude Code does."""
    thinking = body.get("thinking")
    return not (isinstance(thinking, dict) and thinking.get("display") == "omitted")


def _refuse(body: dict[str, Any]) -> None:
    for key, why in _REFUSED_TOP.items():
        if body.get(key) not in (None, {}, False):
            raise UnsupportedFeature(why, param=key)
    thread = body.get("thread")
    if isinstance(thread, dict) and thread.get("type") == "continue":
        raise UnsupportedFeature("the gateway holds no conversation on the server: send the whole "
                                 "history instead of thread.continue", param="thread")


def _report_top_level(body: dict[str, Any], report: Report) -> None:
    for key, value in body.items():
        if key in _READ or value is None:
            continue
        if key in _COSMETIC_TOP:
            report.drop(key, kind="cosmetic")
        else:  # container, mcp_servers, fallbacks, thread: no IR field
            report.drop(key)


def _system(value: Any, report: Report) -> tuple[list[str], dict[int, CacheMark]]:
    """The system texts, and the client's breakpoints by index among them."""
    if value is None or value == "":
        return [], {}
    if isinstance(value, str):
        return [value], {}
    out: list[str] = []
    marks: dict[int, CacheMark] = {}
    for path, block in blocks(value, "system"):
        text = block.get("text")
        if block["type"] != "text" or not isinstance(text, str):
            raise MalformedRequest(f"{path} must be a text block", param=path)
        mark = cache.read(block, path, report)
        report.drop_unread(block, frozenset({"type", "text", "cache_control"}), path, skip_empty=True)
        if text.startswith(BILLING_HEADER) or not text:
            if text:
                report.drop(path, kind="cosmetic")
            if mark is not None:
                report.drop(mark.origin, kind="cosmetic")  # the block it sat on is not sent
        else:
            if mark is not None:
                marks[len(out)] = mark
            out.append(text)
    return out, marks


def _number(body: dict[str, Any], key: str) -> float | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MalformedRequest(f"{key} must be a number", param=key)
    try:
        return float(value)  # the IR keeps a float: an integer `1` is sent on as `1.0`
    except OverflowError:  # an integer of hundreds of digits, read by the standard parser
        raise MalformedRequest(f"{key} is out of range", param=key) from None


def _top_k(value: Any) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise MalformedRequest("top_k must be a non-negative integer", param="top_k")
    return value


def _stop_sequences(value: Any) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
        raise MalformedRequest("stop_sequences must be an array of strings", param="stop_sequences")
    return value


def _effort(output: Any, per_turn: tuple[object, str] | None) -> tuple[object, str]:
    """The effort asked for this turn and the field that asked: the last system message's
    `output_config.effort` (per-turn control), else the top-level one."""
    if per_turn is not None:
        return per_turn
    return (output.get("effort") if isinstance(output, dict) else None), "output_config.effort"


def _effort_source(thinking: Any, asked: tuple[object, str]) -> str:
    """The field the IR's effort came from: the effort asked, else a thinking budget, else
    `thinking` itself (disabled: effort none)."""
    if asked[0] is not None:
        return asked[1]
    if isinstance(thinking, dict) and thinking.get("type") == "enabled":
        return "thinking.budget_tokens"
    return "thinking"


def _reasoning(thinking: Any, asked: tuple[object, str], report: Report) -> ReasoningConfig:
    """`thinking` and the effort asked -> the IR's effort and whether a summary comes back."""
    effort_value, effort_path = asked
    if effort_value is not None and (not isinstance(effort_value, str) or effort_value not in EFFORTS):
        raise MalformedRequest(f"{effort_path} must be low, medium, high, xhigh or max", param=effort_path)
    effort = EFFORTS.get(effort_value) if isinstance(effort_value, str) else None
    if effort_value == "max":
        report.note(f"{effort_path} max sent as the upstream's highest effort (xhigh)")
    if thinking is None:
        return ReasoningConfig(effort=effort)
    if not isinstance(thinking, dict) or thinking.get("type") not in ("adaptive", "enabled", "disabled",
                                                                       "between_tools"):
        raise MalformedRequest("thinking.type must be adaptive, enabled or disabled", param="thinking.type")
    report.drop_unread(thinking, _THINKING_KEYS, "thinking", skip_empty=True)
    kind = thinking["type"]
    summary = None if thinking.get("display") == "omitted" else "auto"
    if kind == "disabled":
        if effort is not None:
            report.drop(effort_path)
        return ReasoningConfig(effort="none")
    if kind == "between_tools":
        report.drop("thinking.type")
    if kind == "enabled":
        budget = thinking.get("budget_tokens")
        if not isinstance(budget, int) or isinstance(budget, bool):
            raise MalformedRequest("thinking.budget_tokens must be an integer",
                                   param="thinking.budget_tokens")
        if effort is None:
            effort = next((e for bound, e in BUDGET_EFFORTS if budget < bound), "xhigh")
            report.note(f"thinking.budget_tokens {budget} sent as effort {effort}")
    return ReasoningConfig(effort=effort, summary=summary)


def _output_schema(output: Any, report: Report) -> dict[str, Any] | None:
    if output is None:
        return None
    if not isinstance(output, dict):
        raise MalformedRequest("output_config must be an object", param="output_config")
    if output.get("task_budget") is not None:
        report.drop("output_config.task_budget")
    report.drop_unread(output, _OUTPUT_CONFIG_KEYS | {"task_budget"}, "output_config", skip_empty=True)
    fmt = output.get("format")
    if fmt is None:
        return None
    schema = fmt.get("schema") if isinstance(fmt, dict) else None
    if not (isinstance(fmt, dict) and fmt.get("type") == "json_schema" and isinstance(schema, dict)):
        raise MalformedRequest("output_config.format must be {\"type\": \"json_schema\", \"schema\": {...}}",
                               param="output_config.format")
    # Anthropic's structured output is always enforced: strict, where the upstream can be
    return {"name": "output", "schema": schema, "strict": True}


def _user(metadata: Any, report: Report) -> str | None:
    if metadata is None:
        return None
    if not isinstance(metadata, dict):
        raise MalformedRequest("metadata must be an object", param="metadata")
    report.drop_unread(metadata, frozenset({"user_id"}), "metadata", skip_empty=True)
    user = metadata.get("user_id")
    if user is not None and not isinstance(user, str):
        raise MalformedRequest("metadata.user_id must be a string", param="metadata.user_id")
    return user or None



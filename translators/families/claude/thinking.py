"""Claude's thinking and effort, whichever API carries it (Anthropic Messages, Bedrock Converse):
one rule for what a Responses `reasoning` becomes on a given model (docs/anthropic.md "Thinking
and effort").

Models differ, and the capabilities say how: Sonnet 4.5 and older take only a thinking budget
(`enabled`); Opus/Sonnet 4.6 take a budget or `adaptive`; Opus 4.7 and later take only `adaptive`
and answer 400 to `enabled`. Effort is its own knob (`output_config.effort`), on Opus 4.5 and
later. A request gets adaptive thinking where the model has it, a budget only where it does not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from translators.core.capabilities import ModelCapabilities
from translators.core.report import Report
from translators.features import fit
from translators.ir.request import Request

DEFAULT_MAX_TOKENS = 32000
# Thinking budget per Responses effort, for models that take only a budget; Claude needs
# >= 1024 and < max_tokens.
THINKING_BUDGET = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384, "xhigh": 24576}
# Responses effort -> Claude effort word. Claude has no `minimal`: the least it has is `low`.
EFFORT_WORD = {"minimal": "low", "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh",
               "max": "max"}
EFFORT_ORDER = ("low", "medium", "high", "xhigh", "max")
# "When extended thinking is disabled, the effort level is capped at high" (docs/bedrock.md)
_UNTHINKING_EFFORT_CAP = "high"


@dataclass(frozen=True, slots=True)
class Plan:
    """What a request asks of Claude: the `thinking` object (None: not sent, thinking off) and the
    effort word (None: not sent, the model's default)."""

    thinking: dict[str, Any] | None
    effort: str | None


def max_tokens(request: Request, caps: ModelCapabilities, report: Report) -> int:
    """`max_tokens` is required by Claude: the client's limit, else 32k; either at most what the
    model writes and what its context window leaves (translators/features/fit.py)."""
    limit = fit.output_limit(request, caps, report, default=DEFAULT_MAX_TOKENS)
    return DEFAULT_MAX_TOKENS if limit is None else limit


def plan(request: Request, caps: ModelCapabilities, max_tokens: int, report: Report) -> Plan:
    effort, summary = request.reasoning.effort, request.reasoning.summary
    if effort in (None, "none"):
        if summary not in (None, "none"):
            report.drop("reasoning.summary")  # nothing to summarize without thinking
        if effort == "none" and caps.thinks and "disabled" not in caps.thinking:
            report.drop("reasoning.effort")
            report.note(f"reasoning effort 'none' not honoured: {caps.model} cannot turn thinking off")
        return Plan(None, None)
    word = _effort_word(effort, caps, report)
    if request.tool_choice.mode in ("required", "tool"):
        report.note("thinking turned off: Claude allows a forced tool choice only without thinking")
        return _without_thinking(request, word, report)
    if "adaptive" in caps.thinking:
        display = "omitted" if summary == "none" else "summarized"
        return Plan({"type": "adaptive", "display": display}, word)
    if "enabled" in caps.thinking and effort in THINKING_BUDGET:
        budget = min(THINKING_BUDGET[effort], max_tokens - 1024)
        if budget < 1024:
            report.note("thinking turned off: max_output_tokens leaves no room for a 1024-token budget")
            return _without_thinking(request, word, report)
        return Plan({"type": "enabled", "budget_tokens": budget}, word)
    return _without_thinking(request, word, report)


def _without_thinking(request: Request, word: str | None, report: Report) -> Plan:
    if request.reasoning.summary not in (None, "none"):
        report.drop("reasoning.summary")
    if word is None:
        report.drop("reasoning.effort")
        return Plan(None, None)
    if EFFORT_ORDER.index(word) > EFFORT_ORDER.index(_UNTHINKING_EFFORT_CAP):
        report.note(f"effort {word!r} sent as {_UNTHINKING_EFFORT_CAP!r}: without thinking Claude's "
                    "effort goes no higher")
        word = _UNTHINKING_EFFORT_CAP
    return Plan(None, word)


def _effort_word(effort: str, caps: ModelCapabilities, report: Report) -> str | None:
    """The Claude effort word for a Responses effort, or None when the model has no effort knob
    or the word is unknown. A word the model lacks becomes the nearest one below it (never more
    spend than asked), else the lowest above; the flow notes it."""
    wanted = EFFORT_WORD.get(effort)
    if wanted is None or not caps.effort:
        return None
    if wanted in caps.effort:
        if wanted != effort:
            report.note(f"reasoning effort {effort!r} sent as {wanted!r}: Claude has no {effort!r}")
        return wanted
    rank = EFFORT_ORDER.index(wanted)
    below = [w for w in EFFORT_ORDER[:rank] if w in caps.effort]
    above = [w for w in EFFORT_ORDER[rank + 1:] if w in caps.effort]
    chosen = below[-1] if below else above[0]
    report.note(f"reasoning effort {effort!r} sent as {chosen!r}, the nearest level {caps.model} takes")
    return chosen


def sampling(request: Request, caps: ModelCapabilities, thinking: bool, report: Report) -> dict[str, float]:
    """`temperature` / `top_p` / `top_k` as the model takes them: none with thinking (Claude
    requires the default sampling then), and only one of temperature and top_p on the models that
    refuse both."""
    out: dict[str, float] = {}
    for key in ("temperature", "top_p"):
        value = getattr(request, key)
        if value is None:
            continue
        if thinking:
            report.drop(key)
        elif out and caps.one_sampling_knob:
            report.drop(key)
            report.note(f"{key} not sent: {caps.model} takes temperature or top_p, not both")
        else:
            out[key] = value
    if request.top_k is not None:
        if thinking:
            report.drop("top_k")
        else:
            out["top_k"] = request.top_k
    return out

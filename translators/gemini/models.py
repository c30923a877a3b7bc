"""What a Gemini model name says about the request it accepts: thinking controls and multimodal
function responses (docs/gemini.md "Request").

Gemini 3 takes `thinkingLevel`, 2.5 takes `thinkingBudget` (sending both is reported to 400),
older models have no thinking at all. The tables below are the whole policy; the functions only
look things up.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from translators.core.capabilities import ModelCapabilities

_VERSION = re.compile(r"gemini-(\d+)(?:\.(\d+))?", re.IGNORECASE)

# Responses effort -> Gemini 3 thinkingLevel. Gemini 3 cannot switch thinking off, so `none`
# asks for the least there is.
LEVEL_BY_EFFORT = {"none": "MINIMAL", "minimal": "MINIMAL", "low": "LOW", "medium": "MEDIUM",
                   "high": "HIGH", "xhigh": "HIGH"}
_LEVEL_ORDER = ("MINIMAL", "LOW", "MEDIUM", "HIGH")
# Levels each Gemini 3 model accepts; the first matching pattern wins. 3 Pro (the original
# preview) takes only LOW and HIGH; the Flash models and later Pros take all four.
_LEVELS: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (re.compile(r"gemini-3-pro", re.IGNORECASE), ("LOW", "HIGH")),
    (re.compile(r".*"), _LEVEL_ORDER),
)

# Responses effort -> Gemini 2.5 thinkingBudget (tokens), before clamping to the model's range.
BUDGET_BY_EFFORT = {"none": 0, "minimal": 512, "low": 1024, "medium": 8192, "high": 24576, "xhigh": 32768}


@dataclass(frozen=True, slots=True)
class BudgetRange:
    minimum: int
    maximum: int
    can_disable: bool


# Gemini 2.5 budget ranges (Gemini thinking docs): Pro cannot turn thinking off.
_BUDGETS: tuple[tuple[re.Pattern[str], BudgetRange], ...] = (
    (re.compile(r"pro", re.IGNORECASE), BudgetRange(128, 32768, can_disable=False)),
    (re.compile(r"flash-lite", re.IGNORECASE), BudgetRange(512, 24576, can_disable=True)),
    (re.compile(r".*"), BudgetRange(1, 24576, can_disable=True)),
)


def version(model: str) -> tuple[int, int] | None:
    """(major, minor) from `gemini-2.5-flash`, `models/gemini-3-pro-preview`...; None if unnamed."""
    match = _VERSION.search(model)
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2) or 0)


def uses_levels(model: str) -> bool:
    v = version(model)
    return v is not None and v >= (3, 0)


def uses_budget(model: str) -> bool:
    v = version(model)
    return v is not None and (2, 5) <= v < (3, 0)


def multimodal_function_responses(model: str) -> bool:
    """Gemini 3 takes images inside `functionResponse.parts`; earlier models do not."""
    return uses_levels(model)


def requires_call_signatures(model: str) -> bool:
    """Gemini 3 rejects a current-turn functionCall without its thoughtSignature (docs/gemini.md "Thought
    signatures")."""
    return uses_levels(model)


def thinking_level(model: str, effort: str) -> str | None:
    wanted = LEVEL_BY_EFFORT.get(effort)
    if wanted is None:
        return None
    allowed = next(levels for pattern, levels in _LEVELS if pattern.search(model))
    if wanted in allowed:
        return wanted
    # the nearest accepted level at or above the one asked for, else the highest there is
    rank = _LEVEL_ORDER.index(wanted)
    above = [level for level in allowed if _LEVEL_ORDER.index(level) >= rank]
    return above[0] if above else allowed[-1]


def thinking_budget(model: str, effort: str) -> int | None:
    budget = BUDGET_BY_EFFORT.get(effort)
    if budget is None:
        return None
    limits = next(r for pattern, r in _BUDGETS if pattern.search(model))
    if budget == 0 and limits.can_disable:
        return 0
    return max(limits.minimum, min(budget, limits.maximum))


def approximated(model: str, effort: str) -> bool:
    """True when the level/budget sent is not what `effort` means (no off switch, no XHIGH,
    a level the model lacks, a budget outside its range)."""
    if uses_levels(model):
        return effort in ("none", "xhigh") or thinking_level(model, effort) != LEVEL_BY_EFFORT.get(effort)
    return thinking_budget(model, effort) != BUDGET_BY_EFFORT.get(effort)


def capabilities(model: str) -> ModelCapabilities:
    """The shipped answer: Gemini 2.x and 3 take 1,048,576 input tokens and a JSON schema; 2.5 and
    later think (docs/gemini.md "Models"). The vendor's models.get is read when it can be."""
    v = version(model)
    if v is None:
        return ModelCapabilities(model=model, source="guess", structured_output=True)
    thinks = uses_levels(model) or uses_budget(model)
    # the model pages' "Output token limit": 65,536 for 2.5 and 3, 8,192 before (docs/models.md
    # "Output limits"); models.get says it per model when it can be read
    return ModelCapabilities(
        model=model, source="table", context_window=1_048_576,
        max_output_tokens=65_536 if thinks else 8_192,
        thinking=frozenset({"enabled"}) if thinks else frozenset(),
        structured_output=True, image_input=True, pdf_input=True, web_search=v >= (2, 0),
        lifecycle="retired" if v < (2, 0) else "active",
    )


def from_model(payload: Any, model: str) -> ModelCapabilities:
    """models.get (`google.genai.types.Model`, wire names in camelCase) -> capabilities, source
    `vendor`. Raises ValueError for a body that is not a model."""
    if not isinstance(payload, dict) or not isinstance(payload.get("name"), str):
        raise ValueError("not a model object")
    out = replace(capabilities(model), source="vendor")
    window, limit = payload.get("inputTokenLimit"), payload.get("outputTokenLimit")
    if isinstance(window, int) and window > 0:
        out = replace(out, context_window=window)
    if isinstance(limit, int) and limit > 0:
        out = replace(out, max_output_tokens=limit)
    if isinstance(payload.get("thinking"), bool):
        out = replace(out, thinking=frozenset({"enabled"}) if payload["thinking"] else frozenset())
    return out

"""Claude's extended thinking, whichever API carries it (Anthropic Messages, Bedrock Converse):
one budget table and one rule for when thinking has to stay off (notes/dialects.md §A.2, §D.2)."""

from __future__ import annotations

import re
from typing import Any

from translators.ir.request import Request
from translators.report import Report

DEFAULT_MAX_TOKENS = 32000
# Thinking budget per Responses effort; Claude needs >= 1024 and < max_tokens (§A.2).
THINKING_BUDGET = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384, "xhigh": 24576}
# Models older than Claude 3.7 answer 400 to a `thinking` block.
OLD_CLAUDE = re.compile(r"claude-(instant|v2|2|3-(haiku|opus|sonnet)|3-5)", re.IGNORECASE)


def thinking(request: Request, supported: bool, max_tokens: int | None,
             report: Report) -> dict[str, Any] | None:
    """`{"type": "enabled", "budget_tokens": N}` for the request's effort, or None (and the report
    says why) when the model cannot think, the effort asks for none, or the request forbids it."""
    effort = request.reasoning.effort
    budget = THINKING_BUDGET.get(effort or "")
    if budget is None or not supported:
        if effort not in (None, "none"):
            report.drop("reasoning.effort")
        if request.reasoning.summary not in (None, "none"):
            report.drop("reasoning.summary")
        return None
    if request.tool_choice.mode in ("required", "tool"):
        report.note("thinking turned off: Claude allows a forced tool choice only without thinking")
        report.drop("reasoning.effort")
        return None
    budget = min(budget, (max_tokens or DEFAULT_MAX_TOKENS) - 1024)
    if budget < 1024:
        report.note("thinking turned off: max_output_tokens leaves no room for a 1024-token budget")
        report.drop("reasoning.effort")
        return None
    return {"type": "enabled", "budget_tokens": budget}

"""What a Bedrock model id says about the model behind it.

Converse is one request shape for every model, but reasoning switches and prompt caching are
per model family (notes/dialects.md §D.2): Claude takes Anthropic's `thinking` object through
`additionalModelRequestFields` and `cachePoint` blocks. Ids come as `anthropic.claude-…`,
`us.anthropic.claude-…` (inference profiles) or ARNs that embed either; an application
inference-profile ARN hides the model and is treated as "not Claude".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from translators.claude import OLD_CLAUDE

_CLAUDE = re.compile(r"anthropic\.claude|(^|[./])claude-", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Capabilities:
    claude: bool
    thinking: bool
    """Takes `{"thinking": {"type": "enabled", "budget_tokens": N}}` and returns signed reasoning."""
    cache_points: bool


def capabilities(model_id: str) -> Capabilities:
    claude = bool(_CLAUDE.search(model_id))
    # Claude models older than 3.7 have neither extended thinking nor Converse prompt caching
    modern = claude and not OLD_CLAUDE.search(model_id)
    return Capabilities(claude=claude, thinking=modern, cache_points=modern)

"""What a Bedrock model id says about the model behind it.

Converse is one request shape for every model, but reasoning switches, effort, structured output
and prompt caching are per model family (docs/bedrock.md "Request"): Claude takes Anthropic's
`thinking` object through `additionalModelRequestFields`, `outputConfig.effort` and `cachePoint`
blocks; Nova takes `cachePoint` blocks in fewer places. Ids come as `anthropic.claude-…`,
`us.anthropic.claude-…` (inference profiles) or ARNs that embed either; an application
inference-profile ARN hides the model and is treated as "not Claude". A Claude id answers from
the Claude family's profiles (translators/families/claude/).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from translators.core.capabilities import ModelCapabilities
from translators.families.claude import models as claude_models


def is_claude(model_id: str) -> bool:
    return claude_models.claude_id(model_id) is not None


def capabilities(model_id: str) -> ModelCapabilities:
    if is_claude(model_id):
        # Bedrock serves no server-side web search for Claude (docs/bedrock.md)
        return replace(claude_models.lookup(model_id), web_search=False)
    # Converse takes document blocks for most of its models; one that does not answers 400 with
    # its own message (docs/bedrock.md "Files")
    return ModelCapabilities(model=model_id, source="guess", pdf_input=True)


@dataclass(frozen=True, slots=True)
class CachePoints:
    """Where a model takes Converse `cachePoint` blocks (docs/bedrock.md "Prompt caching")."""

    tools: bool
    """In `toolConfig.tools` too (Claude), not only in `system` and messages (Nova)."""
    ttl: bool
    """Takes `ttl: "1h"` (Claude, as on Anthropic's API); else every point is the default 5 minutes."""
    lookback: bool
    """Reads an entry within the blocks before a point (Claude); else only at a point (Nova)."""


_CLAUDE = CachePoints(tools=True, ttl=True, lookback=True)
_NOVA = CachePoints(tools=False, ttl=False, lookback=False)
_CLAUDE_WITHOUT = frozenset({"claude-v2", "claude-2", "claude-instant", "claude-3-haiku", "claude-3-opus",
                             "claude-3-5-sonnet"})
"""Claude families AWS's prompt-caching guide leaves out (Claude 3.5 Sonnet v2 only for the
customers of its preview): every other Claude, 3.5 Haiku and 3.7 Sonnet on, takes cache points."""
_NOVA_ID = re.compile(r"(?:^|[./:])amazon\.nova-(?:micro|lite|pro|premier)-v\d")
"""The Nova models AWS's prompt-caching guide lists: Micro, Lite, Pro and Premier."""


def cache_points(model_id: str) -> CachePoints | None:
    """Whether and where `model_id` takes `cachePoint` blocks; None: it takes none (a point is
    a 400 there), and the gateway sends none."""
    claude = claude_models.claude_id(model_id)
    if claude is not None:
        family = claude_models.family(claude)
        return None if family in _CLAUDE_WITHOUT else _CLAUDE
    return _NOVA if _NOVA_ID.search(model_id) else None

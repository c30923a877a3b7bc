"""What a Bedrock model id says about the model behind it.

Converse is one request shape for every model, but reasoning switches, effort, structured output
and prompt caching are per model family (docs/bedrock.md "Request"): Claude takes Anthropic's
`thinking` object through `additionalModelRequestFields`, `outputConfig.effort` and `cachePoint`
blocks. Ids come as `anthropic.claude-…`, `us.anthropic.claude-…` (inference profiles) or ARNs
that embed either; an application inference-profile ARN hides the model and is treated as "not
Claude". A Claude id answers from the Claude family's profiles (translators/families/claude/).
"""

from __future__ import annotations

from dataclasses import replace

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


def cache_points(caps: ModelCapabilities) -> bool:
    """Claude models that think (3.7 and later) also take Converse `cachePoint` blocks."""
    return "enabled" in caps.thinking or "adaptive" in caps.thinking

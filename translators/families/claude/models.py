"""Claude models: the shipped table of profiles (docs/anthropic.md "Models and capabilities").

The vendor's endpoint is the authority (`translators/anthropic/models.py` reads it); this table is
what the gateway falls back on offline or when the key may not read models, for the Anthropic and
Bedrock dialects alike. Families are matched by id prefix, longest first, so
`claude-opus-4-5-20251101` is Opus 4.5 and `claude-opus-4-20250514` is Opus 4. Bedrock ids
(`us.anthropic.claude-sonnet-4-5-20250929-v1:0`) are read through `claude_id`.
"""

from __future__ import annotations

import re
from dataclasses import replace

from translators.core.capabilities import ModelCapabilities

_BUDGET = frozenset({"enabled", "disabled"})
_BOTH = frozenset({"enabled", "adaptive", "disabled"})
_ADAPTIVE = frozenset({"adaptive", "disabled"})
_EFFORT_4_5 = frozenset({"low", "medium", "high"})
_EFFORT_4_6 = frozenset({"low", "medium", "high", "max"})
_EFFORT_NOW = frozenset({"low", "medium", "high", "xhigh", "max"})


def _claude(model: str, *, window: int = 200_000, out: int = 64_000,
            thinking: frozenset[str] = frozenset(), effort: frozenset[str] = frozenset(),
            structured: bool = True, one_knob: bool = True, web_search: bool = True,
            lifecycle: str = "active", retires: str | None = None) -> ModelCapabilities:
    return ModelCapabilities(model=model, source="table", context_window=window, max_output_tokens=out,
                             thinking=thinking, effort=effort, structured_output=structured,
                             image_input=True, pdf_input=True, web_search=web_search,
                             one_sampling_knob=one_knob, lifecycle=lifecycle,  # type: ignore[arg-type]
                             retires=retires)


# Family id -> capabilities. Windows are the standard ones (larger windows behind betas or
# newer tiers come from the vendor's endpoint): a smaller figure only makes Codex compact
# sooner, a larger one would let a request overflow (docs/models.md).
TABLE: dict[str, ModelCapabilities] = {
    **{old: _claude(old, window=100_000, out=4096, structured=False, one_knob=False, web_search=False,
                    lifecycle="retired") for old in ("claude-v2", "claude-2", "claude-instant")},
    "claude-3-haiku": _claude("claude-3-haiku", out=4096, structured=False, one_knob=False,
                              web_search=False, lifecycle="retired"),
    "claude-3-opus": _claude("claude-3-opus", out=4096, structured=False, one_knob=False,
                             web_search=False, lifecycle="retired"),
    "claude-3-5-haiku": _claude("claude-3-5-haiku", out=8192, structured=False, one_knob=False,
                                lifecycle="retired"),
    "claude-3-5-sonnet": _claude("claude-3-5-sonnet", out=8192, structured=False, one_knob=False,
                                 lifecycle="retired"),
    "claude-3-7-sonnet": _claude("claude-3-7-sonnet", thinking=_BUDGET, structured=False, one_knob=False,
                                 lifecycle="retired"),
    "claude-sonnet-4": _claude("claude-sonnet-4", thinking=_BUDGET, structured=False, one_knob=False),
    "claude-opus-4": _claude("claude-opus-4", out=32_000, thinking=_BUDGET, structured=False,
                             one_knob=False),
    "claude-opus-4-1": _claude("claude-opus-4-1", out=32_000, thinking=_BUDGET),
    "claude-haiku-4-5": _claude("claude-haiku-4-5", thinking=_BUDGET),
    "claude-sonnet-4-5": _claude("claude-sonnet-4-5", thinking=_BUDGET, lifecycle="deprecated",
                                 retires="2026-11-30"),
    "claude-opus-4-5": _claude("claude-opus-4-5", thinking=_BUDGET, effort=_EFFORT_4_5,
                               lifecycle="deprecated", retires="2027-01-22"),
    "claude-sonnet-4-6": _claude("claude-sonnet-4-6", thinking=_BOTH, effort=_EFFORT_4_6),
    "claude-opus-4-6": _claude("claude-opus-4-6", out=128_000, thinking=_BOTH, effort=_EFFORT_4_6),
    "claude-mythos-preview": _claude("claude-mythos-preview", out=128_000, thinking=_BOTH,
                                     effort=_EFFORT_4_6, lifecycle="deprecated", retires="2026-06-30"),
    "claude-opus-4-7": _claude("claude-opus-4-7", out=128_000, thinking=_ADAPTIVE, effort=_EFFORT_NOW),
    "claude-opus-4-8": _claude("claude-opus-4-8", out=128_000, thinking=_ADAPTIVE, effort=_EFFORT_NOW),
    "claude-sonnet-5": _claude("claude-sonnet-5", thinking=_ADAPTIVE, effort=_EFFORT_NOW),
    "claude-sonnet-5-5": _claude("claude-sonnet-5-5", thinking=_ADAPTIVE, effort=_EFFORT_NOW),
    "claude-haiku-5-5": _claude("claude-haiku-5-5", thinking=_ADAPTIVE, effort=_EFFORT_NOW),
    "claude-opus-5": _claude("claude-opus-5", out=128_000, thinking=_ADAPTIVE, effort=_EFFORT_NOW),
    "claude-opus-5-5": _claude("claude-opus-5-5", out=128_000, thinking=_ADAPTIVE, effort=_EFFORT_NOW),
    "claude-fable-5": _claude("claude-fable-5", out=128_000, thinking=_ADAPTIVE, effort=_EFFORT_NOW),
    "claude-mythos-5": _claude("claude-mythos-5", out=128_000, thinking=_ADAPTIVE, effort=_EFFORT_NOW),
}

# A Claude id no table row knows is newer than the table: it gets what today's models take.
_NEWEST = _claude("claude", thinking=_ADAPTIVE, effort=_EFFORT_NOW)
# Not a Claude id: another vendor's model behind an Anthropic-compatible endpoint (DeepSeek, Kimi,
# GLM serve one). Such servers copy the first Messages API: a thinking budget, both sampling knobs.
_COMPATIBLE = ModelCapabilities(model="", source="guess", thinking=_BUDGET)

_BEDROCK_ID = re.compile(r"(?:^|[./:])anthropic\.(claude-[a-z0-9.-]+?)(?:-v\d+)?(?::\d+)?(?:$|/)")
_RELEASE = re.compile(r"(-\d{8}|-latest)?")
"""What may follow a family id: a release date or `-latest`; anything else (`claude-opus-4-9`) is
another, newer model than the family row describes."""


def claude_id(model: str) -> str | None:
    """The Anthropic id inside a model name: itself (`claude-opus-4-6`), or the one a Bedrock id or
    ARN carries (`global.anthropic.claude-sonnet-5-5`, `anthropic.claude-opus-4-6-v1`)."""
    name = model.removeprefix("models/")
    if name.startswith("claude-"):
        return name
    match = _BEDROCK_ID.search(name)
    return match.group(1) if match else None


def family(claude: str) -> str | None:
    """The table's family of a Claude id (`claude-opus-4-5-20251101` -> `claude-opus-4-5`), or None."""
    return _family(claude)


def _family(claude: str) -> str | None:
    best = None
    for key in TABLE:
        if (claude == key or claude.startswith(key + "-")) and (best is None or len(key) > len(best)):
            best = key
    return best


def lookup(model: str) -> ModelCapabilities:
    """The shipped table's row for `model` (source `table`), else a guess: a Claude id newer than
    the table gets today's Claude, any other name an Anthropic-compatible server's defaults."""
    claude = claude_id(model)
    if claude is None:
        return replace(_COMPATIBLE, model=model)
    family = _family(claude)
    if family is None or not _RELEASE.fullmatch(claude[len(family):]):
        return replace(_NEWEST, model=model, source="guess")
    return replace(TABLE[family], model=model)

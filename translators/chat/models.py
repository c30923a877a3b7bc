"""What the upstream model understands, read off its name (the encoder never sees the base URL).

Chat Completions is spoken by OpenAI itself and by many compatible servers (DeepSeek, vLLM,
SGLang, Ollama, OpenRouter) that accept different subsets of it (docs/chat.md "Compatible servers").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from translators.core.capabilities import ModelCapabilities

# OpenAI's own models. `gpt-oss` is an open-weights model served by vLLM/Ollama, not by OpenAI.
_OPENAI = re.compile(r"^(gpt-(?!oss)|o\d|chatgpt-|codex-)", re.IGNORECASE)
# Reasoning models take `reasoning_effort` and reject sampling parameters.
_OPENAI_REASONING = re.compile(r"^(o\d|gpt-([5-9]|\d{2,})|codex-)", re.IGNORECASE)
# `verbosity` exists from GPT-5 on (docs/chat.md "Request").
_VERBOSITY = re.compile(r"^gpt-([5-9]|\d{2,})", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Target:
    model: str
    openai: bool
    """OpenAI's own model: native custom tools, `max_completion_tokens`."""
    openai_reasoning: bool
    verbosity: bool
    deepseek: bool
    """DeepSeek: `thinking` + low/high/max effort, reasoning_content replay, text-only input."""
    gguf: bool = False
    """A GGUF file's name: served by llama-cpp-python or llama.cpp's own server, which both take
    `response_format: {type: json_object, schema}` (docs/chat.md "Server settings")."""
    joins_parts: bool = True
    """`system` and `tool` content as one string (the route's `message_parts`,
    translators/chat/settings.py)."""
    file_parts: bool = False
    """The server takes OpenAI's `file` user content part (the route's `file_parts`,
    translators/chat/settings.py)."""

    @property
    def max_tokens_key(self) -> str:
        # `max_tokens` is deprecated and "not compatible with o-series models" (docs/chat.md "Request"); most
        # compatible servers only know `max_tokens`.
        return "max_completion_tokens" if self.openai else "max_tokens"

    @property
    def native_custom_tools(self) -> bool:
        """Only OpenAI takes `{type: "custom"}` tools in Chat (docs/chat.md "Request"; docs/responses.md
        "Tools on other dialects"); others get them emulated."""
        return self.openai

    @property
    def images(self) -> bool:
        # DeepSeek's chat endpoint answers 400 `unknown variant image_url, expected text`
        # (rikkahub #1433, oh-my-pi PR #9169).
        return not self.deepseek


def target_for(model: str, joins_parts: bool = True, file_parts: bool = False) -> Target:
    return Target(
        model=model,
        openai=bool(_OPENAI.match(model)),
        openai_reasoning=bool(_OPENAI_REASONING.match(model)),
        verbosity=bool(_VERBOSITY.match(model)),
        deepseek="deepseek" in model.lower(),
        gguf=model.lower().endswith(".gguf"),
        joins_parts=joins_parts,
        file_parts=file_parts,
    )


# Context windows and output limits of models commonly served over Chat Completions, by name
# pattern, first match wins (docs/models.md "Output limits"): (pattern, window, output limit or None
# when it is the server's to say). Compatible servers publish no capabilities endpoint the gateway
# can rely on (vLLM's /v1/models gives only `max_model_len`, and only on vLLM), so this table is
# all there is; a route states what it lacks (`max_output_tokens`, `context_window`).
_WINDOWS: tuple[tuple[re.Pattern[str], int, int | None], ...] = (
    # DeepSeek's API (docs/chat.md "DeepSeek"): deepseek-chat writes at most 8K ("the valid range of
    # max_tokens is [1, 8192]"), deepseek-reasoner 64K ([1, 65536]), in a 128K window; the V4
    # models (deepseek-v4-flash, deepseek-v4-pro, deepseek-flash) 384K in a 1M window. API names are
    # lower case: a Hugging Face id of the same weights (DeepSeek-V4-Flash) is served with the
    # engine's own window and limit
    (re.compile(r"^deepseek-chat$", re.IGNORECASE), 128_000, 8_192),
    (re.compile(r"^deepseek-reasoner$", re.IGNORECASE), 128_000, 65_536),
    (re.compile(r"^deepseek-(v4-flash|v4-pro|flash)$"), 1_000_000, 384_000),
    # self-hosted DeepSeek weights: the window of the V3 line; the limit is the server's
    (re.compile(r"deepseek", re.IGNORECASE), 128_000, None),
    # OpenAI's model pages (docs/models.md "Output limits")
    (re.compile(r"^gpt-4\.1", re.IGNORECASE), 1_047_576, 32_768),
    (re.compile(r"^gpt-4o", re.IGNORECASE), 128_000, 16_384),
    (re.compile(r"^(gpt-5|o[34])", re.IGNORECASE), 400_000, 128_000),
    # open weights: the model's own window; its output limit is the serving engine's setting
    (re.compile(r"qwen3-coder", re.IGNORECASE), 262_144, None),
    (re.compile(r"qwen", re.IGNORECASE), 131_072, None),
    (re.compile(r"gpt-oss", re.IGNORECASE), 131_072, None),
    (re.compile(r"kimi-k2", re.IGNORECASE), 262_144, None),
    (re.compile(r"glm-4\.[5-9]", re.IGNORECASE), 131_072, None),
    (re.compile(r"llama-?3\.[1-3]|llama-?4", re.IGNORECASE), 131_072, None),
)


def capabilities(model: str) -> ModelCapabilities:
    target = target_for(model)
    name = model.rsplit("/", 1)[-1]  # OpenRouter and Hugging Face ids carry an owner
    row = next(((window, out) for pattern, window, out in _WINDOWS if pattern.search(name)), None)
    return ModelCapabilities(
        model=model, source="table" if row else "guess",
        context_window=row[0] if row else None, max_output_tokens=row[1] if row else None,
        structured_output=not target.deepseek, image_input=target.images,
    )

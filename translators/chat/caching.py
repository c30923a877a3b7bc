"""`cache_control` on Chat content parts, for a route whose server takes them (docs/chat.md
"Prompt caching"): OpenRouter passes Anthropic's breakpoints on to Claude (and to the other
models it caches for) from a message's text parts, `{"type": "text", "text", "cache_control":
{"type": "ephemeral"}}`. The placement is the one of translators/features/caching.py, a message
being the block: the newest message, the end of the previous request, the system prompt, earlier
ends. The route says so (`cache_control = true`); any other server keeps plain content, and its own
automatic prefix cache (DeepSeek's, OpenAI's) needs only the prefix to stay the same bytes, which
the encoder keeps (tests/translators/features/test_caching_sessions.py).
"""

from __future__ import annotations

from typing import Any

from translators.features import caching

EPHEMERAL = {"type": "ephemeral"}


def place(messages: list[dict[str, Any]]) -> None:
    slots = [caching.Slot(cacheable=_has_text(m), turn_end=_answered(messages, i))
             for i, m in enumerate(messages)]
    stable = 0 if messages and messages[0]["role"] == "system" else None
    for i in caching.place(slots, stable):
        _mark(messages[i])


def _has_text(message: dict[str, Any]) -> bool:
    content = message.get("content")
    if isinstance(content, str):
        return bool(content)
    return isinstance(content, list) and any(p.get("type") == "text" and p.get("text") for p in content)


def _answered(messages: list[dict[str, Any]], i: int) -> bool:
    return (messages[i]["role"] in ("user", "tool") and i + 1 < len(messages)
            and messages[i + 1]["role"] == "assistant")


def _mark(message: dict[str, Any]) -> None:
    """The breakpoint on the message's last text part (a string becomes one text part)."""
    content = message["content"]
    if isinstance(content, str):
        message["content"] = [{"type": "text", "text": content, "cache_control": dict(EPHEMERAL)}]
        return
    last = next(p for p in reversed(content) if p.get("type") == "text" and p.get("text"))
    last["cache_control"] = dict(EPHEMERAL)

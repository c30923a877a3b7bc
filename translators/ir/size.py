"""How large a request is, roughly: the input tokens it costs, estimated from the IR alone
(docs/models.md "Output limits").

No dialect's tokenizer is at hand, so text counts four characters a token, the rule of thumb the
vendors give for English and code (Gemini: "a token is equivalent to about 4 characters"). An
image or a file that is not text counts a fixed amount: what it really costs depends on its size
and the vendor. The estimate leans low on purpose: what it serves (the room a context window
leaves for the answer) loses output when it guesses high, and only what the upstream would refuse
anyway when it guesses low.
"""

from __future__ import annotations

import weakref

from translators.ir.request import Part, Request
from translators.wire import wirejson

CHARS_PER_TOKEN = 4
PART_TOKENS = 250
"""An image, or a file that is not inline text: about a small image's cost."""


_last: tuple[weakref.ref[Request], int] | None = None
"""The request estimated last, and its estimate."""


def estimate_tokens(request: Request) -> int:
    """The input tokens of `request`, roughly: its system texts, tool declarations and history.
    A translation asks twice for the same request object (the encoder's output limit,
    translators/features/fit.py; then the translation's record, translators/api.py), and nothing
    changes a decoded request (a step that needs another makes a copy, `model_copy`): the second
    time reads the first's figure. Each time walks every history item and writes every tool's
    schema, a few percent of a turn that adds two items to a long conversation
    (docs/benchmarks.md "Request translation over a session")."""
    global _last
    last = _last
    if last is not None and last[0]() is request:
        return last[1]
    tokens = _estimate(request)
    _last = (weakref.ref(request), tokens)
    return tokens


def _estimate(request: Request) -> int:
    chars = sum(len(text) for text in request.system)
    tokens = 0
    for tool in request.tools:
        chars += len(tool.name) + len(getattr(tool, "description", "") or "")
        parameters = getattr(tool, "parameters", None)
        if parameters:
            chars += len(wirejson.dumps(parameters))
    for item in request.items:
        kind = item.type
        if kind == "message" or kind == "tool_result":
            for part in item.parts:
                length = _length(part)
                if length is None:
                    tokens += PART_TOKENS
                else:
                    chars += length
        elif kind == "tool_call":
            chars += len(item.name) + len(item.arguments)
        elif kind == "reasoning":
            chars += sum(len(s) for s in item.summary) + sum(len(s) for s in item.content)
    return tokens + chars // CHARS_PER_TOKEN


def _length(part: Part) -> int | None:
    """The characters of text a part puts before the model (an inline text file: its bytes), or
    None for a part counted as a whole (`PART_TOKENS`)."""
    if part.type == "text":
        return len(part.text)
    if part.type == "document" and part.is_text and part.size is not None:
        return part.size
    return None

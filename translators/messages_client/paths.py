"""The dropped report in a Messages client's words (docs/claude-code.md "The report's words").

The upstream encoders name what they drop by the IR's words, which are the Responses client's
(`text.format`, `reasoning.effort`, `tools[3].parameters.$schema`), or by an item's `origin`, which
the Messages decoder already wrote in Messages words (`messages[2].content[0]`, `tools[3]`). This
is the one table from the first to the fields of the Messages request they came from; the decoder
hands it to the report (`Report.rename`) once it has read the request, so every path named after
that, by any encoder, is written in the client's words. Its own paths it writes directly.
"""

from __future__ import annotations

import re
from collections.abc import Callable

FIELDS = {
    "text.format": "output_config.format",
    "reasoning.summary": "thinking.display",
    "reasoning": "thinking",
    "user": "metadata.user_id",
    "parallel_tool_calls": "tool_choice.disable_parallel_tool_use",
    "max_output_tokens": "max_tokens",
}
"""IR field (and everything under it) -> the Messages field it came from. `reasoning.effort` is
not here: it comes from one of several fields (`renamer`)."""

_PARTS = (
    # a tool's JSON schema and a web search's domains
    (re.compile(r"^(tools\[\d+\])\.parameters(?=\.|$)"), r"\1.input_schema"),
    (re.compile(r"^(tools\[\d+\])\.filters$"), r"\1.allowed_domains"),
    # a document's file name is its `title`; a thinking block's text is its `thinking`
    (re.compile(r"^(messages\[\d+\]\.content\[\d+\](?:\.content\[\d+\])?)\.filename$"), r"\1.title"),
    (re.compile(r"^(messages\[\d+\]\.content\[\d+\])\.(?:summary|content)$"), r"\1.thinking"),
)


def renamer(effort: str) -> Callable[[str], str]:
    """IR path -> Messages path; `effort` is the field the request's effort came from
    (`output_config.effort`, a system message's, `thinking.budget_tokens`, or `thinking` when
    thinking was disabled). A path in Messages words already comes back as it is."""
    fields = {"reasoning.effort": effort, **FIELDS}

    def rename(path: str) -> str:
        for ir, client in fields.items():
            if path == ir or path.startswith(ir + "."):
                return client + path[len(ir):]
        for pattern, replacement in _PARTS:
            renamed, found = pattern.subn(replacement, path, count=1)
            if found:
                return renamed
        return path

    return rename

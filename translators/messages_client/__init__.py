"""Anthropic Messages as a client dialect: a Messages body in (Claude Code, the anthropic SDK),
Anthropic SSE out, whatever the upstream (docs/claude-code.md).

The client side of the wire, as `translators/responses/` is for Codex; `translators/anthropic/`
stays the upstream codec (IR -> Messages request, Anthropic SSE -> IR). Pure, like the rest of
the package:

- `decode(body, report) -> Request`: the client's body to the IR; raises `MalformedRequest` /
  `UnsupportedFeature`, which `errors.refusal` turns into Anthropic's 400.
- `MessagesEncoder`: IR events to Anthropic SSE (`encode`, `finish`), or the whole `Message`
  (`message()`) of a non-streamed call; `shows_thinking(body)` says whether thinking text goes
  out.
- `errors`: Anthropic-shaped error bodies and their statuses.
"""

from translators.messages_client import errors
from translators.messages_client.request import decode, shows_thinking
from translators.messages_client.stream import MessagesEncoder

__all__ = ["MessagesEncoder", "decode", "errors", "shows_thinking"]

"""Anthropic Messages as a client dialect: a Messages body in (Claude Code, the anthropic SDK),
Anthropic SSE out, whatever the upstream (docs/claude-code.md).

The client side of the wire, as `translators/responses_client/` is for Codex;
`translators/anthropic/` stays the upstream codec (IR -> Messages request, Anthropic SSE -> IR).
Pure, like the rest of the package:

- `request.decode(body, report) -> Request`: the client's body to the IR; raises
  `MalformedRequest` / `UnsupportedFeature`, which `errors.refusal` turns into Anthropic's 400.
- `MessagesEncoder`: IR events to Anthropic SSE (`encode`, `finish`), or the whole `Message`
  (`response()`) of a non-streamed call; `shows_thinking(body)` says whether thinking text goes
  out.
- `errors`: Anthropic-shaped error bodies, their statuses, the stream's failure event.
- `models`, `count`: the answers of `/v1/models` and `/v1/messages/count_tokens`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from translators.client_dialects import ClientDialect, GiveUp, KeepAlive, Models, TokenCount
from translators.core.ids import IdFactory
from translators.core.report import Report
from translators.core.translation import Translation
from translators.messages_client import count, errors, models
from translators.messages_client.request import decode, shows_thinking
from translators.messages_client.stream import MessagesEncoder


def _encoder(translation: Translation, report: Report, new_id: IdFactory,
             clock: Callable[[], float]) -> MessagesEncoder:
    """The model the client named; thinking text only when the request did not omit it
    (docs/claude-code.md "Events out")."""
    del clock  # Anthropic's events carry no time
    return MessagesEncoder(model=translation.client_model, report=report, new_id=new_id,
                           tools=translation.tools, show_thinking=shows_thinking(translation.echo))


def _echo(body: dict[str, Any]) -> dict[str, Any]:
    """What the Messages encoder reads of the request: `thinking` (its `display`)."""
    return {"thinking": body["thinking"]} if isinstance(body.get("thinking"), dict) else {}


CLIENT_DIALECT = ClientDialect(
    name="messages", label="Messages", view="anthropic", decode=decode, encoder=_encoder,
    error_body=errors.error_body, error_status=errors.client_status, refusal=errors.refusal,
    answer_status=errors.answer_status, echo=_echo,
    stream_error=errors.stream_error, stream_terminals=errors.TERMINALS,
    paths=("/v1/messages", "/v1/messages/count_tokens", "/v1/models", "/v1/models/*"),
    turn_paths=("/v1/messages",),
    private=("metadata",),  # Claude Code's `user_id`: device, account and session ids
    hosts=("api.anthropic.com",), credentials=("x-api-key", "authorization"),
    marker_headers=("anthropic-version", "x-api-key"),
    models=Models(page=models.page, entry=models.entry, names=models.NAMES),
    count=TokenCount(answer=count.answer, estimate=count.estimate, estimated=count.ESTIMATED),
    # Claude Code retries a 529 and an in-stream overloaded_error with its backoff, honouring a
    # retry-after up to 60 s (docs/pools.md "What the client sees")
    give_up=GiveUp(status=529, code="overloaded_error", in_stream=errors.overloaded),
    # Anthropic's own `ping`, about every 30 s while a model thinks (docs/pools.md "Keep-alives")
    keep_alive=KeepAlive(every=30.0, event=errors.PING),
)

__all__ = ["CLIENT_DIALECT", "MessagesEncoder", "decode", "errors", "shows_thinking"]

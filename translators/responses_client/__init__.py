"""OpenAI Responses as a client dialect (Codex, the openai SDKs), the default: a Responses body in,
Responses SSE or a whole Response object out, whatever the upstream (docs/responses.md,
docs/codex.md).

The client side of the wire; `translators/responses/` is the Responses upstream (its passthrough
for this client, its codec for the others). Pure, like the rest of the package:

- `request.decode(body, report, items=None) -> Request` (with `tools.py` and `files.py`): every
  item Codex sends, to the IR; a trailing `compaction_trigger` makes it a compaction; with the
  client's `ItemCache`, only the items it does not hold (`reuse.py`);
- `stream.ResponsesEncoder`: IR events to Responses SSE, or the whole object (`response()`);
  `compaction.CompactionEncoder`: a compaction's one answer (docs/compaction.md);
- `echo.from_request`: the request fields every Response object repeats;
- `errors`: the Responses error body, its statuses, the stream's failure event.
"""

from __future__ import annotations

from collections.abc import Callable

from translators.client_dialects import ClientDialect, GiveUp
from translators.core.ids import IdFactory
from translators.core.report import Report
from translators.core.translation import Translation
from translators.ir.encoder import EventEncoder
from translators.responses_client import echo, errors
from translators.responses_client.compaction import CompactionEncoder, kept_messages
from translators.responses_client.request import decode
from translators.responses_client.stream import ResponsesEncoder


def _encoder(translation: Translation, report: Report, new_id: IdFactory,
             clock: Callable[[], float]) -> EventEncoder:
    """A compaction's answer is written whole, once (docs/compaction.md); any other turn's
    streams as it comes."""
    if translation.compaction:
        return CompactionEncoder(dialect=translation.target, upstream_model=translation.model,
                                 model=translation.client_model, report=report, new_id=new_id,
                                 clock=clock, echo=translation.echo, kept=translation.compaction_kept)
    return ResponsesEncoder(model=translation.client_model, tools=translation.tools, report=report,
                            new_id=new_id, clock=clock, echo=translation.echo)


CLIENT_DIALECT = ClientDialect(
    name="responses", label="Responses", view="responses", decode=decode, reuses_items=True, encoder=_encoder,
    error_body=errors.error_body, refusal=errors.refusal, answer_status=errors.answer_status,
    stream_error=errors.stream_failed, stream_terminals=errors.TERMINALS,
    echo=echo.from_request, stores_state=True, compaction_kept=kept_messages, takes_passthrough=True,
    # Codex 0.169 retries a 503 with retry-after and code server_error 30 times, each after the
    # retry-after; a 429 without it never (docs/codex.md "Errors and retries"). No keep-alive:
    # a Responses stream has none (Codex's idle timer counts events).
    give_up=GiveUp(status=503, code="server_error"),
)

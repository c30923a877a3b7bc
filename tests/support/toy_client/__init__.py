"""A toy client dialect, defined outside the package: one folder is what a second client takes to
be served (docs/adding-a-dialect.md "A client dialect"; docs/architecture.md "The client side").

Its wire: `POST /toy/generate` with `{"model": ..., "prompt": "...", "stream": false}` answered
`{"text": "..."}`; with `"stream": true`, newline-delimited JSON (`application/x-ndjson`), one line
per text delta `{"delta": "..."}` and a last line `{"done": true, "text": "..."}`. Its errors:
`{"problem": {"status": N, "code": ..., "why": ...}}`. Registered by naming this module in
`$GATEWAY_DIALECTS`, which reads `CLIENT_DIALECT`; nothing else names it.
"""

from __future__ import annotations

from tests.support.toy_client import errors
from tests.support.toy_client.request import decode
from tests.support.toy_client.stream import ToyEncoder
from translators.client_dialects import ClientDialect

NAME = "toy"
PATH = "/toy/generate"
CONTENT_TYPE = "application/x-ndjson"

CLIENT_DIALECT = ClientDialect(
    name=NAME, label="Toy", decode=decode, encoder=ToyEncoder, error_body=errors.problem,
    refusal=errors.refusal, answer_status=errors.answer_status,
    stream_error=errors.stream_error, stream_content_type=CONTENT_TYPE,
    paths=(PATH,), turn_paths=(PATH,))

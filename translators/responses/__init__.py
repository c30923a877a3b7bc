"""OpenAI Responses as an upstream (the vendor); the Responses client dialect, which Codex speaks,
is `translators/responses_client/`.

To a Responses client it is the client's own wire: the body goes upstream as the client
wrote it (`passthrough.encode`), the stream is re-framed as it comes (`passthrough.Passthrough`),
whole answers and error bodies pass as they are, and the upstream keeps its own state. To
OpenAI's own hosts the client's own credentials go along when the route names no key.

For any other client (a Messages client, Claude Code) the same upstream is reached through the IR:
`upstream_request.encode` writes the Responses body and `upstream_stream` reads the answers
(docs/responses.md "As an upstream of other clients"). `translators/api.py` picks the passthrough
only for a client that speaks this wire (`ClientDialect.takes_passthrough`).
"""

from translators.dialect import Codec, CountEndpoint, Dialect, Passthrough, Vendor
from translators.responses import count, passthrough, upstream_request, upstream_stream
from translators.responses.view import VIEW

DIALECT = Dialect(
    name="responses",
    vendor=Vendor(
        display_name="Responses",
        genai_provider="openai",
        base_url="https://api.openai.com/v1",
        key_env=None,  # to OpenAI: the client's own credentials go along (addon/upstream/auth.py)
        client_credentials_hosts=("api.openai.com", "chatgpt.com"),
        # what OpenAI tells Codex about its own service: its model, plan usage, turn state
        client_headers=("openai-model",),
        client_header_prefixes=("x-codex-",),
        key_shapes=(r"sk-[A-Za-z0-9_-]{8,}",),  # OpenAI's keys (project keys: sk-proj-...)
    ),
    view=VIEW,
    passthrough=Passthrough(encode=passthrough.encode, stream=passthrough.Passthrough),
    codec=Codec(
        encode_request=upstream_request.encode,
        stream_decoder=upstream_stream.ResponsesUpstreamDecoder,
        response_events=upstream_stream.response_events,
        error_info=upstream_stream.error_info,
        count_tokens=CountEndpoint(encode=count.encode, parse=count.parse),
    ),
)

"""A toy vendor with a credential source of its own, defined outside the package the way a Vertex
AI dialect would be: this folder is all it takes, nothing in `addon/` names it (docs/adding-a-dialect.md).

"Tokenline" speaks the toy "lines" protocol (tests/support/toy_dialect.py: its codec and view are
reused, the wire is not the point here) but takes no API key: every request carries
`x-tokenline-signature`, an HMAC-SHA256 of the method, path and body bytes under a token that
the vendor's own credential source reads from the file `$TOKENLINE_TOKEN_FILE` names
(`credentials.py`), and `x-tokenline-token-id`, which token signed it (no secret). A route that
names a key signs with that key instead.

A mitmdump started with `GATEWAY_DIALECTS=tests.support.toy_vendor` imports it (addon/routes/plugins.py);
the suite's own process never registers it.
"""

from __future__ import annotations

from tests.support import toy_dialect
from tests.support.toy_vendor import credentials, signing
from translators.dialect import Codec, Dialect, Signing, Vendor

NAME = "tokenline"

DIALECT = Dialect(
    name=NAME,
    vendor=Vendor(
        display_name="Tokenline (toy)",
        base_url="https://api.tokenline.example",
        secret_headers=(signing.SIGNATURE,),
        stream_content_type="application/x-ndjson",
        capture_suffix="ndjson",
    ),
    signing=Signing(source=credentials.SOURCE, sign=signing.sign, what="Tokenline signatures"),
    view=toy_dialect.DIALECT.view,
    codec=Codec(
        encode_request=toy_dialect.encode,
        stream_decoder=lambda translation: toy_dialect.LinesDecoder(),
        response_events=toy_dialect.response_events,
        error_info=toy_dialect.error_info,
        capabilities=toy_dialect.capabilities,
    ),
)

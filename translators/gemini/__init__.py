"""Google Gemini API (`generateContent` / `streamGenerateContent`),
https://ai.google.dev/api/generate-content."""

from translators.dialect import Dialect
from translators.gemini.request import encode
from translators.gemini.response import error_info, response_events
from translators.gemini.stream import GeminiDecoder, seed_for

DIALECT = Dialect(
    name="gemini",
    encode_request=encode,
    stream_decoder=lambda translation: GeminiDecoder(seed_for(translation)),
    response_events=response_events,
    error_info=error_info,
)

"""Google Gemini API (`generateContent` / `streamGenerateContent`),
https://ai.google.dev/api/generate-content."""

from urllib.parse import quote

from translators.dialect import Dialect, ModelsEndpoint
from translators.gemini.models import capabilities, from_model
from translators.gemini.request import encode
from translators.gemini.response import error_info, response_events
from translators.gemini.stream import GeminiDecoder, seed_for

DIALECT = Dialect(
    name="gemini",
    encode_request=encode,
    stream_decoder=lambda translation: GeminiDecoder(seed_for(translation)),
    response_events=response_events,
    error_info=error_info,
    capabilities=capabilities,
    # models.get (docs/gemini.md "Models"): inputTokenLimit, outputTokenLimit, thinking
    models_endpoint=ModelsEndpoint(
        path=lambda model: f"/v1beta/models/{quote(model.removeprefix('models/'), safe='-._~')}",
        headers={}, parse=from_model),
)

"""Google Gemini API (`generateContent` / `streamGenerateContent`),
https://ai.google.dev/api/generate-content."""

from urllib.parse import quote

from translators.dialect import Codec, CountEndpoint, Dialect, ModelsEndpoint, Vendor
from translators.gemini import count, prices
from translators.gemini.models import capabilities, from_model
from translators.gemini.request import encode
from translators.gemini.response import error_info, response_events
from translators.gemini.stream import GeminiDecoder, seed_for
from translators.gemini.view import VIEW

DIALECT = Dialect(
    name="gemini",
    vendor=Vendor(
        display_name="Gemini",
        genai_provider="gcp.gemini",
        base_url="https://generativelanguage.googleapis.com",
        key_env="GEMINI_API_KEY",
        # docs/gemini.md "Endpoints and auth"
        key_headers=lambda key: {"x-goog-api-key": key},
        secret_headers=("x-goog-api-key", "authorization"),
        key_shapes=(r"AIza[0-9A-Za-z_-]{20,}",),  # Google API keys
    ),
    view=VIEW,
    codec=Codec(
        encode_request=encode,
        stream_decoder=lambda translation: GeminiDecoder(seed_for(translation)),
        response_events=response_events,
        error_info=error_info,
        capabilities=capabilities,
        # models.get (docs/gemini.md "Models"): inputTokenLimit, outputTokenLimit, thinking
        models_endpoint=ModelsEndpoint(
            path=lambda model: f"/v1beta/models/{quote(model.removeprefix('models/'), safe='-._~')}",
            headers={}, parse=from_model),
        count_tokens=CountEndpoint(encode=count.encode, parse=count.parse),
    ),
    prices=prices.price,
)

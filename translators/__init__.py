"""dialect-gateway translators: OpenAI Responses <-> Anthropic, Chat Completions, Gemini, Bedrock.

Pure: no network, no mitmproxy. See `api.py` for the four entry points.
"""

from translators.api import (
    PassthroughTranslator,
    StreamTranslator,
    stream_translator,
    translate_error,
    translate_request,
    translate_response,
)
from translators.core.errors import (
    MalformedRequest,
    Refused,
    TranslatorError,
    UnsupportedFeature,
    UpstreamProtocolError,
)
from translators.core.item_cache import ItemCache
from translators.core.translation import Translation, UpstreamError

__all__ = [
    "ItemCache", "MalformedRequest", "PassthroughTranslator", "Refused", "StreamTranslator", "Translation",
    "TranslatorError", "UnsupportedFeature", "UpstreamError", "UpstreamProtocolError", "stream_translator",
    "translate_error", "translate_request", "translate_response",
]

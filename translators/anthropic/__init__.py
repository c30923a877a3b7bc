"""Anthropic Messages (`POST /v1/messages`), https://docs.claude.com/en/api/messages."""

from urllib.parse import quote

from translators.anthropic import count, prices
from translators.anthropic.models import from_model_info
from translators.anthropic.request import API_VERSION, encode
from translators.anthropic.response import error_info, response_events
from translators.anthropic.stream import AnthropicDecoder
from translators.anthropic.view import VIEW
from translators.dialect import Codec, CountEndpoint, Dialect, ModelsEndpoint, Vendor
from translators.families.claude.models import lookup

DIALECT = Dialect(
    name="anthropic",
    vendor=Vendor(
        display_name="Anthropic Messages",
        genai_provider="anthropic",
        base_url="https://api.anthropic.com",
        key_env="ANTHROPIC_API_KEY",
        # docs/anthropic.md "Headers and auth"
        key_headers=lambda key: {"x-api-key": key},
        secret_headers=("x-api-key", "authorization"),
        key_shapes=(r"sk-ant-[A-Za-z0-9_-]{8,}",),
    ),
    view=VIEW,
    codec=Codec(
        encode_request=encode,
        stream_decoder=lambda translation: AnthropicDecoder(),
        response_events=response_events,
        error_info=error_info,
        capabilities=lookup,
        # GET /v1/models/{id} (docs/anthropic.md "Models and capabilities")
        models_endpoint=ModelsEndpoint(path=lambda model: f"/v1/models/{quote(model, safe='')}",
                                       headers={"anthropic-version": API_VERSION}, parse=from_model_info),
        count_tokens=CountEndpoint(encode=count.encode, parse=count.parse),
    ),
    prices=prices.price,
)

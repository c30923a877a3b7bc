"""Anthropic Messages (`POST /v1/messages`), https://docs.claude.com/en/api/messages."""

from translators.anthropic.request import encode
from translators.anthropic.response import error_info, response_events
from translators.anthropic.stream import AnthropicDecoder
from translators.dialect import Dialect

DIALECT = Dialect(
    name="anthropic",
    encode_request=encode,
    stream_decoder=lambda translation: AnthropicDecoder(),
    response_events=response_events,
    error_info=error_info,
)

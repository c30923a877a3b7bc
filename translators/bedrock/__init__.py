"""AWS Bedrock Converse / ConverseStream, https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html.

Requests are signed by the caller with `auth.sign` once the body bytes are final.
"""

from translators.bedrock.models import capabilities
from translators.bedrock.request import encode
from translators.bedrock.response import error_info, response_events
from translators.bedrock.stream import BedrockDecoder
from translators.dialect import Dialect

DIALECT = Dialect(
    name="bedrock",
    encode_request=encode,
    stream_decoder=lambda translation: BedrockDecoder(),
    response_events=response_events,
    error_info=error_info,
    capabilities=capabilities,
)

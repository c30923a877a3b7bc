"""AWS Bedrock Converse / ConverseStream, https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html.

Every request is signed once the body bytes are final (`auth.sign_request`, the dialect's signing
hook): a Bedrock API key, or SigV4 with the credentials of the dialect's own source, the AWS chain
(`credentials.py`), which the addon asks.
"""

from translators.bedrock import auth, count, credentials, prices
from translators.bedrock.models import capabilities
from translators.bedrock.request import encode
from translators.bedrock.response import error_info, response_events
from translators.bedrock.stream import BedrockDecoder
from translators.bedrock.view import VIEW
from translators.dialect import Codec, CountEndpoint, Dialect, Option, Settings, Signing, Vendor


def _base_url(settings: Settings) -> str:
    """Bedrock's public API in the configured region (docs/bedrock.md "Endpoint, signing and API keys")."""
    region = auth.configured_region(settings.options, settings.environ)
    return f"https://bedrock-runtime.{region}.amazonaws.com" if region else DIALECT.vendor.base_url


DIALECT = Dialect(
    name="bedrock",
    vendor=Vendor(
        display_name="Bedrock Converse",
        genai_provider="aws.bedrock",
        base_url="https://bedrock-runtime.us-east-1.amazonaws.com",
        key_env=auth.BEARER_ENV,
        secret_headers=("authorization", "x-amz-security-token"),
        key_shapes=(r"AKIA[0-9A-Z]{16}",),  # AWS access key ids
        # the AWS chain's secret access key, Bedrock's own API key
        secret_env=("*_SECRET_ACCESS_KEY", "AWS_BEARER_TOKEN*"),
        # any bedrock-runtime.{region}.amazonaws.com host (VPC endpoints included) is Bedrock's own
        own_host=lambda url: auth.region_from_url(url) is not None,
        base_url_for=_base_url,
        stream_content_type="application/vnd.amazon.eventstream",  # botocore itself sends no accept header
        capture_suffix="bin",
    ),
    options=(Option(auth.REGION_OPTION, str, "",
                    "AWS region Bedrock requests are signed for; empty: the region in a "
                    "bedrock-runtime.{region}.amazonaws.com base URL, else $AWS_REGION or "
                    "$AWS_DEFAULT_REGION.", check=auth.check_region),),
    environ=auth.REGION_ENV,
    signing=Signing(source=credentials.SOURCE, sign=auth.sign_request, what="AWS signatures"),
    view=VIEW,
    codec=Codec(
        encode_request=encode,
        stream_decoder=lambda translation: BedrockDecoder(),
        response_events=response_events,
        error_info=error_info,
        capabilities=capabilities,
        count_tokens=CountEndpoint(encode=count.encode, parse=count.parse),
    ),
    prices=prices.price,
)

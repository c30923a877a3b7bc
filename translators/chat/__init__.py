"""OpenAI Chat Completions and compatible servers (DeepSeek, vLLM, SGLang, Ollama, OpenRouter),
`POST {base}/chat/completions`, https://platform.openai.com/docs/api-reference/chat."""

from translators.chat import count
from translators.chat.models import capabilities
from translators.chat.request import encode
from translators.chat.response import error_info, response_events
from translators.chat.settings import OPTIONS
from translators.chat.stream import ChatDecoder
from translators.chat.view import VIEW
from translators.dialect import Codec, Dialect, Vendor

DIALECT = Dialect(
    name="chat",
    vendor=Vendor(
        display_name="Chat Completions",
        base_url="https://api.deepseek.com",  # docs/chat.md "DeepSeek": the default Chat upstream
        key_env="DEEPSEEK_API_KEY",
        key_shapes=(r"sk-[A-Za-z0-9_-]{8,}",),  # DeepSeek's keys, as OpenAI's
    ),
    view=VIEW,
    codec=Codec(
        encode_request=encode,
        stream_decoder=ChatDecoder,
        response_events=response_events,
        error_info=error_info,
        capabilities=capabilities,
        count_for=count.endpoint,  # the server's own /tokenize, where the route says it has one
    ),
    options=OPTIONS,
)

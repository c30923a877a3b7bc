"""What the operator states about a Chat route's server (docs/chat.md "Server settings").

Compatible servers accept different subsets of Chat Completions, and most cannot be told apart
from the request (the encoder sees the model name, never the base URL). Each fact below is a setting:
a mitmproxy option each (the default of every Chat route) and a `[[route]]` key each (one
route); the route's value reaches the encoder in `ModelCapabilities.extra` (`Option.route_key`).
"""

from __future__ import annotations

from typing import Literal, cast

from translators.core.capabilities import ModelCapabilities
from translators.dialect import Option

StructuredMode = Literal["json_schema", "json_object", "prompt"]

STRUCTURED_OUTPUT = "structured_output"
"""How `text.format` (a JSON schema) is written: `json_schema` (`response_format: {type:
json_schema, json_schema: {...}}`, OpenAI, vLLM, SGLang, Ollama, LM Studio, OpenRouter),
`json_object` (`{type: json_object, schema}`, llama-cpp-python and llama.cpp's server), `prompt`
(the schema in a system message, `{type: json_object}` JSON mode: DeepSeek), or `auto`."""
STRUCTURED_MODES = ("auto", "json_schema", "json_object", "prompt")

MESSAGE_PARTS = "message_parts"
"""`join`: `tool` messages (and `user` messages of text alone) carry one string, their text parts
joined (what every server takes; llama-cpp-python refuses a list there); `list`: several text
parts stay a list. The one `system` message is a string either way (docs/chat.md "System first")."""
PARTS_MODES = ("join", "list")

FILE_PARTS = "file_parts"
"""`drop`: a Responses `input_file` is reported dropped (most servers take no file part);
`openai`: the route's server takes OpenAI's own `{type: file, file: {file_data, filename}}` user
content part (docs/chat.md "Files")."""
FILE_MODES = ("drop", "openai")

TOP_K = "top_k_field"
"""Whether a `top_k` goes as Chat's `top_k`, an extension OpenAI's API refuses and DeepSeek's
does not list, which vLLM, SGLang, llama.cpp, LM Studio and OpenRouter take: `auto` (sent unless
the model is OpenAI's or DeepSeek's), `send`, `drop` (reported). Ollama's OpenAI endpoint ignores
the field: `drop` makes its report true (docs/chat.md "Sampling")."""
TOP_K_MODES = ("auto", "send", "drop")


CACHE_CONTROL = "cache_control"
"""The route's server takes Anthropic's `cache_control` on message text parts (OpenRouter, for
Claude and the other models it caches for): the gateway then places prompt-cache breakpoints
there (translators/chat/caching.py, docs/chat.md "Prompt caching"). Off by default: another
server may refuse the field, or a list where it wants a string."""
_TRUE = ("true", "True", True)
_FALSE = ("false", "False", False)

TOKENIZER = "tokenizer"
"""The route's server counts tokens with the model's own tokenizer at `POST /tokenize`: `none`
(the count is estimated), `llamacpp` (llama.cpp's server) or `vllm` (translators/chat/count.py,
docs/chat.md "Token counts")."""
TOKENIZERS = ("none", "llamacpp", "vllm")

_CHOICES = {STRUCTURED_OUTPUT: STRUCTURED_MODES, MESSAGE_PARTS: PARTS_MODES, FILE_PARTS: FILE_MODES,
            TOP_K: TOP_K_MODES, TOKENIZER: TOKENIZERS}
_HELP = {
    STRUCTURED_OUTPUT: "How a Chat route writes text.format: auto (json_schema; the schema in the "
                       "prompt for DeepSeek; json_object for a .gguf model), json_schema, json_object "
                       "(with the schema, as llama-cpp-python takes it), prompt",
    MESSAGE_PARTS: "Chat tool message content: join (one string) or list (the route's server "
                   "takes lists of text parts there; the system message is one string either way)",
    FILE_PARTS: "Chat user content files: drop (reported) or openai (the route's server takes "
                "OpenAI's file content part)",
    TOP_K: "Chat top_k (a Messages client's): auto (sent unless the model is OpenAI's or DeepSeek's), "
           "send, or drop (reported; for a server that ignores it, as Ollama does)",
    TOKENIZER: "Chat token counts: none (estimated), or the route's server's own POST /tokenize: "
               "llamacpp (llama.cpp's server) or vllm",
}


def problem(key: str, value: object, label: str | None = None) -> str | None:
    """What is wrong with a value for `key` (named `label` in the message), or None."""
    choices = _CHOICES[key]
    return None if value in choices else f"{label or key} {value!r}: write one of {', '.join(choices)}"


def _option(key: str) -> Option:
    name = f"gateway_chat_{key}"
    return Option(name=name, type=str, default=_CHOICES[key][0], route_key=key,
                  check=lambda value: problem(key, value, name),
                  help=f"{_HELP[key]} ({' | '.join(_CHOICES[key])}; per route in gateway_config: {key}).")


def _cache_problem(value: object, label: str) -> str | None:
    return None if value in _TRUE or value in _FALSE else f"{label} {value!r}: write true or false"


_CACHE_NAME = f"gateway_chat_{CACHE_CONTROL}"
_CACHE_OPTION = Option(name=_CACHE_NAME, type=bool, default=False, route_key=CACHE_CONTROL,
                       check=lambda value: _cache_problem(value, _CACHE_NAME),
                       help="Chat: the route's server takes Anthropic's cache_control on message text parts "
                            "(OpenRouter): place prompt-cache breakpoints there (per route in "
                            "gateway_config: cache_control = true).")

OPTIONS = (_option(STRUCTURED_OUTPUT), _option(MESSAGE_PARTS), _option(FILE_PARTS), _option(TOP_K),
           _CACHE_OPTION, _option(TOKENIZER))


def takes_cache_control(caps: ModelCapabilities) -> bool:
    return caps.extra.get(CACHE_CONTROL) in _TRUE


def chosen(caps: ModelCapabilities, key: str) -> str:
    """The route's value for `key` (`auto`/`join` when it states none)."""
    return caps.extra.get(key, _CHOICES[key][0])


def structured_mode(caps: ModelCapabilities, gguf: bool) -> StructuredMode | None:
    """The mode `text.format` is written in; None for a value no mode has (the caller refuses
    the request with a Responses-shaped error). `auto`: the prompt where the model takes no
    schema (DeepSeek, `caps.structured_output`), `json_object` for a GGUF file served by
    llama-cpp-python or llama.cpp, else `json_schema`."""
    mode = chosen(caps, STRUCTURED_OUTPUT)
    if mode == "auto":
        if not caps.structured_output:
            return "prompt"
        return "json_object" if gguf else "json_schema"
    return cast(StructuredMode, mode) if mode in STRUCTURED_MODES else None


def joins_parts(caps: ModelCapabilities) -> bool:
    return chosen(caps, MESSAGE_PARTS) != "list"


def takes_files(caps: ModelCapabilities) -> bool:
    return chosen(caps, FILE_PARTS) == "openai"


def sends_top_k(caps: ModelCapabilities, known_without: bool) -> bool:
    """Whether `top_k` is sent; `known_without`: the model's own API takes none (OpenAI, DeepSeek)."""
    mode = chosen(caps, TOP_K)
    return mode == "send" or (mode == "auto" and not known_without)

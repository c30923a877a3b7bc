"""What a Chat Completions server (`POST …/chat/completions`) refuses, as it words it. Three kinds of
server, told apart by the model name as the gateway's encoder does (docs/chat.md "Compatible servers"):

- OpenAI (`gpt-…`, `o1…`, `chatgpt-…`, `codex-…`): 400 `{"error": {"message", "type":
  "invalid_request_error", "param", "code"}}` (https://platform.openai.com/docs/api-reference/chat);
- DeepSeek: the same shape, `code: "invalid_request_error"` (https://api-docs.deepseek.com/quick_start/error_codes);
- an open-model server (vLLM, llama.cpp, SGLang serving Qwen, Llama, Mistral...): vLLM's 400
  `{"error": {"message", "type": "BadRequestError", "param": null, "code": 400}}`, its chat template
  refusing a `system` message anywhere but first (a switch: `system_first`).

docs/chat.md "Errors" and "Refusals" record the wordings.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import cache
from typing import Any

from openai.types.chat import ChatCompletionMessageParam
from pydantic import TypeAdapter

from tests.support.strict import JSON, Invalid, Refusal, parse_json, typed_error

_OPENAI = re.compile(r"^(gpt-(?!oss)|o\d|chatgpt-|codex-)", re.IGNORECASE)
_OPENAI_REASONING = re.compile(r"^(o\d|gpt-([5-9]|\d{2,})|codex-)", re.IGNORECASE)

# DeepSeek's output ranges: deepseek-chat 8K (https://api-docs.deepseek.com/quick_start/pricing,
# "MAX OUTPUT"), deepseek-reasoner [1, 65536] (its answer recorded in docs/chat.md "Refusals"), V4 384K.
DEEPSEEK_MAX = {"deepseek-chat": 8192, "deepseek-reasoner": 65_536, "deepseek-v4-flash": 393_216,
                "deepseek-v4-pro": 393_216}
# OpenAI's completion limits per model (https://platform.openai.com/docs/models: "Max output tokens").
OPENAI_MAX = (("gpt-4o-mini", 16_384), ("gpt-4o", 16_384), ("gpt-4.1", 32_768), ("gpt-5", 128_000),
              ("o3", 100_000), ("o4-mini", 100_000))
THINKING_BY_DEFAULT = ("deepseek-reasoner", "deepseek-v4-flash", "deepseek-v4-pro")
"""DeepSeek models that think unless `thinking: {type: disabled}` (docs/chat.md "DeepSeek")."""
MAX_TOOLS = 128
"""OpenAI: "A max of 128 functions are supported" (`tools`, API reference); DeepSeek's reference says
the same (https://api-docs.deepseek.com/api/create-chat-completion)."""
FUNCTION_NAME = re.compile(r"^[a-zA-Z0-9_-]+$")
"""`FunctionDefinition.name`: "a-z, A-Z, 0-9, underscores and dashes, maximum length of 64"
(openai/types/shared_params/function_definition.py)."""


def server_of(model: str) -> str:
    if _OPENAI.match(model):
        return "openai"
    return "deepseek" if "deepseek" in model.lower() else "open"


def template_refuses_late_system(model: str) -> bool:
    """The default of the switch: every server but OpenAI's applies a model's chat template (vLLM,
    llama.cpp), and several refuse a `system` message that is not the first (Qwen's: "System message
    must be at the beginning.", vllm-project/vllm#41114)."""
    return server_of(model) != "openai"


def refusal(server: str, message: str, param: str | None = None, code: str | None = None) -> Refusal:
    if server == "open":
        error: dict[str, Any] = {"message": message, "type": "BadRequestError", "param": param, "code": 400}
    elif server == "deepseek":
        error = {"message": message, "type": "invalid_request_error", "param": param,
                 "code": code or "invalid_request_error"}
    else:
        error = {"message": message, "type": "invalid_request_error", "param": param, "code": code}
    return 400, dict(JSON), json.dumps({"error": error}).encode()


def check(path: str, headers: Mapping[str, str], raw: bytes, *,
          system_first: bool | None = None) -> Refusal | None:
    try:
        body = parse_json(raw)
    except ValueError:
        return refusal("open", "We could not parse the JSON body of your request.")
    server = server_of(str(body.get("model", ""))) if isinstance(body, dict) else "open"
    try:
        _check(body, server, system_first)
    except Invalid as broken:
        return refusal(server, broken.message, broken.param, broken.code)
    return None


def _check(body: Any, server: str, system_first: bool | None) -> None:
    if not isinstance(body, dict):
        raise Invalid("Invalid request body: expected an object.")
    if "messages" not in body:
        raise Invalid("Missing required parameter: 'messages'.", "messages", "missing_required_parameter")
    messages = body["messages"]
    if not isinstance(messages, list) or not messages:
        raise Invalid("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an "
                      "empty array instead.", "messages", "empty_array")
    model = str(body.get("model", ""))
    for i, message in enumerate(messages):
        _message(i, message)
    _tools(body.get("tools") or [])
    _limits(body, model, server)
    if system_first if system_first is not None else template_refuses_late_system(model):
        _system_first(messages)
    _pairing(messages, server)
    if server == "deepseek":
        _deepseek(body, model, messages)


@cache
def _message_adapter() -> TypeAdapter[Any]:
    return TypeAdapter(ChatCompletionMessageParam)


def _message(i: int, message: Any) -> None:
    """Each message against the SDK's `ChatCompletionMessageParam` union
    (openai/types/chat/chat_completion_message_param.py), worded as OpenAI words a missing or
    mistyped field."""
    error = typed_error(_message_adapter(), message)
    if error is None:
        return
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"] if _named(p))
    param = f"messages[{i}]{where}"
    if error["type"] == "missing":
        raise Invalid(f"Missing required parameter: '{param}'.", param, "missing_required_parameter")
    raise Invalid(f"Invalid type for '{param}': {error['msg']}.", param, "invalid_type")


def _named(part: Any) -> bool:
    """A location part the API names: an index or a field, not a union member or a type name."""
    return isinstance(part, int) or not (part[:1].isupper() or "[" in part or part in ("str", "list"))


def _tools(tools: list[Any]) -> None:
    if len(tools) > MAX_TOOLS:
        raise Invalid(f"Invalid 'tools': array too long. Expected an array with maximum length {MAX_TOOLS}, "
                      f"but got an array with length {len(tools)} instead.", "tools",
                      "array_above_max_length")
    for n, tool in enumerate(tools):
        if not isinstance(tool, dict):
            continue
        kind = tool.get("type")
        name = (tool.get(kind) or {}).get("name", "") if kind in ("function", "custom") else ""
        param = f"tools[{n}].{kind}.name"
        if not FUNCTION_NAME.match(name):
            raise Invalid(f"Invalid '{param}': string does not match pattern. Expected a string that matches "
                          f"the pattern '{FUNCTION_NAME.pattern}'.", param, "invalid_value")
        if len(name) > 64:
            raise Invalid(f"Invalid '{param}': string too long. Expected a string with maximum length 64, "
                          f"but got a string with length {len(name)} instead.", param,
                          "string_above_max_length")


def _limits(body: dict[str, Any], model: str, server: str) -> None:
    key = "max_completion_tokens" if "max_completion_tokens" in body else "max_tokens"
    value = body.get(key)
    if server == "deepseek" and isinstance(value, int):
        limit = DEEPSEEK_MAX.get(model)
        if limit is not None and not 1 <= value <= limit:
            raise Invalid(f"Invalid max_tokens value, the valid range of max_tokens is [1, {limit}]")
    if server != "openai":
        return
    if _OPENAI_REASONING.match(model):
        # reasoning models: `max_tokens` is "not compatible with o-series models" (its docstring in
        # completion_create_params.py), and sampling is fixed
        if "max_tokens" in body:
            raise Invalid("Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                          "'max_completion_tokens' instead.", "max_tokens", "unsupported_parameter")
        if body.get("temperature", 1) != 1:
            raise Invalid(f"Unsupported value: 'temperature' does not support {body['temperature']} with "
                          "this model. Only the default (1) value is supported.", "temperature",
                          "unsupported_value")
    stop = body.get("stop")
    # `stop`: "Up to 4 sequences", "Not supported with reasoning models `o3` and `o4-mini`"
    # (completion_create_params.py)
    if stop is not None and model.startswith(("o3", "o4-mini")):
        raise Invalid("Unsupported parameter: 'stop' is not supported with this model.", "stop",
                      "unsupported_parameter")
    if isinstance(stop, list) and len(stop) > 4:
        raise Invalid("Invalid 'stop': array too long. Expected an array with maximum length 4, but got an "
                      f"array with length {len(stop)} instead.", "stop", "array_above_max_length")
    limit = next((n for prefix, n in OPENAI_MAX if model.startswith(prefix)), None)
    if limit is not None and isinstance(value, int) and value > limit:
        raise Invalid(f"{key} is too large: {value}. This model supports at most {limit} completion tokens, "
                      f"whereas you provided {value}.", key, "invalid_value")


def _system_first(messages: list[dict[str, Any]]) -> None:
    """A chat template that takes one system message, first (Qwen's: `{%- if not loop.first %}
    {{- raise_exception('System message must be at the beginning.') }}`): vLLM answers its
    exception as a 400 (vllm-project/vllm#41114, docs/chat.md "Refusals")."""
    for i, message in enumerate(messages):
        if message.get("role") == "system" and i > 0:
            raise Invalid("System message must be at the beginning.")


def _pairing(messages: list[dict[str, Any]], server: str) -> None:
    """A `tool` message answers a call of the assistant message right before the run of tool
    messages it is in, and an assistant message with `tool_calls` is followed by one tool message per
    call before anything else (docs/chat.md "Refusals" records both wordings)."""
    pending: list[str] = []
    calls: set[str] = set()
    for i, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            if message.get("tool_call_id") not in calls:
                raise Invalid(_orphan(server), f"messages.[{i}].role")
            pending = [c for c in pending if c != message.get("tool_call_id")]
            continue
        if pending:
            raise Invalid(_unanswered(server, pending), f"messages.[{i - 1}].role")
        ids = [c.get("id") for c in message.get("tool_calls") or [] if isinstance(c, dict)]
        calls, pending = (set(ids), list(ids)) if role == "assistant" else (set(), [])
    if pending:
        raise Invalid(_unanswered(server, pending), f"messages.[{len(messages) - 1}].role")


def _orphan(server: str) -> str:
    if server == "openai":
        return ("Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
                "with 'tool_calls'.")
    return "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'"


def _unanswered(server: str, pending: list[str]) -> str:
    head = ("An assistant message with 'tool_calls' must be followed by tool messages responding to each "
            "'tool_call_id'.")
    if server == "deepseek":
        return f"{head} (insufficient tool messages following tool_calls message)"
    return f"{head} The following tool_call_ids did not have response messages: {', '.join(pending)}"


def _deepseek(body: dict[str, Any], model: str, messages: list[dict[str, Any]]) -> None:
    """DeepSeek's own refusals (docs/chat.md "DeepSeek")."""
    fmt = (body.get("response_format") or {}).get("type")
    if fmt not in (None, "text", "json_object"):  # JSON Output takes json_object only (guides/json_mode)
        raise Invalid("This response_format type is unavailable now")
    for i, message in enumerate(messages):
        content = message.get("content")
        for part in content if isinstance(content, list) else []:
            if isinstance(part, dict) and part.get("type") not in ("text", None):
                raise Invalid(f"Failed to deserialize the JSON body into the target type: messages[{i}]: "
                              f"unknown variant `{part.get('type')}`, expected `text`")
    thinking = (body.get("thinking") or {}).get("type")
    thinks = thinking == "enabled" or (thinking is None and model in THINKING_BY_DEFAULT)
    if not thinks:
        return
    # thinking mode: an assistant message with tool calls carries its `reasoning_content` back
    # (https://api-docs.deepseek.com/guides/thinking_mode)
    for message in messages:
        calls = message.get("role") == "assistant" and message.get("tool_calls")
        if calls and "reasoning_content" not in message:
            raise Invalid("The `reasoning_content` in the thinking mode must be passed back to the API.")

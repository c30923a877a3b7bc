"""What Anthropic's Messages API (`POST /v1/messages`, `/v1/messages/count_tokens`) refuses, as it
words it: 400 `{"type": "error", "error": {"type": "invalid_request_error", "message"}}`
(https://platform.claude.com/docs/en/api/errors; docs/anthropic.md "Errors", "Refusals").

Each rule names its source: the API reference (https://platform.claude.com/docs/en/api/messages),
the installed SDK's types (anthropic/types/...), a model page, or the docs/ section where the
vendor's wording is recorded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from functools import cache, lru_cache
from typing import Any, get_args, get_origin, get_type_hints

from anthropic.types import message_count_tokens_params, message_create_params
from anthropic.types.beta import message_count_tokens_params as beta_count_params
from anthropic.types.beta import message_create_params as beta_create_params
from jsonschema import Draft202012Validator, SchemaError
from pydantic import TypeAdapter

from tests.support.strict import JSON, Invalid, Issued, Refusal, parse_json, sse_payloads, typed_error

# Max output tokens per model family, longest id prefix first: the "Max output" of each model's
# page (https://platform.claude.com/docs/en/models/<model>/overview) and of the models overview
# (https://platform.claude.com/docs/en/about-claude/models/overview).
MAX_OUTPUT: dict[str, int] = {
    "claude-3-haiku": 4096, "claude-3-opus": 4096,
    "claude-3-5-haiku": 8192, "claude-3-5-sonnet": 8192,
    "claude-3-7-sonnet": 64_000,
    "claude-sonnet-4": 64_000, "claude-opus-4": 32_000, "claude-opus-4-1": 32_000,
    "claude-haiku-4-5": 64_000, "claude-sonnet-4-5": 64_000, "claude-opus-4-5": 64_000,
    "claude-sonnet-4-6": 128_000, "claude-opus-4-6": 128_000,
    "claude-opus-4-7": 128_000, "claude-opus-4-8": 128_000,
    "claude-sonnet-5": 128_000, "claude-sonnet-5-5": 128_000,
    "claude-opus-5": 128_000, "claude-opus-5-5": 128_000,
    "claude-fable-5": 128_000, "claude-fable-5-1": 128_000,
}

# Models that take only `thinking.type: adaptive`: a request with `enabled` is refused
# (docs/anthropic.md "Thinking and effort", the models' pages: "Manual extended thinking ... not
# supported").
ADAPTIVE_ONLY = ("claude-opus-4-7", "claude-opus-4-8", "claude-sonnet-5", "claude-opus-5",
                 "claude-fable-5", "claude-mythos-5")

# Models that refuse `temperature` and `top_p` in one request: every model from Opus 4.1 on
# (docs/anthropic.md "Thinking and effort": reported for Sonnet 4.5 and 4.6, on the API and on Bedrock).
ONE_SAMPLING_KNOB = re.compile(
    r"^claude-(opus-4-[1-9]|(sonnet|haiku|opus)-4-[5-9]|(sonnet|haiku|opus|fable|mythos)-[5-9])")

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
"""Custom tool names (https://platform.claude.com/docs/en/agents-and-tools/tool-use/define-tools;
docs/anthropic.md "Tool names")."""

THINKING_DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
_PINNED_VERSION_KEYS = frozenset({"temperature", "top_p", "top_k"})


def warm() -> None:
    for counting in (False, True):
        for beta in (False, True):
            for stream in (False, True):
                _adapter(_params(counting, beta, stream))


def family(model: str) -> str | None:
    """The longest table key `model` is, or starts with followed by `-` (a date, `-latest`)."""
    best = None
    for key in MAX_OUTPUT:
        if (model == key or model.startswith(key + "-")) and (best is None or len(key) > len(best)):
            best = key
    return best


def refusal(message: str, status: int = 400) -> Refusal:
    kind = "invalid_request_error" if status == 400 else "not_found_error"
    body = {"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_strictfake"}
    return status, dict(JSON), json.dumps(body).encode()


def check(path: str, headers: Mapping[str, str], body: bytes, *, issued: Issued) -> Refusal | None:
    try:
        _check(path, {k.lower(): v for k, v in headers.items()}, body, issued)
    except Invalid as broken:
        return refusal(broken.message, broken.status)
    return None


def _check(path: str, headers: Mapping[str, str], raw: bytes, issued: Issued) -> None:
    # "anthropic-version: header is required" (https://platform.claude.com/docs/en/api/versioning)
    if "anthropic-version" not in headers:
        raise Invalid("anthropic-version: header is required")
    try:
        body = parse_json(raw)
    except ValueError:
        raise Invalid("There was an error parsing the body of your request.") from None
    if not isinstance(body, dict):
        raise Invalid("Input should be a valid dictionary")
    counting = path.split("?", 1)[0].endswith("/count_tokens")
    beta = "anthropic-beta" in headers or "beta=true" in path
    _shape(body, counting, beta, headers.get("anthropic-version", ""))
    messages = body["messages"]
    if not messages:  # the API reference: "messages" holds at least one message
        raise Invalid("messages: at least one message is required")
    _tools(body.get("tools") or [])
    _content(messages)
    _cache_breakpoints(body)
    _pairing(messages)
    if counting:
        return
    model = str(body.get("model", ""))
    _limits(body, model)
    _thinking(body, model, messages)
    _signatures(messages, issued)


# -- the body's shape: the SDK's own description of the request ----------------------------------
def _params(counting: bool, beta: bool, stream: bool) -> type:
    if counting:
        return (beta_count_params if beta else message_count_tokens_params).MessageCountTokensParams
    params = beta_create_params if beta else message_create_params
    return params.MessageCreateParamsStreaming if stream else params.MessageCreateParamsNonStreaming


@cache
def _adapter(params: type) -> TypeAdapter[Any]:
    return TypeAdapter(params)


@cache
def _keys(params: type) -> frozenset[str]:
    return frozenset(get_type_hints(params))


@cache
def _tag(member: str) -> str | None:
    """The `type` tag of an SDK block class (`ToolUseBlockParam` -> `tool_use`)."""
    import anthropic.types as plain
    import anthropic.types.beta as beta
    found = getattr(plain, member, None) or getattr(beta, member, None)
    try:
        literal = get_type_hints(found)["type"] if found is not None else None
    except (KeyError, TypeError):
        return None
    args = get_args(get_args(literal)[0]) if get_args(literal) and get_origin(get_args(literal)[0]) else \
        get_args(literal)
    return str(args[0]) if args and isinstance(args[0], str) else None


def _where(loc: tuple[Any, ...]) -> str:
    """pydantic's location as the API prints it (`messages.3.content.0.tool_use.input`): a union
    member is named by its `type` tag, other type names (`list[...]`, `str`) are left out."""
    parts = []
    for item in loc:
        text = str(item)
        if isinstance(item, int) or (re.fullmatch(r"[a-z_][a-z0-9_]*", text) and text not in ("str", "list")):
            parts.append(text)
        elif text[:1].isupper() and (tag := _tag(text)) is not None:
            parts.append(tag)
    return ".".join(parts)


def _shape(body: dict[str, Any], counting: bool, beta: bool, version: str) -> None:
    """The request against the SDK's `MessageCreateParams` (anthropic/types/message_create_params.py,
    the beta one when an `anthropic-beta` header is sent): the API answers a field of the wrong type
    or a missing required field as pydantic words it, `<path>: <message>`, and refuses keys it does
    not know ("Extra inputs are not permitted"). `temperature`/`top_p`/`top_k` exist until
    anthropic-version 2026-10-21 (docs/anthropic.md "Versions")."""
    params = _params(counting, beta, bool(body.get("stream")))
    if (error := typed_error(_adapter(params), body)) is not None:
        raise Invalid(f"{_where(error['loc'])}: {error['msg']}")
    known = _keys(params) | (_PINNED_VERSION_KEYS if version != "2026-10-21" else frozenset())
    if extra := sorted(set(body) - known):
        raise Invalid(f"{extra[0]}: Extra inputs are not permitted")


# -- tools --------------------------------------------------------------------------------------
@lru_cache(maxsize=1024)
def _valid_schema(schema: str) -> bool:
    """Checking a schema against the 2020-12 metaschema costs milliseconds; a session sends the
    same tools on every turn."""
    try:
        Draft202012Validator.check_schema(json.loads(schema))
    except SchemaError:
        return False
    return True


def _tools(tools: list[Any]) -> None:
    seen: set[str] = set()
    for n, tool in enumerate(tools):
        if not isinstance(tool, dict) or "input_schema" not in tool:
            continue  # an Anthropic-defined or server tool: its own shape, checked by the SDK types
        name = tool.get("name", "")
        # `ToolParam.name` (anthropic/types/tool_param.py) and its documented pattern
        if not TOOL_NAME.match(name):
            raise Invalid(f"tools.{n}.custom.name: String should match pattern '{TOOL_NAME.pattern}'")
        if name in seen:  # "Tool names must be unique" (API reference, `tools`)
            raise Invalid("tools: Tool names must be unique.")
        seen.add(name)
        schema = tool["input_schema"]
        # `InputSchema.type: Required[Literal["object"]]` (anthropic/types/tool_param.py)
        if not isinstance(schema, dict) or schema.get("type") != "object":
            raise Invalid(f"tools.{n}.custom.input_schema.type: Input should be 'object'")
        # the schema must be valid JSON Schema draft 2020-12 (`ToolParam.input_schema` doc)
        if not _valid_schema(json.dumps(schema, sort_keys=True)):
            raise Invalid(f"tools.{n}.custom.input_schema: JSON schema is invalid. It must match JSON Schema "
                          "draft 2020-12 (https://json-schema.org/draft/2020-12). Learn more about tool use "
                          "at https://docs.claude.com/en/docs/tool-use.")


# -- content ----------------------------------------------------------------------------------------
def _content(messages: list[dict[str, Any]]) -> None:
    """Empty text and empty messages (their wordings in docs/anthropic.md "Refusals")."""
    last = len(messages) - 1
    for i, message in enumerate(messages):
        content = message.get("content")
        if not content and not (i == last and message.get("role") == "assistant"):
            raise Invalid(f"messages.{i}: all messages must have non-empty content except for the optional "
                          "final assistant message")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "text" and block.get("text") == "":
                raise Invalid("messages: text content blocks must be non-empty")


def _marked(value: Any) -> int:
    """Blocks that carry `cache_control`, at any depth (a tool result's own blocks count)."""
    if isinstance(value, list):
        return sum(_marked(item) for item in value)
    if isinstance(value, dict):
        own = 1 if value.get("cache_control") else 0
        nested = ("content", "system", "tools", "messages")
        return own + sum(_marked(value[key]) for key in nested if key in value)
    return 0


def _cache_breakpoints(body: dict[str, Any]) -> None:
    """At most four cache breakpoints per request
    (https://platform.claude.com/docs/en/build-with-claude/prompt-caching)."""
    found = _marked(body.get("tools")) + _marked(body.get("system")) + _marked(body.get("messages"))
    if found > 4:
        raise Invalid(f"A maximum of 4 blocks with cache_control may be provided. Found {found}.")


# -- tool_use / tool_result pairing ----------------------------------------------------------------
def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


Located = list[tuple[int, int, dict[str, Any]]]
"""[(message index, block index, block)]."""


def _turns(messages: list[dict[str, Any]]) -> Iterator[tuple[int, str, Located]]:
    """Consecutive messages of one role are one turn ("Consecutive `user` or `assistant` turns in
    your request will be combined into a single turn", `messages` in message_create_params.py):
    (index of its first message, role, [(message index, block index, block)])."""
    turn: Located = []
    first, role = 0, None
    for i, message in enumerate(messages):
        if message["role"] != role and role is not None:
            yield first, role, turn
            turn = []
        if message["role"] != role:
            first, role = i, message["role"]
        turn += [(i, j, block) for j, block in enumerate(_blocks(message))]
    if role is not None:
        yield first, role, turn


def _pairing(messages: list[dict[str, Any]]) -> None:
    """docs/anthropic.md "Conversation rules": every `tool_use` gets its `tool_result` in the very next
    (user) turn, those results come first in it, and no result stands without its `tool_use`."""
    turns = list(_turns(messages))
    for n, (_, role, blocks) in enumerate(turns):
        if role != "user":
            continue
        previous = turns[n - 1] if n else None
        calls = {b["id"] for _, _, b in previous[2] if b.get("type") == "tool_use"} if previous else set()
        for i, j, block in blocks:
            if block.get("type") == "tool_result" and block.get("tool_use_id") not in calls:
                raise Invalid(f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` "
                              f"blocks: {block.get('tool_use_id')}. Each `tool_result` block must have a "
                              "corresponding `tool_use` block in the previous message.")
    for n, (_, role, blocks) in enumerate(turns):
        calls = [b["id"] for _, _, b in blocks if b.get("type") == "tool_use"]
        if role != "assistant" or not calls:
            continue
        following = turns[n + 1][2] if n + 1 < len(turns) else []
        leading: set[str] = set()
        for _, _, block in following:  # the results that open the next turn
            if block.get("type") != "tool_result":
                break
            leading.add(block.get("tool_use_id"))
        if missing := [c for c in calls if c not in leading]:
            at = max(i for i, _, _ in blocks)
            raise Invalid(f"messages.{at}: `tool_use` ids were found without `tool_result` blocks "
                          f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
                          "corresponding `tool_result` block in the next message.")


# -- output limit and sampling --------------------------------------------------------------------
def _limits(body: dict[str, Any], model: str) -> None:
    max_tokens = body.get("max_tokens")
    row = family(model)
    if row is not None and isinstance(max_tokens, int) and max_tokens > MAX_OUTPUT[row]:
        # the model page's "Max output"; wording recorded in docs/anthropic.md "Refusals"
        raise Invalid(f"max_tokens: {max_tokens} > {MAX_OUTPUT[row]}, which is the maximum allowed number of "
                      f"output tokens for {model}")
    if ONE_SAMPLING_KNOB.match(model) and "temperature" in body and "top_p" in body:
        raise Invalid("`temperature` and `top_p` cannot both be specified for this model. Please use only "
                      "one.")


def _thinking(body: dict[str, Any], model: str, messages: list[dict[str, Any]]) -> None:
    """docs/anthropic.md "Thinking and effort" and "Conversation rules"."""
    thinking = body.get("thinking") or {}
    kind = thinking.get("type")
    if kind == "enabled":
        budget = thinking.get("budget_tokens", 0)
        # "budget_tokens ... Must be ≥1024 and less than `max_tokens`" (ThinkingConfigEnabledParam)
        if budget < 1024:
            raise Invalid("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
        if budget >= body.get("max_tokens", 0):
            raise Invalid("`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our "
                          f"documentation at {THINKING_DOCS}#max-tokens-and-context-window-size")
        if model.startswith(ADAPTIVE_ONLY):
            raise Invalid('"thinking.type.enabled" is not supported for this model. Use '
                          '"thinking.type.adaptive" and "output_config.effort" to control thinking behavior.')
    thinks = kind in ("enabled", "adaptive")
    if thinks and body.get("temperature", 1) != 1:
        raise Invalid("temperature may only be set to 1 when thinking is enabled or in adaptive mode. "
                      f"Please consult our documentation at {THINKING_DOCS}#feature-compatibility")
    if thinks and (body.get("tool_choice") or {}).get("type") in ("any", "tool"):
        raise Invalid("Thinking may not be enabled when tool_choice forces tool use.")
    last = messages[-1]
    if last["role"] == "assistant":
        final = _blocks(last)
        if not thinks and any(b.get("type") in ("thinking", "redacted_thinking") for b in final):
            raise Invalid(f"messages.{len(messages) - 1}.content.0: When thinking is disabled, an "
                          "`assistant` message in the final position cannot contain `thinking`. To use "
                          "thinking blocks, enable `thinking` in your request.")
        if final and final[-1].get("type") == "thinking":
            raise Invalid(f"messages.{len(messages) - 1}: The final block in an assistant message cannot be "
                          "`thinking`.")
    if kind == "enabled":
        _thinking_first(messages)


def _thinking_first(messages: list[dict[str, Any]]) -> None:
    """With thinking on, the assistant turn that holds the lastmost `tool_use` (the one the final
    user turn answers with `tool_result`s) must open with its thinking, as the model wrote it."""
    turns = list(_turns(messages))
    if len(turns) < 2 or turns[-1][1] != "user":
        return
    answers = turns[-1][2]
    if not answers or answers[0][2].get("type") != "tool_result":
        return
    _, role, blocks = turns[-2]
    if role != "assistant" or not blocks:
        return
    i, j, first = blocks[0]
    if first.get("type") not in ("thinking", "redacted_thinking"):
        raise Invalid(f"messages.{i}.content.{j}.type: Expected `thinking` or `redacted_thinking`, but found "
                      f"`{first.get('type')}`. When `thinking` is enabled, a final `assistant` message must "
                      "start with a thinking block (preceeding the lastmost set of `tool_use` and "
                      "`tool_result` blocks). We recommend you include thinking blocks from previous turns. "
                      "To avoid this requirement, disable `thinking`. Please consult our documentation at "
                      f"{THINKING_DOCS}")


def _signatures(messages: list[dict[str, Any]], issued: Issued) -> None:
    """Thinking blocks come back unmodified: a signature the API never issued, or issued for other
    text, is refused, in any turn (`ThinkingBlockParam` doc; docs/anthropic.md "Conversation rules")."""
    for i, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        for j, block in enumerate(_blocks(message)):
            if block.get("type") == "thinking":
                signature = block.get("signature")
                if signature not in issued.thinking or issued.thinking[signature] != block.get("thinking"):
                    raise Invalid(f"messages.{i}.content.{j}: Invalid `signature` in `thinking` block")
            elif block.get("type") == "redacted_thinking" and block.get("data") not in issued.redacted:
                raise Invalid(f"messages.{i}.content.{j}: Invalid `data` in `redacted_thinking` block")


# -- what an answer hands out -----------------------------------------------------------------------
def issued_in(answer: bytes) -> Issued:
    """The thinking signatures (with the text each signs) and redacted-thinking data of a Messages
    answer: an SSE stream (`thinking_delta`s then one `signature_delta` per block) or a whole
    message."""
    out = Issued()
    texts: dict[int, list[str]] = {}
    for payload in sse_payloads(answer):
        if not isinstance(payload, dict):
            continue
        if payload.get("type") == "message":  # a whole answer
            for block in payload.get("content") or []:
                _keep(out, block, block.get("thinking", ""))
            continue
        index = payload.get("index", 0)
        if payload.get("type") == "content_block_start":
            block = payload.get("content_block") or {}
            texts[index] = [block.get("thinking", "")] if block.get("type") == "thinking" else []
            if block.get("type") == "redacted_thinking":
                out.redacted.add(block.get("data", ""))
            elif block.get("type") == "thinking" and block.get("signature"):
                out.thinking[block["signature"]] = block.get("thinking", "")
        elif payload.get("type") == "content_block_delta":
            delta = payload.get("delta") or {}
            if delta.get("type") == "thinking_delta":
                texts.setdefault(index, []).append(delta.get("thinking", ""))
            elif delta.get("type") == "signature_delta":
                out.thinking[delta.get("signature", "")] = "".join(texts.get(index, []))
    return out


def _keep(out: Issued, block: Any, text: str) -> None:
    if not isinstance(block, dict):
        return
    if block.get("type") == "thinking":
        out.thinking[block.get("signature", "")] = text
    elif block.get("type") == "redacted_thinking":
        out.redacted.add(block.get("data", ""))

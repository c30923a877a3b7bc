"""Strict fakes: what each vendor's real service refuses, refused the way that service words it
(docs/strict-fakes.md).

One validator module per vendor (`anthropic`, `chat`, `gemini`, `bedrock`, `responses`), each a pure
function `check(path, headers, body, ...) -> Refusal | None`, every rule citing its source (the
vendor's API reference, the installed SDK's types, or the docs/ page that records the wording).
`check` below picks the vendor by the request path; every local upstream of the suite calls it
before its script (`tests/support/loopback_http.py`), so every e2e and reliability test runs
against fakes that refuse what the real service refuses.

Some rules need to know what the fake itself handed out before (a thinking block's signature, a
Gemini thought signature, an encrypted reasoning item): the fake keeps an `Issued` record of its
own answers (`issued_from`) and passes it in.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter, ValidationError

Refusal = tuple[int, dict[str, str], bytes]
"""(status, headers, body) of the vendor's own error answer."""

JSON = {"content-type": "application/json"}


class Invalid(Exception):
    """One rule broken: the vendor's words for it, and the parameter it names (where it names one)."""

    def __init__(self, message: str, param: str | None = None, code: str | None = None,
                 status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        self.code = code
        self.status = status


@dataclass
class Issued:
    """What a fake handed out that its vendor checks when it comes back."""

    thinking: dict[str, str] = field(default_factory=dict)
    """Signature -> the thinking text it signs (Anthropic `thinking` blocks, Bedrock Claude's
    `reasoningContent.reasoningText`)."""
    redacted: set[str] = field(default_factory=set)
    """Anthropic `redacted_thinking.data`, Bedrock `reasoningContent.redactedContent`."""
    thought_signatures: set[str] = field(default_factory=set)
    """Gemini `thoughtSignature`s."""
    encrypted: set[str] = field(default_factory=set)
    """OpenAI Responses reasoning `encrypted_content`."""

    def add(self, other: Issued) -> None:
        self.thinking.update(other.thinking)
        self.redacted |= other.redacted
        self.thought_signatures |= other.thought_signatures
        self.encrypted |= other.encrypted

    def copy(self) -> Issued:
        return Issued(dict(self.thinking), set(self.redacted), set(self.thought_signatures),
                      set(self.encrypted))


@dataclass(frozen=True)
class Strictness:
    """How strict one fake is. `enabled=False` turns every rule off (a test of the gateway's own
    refusal that must reach the fake with a body no vendor takes)."""

    enabled: bool = True
    chat_system_first: bool | None = None
    """A Chat fake whose server applies a chat template that refuses a `system` message anywhere
    but first (vLLM/llama.cpp serving Qwen, Mistral...). None: on for every model but OpenAI's own
    (`chat.template_refuses_late_system`)."""


_warm = False


def warm() -> None:
    """Import every validator and build its SDK types once per process, before a fake serves: the
    vendors' SDKs take seconds to import, which a first request must not wait for (a load test's
    first round, a client's timeout)."""
    global _warm
    if _warm:
        return
    from tests.support.strict import anthropic, bedrock, chat, gemini, responses
    anthropic.warm()
    hi = {"role": "user", "content": "hi"}
    parts = {"parts": [{"text": "hi"}]}
    gemini_body = {"contents": [{"role": "user", **parts}], "tools": [{"functionDeclarations": []}],
                   "toolConfig": {}, "generationConfig": {}, "systemInstruction": parts}
    headers = {"anthropic-version": "2023-06-01"}
    anthropic.check("/v1/messages", headers, json.dumps(
        {"model": "claude-sonnet-4-5", "max_tokens": 5, "messages": [hi]}).encode(), issued=Issued())
    chat.check("/chat/completions", headers, json.dumps({"model": "qwen3", "messages": [hi]}).encode())
    gemini.check("/v1beta/models/gemini-2.5-flash:generateContent", headers, json.dumps(gemini_body).encode(),
                 issued=Issued())
    bedrock.check("/model/amazon.nova-pro-v1:0/converse", headers, json.dumps(
        {"messages": [{"role": "user", "content": [{"text": "hi"}]}]}).encode(), issued=Issued())
    responses.check("/v1/responses", headers, json.dumps({"model": "gpt-5.5", "input": "hi"}).encode(),
                    issued=Issued())
    _warm = True


def vendor_of(method: str, path: str) -> str | None:
    """The vendor whose model endpoint this request is for, by its path (None: not a model call,
    e.g. a models-endpoint GET or a CONNECT)."""
    if method != "POST":
        return None
    bare = path.split("?", 1)[0]
    if "/chat/completions" in bare:
        return "chat"
    if bare.endswith(("/v1/messages", "/v1/messages/count_tokens")):
        return "anthropic"
    if any(verb in bare for verb in (":generateContent", ":streamGenerateContent", ":countTokens")):
        return "gemini"
    if bare.startswith("/model/") and bare.endswith(("/converse", "/converse-stream", "/count-tokens")):
        return "bedrock"
    if bare.endswith(("/responses", "/responses/compact", "/responses/input_tokens")):
        return "responses"
    return None


def check(method: str, path: str, headers: Mapping[str, str], body: bytes, *,
          issued: Issued | None = None, strictness: Strictness = Strictness()) -> Refusal | None:
    """The refusal the real service gives this request, or None when it takes it."""
    vendor = vendor_of(method, path)
    if vendor is None or not strictness.enabled:
        return None
    seen = issued if issued is not None else Issued()
    if vendor == "anthropic":
        from tests.support.strict import anthropic
        return anthropic.check(path, headers, body, issued=seen)
    if vendor == "chat":
        from tests.support.strict import chat
        return chat.check(path, headers, body, system_first=strictness.chat_system_first)
    if vendor == "gemini":
        from tests.support.strict import gemini
        return gemini.check(path, headers, body, issued=seen)
    if vendor == "bedrock":
        from tests.support.strict import bedrock
        return bedrock.check(path, headers, body, issued=seen)
    from tests.support.strict import responses
    return responses.check(path, headers, body, issued=seen)


def issued_from(method: str, path: str, content_type: str, answer: bytes) -> Issued:
    """What the fake's answer (its body, de-chunked) to this request hands out."""
    vendor = vendor_of(method, path)
    if vendor == "anthropic":
        from tests.support.strict import anthropic
        return anthropic.issued_in(answer)
    if vendor == "bedrock":
        from tests.support.strict import bedrock
        return bedrock.issued_in(answer, content_type)
    if vendor == "gemini":
        from tests.support.strict import gemini
        return gemini.issued_in(answer)
    if vendor == "responses":
        from tests.support.strict import responses
        return responses.issued_in(answer)
    return Issued()


def parse_json(body: bytes) -> Any:
    """The body as JSON; raises `ValueError` when it is not."""
    return json.loads(body.decode("utf-8"))


def sse_payloads(answer: bytes) -> list[Any]:
    """The JSON payloads of an SSE body's `data:` lines (whatever the line endings); a whole JSON
    body is one payload."""
    text = answer.decode("utf-8", "replace").strip()
    if text.startswith(("{", "[")):
        try:
            whole = json.loads(text)
        except ValueError:
            pass
        else:
            return whole if isinstance(whole, list) else [whole]
    payloads = []
    for line in text.replace("\r\n", "\n").split("\n"):
        if line.startswith("data:"):
            try:
                payloads.append(json.loads(line[5:]))
            except ValueError:
                continue
    return payloads


def typed_error(adapter: TypeAdapter[Any], value: Any) -> dict[str, Any] | None:
    """The first thing an SDK type refuses in `value` (a pydantic error, its `loc` from the top),
    or None. pydantic checks an `Iterable[...]` field (every content list of the SDKs' TypedDicts)
    only as it is iterated, so the validated value is walked and each one iterated. Of a plain
    union's errors, those of the member whose `type` tag matched are kept."""
    try:
        _walk(adapter.validate_python(value), ())
    except _Failed as failed:
        return failed.error
    except ValidationError as failed:
        return _best(failed, ())
    return None


class _Failed(Exception):
    def __init__(self, error: dict[str, Any]) -> None:
        self.error = error


def _best(failed: ValidationError, prefix: tuple[Any, ...]) -> dict[str, Any]:
    groups: dict[str | None, list[Any]] = {}
    for error in failed.errors():
        member = next((p for p in error["loc"] if isinstance(p, str) and p[:1].isupper()), None)
        groups.setdefault(member, []).append(error)
    matching = [g for g in groups.values()
                if not any(e["loc"][-1] in ("type", "role") and e["type"] == "literal_error" for e in g)]
    error = dict(min(matching or list(groups.values()), key=len)[0])
    error["loc"] = prefix + tuple(error["loc"])
    return error


def _walk(value: Any, where: tuple[Any, ...]) -> None:
    if isinstance(value, Iterator):  # pydantic's lazy ValidatorIterator
        n = 0
        while True:
            try:
                item = next(value)
            except StopIteration:
                return
            except ValidationError as failed:
                raise _Failed(_best(failed, where)) from None
            _walk(item, (*where, n))
            n += 1
    elif isinstance(value, dict):
        for key, item in value.items():
            _walk(item, (*where, key))
    elif isinstance(value, list | tuple):
        for n, item in enumerate(value):
            _walk(item, (*where, n))

"""The client dialects: what a client speaks to the gateway, whatever the upstream
(docs/claude-code.md "Wiring", docs/architecture.md).

`responses` (Codex, the openai SDK) is the default; `messages` (Claude Code, the anthropic SDK)
decodes with `translators/messages_client/` and answers in Anthropic's events and error shapes.
`translators/api.py` takes the client dialect as a parameter and asks this table for the decoder,
the encoder and the error shape; the addon asks it for the paths, hosts and headers of each
client (addon/client_dialects.py), so neither names a vendor.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from translators.core.errors import MalformedRequest, TranslatorError, error_type_for_status
from translators.core.report import Report
from translators.ir.request import Request
from translators.messages_client import errors as messages_errors
from translators.messages_client.request import decode as decode_messages
from translators.responses_client.request import decode as decode_responses
from translators.wire import stream_failure

DEFAULT = "responses"


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientDialect:
    name: str
    decode: Callable[[Any, Report], Request]
    """The client's body -> the IR; raises `MalformedRequest` / `UnsupportedFeature`."""
    error_body: Callable[[int, str, str], dict[str, Any]]
    """(status, gateway code, message) -> the error body the client reads."""
    error_status: Callable[[int, dict[str, Any]], int]
    """(status, the body `error_body` wrote) -> the status the client gets."""
    refusal: Callable[[TranslatorError], tuple[int, dict[str, Any]]]
    """A request the gateway will not send -> status and body."""
    answer_status: Callable[[dict[str, Any]], int] = lambda _body: 200
    """The status of a whole answer (`translate_response`'s body): a Responses object is 200
    even when it failed; a Messages error body has its error type's status."""
    echo: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    """The request fields the answer writer needs (`Translation.echo`); None: the Responses echo
    `translators/api.py` computes."""
    stores_state: bool = False
    """The client names stored history (`previous_response_id`) and asks for compactions (a
    trailing trigger, `/responses/compact`: docs/compaction.md)."""
    takes_passthrough: bool = False
    """The client speaks the passthrough upstream's own wire (`Dialect.passthrough`)."""
    paths: tuple[str, ...] = ()
    """fnmatch patterns of the request paths (query cut) this client uses besides `gateway_match`'s."""
    turn_paths: tuple[str, ...] = ()
    """The paths of a model turn (a `POST` the gateway translates)."""
    hosts: tuple[str, ...] = ()
    """The client's own vendor's hosts: matched in regular mode, and the only hosts that may get
    the client's own credentials."""
    credentials: tuple[str, ...] = ()
    """Request headers that carry the client's own key."""
    marker_headers: tuple[str, ...] = ()
    """A request with one of these headers is this client's on a path another client shares
    (`/v1/models`)."""
    private: tuple[str, ...] = ()
    """Top-level request fields a capture leaves out: they name the user or the machine, not what
    the model reads (addon/recording.py)."""
    label: str = "Responses"
    """How mitmweb's views name what the client sent and got."""
    view: str = "responses"
    """The dialect whose `View` reads this client's bodies and events (the same wire)."""
    stream_error: stream_failure.StreamError = stream_failure.responses_failed
    """The one event that ends the client's stream when the gateway fails inside it
    (translators/wire/stream_failure.py; docs/claude-code.md "Errors")."""
    stream_terminals: tuple[str, ...] = stream_failure.RESPONSES_TERMINALS
    """The events that end the client's stream: after one, nothing more is written."""
    encoder: Callable[..., Any] | None = None
    """`(translation, report, new_id, clock) -> EventEncoder` (translators/ir/encoder.py): the writer
    of the client's answer, for a client dialect defined outside the package; None: the shipped
    writers `translators/api.py` picks (Responses, Messages)."""


def _responses_error(status: int, code: str, message: str) -> dict[str, Any]:
    return {"error": {"type": error_type_for_status(status), "code": code, "message": message,
                      "param": None}}


def _messages_status(status: int, body: dict[str, Any]) -> int:
    """Anthropic says `overloaded_error` with 529 (docs/claude-code.md "Errors"): the SDK and Claude
    Code retry it as such; other types keep the upstream's status."""
    kind = body.get("error", {}).get("type") if isinstance(body.get("error"), dict) else None
    return messages_errors.STATUS_OF_TYPE["overloaded_error"] if kind == "overloaded_error" else status


def _messages_answer_status(body: dict[str, Any]) -> int:
    if body.get("type") != "error" or not isinstance(body.get("error"), dict):
        return 200
    return messages_errors.STATUS_OF_TYPE.get(str(body["error"].get("type")), 500)


def _responses_answer_status(body: dict[str, Any]) -> int:
    """A Responses object is 200 even when it failed (the failure is in it), and so is the
    compaction object; a bare error body is what `/responses/compact` answers when no summary
    came, a 500 (translators/responses_client/compaction.py)."""
    return 500 if "object" not in body and isinstance(body.get("error"), dict) else 200


def _responses_refusal(exc: TranslatorError) -> tuple[int, dict[str, Any]]:
    return exc.status, exc.to_body()


def _messages_echo(body: dict[str, Any]) -> dict[str, Any]:
    """What the Messages encoder reads of the request: `thinking` (its `display`)."""
    return {"thinking": body["thinking"]} if isinstance(body.get("thinking"), dict) else {}


TABLE: dict[str, ClientDialect] = {
    "responses": ClientDialect(
        name="responses", decode=decode_responses, error_body=_responses_error,
        error_status=lambda status, _body: status, refusal=_responses_refusal,
        answer_status=_responses_answer_status, stores_state=True, takes_passthrough=True),
    "messages": ClientDialect(
        name="messages", decode=decode_messages,
        error_body=lambda status, _code, message: messages_errors.for_status(status, message),
        error_status=_messages_status, refusal=messages_errors.refusal, echo=_messages_echo,
        answer_status=_messages_answer_status,
        paths=("/v1/messages", "/v1/messages/count_tokens", "/v1/models", "/v1/models/*"),
        turn_paths=("/v1/messages",), label="Messages", view="anthropic",
        private=("metadata",),  # Claude Code's `user_id`: device, account and session ids
        hosts=("api.anthropic.com",), credentials=("x-api-key", "authorization"),
        marker_headers=("anthropic-version", "x-api-key"),
        stream_error=stream_failure.messages_error, stream_terminals=stream_failure.MESSAGES_TERMINALS),
}
"""The client dialects by name; `responses` first (the default)."""
_SHIPPED = frozenset(TABLE)


def register(speaks: ClientDialect) -> None:
    """A client dialect defined outside the package (the addon registers the `CLIENT_DIALECT` of
    each module `$GATEWAY_DIALECTS` names, addon/plugins.py); it may not replace a shipped one."""
    if speaks.name in _SHIPPED:
        raise ValueError(f"client dialect {speaks.name!r} is shipped; choose another name")
    TABLE[speaks.name] = speaks


def names() -> tuple[str, ...]:
    return tuple(TABLE)


def get(name: str) -> ClientDialect:
    try:
        return TABLE[name]
    except KeyError:
        raise MalformedRequest(f"unknown client dialect {name!r}; choose one of {', '.join(TABLE)}",
                               code="unknown_dialect") from None


def default_match() -> tuple[str, ...]:
    """`host/path` patterns of every client dialect but the default, on its own hosts (the
    addon's `gateway_match` defaults)."""
    return tuple(host + path for name in TABLE if name != DEFAULT
                 for host in TABLE[name].hosts for path in TABLE[name].paths)

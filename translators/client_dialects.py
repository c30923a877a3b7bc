"""The client dialects' registry: what a client speaks to the gateway, whatever the upstream
(docs/architecture.md "The client side").

A client dialect is one folder, `translators/<name>_client/`, whose `__init__.py` builds its
`CLIENT_DIALECT` from the parts below, as a vendor's folder builds its `DIALECT`
(translators/dialect.py). The shipped ones are imported when first asked for; `register` adds one
defined outside the package (the addon registers the `CLIENT_DIALECT` of each module
`$GATEWAY_DIALECTS` names, addon/plugins.py). `translators/api.py` and the addon ask the entry for
everything particular to a client (its decoder, its encoder, its error shape, its stream's content
type and failure event, its models and count answers), so neither names a client.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from translators.core.errors import MalformedRequest, TranslatorError
from translators.core.ids import IdFactory
from translators.core.report import Report
from translators.core.translation import Translation
from translators.ir.encoder import EventEncoder
from translators.ir.request import Request
from translators.wire.stream_failure import StreamError

BUILTIN = ("responses", "messages")
"""The shipped client dialects, each `translators/<name>_client/`; the first is the default."""
DEFAULT = BUILTIN[0]
"""The client dialect of a request no other claims (Codex, the openai SDK)."""


class ErrorBody(Protocol):
    def __call__(self, status: int, code: str, message: str, param: str | None = None) -> dict[str, Any]:
        """(status, the gateway's error code, message, the request field at fault) -> the error
        body the client reads."""
        ...


class Encoder(Protocol):
    def __call__(self, translation: Translation, report: Report, new_id: IdFactory,
                 clock: Callable[[], float]) -> EventEncoder:
        """The writer of one answer in the client's wire (translators/ir/encoder.py)."""
        ...


@dataclass(frozen=True, slots=True)
class ListedModel:
    """One model a client may name, as the gateway's routes serve it."""

    id: str
    """The name the client sends."""
    upstream: str
    """The name of the route's dialect."""
    model: str
    """The model the upstream is asked for."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Models:
    """The client's models endpoints (its `paths` holding `/models`), answered from the routes."""

    page: Callable[[list[ListedModel]], dict[str, Any]]
    """Every listed model -> the body of the list."""
    entry: Callable[[ListedModel], dict[str, Any]]
    """One model -> the body of its own endpoint."""
    names: tuple[str, ...] = ()
    """The names the client sends unless told otherwise (its default, small and fast models):
    listed when a route with a wildcard takes them, so a client that picks only from the list
    can pick them."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenCount:
    """The client's token count endpoint (any of its `paths` that is not a turn)."""

    answer: Callable[[int], dict[str, Any]]
    """Input tokens -> the body the client reads."""
    estimate: Callable[[dict[str, Any]], int]
    """The upstream request body -> its input tokens, estimated, where the upstream counts none."""
    estimated: str
    """How `estimate` counts, for the flow's notes."""


@dataclass(frozen=True, slots=True, kw_only=True)
class GiveUp:
    """What the client gets when every upstream attempt of its turn failed: the answer its own
    retry logic retries (docs/pools.md "What the client sees"), with a `retry-after`."""

    status: int
    """The HTTP status when nothing of the answer went out yet."""
    code: str
    """The gateway's code, written in the client's error shape (`error_body`)."""
    in_stream: Callable[[bytes, str, float], bytes] | None = None
    """(what the client's stream already holds, message, unix seconds now) -> the event that ends
    it, when its head went out before any content (after the gateway's keep-alives); None: the
    client's `stream_error`."""


@dataclass(frozen=True, slots=True, kw_only=True)
class KeepAlive:
    """A keep-alive event of the client's own wire, which the gateway writes while the upstream
    is silent before the first content (docs/pools.md "Keep-alives")."""

    every: float
    """Seconds of the client's silence after which one is written (the first also sends the
    answer's head)."""
    event: bytes


RETRYABLE = GiveUp(status=503, code="server_error")
"""The give-up of a client that says nothing of its own: a 503 `server_error` (what the OpenAI
SDKs retry)."""


def _same_status(status: int, _body: dict[str, Any]) -> int:
    return status


def _always_200(_body: dict[str, Any]) -> int:
    return 200


def _nothing_echoed(_body: dict[str, Any]) -> dict[str, Any]:
    return {}


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientDialect:
    name: str
    label: str
    """How mitmweb's views name what the client sent and got."""
    decode: Callable[[Any, Report], Request]
    """The client's body -> the IR; raises `MalformedRequest` / `UnsupportedFeature`."""
    reuses_items: bool = False
    """Its `decode` also takes the client's `ItemCache` (`items=`, translators/core/item_cache.py)
    and decodes only the items the cache does not hold."""
    encoder: Encoder
    """IR events -> the client's bytes (a stream) or its whole answer (`response()`)."""
    error_body: ErrorBody
    """Every error the client reads is written by this, the proxy's own ones included."""
    refusal: Callable[[TranslatorError], tuple[int, dict[str, Any]]]
    """A request the gateway will not send -> status and body."""
    stream_error: StreamError
    """The one event that ends the client's stream when the gateway fails inside it
    (translators/wire/stream_failure.py; docs/design.md "Errors")."""
    stream_terminals: tuple[str, ...] = ()
    """The `event:` names that end the client's SSE stream: after one, nothing more is written. A
    stream that is not SSE names none: its `stream_error` is written whenever the gateway fails
    inside it."""
    stream_content_type: str = "text/event-stream"
    """The content type of the client's stream (what its encoder writes)."""
    error_status: Callable[[int, dict[str, Any]], int] = _same_status
    """(status, the body `error_body` wrote) -> the status the client gets."""
    answer_status: Callable[[dict[str, Any]], int] = _always_200
    """The status of a whole answer (`translate_response`'s body): a Responses object is 200
    even when it failed; a Messages error body has its error type's status."""
    echo: Callable[[dict[str, Any]], dict[str, Any]] = _nothing_echoed
    """The request fields the answer writer needs (`Translation.echo`), from the client's body
    (with the stored history it named, for a client that `stores_state`)."""
    stores_state: bool = False
    """The client names stored history (`previous_response_id`) and asks for compactions (a
    trailing trigger, `/responses/compact`: docs/compaction.md)."""
    compaction_kept: Callable[[Any], list[dict[str, Any]]] | None = None
    """The client's compaction endpoint (`/responses/compact`, docs/compaction.md "Two forms"): its
    body's `input` -> the items the compaction object keeps; None: the client has none."""
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
    view: str = ""
    """The dialect whose `View` reads this client's bodies and events (the same wire); none: shown
    as they are."""
    models: Models | None = None
    """Its models endpoints; None: it has none the gateway answers."""
    count: TokenCount | None = None
    """Its token count; None: it has none."""
    give_up: GiveUp = RETRYABLE
    """What it gets when every upstream attempt failed (what its client retries)."""
    keep_alive: KeepAlive | None = None
    """Its stream's keep-alive event; None: its wire has none the gateway may write."""


# -- the registry --------------------------------------------------------------------------------

_SHIPPED: dict[str, ClientDialect] = {}
"""The shipped client dialects imported so far."""
_REGISTERED: dict[str, ClientDialect] = {}


def register(speaks: ClientDialect) -> ClientDialect:
    """Add a client dialect defined outside the package; it may not replace a shipped one."""
    if speaks.name in BUILTIN:
        raise ValueError(f"client dialect {speaks.name!r} is shipped; choose another name")
    _REGISTERED[speaks.name] = speaks
    return speaks


def names() -> tuple[str, ...]:
    """Every client dialect's name: the shipped ones, then the registered ones."""
    return (*BUILTIN, *_REGISTERED)


def get(name: str) -> ClientDialect:
    """The client dialect of this name; `MalformedRequest` for none."""
    found = _SHIPPED.get(name) or _REGISTERED.get(name)
    if found is not None:
        return found
    if name not in BUILTIN:
        raise MalformedRequest(f"unknown client dialect {name!r}; choose one of {', '.join(names())}",
                               code="unknown_dialect")
    loaded: ClientDialect = importlib.import_module(f"translators.{name}_client").CLIENT_DIALECT
    _SHIPPED[name] = loaded
    return loaded


def default_match() -> tuple[str, ...]:
    """`host/path` patterns of every client dialect but the default, on its own hosts (the
    addon's `gateway_match` defaults)."""
    others = [get(name) for name in names() if name != DEFAULT]
    return tuple(host + path for speaks in others for host in speaks.hosts for path in speaks.paths)

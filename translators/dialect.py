"""What each upstream dialect provides, and the registry of them.

A dialect is one folder, `translators/<name>/`, whose `__init__.py` builds one `Dialect` from typed
parts: its `Vendor` (default base URL and key variable, where the key goes, which headers are
secret, content types, capture file suffix, display name), how a client reaches it (a `Codec`
through the IR, a `Passthrough` of the client's own wire, or both), and what it brings of its own:
`Signing` with its credential source, options, and the `View` mitmweb shows it with. The addon asks
the registry (`get`, `names`) and never names a vendor (docs/architecture.md "The dialect
registry", docs/adding-a-dialect.md).

A dialect outside the package registers itself with `register` (the addon imports the modules
named in `$GATEWAY_DIALECTS` before it loads: docs/adding-a-dialect.md).
"""

from __future__ import annotations

import datetime
import importlib
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit

from translators.core.capabilities import ModelCapabilities
from translators.core.pricing import Price
from translators.core.report import Report
from translators.core.translation import Encoded, Translation
from translators.ir.events import Event
from translators.ir.request import Request

BUILTIN = ("responses", "anthropic", "chat", "gemini", "bedrock")
"""The dialects shipped in this package, each `translators/<name>/`, in the order they are listed."""


class StreamDecoder(Protocol):
    """Sans-I/O: upstream bytes in any chunking -> IR events, as soon as a whole event is in."""

    def feed(self, data: bytes) -> list[Event]: ...

    def close(self) -> list[Event]: ...


class ByteStream(Protocol):
    """Upstream bytes -> client bytes (a passthrough's stream)."""

    finished: bool

    def feed(self, data: bytes) -> bytes: ...

    def close(self) -> bytes: ...


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    code: str
    message: str


@dataclass(frozen=True, slots=True)
class ModelsEndpoint:
    """Where a vendor publishes what one model accepts (docs/models.md). The addon fetches it
    with the route's key; the dialect only says where and how to read the answer."""

    path: Callable[[str], str]
    """Upstream model -> path relative to the base URL."""
    headers: dict[str, str]
    """Headers the endpoint needs besides the key (e.g. `anthropic-version`)."""
    parse: Callable[[Any, str], ModelCapabilities]
    """(parsed JSON answer, upstream model) -> capabilities; raises ValueError for another body."""


@dataclass(frozen=True, slots=True)
class CountEndpoint:
    """Where a vendor counts a request's input tokens without running it (docs/claude-code.md
    "Token counts"). The addon sends it, with the route's credentials, the turn the dialect's
    encoder wrote, re-shaped by `encode`; the dialect only says how and how to read the answer."""

    encode: Callable[[dict[str, Any], str], tuple[str, dict[str, Any]]]
    """(the encoded turn's body, upstream model) -> (path relative to the base URL, count body)."""
    parse: Callable[[Any], int]
    """The parsed JSON answer -> input tokens; raises ValueError for another body."""
    base: Callable[[str], str] | None = None
    """The route's base URL -> the one the count's path is relative to (a Chat server's
    `/tokenize` is at its root, not under `/v1`); None: the route's own."""


@dataclass(frozen=True, slots=True)
class Settings:
    """What the addon tells a dialect about the deployment: the values of the dialect's own options
    (`Dialect.options`) and of the environment variables it declared (`Dialect.environ`). The
    package reads no environment itself (docs/design.md "Pure translators")."""

    options: Mapping[str, Any] = field(default_factory=dict)
    environ: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Option:
    """A mitmproxy option of one dialect; the addon registers it (`load`) and checks it
    (`configure`) with the others."""

    name: str
    type: type
    default: Any
    help: str
    check: Callable[[Any], str | None] | None = None
    """value -> what is wrong with it (the message the operator sees), or None."""
    route_key: str | None = None
    """The `[[route]]` key that sets this option for one route (addon/routes/routing.py); the option is
    then the default of every route of the dialect, and the route's value reaches the encoder in
    `ModelCapabilities.extra[route_key]` (a fact about the route's server, e.g. which
    `response_format` it takes)."""


@dataclass(frozen=True, slots=True)
class ToSign:
    """One upstream request, final (URL, headers and body bytes), to be signed."""

    method: str
    url: str
    headers: Mapping[str, str]
    body: bytes
    key: str | None
    """The route's key (its `key_env`), when it names one that is set."""
    identity: Any
    """What the signing's credential source found (`Signing.source`), asked only without a key;
    None: nothing found."""
    settings: Settings
    now: datetime.datetime
    """The time the signature states (UTC); the caller's clock."""


@dataclass(frozen=True, slots=True)
class Signed:
    secret: dict[str, str]
    """Headers that carry a credential: sent on the wire only, redacted in every saved flow."""
    headers: dict[str, str]
    """Headers the signature covers that are no secret (e.g. a date)."""


class CredentialSource(Protocol):
    """Where a signing dialect's credentials come from when the route names no key (e.g. the AWS
    chain, `translators/bedrock/credentials.py`). The one I/O a dialect may supply: it may read the
    environment, files or the network, so the translators never call it; the addon does, off its
    event loop, and hands what it found to `Signing.sign` as `ToSign.identity` (docs/design.md
    "Pure translators")."""

    @property
    def name(self) -> str:
        """How the operator knows it (`AWS signatures from the aws credential chain`)."""
        ...

    def find(self) -> Any:
        """What it finds now (None: nothing); never raises for "nothing found"."""
        ...


@dataclass(frozen=True, slots=True)
class Signing:
    """A dialect whose every request is signed once the body bytes are final."""

    source: CredentialSource
    """Asked by the addon when the route has no key; the dialect brings its own."""
    sign: Callable[[ToSign], Signed]
    what: str = "request signatures"
    """What crosses the network (for the error that refuses plain http to a remote host)."""


@dataclass(frozen=True, slots=True)
class RequestShape:
    """A request body as the Translation view compares it (addon/views.py)."""

    system: str
    """One line: where the system prompt is and how big."""
    items: list[str]
    """One label per conversation item (`user[text,tool_result]`)."""
    tools: list[str]
    """The declared tool names."""
    consumed: frozenset[str]
    """Top-level keys these lines describe; the view lists the others as fields."""
    tools_from: tuple[str, ...] = ()
    """Where tools were declared other than a top-level list (e.g. `input[0] additional_tools`,
    Responses Lite), so the view never shows them as tools the gateway added."""


@dataclass(frozen=True, slots=True)
class View:
    """What mitmweb needs to show this dialect's requests and stream events (addon/views.py)."""

    read_request: Callable[[dict[str, Any]], RequestShape]
    event_line: Callable[[str, dict[str, Any]], tuple[str, str]]
    """(event name, the event's JSON object) -> (type, `where | preview`)."""
    claims: Callable[[dict[str, Any]], bool] = lambda obj: False
    """Is this JSON object one of this dialect's events (a stream whose dialect is unknown)?"""
    frames: Callable[[bytes], list[tuple[str, str]] | None] | None = None
    """A body in the dialect's own binary framing -> (event type, payload) per frame; None when
    the body is not in that framing. Without it, streams are `text/event-stream`."""


def bearer(key: str) -> dict[str, str]:
    return {"authorization": f"Bearer {key}"}


@dataclass(frozen=True, slots=True)
class Passthrough:
    """A target that speaks the client's own dialect: the body goes upstream as the client wrote
    it (bar what must not leave), and the answers come back as they are, never through the IR."""

    encode: Callable[[Any, str | None, Report], Encoded]
    """(client body, upstream model or None, report) -> what to send."""
    stream: Callable[[Translation, Report], ByteStream]
    """The stream's bytes, re-framed, with exactly one terminal event."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Vendor:
    """What the addon needs to know about the vendor behind a dialect: where it is, where its key
    goes, what must never be saved, how its bodies are typed and named."""

    display_name: str
    """How mitmweb names it (`Responses -> Anthropic Messages`)."""
    base_url: str
    """The vendor's public API, the route's base URL when none is given."""
    key_env: str | None = None
    """The environment variable of the vendor's own key, sent only to the vendor's own host
    (addon/routes/routing.py `key_env_for`)."""
    key_headers: Callable[[str], dict[str, str]] = bearer
    """key -> the headers that carry it."""
    secret_headers: tuple[str, ...] = ("authorization",)
    """Request headers that may carry a credential: redacted before any flow is saved."""
    own_host: Callable[[str], bool] | None = None
    """Is this URL's host the vendor's own (its key may go there)? None: the host of `base_url`."""
    base_url_for: Callable[[Settings], str] | None = None
    """The default base URL under the dialect's settings (e.g. a region); None: `base_url`."""
    request_content_type: str = "application/json"
    stream_content_type: str = "text/event-stream"
    """What a streamed answer is (the request's `accept`, a replayed answer's content type)."""
    capture_suffix: str = "body"
    """A capture folder keeps the upstream's answer bytes as `upstream.<suffix>`."""
    client_credentials_hosts: tuple[str, ...] = ()
    """Hosts (and their subdomains, over HTTPS) that may get the client's own credentials: the
    client's own vendor, reached through a passthrough route that names no key."""
    client_headers: tuple[str, ...] = ()
    client_header_prefixes: tuple[str, ...] = ()
    """Answer headers the client gets from this upstream besides the shared ones
    (translators/wire/response_headers.py)."""
    genai_provider: str | None = None
    """The vendor as OpenTelemetry's GenAI conventions name it (`gen_ai.provider.name`, e.g.
    `aws.bedrock`; docs/metrics.md "Traces"); None: none fits, the dialect's name is used."""
    key_shapes: tuple[str, ...] = ()
    """Regular expressions of the vendor's key shapes (OpenAI's `sk-...`, Google's `AIza...`): any
    string of one of these shapes is scrubbed from a capture, a key the gateway never sent too
    (addon/observe/recording.py). Each starts at a word's start; none may hold a group."""
    secret_env: tuple[str, ...] = ()
    """Environment variables (fnmatch patterns) holding the vendor's credentials besides `key_env`
    (AWS's secret access key): their values are scrubbed from a capture."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Codec:
    """The wire codecs through the IR: any client reaches the upstream by them."""

    encode_request: Callable[[Request, str, Report, ModelCapabilities], Encoded]
    """(IR request, upstream model, report, what the model accepts) -> upstream path, body,
    headers, tool index."""
    stream_decoder: Callable[[Translation], StreamDecoder]
    response_events: Callable[[Any, Translation], list[Event]]
    """A whole (non-streamed) upstream answer, parsed JSON -> the same events a stream gives."""
    error_info: Callable[[int, Any], ErrorInfo]
    """(HTTP status, parsed error body or raw text) -> code and message for the client."""
    capabilities: Callable[[str], ModelCapabilities] | None = None
    """The shipped table's answer for a model (the fallback when the vendor cannot be asked);
    None: no table, the model is taken as it is named."""
    models_endpoint: ModelsEndpoint | None = None
    count_tokens: CountEndpoint | None = None
    """None: the vendor counts no tokens; a count is estimated (docs/claude-code.md "Token counts")."""
    count_for: Callable[[Mapping[str, str]], CountEndpoint | None] | None = None
    """Where a route's server counts, by what the route states of it (`Option.route_key` values):
    a Chat server's own tokenizer (docs/chat.md "Token counts"); asked before `count_tokens`."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Dialect:
    """One upstream dialect: its vendor, how each client reaches it (a `codec`, a `passthrough`
    or both; at least one), and what it brings of its own (signing, options, view)."""

    name: str
    vendor: Vendor
    codec: Codec | None = None
    passthrough: Passthrough | None = None
    """Set for the client's own dialect (Responses): the body passes through, and the upstream
    keeps its own state (previous_response_id, compaction). Only a client that speaks this wire
    takes it (`passes_through`); with a codec as well, any other client goes through the IR."""
    signing: Signing | None = None
    options: tuple[Option, ...] = ()
    environ: tuple[str, ...] = ()
    """Environment variables the dialect's settings read (besides its key), passed in `Settings`."""
    view: View | None = None
    prices: Callable[[str], Price | None] | None = None
    """The vendor's list price for a model id in the dialect's own form (its `prices.toml`,
    translators/core/pricing.py); None: the dialect ships no prices."""

    def __post_init__(self) -> None:
        if self.codec is None and self.passthrough is None:
            raise TypeError(f"dialect {self.name!r} has neither a codec nor a passthrough")


def counter(dialect: Dialect, server: Mapping[str, str]) -> CountEndpoint | None:
    """Where a route of this dialect counts tokens (`server`: what the route states of its
    server); None: the count is estimated."""
    codec = dialect.codec
    if codec is None:
        return None
    if codec.count_for is not None and (endpoint := codec.count_for(server)) is not None:
        return endpoint
    return codec.count_tokens


def count_url(endpoint: CountEndpoint, base_url: str, path: str) -> str:
    """The URL a count goes to: the route's base URL (or the endpoint's base for it) + its path."""
    return (endpoint.base(base_url) if endpoint.base is not None else base_url) + path


def list_price(dialect: Dialect, model: str) -> Price | None:
    """The shipped list price of `model` on this dialect's vendor; None when it ships none for
    it (docs/prices.md: a route's own `prices` then say it)."""
    return dialect.prices(model) if dialect.prices is not None else None


def serving(dialect: Dialect, takes_passthrough: bool) -> Codec | Passthrough:
    """The part of the dialect that serves a client (`ClientDialect.takes_passthrough`): its
    passthrough for a client that speaks its wire (or when it has no codec), else its codec. The
    one place `translators/api.py` decides it."""
    if dialect.passthrough is not None and (takes_passthrough or dialect.codec is None):
        return dialect.passthrough
    assert dialect.codec is not None  # Dialect.__post_init__: one of the two is set
    return dialect.codec


def passes_through(dialect: Dialect, takes_passthrough: bool) -> bool:
    """Whether a client (`ClientDialect.takes_passthrough`) reaches this upstream by its passthrough
    rather than through the IR (`serving`)."""
    return isinstance(serving(dialect, takes_passthrough), Passthrough)


def is_own_host(dialect: Dialect, url: str) -> bool:
    """`url` is the dialect's own public API over HTTPS (its key may go there)."""
    parts = urlsplit(url)
    if parts.scheme != "https" or parts.port not in (None, 443):
        return False
    if dialect.vendor.own_host is not None:
        return dialect.vendor.own_host(url)
    return parts.hostname == urlsplit(dialect.vendor.base_url).hostname


def default_base_url(dialect: Dialect, settings: Settings | None = None) -> str:
    if dialect.vendor.base_url_for is not None and settings is not None:
        return dialect.vendor.base_url_for(settings)
    return dialect.vendor.base_url


# -- the registry --------------------------------------------------------------------------------

_REGISTERED: dict[str, Dialect] = {}


def register(dialect: Dialect) -> Dialect:
    """Add a dialect defined outside the package (or replace one of the same name)."""
    _REGISTERED[dialect.name] = dialect
    return dialect


def names() -> tuple[str, ...]:
    """Every dialect's name: the shipped ones, then the registered ones."""
    return (*BUILTIN, *(name for name in _REGISTERED if name not in BUILTIN))


def get(name: str) -> Dialect:
    """The dialect of this name; KeyError for none."""
    if name in _REGISTERED:
        return _REGISTERED[name]
    if name not in BUILTIN:
        raise KeyError(name)
    # a module loaded whole is read where the import system keeps it (`import_module` takes its
    # lock and walks the package each call: most of a lookup, and a request makes several); one
    # still loading, in another thread, is waited for by `import_module`
    found = getattr(sys.modules.get(f"translators.{name}"), "DIALECT", None)
    if found is None:
        found = importlib.import_module(f"translators.{name}").DIALECT
    return found  # type: ignore[no-any-return]


def find(name: str) -> Dialect | None:
    try:
        return get(name)
    except KeyError:
        return None


def every() -> list[Dialect]:
    return [get(name) for name in names()]

"""Which upstream a client request goes to: routes, the router, and the single-route options (the
TOML route file: addon/routes/route_file.py).

Pure functions, so `configure()` can validate them and tests can call them without mitmproxy.
"""

from __future__ import annotations

import fnmatch
import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any
from urllib.parse import urlsplit

from addon.serve import client_facts, paths
from translators import dialect as dialects
from translators.core.capabilities import ModelCapabilities
from translators.core.pricing import Price
from translators.dialect import Dialect, Settings

DEFAULT_MATCH = client_facts.DEFAULT_MATCH
NO_SETTINGS: Mapping[str, Settings] = {}


class RouteError(ValueError):
    """A setting that cannot work; the message says what to write instead."""


@dataclass(frozen=True, slots=True, eq=False)
class Route:
    pattern: str
    dialect: Dialect
    """What the upstream speaks, resolved from its name once, as the routes are built
    (`check_dialect`); every use asks it (docs/architecture.md "The dialect registry"). The route
    compares, hashes and prints it by its name (`_key`)."""
    base_url: str
    model: str | None
    """None keeps the client's model name."""
    key_env: str | None
    """The variable holding the key sent to `base_url` (`key_env_for`); None sends no key."""
    summarizer: Route | None = None
    """Where a remote-compaction request goes instead (`compaction_*` keys,
    `gateway_compaction_model`); None: this route's own upstream and model."""
    context_window: int | None = None
    """The upstream model's context window as the user states it (`context_window` in TOML,
    `gateway_context_window`); None: the model's capabilities say (addon/routes/catalog.py). It
    also bounds the output limit a request is sent with (translators/features/fit.py)."""
    max_output_tokens: int | None = None
    """The most the upstream model writes as the user states it (`max_output_tokens` in TOML,
    `gateway_max_output_tokens`); None: the model's capabilities say (docs/models.md "Output
    limits")."""
    server: tuple[tuple[str, str], ...] = ()
    """What the user states about the route's server, as (key, value): the dialect's route
    options (`Option.route_key`: a `[[route]]` key, else the option's value). They reach the
    encoder in `ModelCapabilities.extra` (`stated`)."""
    deployments: tuple[Deployment, ...] = ()
    """The pool its requests are spread over (`deployments` in TOML, docs/pools.md); empty: the
    route itself is the one deployment (`pool_of`)."""
    fallbacks: tuple[Deployment, ...] = ()
    """Tried in order once no deployment can serve (`fallbacks` in TOML)."""
    retries: int | None = None
    """Attempts after the first (`retries`); None: `gateway_retries`."""
    retry_seconds: float | None = None
    """Seconds in which a new attempt may start (`retry_seconds`); None: `gateway_retry_seconds`."""
    idle_timeout: float | None = None
    """Seconds without an upstream event, keep-alives not counted, that fail an attempt
    (`idle_timeout`); None: `gateway_idle_timeout`."""
    prices: Price | None = None
    """What the route's own model costs (`prices` in TOML, docs/prices.md), over the dialect's
    shipped table; None: the table's price (addon/observe/costs.py)."""

    def _key(self) -> tuple[Any, ...]:
        """Every field, the dialect as its name: a `Dialect` holds functions, and two routes to
        the same dialect of the registry are the same route."""
        return tuple(value.name if isinstance(value, Dialect) else value
                     for value in (getattr(self, name) for name in _ROUTE_FIELDS))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Route) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        said = (f"{name}={value!r}" for name, value in zip(_ROUTE_FIELDS, self._key(), strict=True))
        return f"Route({', '.join(said)})"


_ROUTE_FIELDS = tuple(f.name for f in fields(Route))
"""`Route`'s fields in order, read once: a turn hashes its route a few times (its pool's balancer,
the capabilities' cache), and `fields()` is rebuilt on every call."""


@dataclass(frozen=True, slots=True)
class Deployment:
    """One upstream a route's requests may go to: the route it targets (dialect, base URL, model,
    key variable, settings), its name in records and views, and its share of new conversations
    (docs/pools.md)."""

    name: str
    route: Route
    weight: float = 1.0

    @property
    def window(self) -> int | None:
        return self.route.context_window


def states(route: Route) -> bool:
    """Whether the route states anything the capabilities carry (`stated`)."""
    return bool(route.server) or route.context_window is not None or route.max_output_tokens is not None


def stated(caps: ModelCapabilities, route: Route) -> ModelCapabilities:
    """The model's capabilities with what the route states on top: its server (the dialect's
    route options, in `extra`), its model's window and output limit (over the vendor's and the
    table's figures, docs/models.md "Output limits")."""
    if not states(route):
        return caps
    return replace(caps, extra={**caps.extra, **dict(route.server)},
                   context_window=route.context_window or caps.context_window,
                   max_output_tokens=route.max_output_tokens or caps.max_output_tokens)


def route_options(dialect: Dialect) -> dict[str, dialects.Option]:
    """The dialect's options a `[[route]]` table may set, by their route key."""
    return {o.route_key: o for o in dialect.options if o.route_key}


def server_of(dialect: Dialect, settings: Mapping[str, Settings], table: Mapping[str, Any] | None = None,
              where: str = "") -> tuple[tuple[str, str], ...]:
    """A route's `server`: each route option's value in `table` (a `[[route]]`), else the
    option's own (`--set`), else its default; a value its check refuses is a `RouteError`."""
    values = settings[dialect.name].options if dialect.name in settings else {}
    out = []
    for key, option in route_options(dialect).items():
        value = (table or {}).get(key, values.get(option.name, option.default))
        if option.check is not None and (problem := option.check(value)):
            if table is not None and key in table:  # the check names the option; here the key is wrong
                raise RouteError(f"{where}: {problem.replace(option.name, key, 1)}")
            raise RouteError(problem)
        out.append((key, str(value)))
    return tuple(out)


def pool_of(route: Route) -> tuple[tuple[Deployment, ...], tuple[Deployment, ...]]:
    """The route's deployments (itself alone when it names none) and its fallbacks."""
    return route.deployments or (Deployment("#1", route),), route.fallbacks


def serving(route: Route, compacting: bool) -> Route:
    """The route that answers a request: the route's summarizer for a compaction request (its
    last input item is `compaction_trigger`, `translators.features.compaction.is_trigger`), else the
    route itself."""
    if route.summarizer is not None and compacting:
        return route.summarizer
    return route


@dataclass(frozen=True, slots=True)
class Router:
    routes: tuple[Route, ...]
    match: tuple[str, ...] = field(default=DEFAULT_MATCH)

    def route(self, client_model: str) -> Route | None:
        for route in self.routes:
            if fnmatch.fnmatchcase(client_model, route.pattern):
                return route
        return None

    def matches(self, host: str, path: str) -> bool:
        """`host/path` against each pattern; `*` wildcards; a pattern without a host part
        (starting with `/`) matches any host (reverse mode, custom providers). The host is read
        as DNS reads it (`paths.host`); the path as the request holds it, normalised before
        (addon/serve/paths.py `settle`)."""
        target = f"{paths.host(host)}{path.split('?', 1)[0]}"
        for pattern in self.match:
            candidate = target if not pattern.startswith("/") else path.split("?", 1)[0]
            if fnmatch.fnmatchcase(candidate, pattern):
                return True
        return False


def check_dialect(name: str) -> Dialect:
    """The registry's dialect of this name, looked up once, as the routes are built."""
    if name not in dialects.names():
        raise RouteError(f"unknown upstream {name!r}: write one of {', '.join(dialects.names())}")
    return dialects.get(name)


def check_base_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.username is not None or parts.password is not None:
        # never echoed: the message names the URL without its user:password@ part
        bare = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}{parts.path}"
        raise RouteError(f"base URL {bare!r} has a user:password@ part: a credential in a URL ends up in "
                         "every saved flow; put the key in an environment variable and name it with "
                         "key_env (gateway_key_env)")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RouteError(f"base URL {url!r} is not an http(s) URL: write e.g. https://api.anthropic.com")
    return url.rstrip("/")


def key_env_for(dialect: Dialect, url: str, explicit: str | None) -> str | None:
    """The variable whose key a route sends, the one rule for operator keys: the one the route
    names (`key_env`, `gateway_key_env`), sent to the route's own base URL; else the dialect's
    default variable, only to the dialect's own host over HTTPS (`Vendor.own_host`); else none
    (a local server, a proxy, any other host gets no key unless the route names one)."""
    if explicit:
        return explicit
    return dialect.vendor.key_env if dialect.vendor.key_env and dialects.is_own_host(dialect, url) else None


def model_name_problem(name: str) -> str | None:
    """Why a model name must not become part of an upstream URL path, or None. A name is quoted
    into the path (`/v1/models/{model}`, `/model/{model}/converse`), but quoting leaves dots
    alone: `.` and `..` (or a `/`-separated segment of them, as Gemini's `models/..`) would be
    dot segments that the upstream's URL resolution turns into another path, called with the
    operator's key. Control characters have no place in a name either."""
    if any(segment in (".", "..") for segment in name.split("/")):
        return f"model name {name!r} is a dot segment (. or ..), which would change the upstream URL"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        return f"model name {name!r} holds a control character"
    return None


def check_transport(route: Route, where: str) -> Route:
    """Credentials never travel over plain http, except to a loopback address; the route's model
    name is one a URL path can hold (`model_name_problem`)."""
    for model in (route.model, route.summarizer.model if route.summarizer else None):
        if model and (problem := model_name_problem(model)):
            raise RouteError(f"{where}: {problem}")
    parts = urlsplit(route.base_url)
    signing = route.dialect.signing  # a signed dialect carries credentials in every request
    carries = route.key_env is not None or signing is not None
    if parts.scheme == "http" and carries and not is_loopback(parts.hostname or ""):
        what = f"${route.key_env}" if route.key_env else signing.what if signing else "credentials"
        raise RouteError(f"{where}: base URL {route.base_url!r} is plain http to a host that is not "
                         f"loopback, and {what} would cross the network in clear: use https, or a "
                         "127.0.0.1 / ::1 / localhost address")
    return route


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_models(spec: str) -> list[tuple[str, str | None]]:
    """`claude-sonnet-4-6` (every model) or `gpt-5*=claude-sonnet-4-6,*=claude-haiku-4-5`."""
    spec = spec.strip()
    if not spec:
        return [("*", None)]
    if "=" not in spec:
        return [("*", spec)]
    pairs = []
    for entry in spec.split(","):
        pattern, sep, model = entry.partition("=")
        if not sep or not pattern.strip() or not model.strip():
            raise RouteError(f"gateway_model entry {entry!r} is not pattern=model: write e.g. "
                             "gpt-5*=claude-sonnet-4-6,*=claude-haiku-4-5")
        pairs.append((pattern.strip(), model.strip()))
    return pairs


def default_base_url(dialect: Dialect, settings: Mapping[str, Settings] = NO_SETTINGS) -> str:
    """The dialect's public API under its settings (e.g. in the configured region)."""
    return dialects.default_base_url(dialect, settings.get(dialect.name))


def check_context_window(value: object, where: str) -> int:
    return check_tokens(value, where, "context_window = 200000")


def check_tokens(value: object, where: str, example: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise RouteError(f"{where} must be a positive number of tokens, e.g. {example}")
    return value


def from_options(upstream: str, base_url: str, model: str, key_env: str, *,
                 settings: Mapping[str, Settings] = NO_SETTINGS, compaction_model: str = "",
                 context_window: int = 0, max_output_tokens: int = 0) -> list[Route]:
    """Routes from the single-route options; `compaction_model` names the model of the same
    upstream that writes compaction summaries (empty: each route's own model);
    `context_window` and `max_output_tokens` (0: unset) are every route's upstream window and
    output limit; `settings`: each dialect's own options and environment (addon/routes/plugins.py)."""
    dialect = check_dialect(upstream)
    url = check_base_url(base_url or default_base_url(dialect, settings))
    env = key_env_for(dialect, url, key_env.strip() or None)
    window = check_context_window(context_window, "gateway_context_window") if context_window else None
    limit = check_tokens(max_output_tokens, "gateway_max_output_tokens",
                         "--set gateway_max_output_tokens=8192") if max_output_tokens else None
    server = server_of(dialect, settings)
    routes = [check_transport(Route(pattern, dialect, url, target, env, context_window=window,
                                    max_output_tokens=limit, server=server), "gateway_base_url")
              for pattern, target in parse_models(model)]
    if compaction_model.strip():
        routes = [replace(r, summarizer=replace(r, model=compaction_model.strip())) for r in routes]
    return routes

"""Which upstream a client request goes to: options and the optional TOML route file.

Pure functions, so `configure()` can validate them and tests can call them without mitmproxy.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from addon.serve import client_facts
from addon.upstream.pool import Deployment
from translators import dialect as dialects
from translators.core.capabilities import ModelCapabilities
from translators.core.pricing import Price, parse_price
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
                     for value in (getattr(self, f.name) for f in fields(self)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Route) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        said = (f"{f.name}={value!r}" for f, value in zip(fields(self), self._key(), strict=True))
        return f"Route({', '.join(said)})"


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
        (starting with `/`) matches any host (reverse mode, custom providers)."""
        target = f"{host}{path.split('?', 1)[0]}"
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


_ROUTE_KEYS = {"model": "gpt-5*", "upstream": "anthropic", "base_url": "https://api.anthropic.com",
               "target_model": "claude-sonnet-4-6", "key_env": "ANTHROPIC_API_KEY",
               "compaction_model": "claude-haiku-4-5", "compaction_upstream": "anthropic",
               "compaction_base_url": "https://api.anthropic.com", "compaction_key_env": "ANTHROPIC_API_KEY",
               "context_window": 200000, "max_output_tokens": 8192,
               "deployments": '[{ key_env = "KEY_A" }, { key_env = "KEY_B" }]',
               "fallbacks": '[{ upstream = "bedrock", target_model = "us.anthropic.claude-sonnet-4-6" }]',
               "retries": 3, "retry_seconds": 30, "idle_timeout": 120,
               "prices": "{input = 3.0, output = 15.0}"}
"""The keys of a `[[route]]` table, with an example value each (for error messages)."""
_MEMBER_KEYS = {"name": "backup-key", "upstream": "anthropic", "base_url": "https://api.anthropic.com",
                "target_model": "claude-sonnet-4-6", "key_env": "ANTHROPIC_KEY_2", "context_window": 200000,
                "max_output_tokens": 8192, "weight": 2}
"""The keys of a deployment or fallback (an inline table in `deployments` / `fallbacks`)."""
_INHERITED = ("base_url", "key_env", "target_model", "context_window", "max_output_tokens")
"""What a deployment of the table's own upstream takes from the table when it does not say (with
that upstream's settings); a deployment of another upstream takes none of them."""
_POOL_KEYS = ("deployments", "fallbacks")
_NUMBERS = {"retries": "a whole number of at least 0", "retry_seconds": "a number of seconds of at least 0",
            "idle_timeout": "a number of seconds above 0", "context_window": "a positive number of tokens",
            "max_output_tokens": "a positive number of tokens", "weight": "a positive number"}


def from_toml(path: str, *, settings: Mapping[str, Settings] = NO_SETTINGS) -> list[Route]:
    """Routes from a TOML file: `[[route]]` tables with `model` (a pattern, default `*`),
    `upstream`, optional `base_url`, `target_model`, `key_env`, `context_window` (the upstream
    model's window in tokens, served to Codex; addon/routes/catalog.py), `max_output_tokens` (the
    most the model writes; docs/models.md "Output limits"), the upstream dialect's own route
    options (`Option.route_key`: what the route states about its server), and the summarizer of
    compaction requests: `compaction_model`, `compaction_upstream` (whose URL and key variable
    default to that dialect's), `compaction_base_url`, `compaction_key_env`; first match wins."""
    try:
        data = tomllib.loads(Path(path).read_text())
    except OSError as exc:
        raise RouteError(f"gateway_config {path!r} cannot be read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise RouteError(f"gateway_config {path!r} is not valid TOML: {exc}") from None
    tables = data.get("route", [])
    if isinstance(tables, dict):  # `[route]` is one table; a list of routes needs `[[route]]`
        raise RouteError(f"gateway_config {path!r}: write [[route]] (double brackets) for each route")
    routes = []
    for i, entry in enumerate(tables):
        if not isinstance(entry, dict) or "upstream" not in entry:
            raise RouteError(f"gateway_config route #{i + 1} needs "
                             '`upstream = "anthropic"` (or another dialect)')
        where = f"gateway_config route #{i + 1}"
        dialect = check_dialect(entry["upstream"])
        _check_keys(entry, _ROUTE_KEYS, route_options(dialect), where)
        route = _route(entry, entry.get("model", "*"), dialect, settings, where)
        route = replace(route, summarizer=_summarizer(route, entry, i, settings),
                        retries=entry.get("retries"), retry_seconds=_seconds(entry.get("retry_seconds")),
                        idle_timeout=_seconds(entry.get("idle_timeout")), prices=_prices(entry, where))
        route = replace(route, deployments=_members(entry, route, "deployments", settings, where),
                        fallbacks=_members(entry, route, "fallbacks", settings, where))
        names = [d.name for d in (*route.deployments, *route.fallbacks)]
        if len(set(names)) != len(names):
            raise RouteError(f"{where}: two deployments or fallbacks share a name ({', '.join(names)}): "
                             'give each its own, e.g. name = "backup-key"')
        routes.append(route)
    if not routes:
        raise RouteError(f"gateway_config {path!r} has no [[route]] table")
    return routes


def _check_keys(table: Mapping[str, Any], keys: Mapping[str, Any], own: Mapping[str, dialects.Option],
                where: str) -> None:
    """Every key known (a misspelled one would be ignored and the route would silently use a
    default), and each of its type: numbers in range, the rest strings."""
    for key, value in table.items():
        if key not in keys and key not in own:
            raise RouteError(f"{where} has an unknown key {key!r}: write one of {', '.join([*keys, *own])}")
        if key in own or key in _POOL_KEYS or key == "prices":
            continue  # checked by server_of; by _members; by _prices
        if key in _NUMBERS:
            _check_number(key, value, where)
        elif not isinstance(value, str):
            raise RouteError(f'{where}: {key} must be a string, e.g. {key} = "{keys[key]}"')


def _check_number(key: str, value: object, where: str) -> None:
    if key in ("context_window", "max_output_tokens"):
        check_tokens(value, f"{where}: {key}", f"{key} = {_ROUTE_KEYS[key]}")
        return
    whole = key == "retries"
    ok = not isinstance(value, bool) and isinstance(value, int if whole else int | float)
    if ok and key in ("retries", "retry_seconds"):
        ok = value >= 0  # type: ignore[operator]
    elif ok:
        ok = value > 0  # type: ignore[operator]
    if not ok:
        raise RouteError(f"{where}: {key} must be {_NUMBERS[key]}, e.g. {key} = {_ROUTE_KEYS.get(key, 2)}")


def _prices(entry: Mapping[str, Any], where: str) -> Price | None:
    try:
        return parse_price(entry["prices"], f"{where}: prices") if "prices" in entry else None
    except ValueError as exc:
        raise RouteError(str(exc)) from None


def _seconds(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def _route(table: Mapping[str, Any], pattern: str, dialect: Dialect, settings: Mapping[str, Settings],
           where: str) -> Route:
    """A route (or a deployment's) from a table's upstream keys: its URL, model, key variable,
    window and settings, checked."""
    url = check_base_url(table.get("base_url") or default_base_url(dialect, settings))
    return check_transport(Route(
        pattern=pattern,
        dialect=dialect,
        base_url=url,
        model=table.get("target_model") or None,
        key_env=key_env_for(dialect, url, table.get("key_env") or None),
        context_window=table.get("context_window"),
        max_output_tokens=table.get("max_output_tokens"),
        server=server_of(dialect, settings, table, where),
    ), where)


def _members(entry: Mapping[str, Any], route: Route, key: str, settings: Mapping[str, Settings],
             where: str) -> tuple[Deployment, ...]:
    """A route table's `deployments` or `fallbacks`: inline tables with a route's upstream keys
    (and `name`, `weight`); what one leaves out its table says (`_INHERITED`, and its upstream's
    settings) when it keeps the table's upstream."""
    tables = entry.get(key)
    if tables is None:
        return ()
    example = _ROUTE_KEYS[key]
    if not isinstance(tables, list) or not tables or not all(isinstance(t, dict) for t in tables):
        raise RouteError(f"{where}: {key} must be a list of inline tables, e.g. {key} = {example}")
    label = "deployment" if key == "deployments" else "fallback"
    out = []
    for n, table in enumerate(tables, start=1):
        at = f"{where} {label} #{n}"
        dialect = check_dialect(table["upstream"]) if "upstream" in table else route.dialect
        own = route_options(dialect)
        _check_keys(table, _MEMBER_KEYS, own, at)
        if key == "fallbacks" and "weight" in table:
            raise RouteError(f"{at}: a fallback has no weight: fallbacks are tried in order, as listed")
        merged = dict(table)
        if dialect.name == route.dialect.name:
            inherited = [*_INHERITED, *own]
            merged = {k: entry[k] for k in inherited if k in entry and k not in table} | merged
        member = _route(merged, route.pattern, dialect, settings, at)
        name = table.get("name") or (f"#{n}" if key == "deployments" else f"fallback #{n}")
        out.append(Deployment(name, member, float(table.get("weight", 1))))
    return tuple(out)


def _summarizer(route: Route, entry: dict[str, Any], i: int,
                settings: Mapping[str, Settings]) -> Route | None:
    """A route table's `compaction_*` keys -> the route compaction requests go to, or None."""
    if not any(key.startswith("compaction_") for key in entry):
        return None
    upstream = entry.get("compaction_upstream")
    dialect = check_dialect(upstream) if upstream else route.dialect
    same = dialect.name == route.dialect.name
    if same:
        url, model = route.base_url, route.model
    elif entry.get("compaction_model"):
        url, model = default_base_url(dialect, settings), None
    else:
        raise RouteError(f"gateway_config route #{i + 1}: compaction_upstream {dialect.name!r} needs a "
                         'compaction_model, e.g. compaction_model = "claude-haiku-4-5"')
    url = check_base_url(entry.get("compaction_base_url") or url)
    explicit = entry.get("compaction_key_env") or None
    if explicit is None and same and url == route.base_url:
        key_env = route.key_env  # the route's own upstream: its own key
    else:
        key_env = key_env_for(dialect, url, explicit)  # another host gets only what is named for it
    server = route.server if same else server_of(dialect, settings)
    summarizer = Route(route.pattern, dialect, url, entry.get("compaction_model") or model, key_env,
                       server=server)
    return check_transport(summarizer, f"gateway_config route #{i + 1} (compaction)")

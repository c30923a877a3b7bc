"""The optional TOML route file (`gateway_config`): `[[route]]` tables, each checked key by key, with
their pools of deployments and fallbacks (docs/options.md "Routes in a file", docs/pools.md).

Pure functions, so `configure()` can validate them and tests can call them without mitmproxy.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from addon.routes.routing import (
    NO_SETTINGS,
    Deployment,
    Route,
    RouteError,
    check_base_url,
    check_dialect,
    check_tokens,
    check_transport,
    default_base_url,
    key_env_for,
    route_options,
    server_of,
)
from translators import dialect as dialects
from translators.core.pricing import Price, parse_price
from translators.dialect import Dialect, Settings

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

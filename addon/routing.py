"""Which upstream a client request goes to: options and the optional TOML route file.

Pure functions, so `configure()` can validate them and tests can call them without mitmproxy.
"""

from __future__ import annotations

import fnmatch
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from translators import compaction

DIALECTS = ("responses", "anthropic", "chat", "gemini", "bedrock")

DEFAULT_BASE_URL = {
    "responses": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
    "chat": "https://api.deepseek.com",
    "gemini": "https://generativelanguage.googleapis.com",
    "bedrock": "https://bedrock-runtime.us-east-1.amazonaws.com",
}
DEFAULT_KEY_ENV = {
    "responses": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "chat": "DEEPSEEK_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "bedrock": "AWS_BEARER_TOKEN_BEDROCK",
}
DEFAULT_MATCH = ("api.openai.com/v1/responses", "chatgpt.com/backend-api/codex/responses")


class RouteError(ValueError):
    """A setting that cannot work; the message says what to write instead."""


@dataclass(frozen=True, slots=True)
class Route:
    pattern: str
    dialect: str
    base_url: str
    model: str | None
    """None keeps the client's model name."""
    key_env: str
    summarizer: Route | None = None
    """Where a remote-compaction request goes instead (`compaction_*` keys,
    `gateway_compaction_model`); None: this route's own upstream and model."""
    context_window: int | None = None
    """The upstream model's context window as the user states it (`context_window` in TOML,
    `gateway_context_window`); None: the model's capabilities say (addon/catalog.py)."""


def serving(route: Route, body: Any) -> Route:
    """The route that answers `body`: the route's summarizer for a compaction request (its last
    input item is `compaction_trigger`, translators/compaction.py), else the route itself."""
    if route.summarizer is not None and compaction.is_trigger(body):
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


def check_dialect(name: str) -> str:
    if name not in DIALECTS:
        raise RouteError(f"unknown upstream {name!r}: write one of {', '.join(DIALECTS)}")
    return name


def check_base_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RouteError(f"base URL {url!r} is not an http(s) URL: write e.g. https://api.anthropic.com")
    return url.rstrip("/")


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


def default_base_url(dialect: str, aws_region: str | None = None) -> str:
    """The dialect's public API; Bedrock's in the configured region when there is one."""
    if dialect == "bedrock" and aws_region:
        return f"https://bedrock-runtime.{aws_region}.amazonaws.com"
    return DEFAULT_BASE_URL[dialect]


def check_context_window(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise RouteError(f"{where} must be a positive number of tokens, e.g. context_window = 200000")
    return value


def from_options(upstream: str, base_url: str, model: str, key_env: str, *,
                 aws_region: str | None = None, compaction_model: str = "",
                 context_window: int = 0) -> list[Route]:
    """Routes from the single-route options; `compaction_model` names the model of the same
    upstream that writes compaction summaries (empty: each route's own model);
    `context_window` (0: unset) is every route's upstream window."""
    dialect = check_dialect(upstream)
    url = check_base_url(base_url or default_base_url(dialect, aws_region))
    env = key_env or DEFAULT_KEY_ENV[dialect]
    window = check_context_window(context_window, "gateway_context_window") if context_window else None
    routes = [Route(pattern, dialect, url, target, env, context_window=window)
              for pattern, target in parse_models(model)]
    if compaction_model.strip():
        routes = [replace(r, summarizer=replace(r, model=compaction_model.strip())) for r in routes]
    return routes


_ROUTE_KEYS = {"model": "gpt-5*", "upstream": "anthropic", "base_url": "https://api.anthropic.com",
               "target_model": "claude-sonnet-4-6", "key_env": "ANTHROPIC_API_KEY",
               "compaction_model": "claude-haiku-4-5", "compaction_upstream": "anthropic",
               "compaction_base_url": "https://api.anthropic.com", "compaction_key_env": "ANTHROPIC_API_KEY",
               "context_window": 200000}
"""The keys of a `[[route]]` table, with an example value each (for error messages)."""


def from_toml(path: str, *, aws_region: str | None = None) -> list[Route]:
    """Routes from a TOML file: `[[route]]` tables with `model` (a pattern, default `*`),
    `upstream`, optional `base_url`, `target_model`, `key_env`, `context_window` (the upstream
    model's window in tokens, served to Codex; addon/catalog.py), and the summarizer of compaction
    requests: `compaction_model`, `compaction_upstream` (whose URL and key variable default to
    that dialect's), `compaction_base_url`, `compaction_key_env`; first match wins."""
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
        # a misspelled key would otherwise be ignored and the route would silently use a default
        for key, value in entry.items():
            if key not in _ROUTE_KEYS:
                raise RouteError(f"gateway_config route #{i + 1} has an unknown key {key!r}: "
                                 f"write one of {', '.join(_ROUTE_KEYS)}")
            if key == "context_window":
                check_context_window(value, f"gateway_config route #{i + 1}: context_window")
            elif not isinstance(value, str):
                raise RouteError(f"gateway_config route #{i + 1}: {key} must be a string, "
                                 f'e.g. {key} = "{_ROUTE_KEYS[key]}"')
        dialect = check_dialect(entry["upstream"])
        route = Route(
            pattern=entry.get("model", "*"),
            dialect=dialect,
            base_url=check_base_url(entry.get("base_url") or default_base_url(dialect, aws_region)),
            model=entry.get("target_model") or None,
            key_env=entry.get("key_env") or DEFAULT_KEY_ENV[dialect],
            context_window=entry.get("context_window"),
        )
        routes.append(replace(route, summarizer=_summarizer(route, entry, i, aws_region)))
    if not routes:
        raise RouteError(f"gateway_config {path!r} has no [[route]] table")
    return routes


def _summarizer(route: Route, entry: dict[str, Any], i: int, aws_region: str | None) -> Route | None:
    """A route table's `compaction_*` keys -> the route compaction requests go to, or None."""
    if not any(key.startswith("compaction_") for key in entry):
        return None
    upstream = entry.get("compaction_upstream")
    dialect = check_dialect(upstream) if upstream else route.dialect
    if dialect == route.dialect:
        url, model, key_env = route.base_url, route.model, route.key_env
    elif entry.get("compaction_model"):
        url, model, key_env = default_base_url(dialect, aws_region), None, DEFAULT_KEY_ENV[dialect]
    else:
        raise RouteError(f"gateway_config route #{i + 1}: compaction_upstream {dialect!r} needs a "
                         'compaction_model, e.g. compaction_model = "claude-haiku-4-5"')
    return Route(route.pattern, dialect, check_base_url(entry.get("compaction_base_url") or url),
                 entry.get("compaction_model") or model, entry.get("compaction_key_env") or key_env)

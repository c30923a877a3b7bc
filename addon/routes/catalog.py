"""Codex's model catalog, served so that Codex compacts at the upstream model's real window
(docs/codex.md "Model catalog" and "Compaction", docs/models.md).

Codex compacts at 90% of the `context_window` of its catalog entry for the model it is told to
use; through the gateway that model is another vendor's, with another window. Codex fetches its
catalog from a URL (regular proxy mode: chatgpt.com's; a custom provider: its `model_catalog_url`)
and a served entry replaces its own entry of that slug **as a whole**. So every served entry is
Codex's own bundled entry (`codex-<version>-models.json`, written by `codex debug models --bundled`
of that version; `python -m bench.codex_models` regenerates it) with the window alone changed, and
the tools, instructions and reasoning levels Codex uses stay what they were.

The whole bundled catalog is served, mapped entries changed: one served entry with `visibility:
"list"` makes the served list replace Codex's whole catalog, so the mapped models alone would drop
every other one (the model picker's list, the hidden auto-review model). chatgpt.com's request is
answered only when a window changes; the gateway's own path always (see `answer`).

`python -m addon catalog` writes the same document as a `model_catalog_json` file, for the setup
where Codex fetches nothing (`openai_base_url`).
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import parse_qs, urlsplit

from mitmproxy import ctx, exceptions, http

from addon.observe import console
from addon.routes.route_file import from_toml
from addon.routes.routing import Route, RouteError, Router, from_options
from addon.serve import client_facts, paths
from addon.serve.answers import answer as answer_flow
from addon.serve.answers import json_response
from translators.core.capabilities import ModelCapabilities

if TYPE_CHECKING:
    from addon.serve.services import Services

BUNDLED_VERSION = "0.169.0"
"""The Codex CLI version whose bundled catalog the gateway ships."""
BUNDLED_PATH = Path(__file__).with_name(f"codex-{BUNDLED_VERSION}-models.json")
CHATGPT_HOST = client_facts.CATALOG_HOST
CHATGPT_PATH = client_facts.CATALOG_PATH
"""Where Codex's built-in provider fetches the catalog in regular proxy mode."""
GATEWAY_PATH = "/gateway/codex/models"
"""The gateway's own catalog URL, on any host (a custom provider's `model_catalog_url`); a path
OpenAI does not have, so it never shadows the real `/v1/models` in reverse mode."""
COMPACT_SHARE = 0.9
"""Codex compacts when the reported usage reaches this share of `context_window`."""

Where = Literal["chatgpt", "gateway"]
WindowOf = Callable[[Route, str], "int | None"]

log = logging.getLogger(__name__)


class CatalogError(ValueError):
    """A bundled catalog file that cannot be used; the message says what to do."""


# -- the bundled catalog ----------------------------------------------------------------------
@functools.lru_cache(maxsize=4)
def load_bundled(path: str = "") -> tuple[dict[str, Any], ...]:
    """The entries of a bundled catalog (`codex debug models --bundled` output); empty path: the
    one shipped for Codex BUNDLED_VERSION. Shared between callers: never modify an entry."""
    where = Path(path) if path else BUNDLED_PATH
    try:
        data = json.loads(where.read_bytes())
    except OSError as exc:
        raise CatalogError(f"Codex catalog {str(where)!r} cannot be read: {exc}") from None
    except ValueError as exc:
        raise CatalogError(f"Codex catalog {str(where)!r} is not JSON: {exc}") from None
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, list) or not models or not all(
            isinstance(m, dict) and isinstance(m.get("slug"), str) for m in models):
        raise CatalogError(f"Codex catalog {str(where)!r} is not {{\"models\": [...]}} with a slug in each "
                           "entry: write it with `codex debug models --bundled > FILE`")
    return tuple(models)


# -- windows ----------------------------------------------------------------------------------
def windows_from(capabilities: Callable[[Route, str], ModelCapabilities | None]) -> WindowOf:
    """The context window of a model on a route's upstream: the route's stated one, else what
    `capabilities` says of the model (docs/models.md); None when the gateway has no figure. An
    OpenAI (`responses`) route is left to Codex, which knows OpenAI's models."""

    def window_of(route: Route, model: str) -> int | None:
        if route.context_window:
            return route.context_window
        if _table_of(route) is None:  # the client's own dialect
            return None
        caps = capabilities(route, model)
        return caps.context_window if caps is not None else None

    return window_of


def _table_of(route: Route) -> Callable[[str], ModelCapabilities] | None:
    """The route's shipped capabilities table (its dialect's codec's); None: nothing to plan."""
    codec = route.dialect.codec
    return codec.capabilities if codec is not None else None


def _shipped(route: Route, model: str) -> ModelCapabilities | None:
    table = _table_of(route)
    return table(model) if table is not None else None


window_for: WindowOf = windows_from(_shipped)
"""Windows from the shipped tables alone (the command; the gateway asks its capabilities cache)."""


def route_window(route: Route, slug: str, window_of: WindowOf = window_for) -> int | None:
    """The window Codex should compact against for client model `slug` on `route`. A stated
    `context_window` is taken as is; otherwise, when compaction requests go to another model (the
    route's summarizer), the smaller of the two windows, since the compaction request carries the
    whole history to that model."""
    own = window_of(route, route.model or slug)
    if own is None or route.context_window or route.summarizer is None:
        return own
    summarizer = route.summarizer
    theirs = window_of(summarizer, summarizer.model or route.model or slug)
    return own if theirs is None else min(own, theirs)


def with_window(entry: dict[str, Any], window: int) -> dict[str, Any]:
    """A copy of a bundled entry that differs in the window alone: `context_window`, the
    `max_context_window` a user override may reach (when the entry has one), and an
    `auto_compact_token_limit` above Codex's own threshold for the new window (when set)."""
    out = {**entry, "context_window": window}
    if out.get("max_context_window") is not None:
        out["max_context_window"] = window
    limit = out.get("auto_compact_token_limit")
    if isinstance(limit, int) and limit > int(window * COMPACT_SHARE):
        out["auto_compact_token_limit"] = int(window * COMPACT_SHARE)
    return out


@dataclass(frozen=True, slots=True)
class Catalog:
    models: list[dict[str, Any]]
    """The whole catalog: every bundled entry, the mapped ones with the upstream's window."""
    windows: dict[str, int] = field(default_factory=dict)
    """Client model (slug) -> the window served for it."""
    unknown: dict[str, str] = field(default_factory=dict)
    """Client model -> upstream model the gateway has no window for (Codex keeps its own)."""

    @property
    def document(self) -> dict[str, Any]:
        return {"models": self.models}

    def summary(self) -> str:
        said = [f"{slug} -> {window:,} tokens" for slug, window in self.windows.items()]
        said += [f"{slug} ({model}) left to Codex: no context window known, set context_window"
                 for slug, model in self.unknown.items()]
        return "; ".join(said) or "no route maps a model of Codex's catalog"


def build(router: Router, bundled: Sequence[dict[str, Any]], window_of: WindowOf = window_for) -> Catalog:
    """Each bundled entry whose slug a route maps, with that route's upstream window; the others
    (unmapped, or no figure known) as Codex ships them."""
    models: list[dict[str, Any]] = []
    windows: dict[str, int] = {}
    unknown: dict[str, str] = {}
    for entry in bundled:
        slug = entry["slug"]
        route = router.route(slug)
        window = route_window(route, slug, window_of) if route is not None else None
        if route is not None and window is None:
            unknown[slug] = f"{route.dialect.name} {route.model or slug}"
        if window is None:
            models.append(entry)
        else:
            models.append(with_window(entry, window))
            windows[slug] = window
    return Catalog(models, windows, unknown)


# -- serving ----------------------------------------------------------------------------------
def catalog_request(method: str, host: str, path: str) -> Where | None:
    """Which catalog URL a request asks for, if any."""
    if method != "GET":
        return None
    bare = path.split("?", 1)[0]
    if bare == GATEWAY_PATH:
        return "gateway"
    if paths.host(host) == CHATGPT_HOST and bare == CHATGPT_PATH:
        return "chatgpt"
    return None


_VERSION = re.compile(r"[0-9A-Za-z][0-9A-Za-z.+-]{0,31}")
UNREADABLE_VERSION = "(unreadable)"
"""What a `client_version` that is not a version (too long, other characters) is taken as: every
distinct value would otherwise be a distinct log line kept for good, and a `%0A` in it a forged
line of the log."""
MAX_NOTES = 64
"""Distinct catalog outcomes said in the log; past them, nothing more is said (nor kept)."""


def client_version(path: str) -> str | None:
    """Codex names its version in the query: `?client_version=0.169.0`; a value that is not a
    version reads `UNREADABLE_VERSION`."""
    values = parse_qs(urlsplit(path).query).get("client_version")
    if not values:
        return None
    return values[0] if _VERSION.fullmatch(values[0]) else UNREADABLE_VERSION


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    body: dict[str, Any] | None
    """None: let the request go on untouched."""
    note: str
    warning: bool = False
    """The note is a warning (entries of another Codex version were served)."""


def answer(where: Where, version: str | None, router: Router, bundled_path: str = "",
           window_of: WindowOf = window_for) -> Answer:
    """What a catalog request gets.

    chatgpt.com's URL is answered only when an entry changes and the entries are the asking
    Codex's own (the shipped version, or the user's file `bundled_path`); otherwise it goes on
    untouched, as without the gateway. The gateway's own path always gets the whole catalog: a
    custom provider with a `model_catalog_url` uses only what it fetched, and a failed fetch
    leaves it with fallback metadata for every model (docs/codex.md "Model catalog"), which is
    worse than entries of another Codex version."""
    stale = bool(not bundled_path and version and version != BUNDLED_VERSION)
    if stale and where == "chatgpt":
        return Answer(0, None, f"Codex {version} asks for its model catalog and the gateway ships Codex "
                               f"{BUNDLED_VERSION}'s: not served. {_OWN_CATALOG}")
    try:
        catalog = build(router, load_bundled(bundled_path), window_of)
    except CatalogError as exc:
        return _nothing(where, str(exc))
    if not catalog.windows and where == "chatgpt":
        return Answer(0, None, f"Codex's model catalog not served: {catalog.summary()}")
    note = f"Codex's model catalog served: {catalog.summary()}"
    if stale:
        note += (f". Codex {version} was served Codex {BUNDLED_VERSION}'s entries, whose tools and "
                 f"instructions may differ from its own. {_OWN_CATALOG}")
    return Answer(200, catalog.document, note, warning=stale)


_OWN_CATALOG = ("Write your Codex's with `codex debug models --bundled > FILE` and set "
                "gateway_codex_catalog=FILE.")


def _nothing(where: Where, reason: str) -> Answer:
    if where == "chatgpt":
        return Answer(0, None, reason)
    return Answer(404, {"error": {"type": "invalid_request_error", "code": "catalog_unavailable",
                                  "message": reason, "param": None}}, reason)


class Server:
    """The addon: `gateway_codex_catalog`, and the catalog requests claimed (addon/serve/claim.py)
    answered in `requestheaders` (before mitmproxy's block list, which runs in `request`), with
    the windows the gateway knows by then; says each distinct outcome once in the log."""

    name = "gateway-catalog"

    def __init__(self, services: Services | None = None) -> None:
        self.services = services
        self._said: set[str] = set()

    def load(self, loader: Any) -> None:
        loader.add_option("gateway_codex_catalog", str, "",
                          "Codex's bundled catalog (`codex debug models --bundled > FILE`) for a Codex "
                          f"other than {BUNDLED_VERSION}; empty: the shipped one.")

    def configure(self, updated: set[str]) -> None:
        if "gateway_codex_catalog" not in updated:
            return
        with console.option_errors():
            try:
                load_bundled(ctx.options.gateway_codex_catalog)
            except CatalogError as exc:
                raise exceptions.OptionsError(str(exc)) from None

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        services = self.services
        if services is None or flow.response or flow.error:
            return
        fc = services.flows.live(flow)
        if fc is None or fc.kind != "catalog":
            return
        # the window Codex compacts at comes from the vendor's own figure once it is known
        windows = windows_from(services.capabilities.best)
        self.serve(flow, services.router, ctx.options.gateway_codex_catalog, windows)

    def serve(self, flow: http.HTTPFlow, router: Router, bundled_path: str = "",
              window_of: WindowOf = window_for) -> bool:
        """Answer `flow` if it asks for the catalog and there is something to serve; True when
        the flow is answered."""
        request = flow.request
        where = catalog_request(request.method, request.pretty_host, request.path)
        if where is None:
            return False
        result = answer(where, client_version(request.path), router, bundled_path, window_of)
        if result.note not in self._said and len(self._said) < MAX_NOTES:
            self._said.add(result.note)
            log.log(logging.WARNING if result.warning else logging.INFO, "%s", result.note)
        if result.body is None:
            return False
        answer_flow(flow, json_response(result.status, result.body))
        flow.comment = f"gateway: {result.note}"
        return True


# -- the command ------------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m addon catalog",
        description="Write Codex's whole model catalog, each routed model with its upstream's context "
                    "window, as a model_catalog_json file (for openai_base_url setups, where Codex "
                    "fetches no catalog).")
    parser.add_argument("--config", help="TOML route file (as gateway_config); overrides the options below")
    parser.add_argument("--upstream", default="anthropic", help="as gateway_upstream (default: anthropic)")
    parser.add_argument("--model", default="", help="as gateway_model, e.g. gpt-5*=claude-sonnet-4-6")
    parser.add_argument("--base-url", default="", help="as gateway_base_url")
    parser.add_argument("--key-env", default="", help="as gateway_key_env")
    parser.add_argument("--compaction-model", default="", help="as gateway_compaction_model")
    parser.add_argument("--context-window", type=int, default=0, help="as gateway_context_window")
    parser.add_argument("--bundled", default="",
                        help="the Codex version's bundled catalog (`codex debug models --bundled > FILE`); "
                             f"default: Codex {BUNDLED_VERSION}'s, shipped")
    parser.add_argument("-o", "--output", default="-", help="file to write (default: standard output)")
    args = parser.parse_args(argv)
    try:
        routes = from_toml(args.config) if args.config else from_options(
            args.upstream, args.base_url, args.model, args.key_env,
            compaction_model=args.compaction_model, context_window=args.context_window)
        catalog = build(Router(routes=tuple(routes)), load_bundled(args.bundled))
    except (RouteError, CatalogError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(catalog.summary(), file=sys.stderr)
    if not catalog.windows:
        print("error: nothing to change; the file would be Codex's own catalog", file=sys.stderr)
        return 1
    text = json.dumps(catalog.document, ensure_ascii=False) + "\n"
    if args.output == "-":
        sys.stdout.write(text)
    else:
        Path(args.output).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""dialect-gateway: a mitmproxy addon that answers OpenAI Responses clients (Codex CLI) with
models that speak Anthropic Messages, Chat Completions, Gemini or Bedrock Converse.

    mitmdump -s addon/gateway.py --set gateway_upstream=anthropic --set gateway_model=claude-sonnet-4-6

All translation lives in `translators/`. This file is what mitmproxy loads: the gateway's addons
in the order their hooks run (`chain`, composed as mitmproxy's own `default_addons()`), and the
`Gateway` addon itself: the routes' options and the hooks of a flow the gateway serves, each a
dispatch to the pipeline (addon/serve/pipeline.py, addon/serve/upstream_answer.py;
docs/architecture.md "The pipeline").
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Sequence
from pathlib import Path
from typing import Any

# The one effect at import: mitmproxy loads this file by path (`-s addon/gateway.py`), with only
# the file's own folder importable, so `addon` and `translators` must be made importable before
# anything below can be imported. Everything else starts in `Gateway.load` (`_start`).
_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from mitmproxy import ctx, exceptions, http  # noqa: E402

from addon.observe import console, escape, flowinfo, metrics, traces, unknown_options, views  # noqa: E402
from addon.patches import (  # noqa: E402
    admission,
    early_answer,
    head_bound,
    loopback_pipe,
    trailers,
    unrouted,
    websocket_bound,
    websocket_served,
)
from addon.routes import catalog, plugins  # noqa: E402
from addon.routes.capabilities import MODES  # noqa: E402
from addon.routes.route_file import from_toml  # noqa: E402
from addon.routes.routing import DEFAULT_MATCH, RouteError, Router, from_options  # noqa: E402
from addon.serve import connections, misconfigured, pipeline, upstream_answer, websocket  # noqa: E402
from addon.serve.claim import Claims  # noqa: E402
from addon.serve.flow import SERVED, FlowCtx, Flows, Stage, speaks_of  # noqa: E402
from addon.serve.guard import guarded  # noqa: E402
from addon.serve.sending import Retarget, upstream_proxy_url  # noqa: E402
from addon.serve.services import Services  # noqa: E402
from addon.state.rest import StoreEndpoints  # noqa: E402
from addon.state.storage import Storage  # noqa: E402
from addon.state.turns import Turns  # noqa: E402
from addon.team import passing  # noqa: E402
from addon.team.budgets import Budgets  # noqa: E402
from addon.team.keys import Keys  # noqa: E402
from addon.team.passing import Passing  # noqa: E402
from addon.team.sockets import Revocations  # noqa: E402
from addon.upstream import policy  # noqa: E402
from addon.work import limits, offload, workers  # noqa: E402
from translators import dialect as registry  # noqa: E402
from translators.features import websearch  # noqa: E402

_started = False


def _start() -> None:
    """Once per process, from the first `Gateway.load`: the dialects `$GATEWAY_DIALECTS` names
    (before `load` declares their options), the escaping of the gateway's log records, and the
    patches of mitmproxy's internals (addon/patches/, docs/concurrency.md "Patches of mitmproxy":
    an upstream failure answered in the client's dialect, credentials put on the wire only, and the
    bounds on hostile clients). Each is idempotent; a reload of the script runs none again."""
    global _started
    if _started:
        return
    plugins.load_extra()
    escape.install()  # a client's value on a log line writes only itself (addon/observe/escape.py)
    early_answer.install()
    admission.install()  # the bounds on client connections (addon/serve/connections.py)
    head_bound.install()
    trailers.install()
    unrouted.install()  # a model no route takes, its destination unreachable: the client's 502
    websocket_bound.install()
    websocket_served.install()  # a socket the gateway serves, served where mitmproxy hands it over
    loopback_pipe.install()  # mitmproxy reaches the loopback server through a pipe, not a socket
    _started = True


class Gateway:
    """The routes and the flows the gateway serves: its options (`gateway_upstream`,
    `gateway_model`, `gateway_config`, ...), checked and turned into routes in `configure`; its
    hooks hand a claimed flow's steps to the pipeline by the flow's stage."""

    def __init__(self, services: Services) -> None:
        self.services = services

    # -- options ----------------------------------------------------------------------------
    def load(self, loader: Any) -> None:
        _start()
        loader.add_option("gateway_upstream", str, "anthropic",
                          f"Upstream dialect: {' | '.join(registry.names())}.")
        loader.add_option("gateway_base_url", str, "",
                          "Upstream base URL; empty means the dialect's public API.")
        loader.add_option("gateway_model", str, "",
                          "Upstream model: one name, or pattern=model pairs "
                          "(gpt-5*=claude-sonnet-4-6,*=claude-haiku-4-5); empty keeps the client's.")
        loader.add_option("gateway_key_env", str, "",
                          "Environment variable holding the key sent to the base URL; empty: the "
                          "dialect's own variable, sent only to the dialect's own public host.")
        loader.add_option("gateway_match", Sequence[str], list(DEFAULT_MATCH),
                          "host/path patterns of intercepted requests (fnmatch; a pattern starting "
                          "with / matches any host).")
        loader.add_option("gateway_config", str, "",
                          "Optional TOML file with [[route]] tables (model, upstream, base_url, "
                          "target_model, key_env); overrides the single-route options.")
        loader.add_option("gateway_compaction_model", str, "",
                          "Model of the route's own upstream that writes Codex's compaction summaries; "
                          "empty: the route's own model (per route in gateway_config: compaction_model).")
        loader.add_option("gateway_context_window", int, 0,
                          "Upstream context window in tokens served to Codex with its model catalog "
                          "(0: the model's own figure; per route in gateway_config: context_window).")
        loader.add_option("gateway_max_output_tokens", int, 0,
                          "The most the upstream model writes: a larger client limit is lowered to it "
                          "(0: the model's own figure; per route in gateway_config: max_output_tokens).")
        loader.add_option("gateway_web_search", str, "follow",
                          "Web search on the upstream's own engine: follow (live when the client asks "
                          "for live search), live (also when it asks for cached results), off.")
        loader.add_option("gateway_capture_dir", str, "",
                          "Write a redacted capture folder per translated flow here.")
        loader.add_option("gateway_capabilities", str, "vendor",
                          "Where a model's capabilities come from: vendor (its models endpoint, "
                          "else the shipped table) | table (never ask; offline use).", choices=list(MODES))
        # str, not float: `--set` parses str, int, bool and lists only (docs/team.md "Options")
        loader.add_option("gateway_capabilities_timeout", str, "2",
                          "Seconds a request waits for the models endpoint before it is translated "
                          "with the shipped table (the answer still fills the cache); decimals allowed.")
        for dialect in registry.every():  # a dialect's own options (e.g. a region)
            for option in dialect.options:
                loader.add_option(option.name, option.type, option.default, option.help)
        limits.add_options(loader)
        for name, kind, default, help_text in policy.OPTIONS:  # the upstream leg's (docs/pools.md)
            loader.add_option(name, kind, default, help_text)

    def running(self) -> None:
        console.started()  # an option error from now on is rolled back, not fatal
        offload.freeze_startup()
        self._retarget_last()

    def _retarget_last(self) -> None:
        """The re-target to the loopback server runs after every other addon's `request` hook
        (after `serverplayback`: a server replay still matches the real upstream request), so it
        is appended to the end of mitmproxy's chain; a reload of the script replaces it."""
        addons = getattr(getattr(ctx, "master", None), "addons", None)
        if addons is None:
            return
        upstream = self.services.upstream
        if (old := addons.get(Retarget.name)) is not None:
            addons.remove(old)
        addons.add(Retarget(lambda: upstream.server.base_url if upstream.server.started else None))
        loopback_pipe.serve(upstream.server.accepting)

    def configure(self, updated: set[str]) -> None:
        # a bad option or an unknown gateway_ name at start-up is one line and exit 1, before the
        # proxy listens (addon/observe/console.py, addon/observe/unknown_options.py)
        with console.option_errors():
            unknown_options.check(getattr(ctx.options, "deferred", {}), ctx.options.keys())
            self._configure(updated)

    def _configure(self, updated: set[str]) -> None:
        o = ctx.options
        strategy = o.connection_strategy if "connection_strategy" in o else "lazy"
        if "connection_strategy" in updated and strategy != "lazy":
            # an eager strategy would connect to api.openai.com before the request is
            # re-targeted (docs/mitmproxy.md "Connection strategy"); a translated flow must never touch it.
            # Checked on its own, so a later `set connection_strategy=eager` is undone too.
            o.update(connection_strategy="lazy")
        if updated & {"ssl_insecure", "ssl_verify_upstream_trusted_ca"}:  # the leg's own TLS (docs/pools.md)
            cafile = getattr(o, "ssl_verify_upstream_trusted_ca", None) or None
            self.services.upstream.client.configure(insecure=bool(getattr(o, "ssl_insecure", False)),
                                                    cafile=cafile)
        if not any(name.startswith("gateway_") for name in updated):
            return
        for dialect in registry.every():
            for option in dialect.options:
                if option.check is not None and (problem := option.check(getattr(o, option.name))):
                    raise exceptions.OptionsError(problem)
        if o.gateway_web_search not in websearch.MODES:
            raise exceptions.OptionsError(f"gateway_web_search {o.gateway_web_search!r}: write one of "
                                          + ", ".join(websearch.MODES))
        settings = plugins.settings(o)
        try:
            routes = from_toml(o.gateway_config, settings=settings) if o.gateway_config else from_options(
                o.gateway_upstream, o.gateway_base_url, o.gateway_model, o.gateway_key_env,
                settings=settings, compaction_model=o.gateway_compaction_model,
                context_window=o.gateway_context_window, max_output_tokens=o.gateway_max_output_tokens)
        except RouteError as exc:
            raise exceptions.OptionsError(str(exc)) from None
        match = tuple(p.strip() for p in o.gateway_match if p.strip())
        if not match:
            raise exceptions.OptionsError("gateway_match is empty: write e.g. api.openai.com/v1/responses")
        if o.gateway_capabilities not in MODES:
            raise exceptions.OptionsError(f"gateway_capabilities {o.gateway_capabilities!r}: "
                                          "write vendor or table")
        timeout = _seconds(o.gateway_capabilities_timeout)
        if timeout is None:
            raise exceptions.OptionsError("gateway_capabilities_timeout is negative or not seconds: "
                                          "write e.g. 2 or 0.5")
        try:
            leg_limits = policy.parse_limits(o.gateway_retries, o.gateway_retry_seconds,
                                             o.gateway_idle_timeout)
        except ValueError as exc:
            raise exceptions.OptionsError(str(exc)) from None
        self.services.upstream.configure(insecure=bool(getattr(o, "ssl_insecure", False)),
                                         cafile=getattr(o, "ssl_verify_upstream_trusted_ca", None),
                                         limits=leg_limits, routes=routes)
        self.services.router = Router(routes=tuple(routes), match=match)
        self.services.settings = settings
        self.services.capabilities.configure(routes, mode=o.gateway_capabilities, timeout=timeout,
                                             proxy=upstream_proxy_url(o))

    # -- hooks: each hands the flow's next step to the pipeline, by the flow's stage ------------
    def requestheaders(self, flow: http.HTTPFlow) -> None:
        fc = self.services.flows.live(flow)
        if fc is None or fc.stage is not Stage.CLAIMED or flow.response or flow.error:
            return
        pipeline.claimed(fc)
        if fc.kind == "websocket" and not flow.response:
            # Codex tries the Responses WebSocket first: served by addon/serve/websocket/ through the
            # same HTTP path (docs/websocket.md)
            websocket.ENDPOINT.take(flow, self.services.router.routes)

    async def request(self, flow: http.HTTPFlow) -> None:
        fc = self.services.flows.live(flow)
        if fc is None or fc.stage is not Stage.CLAIMED or flow.response or flow.error:
            return
        if fc.replay:
            await guarded(flow, pipeline.replay(self.services, fc))
        elif fc.kind in SERVED:
            await guarded(flow, pipeline.serve(self.services, fc))

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        fc = self.services.flows.get(flow)
        if fc is not None and fc.stage is Stage.SENT:
            upstream_answer.head_arrived(self.services, fc)

    def response(self, flow: http.HTTPFlow) -> Awaitable[None] | None:
        fc = self.services.flows.get(flow)
        return None if fc is None else upstream_answer.ended(self.services, fc)

    def error(self, flow: http.HTTPFlow) -> None:
        fc = self.services.flows.drop(flow)
        if flowinfo.KEY in flow.metadata:
            upstream_answer.failed(fc or FlowCtx(flow, speaks_of(flow.metadata)), self.services)
        self.services.budgets.release(flow)  # a turn nothing settled: what it held is let go of

    def done(self) -> None:
        workers.shutdown()
        self.services.upstream.client.close_now()


def _seconds(text: str) -> float | None:
    """An option of seconds, decimals allowed; None when it is not a number >= 0."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value >= 0 and value == value and value != float("inf") else None


def chain() -> list[Any]:
    """The gateway's addons, in the order mitmproxy calls their hooks (each hook of every addon in
    turn, as for mitmproxy's own `default_addons()`); each one's `load` declares its options and
    its `configure` checks them. They share one `Services`."""
    flows = Flows()
    storage = Storage()
    keys = Keys(flows)
    services = Services(flows=flows, clients=keys, budgets=Budgets(storage, keys), storage=storage,
                        turns=Turns(storage, keys))
    return [
        # the bounds on client connections: how many, from where, how long a head may take
        connections.Connections(),
        # what each request is to the gateway, decided once from its path (read as the upstream's
        # server reads it): its context opened (a request no one claims goes on untouched)
        Claims(services),
        # a request sent to a regular proxy as if it were the API: 421 naming `--mode reverse:`
        misconfigured.Misdirected(flows),
        # who sent a claimed request: a client key, else 401 before anything is served or sent
        keys,
        # with client keys, a revoked key's open WebSockets closed within seconds
        Revocations(keys),
        # with client keys, what the gateway does not claim: refused, or passed on without a key
        Passing(keys, flows, lambda: passing.gateway_hosts(services.router.match)),
        # the response store's options; opened at first use, closed at `done`
        storage,
        # the routes; a declared body too large: 413; an upgrade to the WebSocket endpoint; then
        # the pipeline's steps of the turns, counts and models it serves
        Gateway(services),
        # `gateway_item_cache`: each client's decoded request items, for the pipeline's translations
        services.items,
        # Codex's model catalog, answered in `requestheaders`
        catalog.Server(services),
        # the store's REST endpoints and `/gateway/usage`, answered in `request`
        StoreEndpoints(services),
        # the Responses WebSocket: its loopback server, its sockets' messages kept within bounds
        websocket.ENDPOINT,
        # mitmweb's views of a translation
        views.Views(),
        # one line per flow, after the gateway's hooks (awaited) have completed the flow's record
        console.Console(lambda: services.router),
        # the metrics and the traces read the same finished record (docs/metrics.md)
        metrics.Metrics(lambda: services.router),
        traces.Traces(lambda: services.router),
    ]


addons = chain()
gateway = next(a for a in addons if isinstance(a, Gateway))
"""The `Gateway` of this script's chain (bench and test scripts look it up by this name)."""

"""dialect-gateway: a mitmproxy addon that answers OpenAI Responses clients (Codex CLI) with
models that speak Anthropic Messages, Chat Completions, Gemini or Bedrock Converse.

    mitmdump -s addon/gateway.py --set gateway_upstream=anthropic --set gateway_model=claude-sonnet-4-6

All translation lives in `translators/`; this file is the addon's options and its hooks, each
thin: a hook finds the flow's context (addon/serve/flow.py) and hands the work to the pipeline
(addon/serve/pipeline.py, docs/architecture.md "The pipeline").
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

# The one effect at import: mitmproxy loads this file by path (`-s addon/gateway.py`), with only
# the file's own folder importable, so `addon` and `translators` must be made importable before
# anything below can be imported. Everything else starts in `Gateway.load` (`_start`).
_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from mitmproxy import ctx, exceptions, http  # noqa: E402

from addon.observe import console, flowinfo, metrics, traces, views  # noqa: E402
from addon.patches import cutoff  # noqa: E402
from addon.routes import catalog, plugins  # noqa: E402
from addon.routes.capabilities import MODES, Capabilities  # noqa: E402
from addon.routes.routing import DEFAULT_MATCH, RouteError, Router, from_options, from_toml  # noqa: E402
from addon.serve import bodies, pipeline, websocket  # noqa: E402
from addon.serve import client_side as client_dialects  # noqa: E402
from addon.serve.answers import answer, error_response  # noqa: E402
from addon.serve.flow import FlowCtx, Flows, speaks_of  # noqa: E402
from addon.serve.ir_cache import ItemCaches  # noqa: E402
from addon.serve.streaming import StreamHook  # noqa: E402
from addon.state.turns import State  # noqa: E402
from addon.team import keys as clients  # noqa: E402
from addon.team import usage  # noqa: E402
from addon.upstream import credentials  # noqa: E402
from addon.upstream import headers as upstream_headers  # noqa: E402
from addon.work import limits, offload, workers  # noqa: E402
from translators import client_dialects as client_registry  # noqa: E402
from translators import dialect as registry  # noqa: E402
from translators import stream_translator  # noqa: E402
from translators.features import websearch  # noqa: E402

_started = False


def _start() -> None:
    """Once per process, from the first `Gateway.load`: the dialects `$GATEWAY_DIALECTS` names
    (before `load` declares their options), and the two patches of mitmproxy's HTTP layer (an
    upstream failure answered in the client's dialect, addon/patches/cutoff.py; credentials put on the
    wire only, addon/upstream/credentials.py). Each is idempotent; a reload of the script runs none again."""
    global _started
    if _started:
        return
    plugins.load_extra()
    cutoff.install()
    credentials.install()
    _started = True


class Gateway:
    def __init__(self) -> None:
        self.router = Router(routes=())
        self.catalog = catalog.Server()
        self.flows = Flows()
        """The context of each flow in flight (addon/serve/flow.py)."""
        self.capabilities = Capabilities()
        """What each route model accepts (the vendor's models endpoint, else the shipped table)."""
        self.clients = clients.Gate()
        """Who each request is (gateway_clients, addon/team/keys.py)."""
        self.state = State(self.clients)
        """previous_response_id, conversations, /responses/compact and the store (addon/state/turns.py)."""
        self.items = ItemCaches()
        """Each client's decoded request items, reused by its next turns (addon/serve/ir_cache.py)."""
        self.settings: dict[str, registry.Settings] = {}
        """Each dialect's own options and environment variables (addon/routes/plugins.py)."""
        self._running = False

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
        loader.add_option("gateway_codex_catalog", str, "",
                          "Codex's bundled catalog (`codex debug models --bundled > FILE`) for a Codex "
                          f"other than {catalog.BUNDLED_VERSION}; empty: the shipped one.")
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
        self.state.load(loader)
        self.clients.load(loader)
        self.items.load(loader)
        limits.add_options(loader)

    def running(self) -> None:
        self._running = True
        offload.freeze_startup()
        self.clients.running()  # the warning for a listener others reach without client keys

    def configure(self, updated: set[str]) -> None:
        # a bad option at start-up is one line and exit 1, before the proxy listens (addon/observe/console.py)
        with console.option_errors(starting=not self._running and console.in_real_master()):
            self._configure(updated)

    def _configure(self, updated: set[str]) -> None:
        o = ctx.options
        strategy = o.connection_strategy if "connection_strategy" in o else "lazy"
        if "connection_strategy" in updated and strategy != "lazy":
            # an eager strategy would connect to api.openai.com before the request is
            # re-targeted (docs/mitmproxy.md "Connection strategy"); a translated flow must never touch it.
            # Checked on its own, so a later `set connection_strategy=eager` is undone too.
            o.update(connection_strategy="lazy")
        self.state.configure(updated)
        self.clients.configure(updated)
        self.items.configure(updated)
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
            catalog.load_bundled(o.gateway_codex_catalog)
        except (RouteError, catalog.CatalogError) as exc:
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
        self.router = Router(routes=tuple(routes), match=match)
        self.settings = settings
        self.capabilities.configure(routes, mode=o.gateway_capabilities,
                                    timeout=timeout)

    # -- hooks: each reads the flow's context and hands the work to addon/serve/pipeline.py ---------
    def _matched(self, flow: http.HTTPFlow) -> bool:
        return self.router.matches(flow.request.pretty_host, flow.request.path)

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        if flow.response or flow.error:
            return
        speaks = client_dialects.claim(flow, self.router)
        if speaks is not None:  # a client dialect's own path (e.g. Claude Code's): said its way
            self.flows.open(flow, speaks)
        if speaks is not None or self._ours(flow):
            # its client first: nothing is served or sent for an unknown one
            if self.clients.identify(flow) is None:
                return  # answered 401 (addon/team/keys.py)
            if refused := bodies.declared_too_large(flow.request.headers, self.max_request()):
                flow.response = error_response(speaks_of(flow.metadata), 413, "request_too_large", refused)
                return
        # the window Codex compacts at comes from the vendor's own figure once it is known
        windows = catalog.windows_from(self.capabilities.best)
        if self.catalog.serve(flow, self.router, ctx.options.gateway_codex_catalog, windows):
            return  # Codex's model catalog, with the upstream windows (addon/routes/catalog.py)
        if not self._matched(flow):
            return
        if flow.request.headers.get("upgrade", "").lower() == "websocket":
            # Codex tries the Responses WebSocket first: served by addon/serve/websocket/ through the
            # same HTTP path (docs/websocket.md)
            websocket.ENDPOINT.take(flow, self.router.routes)
        elif refused := bodies.declared_too_large(flow.request.headers, self.max_request()):
            # the body is never read
            flow.response = error_response(speaks_of(flow.metadata), 413, "request_too_large", refused)

    def _ours(self, flow: http.HTTPFlow) -> bool:
        """The gateway answers or translates this request: an intercepted path, a store endpoint,
        the model catalog, the client's usage (a client dialect's own paths are claimed before)."""
        r = flow.request
        return (self._matched(flow) or catalog.catalog_request(r.method, r.pretty_host, r.path) is not None
                or self.state.endpoint(self.router.match, r.pretty_host, r.path) is not None
                or r.path.split("?", 1)[0].rstrip("/") == usage.PATH)

    def http_connect(self, flow: http.HTTPFlow) -> None:
        self.clients.http_connect(flow)  # regular mode: the proxy password names the tunnel's client

    @staticmethod
    def max_request() -> int:
        return int(ctx.options.gateway_max_request_bytes)

    async def request(self, flow: http.HTTPFlow) -> None:
        if flow.response or flow.error:
            return None
        if flowinfo.KEY in flow.metadata:
            if flow.is_replay == "request" and flow.live:  # mitmweb's Replay, `mitmdump -C saved.flow`
                fc = self.flows.open(flow, speaks_of(flow.metadata), replay=True)
                await self._guarded(fc, pipeline.replay)
            return  # otherwise translated before (a loaded flow): never twice
        if await self.state.serve_usage(flow):
            return  # GET /gateway/usage: the client's own (addon/team/usage.py)
        fc = self.flows.get(flow)
        if fc is not None:  # claimed in `requestheaders` by a client dialect of its own paths
            await self._guarded(fc, pipeline.serve)
            return
        rest = self.state.endpoint(self.router.match, flow.request.pretty_host, flow.request.path)
        if rest is not None and rest != "responses/compact":  # the store's own endpoints
            passthrough = any(plugins.passes_through(r.dialect) for r in self.router.routes)
            await self._store(flow, rest, passthrough)
            return
        if flow.request.method != "POST" or not (self._matched(flow) or rest is not None):
            return
        fc = self.flows.open(flow, client_registry.get(client_registry.DEFAULT))
        await self._guarded(fc, pipeline.serve)

    async def _store(self, flow: http.HTTPFlow, rest: str, passthrough: bool) -> None:
        try:
            await self.state.serve(flow, rest, passthrough=passthrough)
        except Exception as exc:
            _fail_closed(flow, exc)

    async def _guarded(self, fc: FlowCtx, step: Callable[[Gateway, FlowCtx], Awaitable[None]]) -> None:
        try:
            await step(self, fc)
        except Exception as exc:
            _fail_closed(fc.flow, exc)

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        fc = self.flows.get(flow)
        if fc is None or fc.translation is None or flow.response is None or fc.done:
            return
        translation = fc.translation
        limits.keep_sent_request(flow.request, ctx.options.gateway_max_kept_bytes)  # sent by now
        upstream_headers.screen(flow, translation.target)  # vendor headers stay behind; redirects refused
        if flow.response.status_code != 200 or not translation.stream or upstream_headers.refusal(flow):
            return  # errors, refusals and whole answers are answered in `response`
        if flow.is_replay == "response" or not flow.live:
            return  # server-replayed and loaded answers never reach a stream callable
        translator = self.state.recorder(fc, stream_translator(translation.target, translation))
        had_length = flow.response.headers.pop("content-length", None) is not None
        if had_length and flow.request.http_version != "HTTP/1.0":
            # the translated body has another length; chunked framing tells an HTTP/1.1 client
            # where it ends and keeps the connection (h2 clients never see this header)
            flow.response.headers["transfer-encoding"] = "chunked"
        flow.response.headers.pop("content-encoding", None)
        flow.response.headers["content-type"] = fc.speaks.stream_content_type
        fc.hook = StreamHook(translator, secrets=credentials.secrets_of(flow),
                             max_kept=ctx.options.gateway_max_kept_bytes, speaks=fc.speaks)
        flow.response.stream = fc.hook

    def response(self, flow: http.HTTPFlow) -> Awaitable[None] | None:
        fc = self.flows.get(flow)
        if fc is None:
            return None  # not a gateway flow: nothing to do, whatever its size
        if fc.translation is None:  # answered by the proxy, or a count the upstream answered
            if fc.counting and not fc.done and flow.response is not None:
                client_dialects.read_count(fc)
            self._over(fc)
            return None
        # a large whole answer is translated in a worker thread (addon/work/offload.py)
        size = len(flow.response.raw_content or b"") if flow.response is not None else 0
        try:
            answered = offload.off_loop(size, pipeline.answer, self, fc)
        except BaseException:
            self.flows.drop(flow)
            raise
        if answered is None and not self.state.writing(fc):
            self._over(fc)
            return None
        return self._end(fc, answered)

    async def _end(self, fc: FlowCtx, answered: Awaitable[None] | None) -> None:
        """The rest of the response hook: the answer's translation in a worker thread, then its
        turn's store write. mitmproxy ends the client's body once this returns, so a client that
        reads to the end finds its turn stored, whichever gateway serves its next one
        (`State.written`)."""
        try:
            if answered is not None:
                await answered
            if await self.state.written(fc) and fc.has_info:
                flowinfo.describe(fc.flow)  # with a note the write may have left
        finally:
            self._over(fc)

    def _over(self, fc: FlowCtx) -> None:
        """The flow's last step: its context let go of."""
        self.flows.drop(fc.flow)

    def error(self, flow: http.HTTPFlow) -> None:
        fc = self.flows.drop(flow)
        if flowinfo.KEY in flow.metadata:
            pipeline.failed(flow, fc.hook if fc is not None else None)

    def done(self) -> None:
        workers.shutdown()
        self.state.done()  # the turns queued are written, then the store is closed


def _fail_closed(flow: http.HTTPFlow, exc: Exception) -> None:
    """An exception escaping a hook would make mitmproxy log it and send the flow on as it
    stands, i.e. untranslated to OpenAI with the client's credentials, or half-rewritten. A flow
    this addon took on is answered instead."""
    message = f"gateway could not handle the request: {exc!r}"[:500]
    info = flow.metadata.setdefault(flowinfo.KEY, flowinfo.record("-"))
    info["error"] = message
    answer(flow, error_response(speaks_of(flow.metadata), 500, "server_error", message))


def _seconds(text: str) -> float | None:
    """An option of seconds, decimals allowed; None when it is not a number >= 0."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value >= 0 and value == value and value != float("inf") else None


gateway = Gateway()
addons = [gateway, views.Views(), console.Console(lambda: gateway.router), websocket.ENDPOINT,
          metrics.Metrics(lambda: gateway.router), traces.Traces(lambda: gateway.router)]

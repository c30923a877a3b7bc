"""dialect-gateway: a mitmproxy addon that answers OpenAI Responses clients (Codex CLI) with
models that speak Anthropic Messages, Chat Completions, Gemini or Bedrock Converse.

    mitmdump -s addon/gateway.py --set gateway_upstream=anthropic --set gateway_model=claude-sonnet-4-6

All translation lives in `translators/`; this file is glue: options, matching, re-targeting,
auth, streaming hookup, metadata.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Sequence
from pathlib import Path
from typing import Any

_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:  # loaded by path with `-s addon/gateway.py`: make the repo importable
    sys.path.insert(0, _ROOT)

from mitmproxy import ctx, exceptions, http  # noqa: E402

from addon import (  # noqa: E402
    auth,
    bodies,
    catalog,
    client_dialects,
    clients,
    console,
    credentials,
    cutoff,
    dialects,
    flowinfo,
    history,
    limits,
    recording,
    usage,
    views,
    websocket,
    workers,
)
from addon import headers as upstream_headers  # noqa: E402
from addon.capabilities import MODES, Capabilities  # noqa: E402
from addon.errors import answer, error_response, json_response  # noqa: E402
from addon.routing import DEFAULT_MATCH, Route, RouteError, Router, from_options, from_toml, serving  # noqa: E402
from addon.state import AS_SENT, State  # noqa: E402
from addon.store import ItemsJSON  # noqa: E402
from addon.streaming import StreamHook  # noqa: E402
from translators import (  # noqa: E402
    Translation,
    TranslatorError,
    compaction,
    stream_translator,
    translate_error,
    translate_request,
    translate_response,
    websearch,
    wirejson,
)
from translators import dialect as registry  # noqa: E402

dialects.load_extra()  # the dialects $GATEWAY_DIALECTS names, before `load` declares their options

_FRAMING_HEADERS = ("content-length", "host", "content-encoding", "transfer-encoding")
"""Client headers that describe the client's own body and connection, never the one re-sent."""


class Gateway:
    def __init__(self) -> None:
        self.router = Router(routes=())
        self.catalog = catalog.Server()
        self._live: dict[str, Translation] = {}
        """The translation of each flow in flight. The metadata copy leaves the upstream body out
        (it is the flow's request already), but decoders may read it (Gemini's call-id seed)."""
        self.capabilities = Capabilities()
        """What each route model accepts (the vendor's models endpoint, else the shipped table)."""
        self.clients = clients.Gate()
        """Who each request is (gateway_clients, addon/clients.py)."""
        self.state = State(self.clients)
        """previous_response_id, conversations, /responses/compact and the store (addon/state.py)."""
        self.settings: dict[str, registry.Settings] = {}
        """Each dialect's own options and environment variables (addon/dialects.py)."""
        self._running = False

    # -- options ----------------------------------------------------------------------------
    def load(self, loader: Any) -> None:
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
        limits.add_options(loader)

    def running(self) -> None:
        self._running = True
        limits.freeze_startup()
        self.clients.running()  # the warning for a listener others reach without client keys

    def configure(self, updated: set[str]) -> None:
        # a bad option at start-up is one line and exit 1, before the proxy listens (addon/console.py)
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
        if not any(name.startswith("gateway_") for name in updated):
            return
        for dialect in registry.every():
            for option in dialect.options:
                if option.check is not None and (problem := option.check(getattr(o, option.name))):
                    raise exceptions.OptionsError(problem)
        if o.gateway_web_search not in websearch.MODES:
            raise exceptions.OptionsError(f"gateway_web_search {o.gateway_web_search!r}: write one of "
                                          + ", ".join(websearch.MODES))
        settings = dialects.settings(o)
        try:
            routes = from_toml(o.gateway_config, settings=settings) if o.gateway_config else from_options(
                o.gateway_upstream, o.gateway_base_url, o.gateway_model, o.gateway_key_env,
                settings=settings, compaction_model=o.gateway_compaction_model,
                context_window=o.gateway_context_window)
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

    # -- hooks ------------------------------------------------------------------------------
    def _matched(self, flow: http.HTTPFlow) -> bool:
        return self.router.matches(flow.request.pretty_host, flow.request.path)

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        if flow.response or flow.error:
            return
        if self._ours(flow):  # its client first: nothing is served or sent for an unknown one
            if self.clients.identify(flow) is None:
                return  # answered 401 (addon/clients.py)
            if refused := bodies.declared_too_large(flow.request.headers, self._max_request()):
                flow.response = error_response(413, "request_too_large", refused)
                return
        # the window Codex compacts at comes from the vendor's own figure once it is known
        windows = catalog.windows_from(self.capabilities.best)
        if self.catalog.serve(flow, self.router, ctx.options.gateway_codex_catalog, windows):
            return  # Codex's model catalog, with the upstream windows (addon/catalog.py)
        if not self._matched(flow):
            return
        if flow.request.headers.get("upgrade", "").lower() == "websocket":
            # Codex tries the Responses WebSocket first: served by addon/websocket/ through the
            # same HTTP path (docs/websocket.md)
            websocket.ENDPOINT.take(flow, self.router.routes)
        elif refused := bodies.declared_too_large(flow.request.headers, self._max_request()):
            flow.response = error_response(413, "request_too_large", refused)  # the body is never read

    def _ours(self, flow: http.HTTPFlow) -> bool:
        """The gateway answers or translates this request: an intercepted path, a store endpoint,
        the model catalog, the client's usage."""
        r = flow.request
        return (self._matched(flow) or catalog.catalog_request(r.method, r.pretty_host, r.path) is not None
                or self.state.endpoint(self.router.match, r.pretty_host, r.path) is not None
                or r.path.split("?", 1)[0].rstrip("/") == usage.PATH
                or client_dialects.claim(flow, self.router) is not None)

    def http_connect(self, flow: http.HTTPFlow) -> None:
        self.clients.http_connect(flow)  # regular mode: the proxy password names the tunnel's client

    @staticmethod
    def _max_request() -> int:
        return int(ctx.options.gateway_max_request_bytes)

    async def request(self, flow: http.HTTPFlow) -> None:
        if flow.response or flow.error:
            return None
        if flowinfo.KEY in flow.metadata:
            if flow.is_replay == "request" and flow.live:
                await self._guarded(flow, self._replay)  # mitmweb's Replay, `mitmdump -C saved.flow`
            return  # otherwise translated before (a loaded flow): never twice
        if await self.state.serve_usage(flow):
            return  # GET /gateway/usage: the client's own (addon/usage.py)
        if (speaks := client_dialects.claim(flow, self.router)) is not None:  # e.g. Claude Code
            await self._guarded(flow, lambda f: client_dialects.serve(self, f, speaks))
            return
        rest = self.state.endpoint(self.router.match, flow.request.pretty_host, flow.request.path)
        if rest is not None and rest != "responses/compact":  # the store's own endpoints
            passthrough = any(dialects.passes_through(r.dialect) for r in self.router.routes)
            await self._guarded(flow, lambda f: self.state.serve(f, rest, passthrough=passthrough))
            return
        if flow.request.method != "POST" or not (self._matched(flow) or rest is not None):
            return
        await self._guarded(flow, self._intercept)

    async def _guarded(self, flow: http.HTTPFlow, step: Any) -> None:
        """Fail closed: an exception escaping a hook would make mitmproxy log it and send the
        flow on as it stands, i.e. untranslated to OpenAI with the client's credentials, or
        half-rewritten. A flow this addon took on is answered instead."""
        try:
            await step(flow)
        except Exception as exc:
            message = f"gateway could not handle the request: {exc!r}"[:500]
            info = flow.metadata.setdefault(flowinfo.KEY, {"upstream": "-", "model": None, "dropped": [],
                                                           "notes": []})
            info["error"] = message
            answer(flow, error_response(500, "server_error", message))

    async def _intercept(self, flow: http.HTTPFlow) -> None:
        # Codex may send zstd (docs/mitmproxy.md "Compressed bodies"). Read it decoded, once and
        # within gateway_max_request_bytes, but leave the body as sent until the flow is ours: an
        # unrouted request goes on untouched. A large body is read in a worker process, and the
        # proxy keeps it as bytes (addon/workers.py).
        raw = flow.request.raw_content or b""
        encoding = flow.request.headers.get("content-encoding")
        kept = ctx.options.gateway_max_kept_bytes
        try:
            small = self._read_inline(raw, encoding, kept)
            head = None if small else await workers.read_head(raw, encoding, self._max_request(), kept)
        except bodies.TooLarge as exc:
            flow.response = error_response(413, "request_too_large", str(exc))
            return
        except (ValueError, UnicodeDecodeError) as exc:
            flow.response = error_response(400, "invalid_json", f"the request body is not JSON: {exc}")
            return
        except RecursionError:  # not a ValueError: Python's parser gives up past ~1000 levels
            flow.response = error_response(400, "invalid_json", "the request body is nested too deeply")
            return
        if small is not None:
            body, text, data = small
            fields = body if isinstance(body, dict) else {}
            await self._translate(flow, fields, text, compaction.is_trigger(body), body=body, data=data)
        elif head is not None:
            try:
                await self._translate(flow, head.fields, head.client_text, head.trigger, spilled=head.body)
            finally:
                workers.discard(head.body)

    def _read_inline(self, raw: bytes, encoding: str | None, kept: int) -> tuple[Any, str, bytes] | None:
        """A small body's JSON, its text for the saved flow (`bodies.kept_text`) and its bytes
        decoded; None for a body of `limits.INLINE_BYTES` or more, as sent or once decoded,
        which a worker reads."""
        if len(raw) >= limits.INLINE_BYTES:
            return None
        limit = self._max_request()
        try:
            data, body, text = bodies.read(raw, encoding, min(limit, limits.INLINE_BYTES - 1), kept)
        except bodies.TooLarge:
            if limit < limits.INLINE_BYTES:
                raise
            return None
        return body, text, data

    async def _replay(self, flow: http.HTTPFlow) -> None:
        """A saved gateway flow sent again. Its request is the rewritten one, stale (old options)
        and with `<redacted>` keys; what the client sent is in the metadata, so the flow is
        translated afresh from that, with the current options, and its answer translated again.
        `flow.backup()` (done by the replay) keeps the old flow for mitmweb's Revert."""
        client_request = flow.metadata.get("gateway.client_request")
        speaks = client_dialects.of(flow)  # e.g. a Claude Code flow: its own client dialect
        stale = [k for k in flow.metadata if k == flowinfo.KEY or k.startswith("gateway.")]
        for key in stale:
            if key not in ("gateway.client_request", clients.METADATA):  # the views show it; its client
                del flow.metadata[key]
        if flow.marked == flowinfo.MARK:
            flow.marked = ""
        for name, value in list(flow.request.headers.items()):
            if value == "<redacted>":  # a saved secret is gone; never send the placeholder
                flow.request.headers.pop(name, None)
        try:
            body = wirejson.loads(client_request or "")
        except (ValueError, RecursionError):
            body = None
        if not isinstance(body, dict):
            cut = "gateway: cut here" in (client_request or "")[-300:]
            self._refuse_replay(flow, None, "the saved client request was cut at gateway_max_kept_bytes"
                                if cut else "the saved flow holds no client request to translate again")
            return
        if speaks is not None:
            await client_dialects.replay(self, flow, speaks, body, client_request or "")
            return
        await self._translate(flow, body, client_request or "", compaction.is_trigger(body), body=body,
                              replay=True)

    def _refuse_replay(self, flow: http.HTTPFlow, client_model: object, message: str) -> None:
        flow.metadata[flowinfo.KEY] = {"upstream": "-", "model": client_model, "client_model": client_model,
                                       "dropped": [], "notes": [], "error": f"replay: {message}"}
        answer(flow, error_response(400, "replay_failed", message))

    async def _translate(self, flow: http.HTTPFlow, fields: dict[str, Any], client_text: str, trigger: bool,
                         *, body: Any = None, data: bytes | None = None,
                         spilled: workers.Spilled | None = None, replay: bool = False) -> None:
        """Route, read the store and translate a request: a small one from its parsed `body`
        (`fields` is the body itself; `data` its bytes), a large one from its bytes, `spilled`,
        in a worker process, with only its short top-level members in `fields`
        (addon/workers.py); a small one that continues a long stored history goes to the worker
        too. `trigger`: its last input item is `compaction_trigger`."""
        client_model = fields.get("model")
        route = self.router.route(client_model if isinstance(client_model, str) else "")
        if route is None:
            if replay:
                self._refuse_replay(flow, client_model, f"no gateway route for model {client_model!r} "
                                                        "under the current options")
            else:
                flow.metadata[flowinfo.UNROUTED] = client_model  # the console says it went on untouched
            return  # no route for this model: leave the flow untouched
        compact = self.state.endpoint(self.router.match, flow.request.pretty_host,
                                      flow.request.path) == "responses/compact"
        plan = await self.state.lookup(flow, fields, route, compact=compact)  # what the store holds
        if plan is None:
            return
        route = serving(route, trigger or compact)  # a compaction request goes to the route's summarizer
        info: dict[str, Any] = {"upstream": route.dialect, "model": route.model or client_model,
                                "client_model": client_model, "dropped": [], "notes": [],
                                **self.clients.named(flow)}
        if replay:
            info["notes"].append("replayed: translated again from the saved client request")
        flow.metadata[flowinfo.KEY] = info
        flow.metadata["gateway.client_request"] = client_text
        model = route.model or client_model
        caps = await self.capabilities.resolve(route, model) if isinstance(model, str) else None
        if caps is not None:
            info["capabilities"] = caps.capabilities.source
            info["notes"] += [caps.note] if caps.note else []
        past = None if plan is AS_SENT else plan.past
        if spilled is None and not isinstance(past, history.Stored):
            resolved: dict[str, Any] = {}
            if plan is not AS_SENT:
                resolved = history.resolved(body)  # still echoed (docs/responses.md)
                body, new_items = history.expand(body, plan.past, compact)
                kept = history.user_messages(plan.past + new_items) if compact else None
                self.state.register(flow, plan, new_items, len(new_items), kept)
            self._translate_and_retarget(flow, body, route, caps, info, resolved)
            return
        own = None if spilled is not None else await asyncio.to_thread(
            workers.spill, data if data is not None else wirejson.dumps(body))
        try:
            done = await workers.run_translate(spilled or own, route.dialect, route.model,
                                               caps.capabilities if caps else None,
                                               ctx.options.gateway_web_search, past, compact)
        except Exception as exc:
            self._refuse_translation(flow, info, exc)
            return
        finally:
            workers.discard(own)
        if plan is not AS_SENT:
            self.state.register(flow, plan, ItemsJSON(done.new_items), done.count, done.kept)
        self._retarget_translated(flow, route, done.translation, done.content, done.saved, info)
        # An upstream that cannot be reached is answered by the HTTP layer (cutoff.py), with the
        # same Responses-shaped 502, when the connection attempt fails.

    def _translate_and_retarget(self, flow: http.HTTPFlow, body: Any, route: Route,
                                caps: Any, info: dict[str, Any],
                                resolved: dict[str, Any] | None = None) -> None:
        """`resolved`: the state members `history.expand` took out of `body` (echoed)."""
        try:
            translation = translate_request(body, route.dialect, route.model,
                                            capabilities=caps.capabilities if caps else None,
                                            web_search=ctx.options.gateway_web_search, resolved=resolved)
        except Exception as exc:
            self._refuse_translation(flow, info, exc)
            return
        self._retarget_translated(flow, route, translation, None,
                                  translation.model_dump(mode="json", exclude={"body"}), info)

    @staticmethod
    def _refuse_translation(flow: http.HTTPFlow, info: dict[str, Any], exc: Exception) -> None:
        if isinstance(exc, TranslatorError):
            info["refused"] = exc.message
            answer(flow, json_response(exc.status, exc.to_body()))
        else:  # a translator bug must not let the flow go on to OpenAI as sent
            info["error"] = f"gateway could not translate the request: {exc!r}"
            answer(flow, error_response(500, "server_error", info["error"]))

    def _retarget_translated(self, flow: http.HTTPFlow, route: Route, translation: Translation,
                             content: bytes | None, saved: dict[str, Any], info: dict[str, Any]) -> None:
        """`content`: the upstream body already written (by a worker), else None."""
        flow.metadata["gateway.translation"] = saved
        self._live[flow.id] = translation
        info.update(model=translation.model, url=route.base_url + translation.path)
        flowinfo.merge(info, translation)
        if translation.compaction:
            info["kind"] = "compaction"
        # a failure past this point leaves a half-rewritten request (new URL, client headers):
        # it is answered here and never sent
        try:
            self._retarget(flow, route, translation, content)
        except TranslatorError as exc:  # e.g. no credentials for a signed dialect
            info["error"] = exc.message
            answer(flow, json_response(exc.status, exc.to_body()))
            return
        except Exception as exc:
            info["error"] = f"gateway could not address the upstream: {exc!r}"
            answer(flow, error_response(500, "server_error", info["error"]))

    def _retarget(self, flow: http.HTTPFlow, route: Route, translation: Translation,
                  content: bytes | None = None) -> None:
        if content is None:
            content = wirejson.dumps(translation.body)
        dialect = registry.get(route.dialect)
        if auth.takes_client_credentials(route.dialect, route.base_url):
            # the client's own vendor: the client's own headers go along (its credentials unless
            # the route names a key: auth.upstream_credentials)
            headers = {k: v for k, v in flow.request.headers.items()
                       if k.lower() not in _FRAMING_HEADERS}
        else:
            headers = auth.clean_headers(dict(flow.request.headers))
        headers.update(translation.headers)
        headers["content-type"] = dialect.request_content_type
        headers["accept"] = dialect.stream_content_type if translation.stream else "application/json"
        headers["accept-encoding"] = "identity"  # the stream callable gets raw bytes
        flow.request.url = route.base_url + translation.path
        secret, note = auth.upstream_credentials(route, headers, flow.request.url, content, self.settings)
        if note:
            flow.metadata[flowinfo.KEY]["notes"].append(note)
        host = flow.request.headers.get("host")
        flow.request.headers.clear()
        if host is not None:
            flow.request.headers["host"] = flow.request.host_header or host
        for name, value in headers.items():
            flow.request.headers[name] = value
        flow.request.content = content
        credentials.attach(flow, secret)  # on the wire only; the flow shows <redacted>

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        translation = self._translation(flow)
        if translation is None or flow.response is None or "gateway.done" in flow.metadata:
            return
        limits.keep_sent_request(flow.request, ctx.options.gateway_max_kept_bytes)  # sent by now
        upstream_headers.screen(flow, translation.target)  # vendor headers stay behind; redirects refused
        if flow.response.status_code != 200 or not translation.stream or upstream_headers.refusal(flow):
            return  # errors, refusals and whole answers are answered in `response`
        if flow.is_replay == "response" or not flow.live:
            return  # server-replayed and loaded answers never reach a stream callable
        translator = self.state.recorder(flow, stream_translator(translation.target, translation))
        had_length = flow.response.headers.pop("content-length", None) is not None
        if had_length and flow.request.http_version != "HTTP/1.0":
            # the translated body has another length; chunked framing tells an HTTP/1.1 client
            # where it ends and keeps the connection (h2 clients never see this header)
            flow.response.headers["transfer-encoding"] = "chunked"
        flow.response.headers.pop("content-encoding", None)
        flow.response.headers["content-type"] = "text/event-stream"
        flow.response.stream = StreamHook(translator, secrets=credentials.secrets_of(flow),
                                          max_kept=ctx.options.gateway_max_kept_bytes)

    def response(self, flow: http.HTTPFlow) -> Awaitable[None] | None:
        if flow.id not in self._live and "gateway.translation" not in flow.metadata:
            self.state.forget(flow)  # e.g. refused before translation
            return None  # not a translated flow: nothing to do, whatever its size
        # a large whole answer is translated in a worker thread (addon/limits.py)
        size = len(flow.response.raw_content or b"") if flow.response is not None else 0
        try:
            answered = limits.off_loop(size, self._answer, flow)
        except BaseException:
            self.state.forget(flow)
            raise
        if answered is None and not self.state.writing(flow):
            self.state.forget(flow)
            return None
        return self._end(flow, answered)

    async def _end(self, flow: http.HTTPFlow, answered: Awaitable[None] | None) -> None:
        """The rest of the response hook: the answer's translation in a worker thread, then its
        turn's store write. mitmproxy ends the client's body once this returns, so a client that
        reads to the end finds its turn stored, whichever gateway serves its next one
        (`State.written`)."""
        try:
            if answered is not None:
                await answered
            if await self.state.written(flow) and flowinfo.KEY in flow.metadata:
                flowinfo.describe(flow)  # with a note the write may have left
        finally:
            self.state.forget(flow)

    def _answer(self, flow: http.HTTPFlow) -> None:
        translation = self._translation(flow)
        self._live.pop(flow.id, None)
        if translation is None or flow.response is None or "gateway.done" in flow.metadata:
            return
        flow.metadata["gateway.done"] = True
        info = flow.metadata[flowinfo.KEY]
        hook = flow.response.stream
        final = None
        if isinstance(hook, StreamHook):
            hook.end()
            final = hook.final_response()
            flow.metadata["gateway.upstream_response"] = hook.saved_upstream()
            flow.response.stream = False
            flow.response.content = hook.saved_client()  # the saved flow shows what the client got
            if "transfer-encoding" not in flow.response.headers:
                # set_content just added a content-length the client never got; mitmproxy reads
                # these headers after this hook to decide whether a close-delimited body is over
                flow.response.headers.pop("content-length", None)
            self._collect(info, hook.translator.report, hook.error)
            if note := hook.cut_note():
                info["notes"].append(note)
        else:
            try:
                if refused := upstream_headers.refusal(flow):
                    raw = flow.response.get_content(strict=False) or b""
                    flow.metadata["gateway.upstream_response"] = raw
                    info["error"] = refused["message"]
                    flow.response = error_response(502, refused["code"], refused["message"])
                elif flow.response.status_code >= 400:
                    self._translate_error(flow, translation, info)
                else:
                    self._translate_whole(flow, translation, info)
                    self.state.finish(flow)
            except Exception as exc:  # the client still gets an answer in its own dialect
                info["error"] = f"gateway could not translate the upstream's answer: {exc!r}"[:500]
                flow.response = error_response(502, "upstream_protocol_error", info["error"])
        if final is None:  # a whole answer, or a stream the proxy passes through
            final = flowinfo.final_response(flow.response.content or b"")
        if used := flowinfo.usage_of(final):
            info["usage"] = used
        self.state.count(flow, used)  # per client, with client keys on (addon/usage.py)
        if (failure := flowinfo.failure_of(final)) and not info.get("error"):
            info["error"] = failure
        if searches := flowinfo.searches_of(final):
            info["searches"] = searches
        auth.redact_request(flow.request.headers)
        credentials.scrub_flow(flow)
        if ctx.options.gateway_capture_dir:
            recording.save(Path(ctx.options.gateway_capture_dir), flow)
        flowinfo.describe(flow)

    def error(self, flow: http.HTTPFlow) -> None:
        self._live.pop(flow.id, None)
        self.state.forget(flow)
        if flowinfo.KEY in flow.metadata:
            hook = flow.response.stream if flow.response is not None else None
            if isinstance(hook, StreamHook) and flow.response is not None:
                # the client left mid-stream: keep what each side had so far for the saved flow
                flow.metadata["gateway.upstream_response"] = hook.saved_upstream()
                flow.response.stream = False
                flow.response.content = hook.saved_client()
                if note := hook.cut_note():
                    flow.metadata[flowinfo.KEY]["notes"].append(note)
            limits.keep_sent_request(flow.request, ctx.options.gateway_max_kept_bytes)
            flow.metadata[flowinfo.KEY]["error"] = flow.error.msg if flow.error else "connection error"
            auth.redact_request(flow.request.headers)
            credentials.scrub_flow(flow)
            flowinfo.describe(flow)

    def done(self) -> None:
        workers.shutdown()
        self.state.done()  # the turns queued are written, then the store is closed

    # -- whole bodies -----------------------------------------------------------------------
    def _translate_error(self, flow: http.HTTPFlow, translation: Translation, info: dict[str, Any]) -> None:
        assert flow.response is not None
        # before the message is cut short: no credential the upstream repeats survives in part
        raw = credentials.scrub_bytes(flow.response.get_content(strict=False) or b"",
                                      credentials.secrets_of(flow))
        flow.metadata["gateway.upstream_response"] = raw
        error = translate_error(translation.target, flow.response.status_code, raw,
                                dict(flow.response.headers), client=translation.client)
        message = str(error.body["error"].get("message") or "")  # already cut to its gist
        info["error"] = f"upstream {error.status}: {message}"[:300]
        flow.response = json_response(error.status, error.body, error.headers)

    def _translate_whole(self, flow: http.HTTPFlow, translation: Translation, info: dict[str, Any]) -> None:
        """Server-replayed answers, loaded flows and non-streamed requests: no stream callable
        ever runs for those (docs/mitmproxy.md "Streaming callables"), so the body is translated here at
        once."""
        assert flow.response is not None
        raw = flow.response.get_content(strict=False) or b""
        flow.metadata["gateway.upstream_response"] = raw
        if translation.stream:
            translator = stream_translator(translation.target, translation)
            out = translator.feed(raw) + translator.close()
            flow.response.headers["content-type"] = "text/event-stream"
            flow.response.headers.pop("content-encoding", None)
            flow.response.content = out
            self._collect(info, translator.report, None)
            return
        if dialects.passes_through(translation.target, translation.client):
            return  # the client's own dialect: the answer as it is
        from translators.report import Report

        report = Report()
        body = translate_response(translation.target, translation, raw, report=report)
        flow.response.headers.pop("content-encoding", None)
        flow.response.headers["content-type"] = "application/json"
        flow.response.content = wirejson.dumps(body)
        self._collect(info, report, None)

    # -- bookkeeping ------------------------------------------------------------------------
    def _translation(self, flow: http.HTTPFlow) -> Translation | None:
        live = self._live.get(flow.id)
        if live is not None:
            return live
        data = flow.metadata.get("gateway.translation")
        if data is None:
            return None
        # a loaded or replayed flow: its upstream body is the flow's request
        try:
            body = wirejson.loads(flow.request.get_content(strict=False) or b"{}")
        except ValueError:
            body = {}
        return Translation.model_validate({**data, "body": body if isinstance(body, dict) else {}})

    @staticmethod
    def _collect(info: dict[str, Any], report: Any, error: str | None) -> None:
        flowinfo.merge(info, report)
        if error:
            info["error"] = f"gateway: {error}"


def _seconds(text: str) -> float | None:
    """An option of seconds, decimals allowed; None when it is not a number >= 0."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value >= 0 and value == value and value != float("inf") else None


cutoff.install()
credentials.install()
gateway = Gateway()
addons = [gateway, client_dialects.Restyle(), views.Views(), console.Console(lambda: gateway.router),
          websocket.ENDPOINT]

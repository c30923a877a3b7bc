"""Responses state in the proxy: `previous_response_id`, `conversation`, `/responses/compact` and
the store's own endpoints, served from the store (addon/state/store/, docs/state.md).

The translators stay stateless: before a request is translated, `lookup` reads the history from
the store and `stored_items.expand` puts it in place of `previous_response_id` / `conversation` (in the
proxy, or for a large request in a worker process, addon/work/workers.py), and `register` keeps the
turn's new input items until the answer is there; after the answer,
the turn is recorded (its new input items, the output items as the client saw them, the route),
for a streamed answer before its last event leaves, so the client's next request finds it.
A request with `store: false` (Codex) and no stored state to read never opens the store.
"""

from __future__ import annotations

import datetime
import fnmatch
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mitmproxy import ctx, exceptions, http

from addon.observe import flowinfo
from addon.routes import plugins, routing
from addon.routes.routing import Route, serving
from addon.serve import bodies
from addon.serve.answers import answer, error_response, json_response
from addon.serve.flow import speaks_of
from addon.state import endpoints, stored_items
from addon.state.store import ItemsJSON, ResponseRecord, Store, StoreError, open_store
from addon.team import keys as clients
from addon.team import usage
from addon.work import offload
from translators.wire import wirejson

if TYPE_CHECKING:
    from addon.serve.flow import FlowCtx

_DAY = 86400.0
_COLLECTIONS = ("responses/", "conversations")
_RECORDED = {"completed", "incomplete"}
WRITE_WAIT = 10.0
"""Seconds the end of an answer waits for its turn's write (`State.written`): a store write takes
milliseconds; one that hangs (a locked table, a lost database) must not hold the client forever."""


class State:
    def __init__(self, gate: clients.Gate | None = None) -> None:
        self.gate = gate or clients.Gate()
        """Who each flow's client is (addon/team/keys.py): stored state is that client's only."""
        self._store: Store | None = None
        self._location = ""
        self._worker: offload.SerialThread | None = None
        self._worker_lock = threading.Lock()

    # -- options ----------------------------------------------------------------------------
    def load(self, loader: Any) -> None:
        loader.add_option("gateway_store", bool, True,
                          "Keep Responses state (previous_response_id, conversations, GET /responses/{id}); "
                          "requests with store:false (Codex) are never stored.")
        loader.add_option("gateway_store_path", str, "",
                          "SQLite file of the response store; empty: gateway-store.sqlite in the confdir.")
        loader.add_option("gateway_store_url", str, "",
                          "postgresql:// URL of a shared response store (several gateway processes); "
                          "wins over gateway_store_path.")
        # int, not float: `--set` parses str, int, bool and lists only (docs/team.md "Options")
        loader.add_option("gateway_store_ttl", int, int(30 * _DAY),
                          "Seconds a stored response or conversation is kept after its last use; 0: forever.")
        loader.add_option("gateway_store_max_bytes", int, 1 << 30,
                          "Size limit of each client's stored JSON, in bytes, held at every write; past "
                          "it that client's least recently used go first; 0: none.")

    def configure(self, updated: set[str]) -> None:
        if not any(name.startswith("gateway_store") or name == "confdir" for name in updated):
            return
        o = ctx.options
        url = o.gateway_store_url.strip()
        if url and not url.startswith(("postgresql://", "postgres://")):
            raise exceptions.OptionsError("gateway_store_url must be a postgresql:// URL, e.g. "
                                          "postgresql://gateway@db.internal/gateway")
        if o.gateway_store_ttl < 0 or o.gateway_store_max_bytes < 0:
            raise exceptions.OptionsError("gateway_store_ttl and gateway_store_max_bytes must be >= 0 "
                                          "(0: no limit)")
        self.close()
        confdir = os.path.expanduser(o.confdir) if "confdir" in o else "~/.mitmproxy"
        self._location = url or o.gateway_store_path.strip() or str(Path(confdir) / "gateway-store.sqlite")

    def done(self) -> None:
        self.close()

    def close(self) -> None:
        with self._worker_lock:
            worker, self._worker = self._worker, None
        if worker is not None:
            worker.shutdown(wait=True)  # the turns already recorded are written first
        if self._store is not None:
            self._store.close()
            self._store = None

    @property
    def enabled(self) -> bool:
        return "gateway_store" not in ctx.options or bool(ctx.options.gateway_store)

    def store(self) -> Store:
        """Opened at first use, so a proxy that never needs state never creates the file."""
        if self._store is None:
            o = ctx.options
            location = self._location or str(Path(os.path.expanduser(o.confdir)) / "gateway-store.sqlite")
            self._store = open_store(location, ttl=o.gateway_store_ttl, max_bytes=o.gateway_store_max_bytes)
        return self._store

    def _store_thread(self) -> offload.SerialThread:
        """The one thread every store call runs in, in the order they were made: a turn's write
        is queued before the client can send the request that reads it, so that read finds it
        (`offload.SerialThread`, docs/concurrency.md)."""
        with self._worker_lock:
            if self._worker is None:
                self._worker = offload.SerialThread("gateway-store")
            return self._worker

    async def _call(self, fn: Any, *args: Any) -> Any:
        """`fn(store, *args)` in the store's thread, where the store is opened at first use too
        (a new SQLite file and its schema: 10-20 ms of disk work the event loop must not wait for)."""
        return await self._store_thread().call(lambda: fn(self.store(), *args))

    # -- matching ---------------------------------------------------------------------------
    @staticmethod
    def endpoint(match: tuple[str, ...], host: str, path: str) -> str | None:
        """For a request to a state endpoint next to an intercepted `.../responses` path, the rest
        of its path from `responses/` or `conversations` on (`responses/compact`,
        `responses/resp_1/input_items`, `conversations/conv_1/items`); else None."""
        bare = path.split("?", 1)[0].rstrip("/")
        for pattern in match:
            if not pattern.endswith("/responses"):
                continue
            base = pattern[: -len("responses")]
            target = bare if pattern.startswith("/") else f"{host}{bare}"
            for collection in _COLLECTIONS:
                if fnmatch.fnmatchcase(target, f"{base}{collection}*"):
                    at = bare.rfind("/" + collection)
                    return bare[at + 1:]
        return None

    # -- the store's endpoints --------------------------------------------------------------
    async def serve(self, flow: http.HTTPFlow, rest: str, *, passthrough: bool) -> None:
        """GET/DELETE /responses/{id}[/input_items], the conversations endpoints. `passthrough`: a
        route goes to OpenAI itself, so an id the store does not know is OpenAI's: the request
        goes on untouched."""
        if not self.enabled:
            flow.response = _error(flow, 404, "not_found",
                                           "the gateway keeps no state (gateway_store=false)")
            return
        body = await self._read_body(flow)
        if body is _ANSWERED:
            return
        query = dict(flow.request.query)
        client = self.gate.client_of(flow).name
        try:
            result = await self._call(endpoints.handle, flow.request.method, rest, query, body, client)
        except StoreError as exc:
            _refuse(flow, {}, _error(flow, 503, "store_unavailable", str(exc)))
            return
        if result is None or (result[0] == 404 and passthrough):
            if not passthrough:
                flow.response = _error(flow, 404, "not_found", f"no such endpoint: {flow.request.method} "
                                                                   f"/{rest}")
            return
        status, payload = result
        flow.metadata[flowinfo.KEY] = flowinfo.record("store", kind="state", **_client_info(flow))
        answer(flow, json_response(status, payload))

    async def _read_body(self, flow: http.HTTPFlow) -> Any:
        """A store endpoint's JSON body, read as the /responses path reads one (addon/serve/bodies.py):
        decoded within `gateway_max_request_bytes`, in a thread (a 16 KB zstd body may decode to
        gigabytes; the decoder stops at the bound). `_ANSWERED` when the flow got a 413 or 400."""
        raw = flow.request.raw_content or b""
        if not raw:
            return {}
        limit = int(ctx.options.gateway_max_request_bytes)
        try:
            _data, body, _text = await offload.in_thread(bodies.read, raw, flow.request.headers.get(
                "content-encoding"), limit, 0)
        except bodies.TooLarge as exc:
            _refuse(flow, {}, _error(flow, 413, "request_too_large", str(exc)))
            return _ANSWERED
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            message = f"the request body is not JSON: {exc}"[:300]
            _refuse(flow, {}, _error(flow, 400, "invalid_json", message))
            return _ANSWERED
        return body

    # -- usage ------------------------------------------------------------------------------
    async def serve_usage(self, flow: http.HTTPFlow) -> bool:
        """`GET /gateway/usage[?from=YYYY-MM-DD&to=YYYY-MM-DD]`: the calling client's own usage
        (addon/team/usage.py); True when the flow is answered."""
        if flow.request.path.split("?", 1)[0].rstrip("/") != usage.PATH or flow.request.method != "GET":
            return False
        query = dict(flow.request.query)
        days = usage.days(query.get("from"), query.get("to"), _today())
        if isinstance(days, str):
            _refuse(flow, {}, _error(flow, 400, "invalid_request_error", days))
            return True
        name = self.gate.client_of(flow).name
        try:
            rows = await self._call(lambda store: store.usage(*days, client=name))
        except StoreError as exc:
            _refuse(flow, {}, _error(flow, 503, "store_unavailable", str(exc)))
            return True
        flow.metadata[flowinfo.KEY] = flowinfo.record("store", kind="usage", **_client_info(flow))
        answer(flow, json_response(200, usage.document(name, days, rows)))
        return True

    def count(self, flow: http.HTTPFlow, used: dict[str, Any] | None) -> None:
        """Add an answered turn's upstream usage to its client's row of the day (with client keys
        on: a gateway without them keeps no usage and never opens the store for it). Queued in the
        store's thread; a failure is a note on the flow. Called once per flow, as its answer is
        translated (addon/serve/pipeline.py `answer`, which runs once: `FlowCtx.done`)."""
        if not self.gate.on:
            return
        info = flow.metadata.get(flowinfo.KEY) or {}
        counts = usage.counts(used, info.get("cost_usd"))
        client = self.gate.client_of(flow).name
        route, model = str(info.get("upstream") or "-"), str(info.get("model") or "-")
        day = _today()

        def write() -> None:
            try:
                self.store().add_usage(client, day, route, model, counts)
            except StoreError as exc:
                notes = info.get("notes")
                if isinstance(notes, list):
                    notes.append(f"usage: not recorded: {exc}")

        self._store_thread().submit(write)

    async def admit(self, flow: http.HTTPFlow, fields: dict[str, Any]) -> bool:
        """The client may send this turn: its model is one of its patterns, it is within its
        requests per minute and its tokens per day (usage in the store). False when the flow is
        answered (403, 429 with `retry-after`, 503)."""
        if not self.gate.on:
            return True
        client = self.gate.client_of(flow)
        model = fields.get("model")
        refused = self.gate.refusal(client, model if isinstance(model, str) else "")
        if refused is None and client.tokens_per_day:
            try:
                used = await self._call(lambda store: store.tokens_on(client.name, _today()))
            except StoreError as exc:
                _refuse(flow, fields, _error(flow, 503, "store_unavailable", str(exc)))
                return False
            if used >= client.tokens_per_day:
                wait = clients.retry_after(_seconds_to_midnight())
                refused = (429, "rate_limit_exceeded", f"client {client.name!r} has used {used} of its "
                           f"{client.tokens_per_day} tokens today (UTC); retry in {wait} s",
                           {"retry-after": wait})
        if refused is None:
            return True
        status, code, message, headers = refused
        _refuse(flow, fields, _error(flow, status, code, message, headers=headers))
        return False

    # -- before translation -----------------------------------------------------------------
    async def lookup(self, flow: http.HTTPFlow, fields: dict[str, Any], route: Route,
                     *, compact: bool, references: list[str] | None = None) -> Plan | None:
        """What the turn reads of the store, from the body's top-level members (`input` is not
        read) and the ids its `input` names by `item_reference` (`references`): `AS_SENT` when
        there is nothing to read or write, None when the flow is answered here (an unknown id) or
        left untouched (a compaction for OpenAI itself)."""
        refs = list(references or [])
        if not await self.admit(flow, fields):
            return None
        try:
            previous, conversation_id = _state_ids(fields)
        except endpoints.Invalid as exc:
            _refuse(flow, fields, json_response(*exc.result()))
            return None
        client = self.gate.client_of(flow).name
        store = fields.get("store") is not False and self.enabled
        dialect = serving(route, compact).dialect
        model = route.model or fields.get("model")
        for name in {model, serving(route, compact).model or model}:
            if isinstance(name, str) and (problem := routing.model_name_problem(name)):
                # before the capabilities fetch and the translation: nothing is sent upstream
                _refuse(flow, fields, _error(flow, 400, "invalid_model", problem, "model"))
                return None
        own_state = plugins.passes_through(dialect)  # the upstream is a Responses server itself
        if compact and own_state:
            return None  # OpenAI compacts its own; the request goes on as sent
        if not previous and not conversation_id and not compact and not store and not refs:
            return AS_SENT  # Codex: nothing to read, nothing to write
        if previous and conversation_id:
            _refuse(flow, fields, _error(flow, 400, "invalid_request_error", "previous_response_id and "
                                                 "conversation cannot be used together.", "conversation"))
            return None
        past: list[dict[str, Any]] | stored_items.Stored = []
        try:
            if isinstance(previous, str) and previous:
                found = await self._call(_read_history, "chain", previous, client) if self.enabled else None
                if found is None:
                    if own_state:
                        return AS_SENT  # OpenAI's own id
                    _refuse(flow, fields, _error(flow, 400, "previous_response_not_found",
                                                         f"Previous response with id '{previous}' not found.",
                                                         "previous_response_id"))
                    return None
                past = found
            elif isinstance(conversation_id, str) and conversation_id:
                found = await self._call(_read_history, "items", conversation_id, client) \
                    if self.enabled else None
                if found is None:
                    if own_state:
                        return AS_SENT
                    _refuse(flow, fields, _error(flow, 404, "not_found", f"Conversation with id "
                                                         f"'{conversation_id}' not found.", "conversation"))
                    return None
                past = found
            named = await self._call(lambda st: st.items_by_id(refs, client)) if refs and self.enabled else {}
        except StoreError as exc:
            _refuse(flow, fields, _error(flow, 503, "store_unavailable", str(exc)))
            return None
        missing = [ref for ref in refs if ref not in named]
        if missing and not own_state:  # on a route to OpenAI an id the store lacks is OpenAI's
            # as the Responses API words it (docs/agents-sdk.md "Item references")
            _refuse(flow, fields, _error(flow, 400, "invalid_request_error",
                                         f"Item with id '{missing[0]}' not found.", "input"))
            return None
        if not previous and not conversation_id and not compact and not store and not named:
            return AS_SENT  # OpenAI's own references, nothing stored to write
        turn = {"kind": "response", "store": store, "previous_id": previous or None,
                "conversation_id": conversation_id or None,
                "route": {"dialect": dialect.name, "model": model}, "client": client}
        return Plan(past=past, compact=compact, records=not own_state, turn=turn, found=named)

    def register(self, ctx: FlowCtx, plan: Plan, new_items: list[dict[str, Any]] | ItemsJSON,
                 count: int) -> None:
        """The turn the answer will record: its new input items (a list, or for a large request
        their JSON written by a worker, addon/work/workers.py) kept in the flow's context, not in
        `flow.metadata`, which mitmproxy deep-copies and writes whole for every saved flow."""
        ctx.plan = plan
        if plan.compact:
            return  # a compaction is not recorded; its answer is final as written (docs/compaction.md)
        if not plan.records:
            return  # OpenAI's answer is OpenAI's to keep
        ctx.inputs, ctx.write = new_items, None
        ctx.turn = {**plan.turn, "input_items": count}

    # -- after the answer -------------------------------------------------------------------
    def recorder(self, ctx: FlowCtx, translator: Any) -> Any:
        """The stream translator, recording the turn as soon as it finishes (before the final
        bytes are handed to mitmproxy)."""
        turn = ctx.turn
        if not turn or turn.get("kind") != "response":
            return translator
        return _Recording(translator, lambda response: self._record(ctx, turn, response))

    def finish(self, ctx: FlowCtx) -> None:
        """A whole (non-streamed) answer: record it."""
        flow, turn = ctx.flow, ctx.turn
        if not turn or flow.response is None or flow.response.status_code != 200:
            return
        if turn.get("recorded") or "text/event-stream" in flow.response.headers.get("content-type", ""):
            return
        try:
            body = wirejson.loads(flow.response.content or b"{}")
        except ValueError:
            return
        self._record(ctx, turn, body)

    @staticmethod
    def writing(ctx: FlowCtx) -> bool:
        """The flow's turn is being written (`written` waits for it)."""
        return ctx.write is not None

    async def written(self, ctx: FlowCtx) -> bool:
        """Wait until the turn recorded for `flow` is in the store, at most `WRITE_WAIT`; True when
        there was a write to wait for. The response hook awaits this, and mitmproxy ends the
        client's body only once that hook has returned (docs/mitmproxy.md "Hooks"): a client reads
        the stream to its end before it sends the next turn (the OpenAI SDKs do), and that turn
        may reach another gateway process sharing the store, which must find this one there
        (docs/state.md "Read your own turn"). Waiting is on the loop's side only: other flows go on."""
        pending, ctx.write = ctx.write, None
        if pending is None:
            return False
        if not await offload.wait(pending, WRITE_WAIT):  # a timeout leaves the write running
            info = ctx.flow.metadata.get(flowinfo.KEY)
            if info is not None:
                info["notes"].append(f"state: the turn was still being written after {WRITE_WAIT:g} s; "
                                     "the answer ended without it, a next turn sent at once may not find it")
        return True

    def _record(self, ctx: FlowCtx, turn: dict[str, Any], response: dict[str, Any]) -> None:
        """Queue the turn's write in the store's thread; the write owns the turn's input from
        here on."""
        turn["recorded"] = True
        flow = ctx.flow
        inputs, ctx.inputs = ctx.inputs if ctx.inputs is not None else [], None
        if response.get("status") not in _RECORDED:
            return
        conversation_id = turn.get("conversation_id")
        # stored as the client got it: every field of it, the request's echo included
        # (previous_response_id, conversation, store: translators/responses_client/echo.py)
        stored = response
        output = [stored_items.stored_item(i) for i in response.get("output") or []]
        client = turn.get("client", "")

        def write() -> None:
            try:
                store = self.store()
                if turn["store"]:
                    store.put_response(ResponseRecord(
                        id=response["id"], response=stored, input=inputs, route=turn["route"],
                        previous_id=turn.get("previous_id"), conversation_id=conversation_id, client=client))
                if conversation_id:
                    items = inputs.items() if isinstance(inputs, ItemsJSON) else inputs
                    store.append_items(conversation_id, items + output, client)
            except StoreError as exc:  # noted on the flow if it is not saved yet
                info = flow.metadata.get(flowinfo.KEY)
                if info is not None:
                    info["notes"].append(f"state: not stored: {exc}")

        ctx.write = self._store_thread().submit(write)


def _read_history(store: Store, kind: str, key: str,
                  client: str = "") -> list[dict[str, Any]] | stored_items.Stored | None:
    """In the store's thread: the stored history of a chain ("chain", `key` a response id) or a
    conversation ("items"), read into items when short; a long one (`offload.INLINE_BYTES` of JSON
    or more) stays text for the worker process that translates the turn (addon/work/workers.py): read
    here, it would hold the interpreter lock as long (a 100k-item turn: ~150 ms)."""
    texts = store.chain_texts(key, client) if kind == "chain" else store.item_texts(key, client)
    if texts is None:
        return None
    if sum(map(len, texts)) >= offload.INLINE_BYTES:
        return stored_items.Stored(kind, texts)
    return stored_items.past_items(kind, [wirejson.loads(text) for text in texts])


@dataclass(frozen=True, slots=True)
class Plan:
    """What `State.lookup` found for a turn (see `State.register`)."""

    past: list[dict[str, Any]] | stored_items.Stored
    """The stored history the turn continues, oldest first; a long one unread."""
    compact: bool
    records: bool
    """The answer is recorded (False: OpenAI's own, kept by OpenAI)."""
    turn: dict[str, Any]
    """`FlowCtx.turn` of a recorded turn, but its count of input items."""
    found: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The stored items the turn's `item_reference`s name, by id (`stored_items.resolve`)."""


AS_SENT: Any = object()
"""`State.lookup`: the turn reads and writes no state; the body goes on as the client sent it."""
_ANSWERED: Any = object()


def _state_ids(fields: dict[str, Any]) -> tuple[str | None, str | None]:
    """`previous_response_id` and the conversation's id, typed as the API types them (a string;
    `conversation` a string or `{"id": ...}`): anything else is refused (`endpoints.Invalid`,
    with its JSON path) before the store is read or written, never ignored."""
    previous = fields.get("previous_response_id")
    if previous is not None:
        endpoints.check_id("previous_response_id", previous)
    conversation = fields.get("conversation")
    if conversation is None:
        return previous, None
    if isinstance(conversation, dict):
        return previous, endpoints.check_id("conversation.id", conversation.get("id"))
    if not isinstance(conversation, str):
        raise endpoints.wrong_type("conversation", conversation, "a string or an object")
    return previous, endpoints.check_id("conversation", conversation)


def _today() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")


def _seconds_to_midnight() -> float:
    """Until the next UTC day, when `tokens_per_day` counts afresh."""
    now = time.time()
    return _DAY - now % _DAY


_client_info = clients.Gate.named


def _error(flow: http.HTTPFlow, status: int, code: str, message: str, param: str | None = None,
           headers: dict[str, str] | None = None) -> http.Response:
    """The store's and the budgets' errors, in the shape of the flow's client."""
    return error_response(speaks_of(flow.metadata), status, code, message, param, headers)


def _refuse(flow: http.HTTPFlow, body: dict[str, Any], response: http.Response) -> None:
    """Answer a request the store cannot serve; the flow says why."""
    message = wirejson.loads(response.content or b"{}")["error"]["message"]
    model = body.get("model")
    flow.metadata[flowinfo.KEY] = flowinfo.record("-", model, client_model=model, refused=message,
                                                  **_client_info(flow))
    answer(flow, response)


class _Recording:
    """A stream translator that calls `on_finish(response object)` once, when it has finished."""

    def __init__(self, inner: Any, on_finish: Any) -> None:
        self.inner = inner
        self.report = inner.report
        self._on_finish = on_finish
        self._done = False

    @property
    def finished(self) -> bool:
        return self.inner.finished

    def response(self) -> dict[str, Any]:
        return self.inner.response()

    def feed(self, data: bytes) -> bytes:
        return b"".join(self.feed_parts(data))

    def close(self) -> bytes:
        return b"".join(self.close_parts())

    def feed_parts(self, data: bytes) -> list[bytes]:
        out = self.inner.feed_parts(data)
        self._check()
        return out

    def close_parts(self) -> list[bytes]:
        out = self.inner.close_parts()
        self._check()
        return out

    def _check(self) -> None:
        if not self._done and self.inner.finished:
            self._done = True
            try:
                self._on_finish(self.inner.response())
            except Exception as exc:  # recording must never break the client's stream
                self.report.note(f"state: the turn was not stored: {exc!r}")

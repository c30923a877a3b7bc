"""Stored turns: what a Responses turn reads of the store before it is translated, and what its
answer records after (docs/state.md).

The translators stay stateless: before a request is translated, `lookup` reads the history that
`previous_response_id` / `conversation` name and returns the turn to carry (`StoredTurn`,
addon/state/stored_turn.py); the translate step (addon/serve/translate.py) puts that history in
place of them, in the proxy or for a large request in a worker process, and keeps the turn's new
input items in it. After the answer the turn is recorded (its new input items, the output items as
the client saw them, the route), for a streamed answer before its last event leaves, so the
client's next request finds it. A request with `store: false` (Codex) and no stored state to read
never opens the store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from addon.observe import flowinfo
from addon.routes import plugins, routing
from addon.routes.routing import Route, serving
from addon.serve.refusal import Refusal
from addon.state import endpoints, stored_items
from addon.state.recorder import Recording
from addon.state.storage import Storage
from addon.state.store import ItemsJSON, ResponseRecord, Store, StoreError
from addon.state.stored_turn import StoredTurn, Unstored
from addon.work import offload
from translators.wire import wirejson

if TYPE_CHECKING:
    from mitmproxy import http

    from addon.team.keys import Keys

_RECORDED = {"completed", "incomplete"}
WRITE_WAIT = 10.0
"""Seconds the end of an answer waits for its turn's write (`Turns.written`): a store write takes
milliseconds; one that hangs (a locked table, a lost database) must not hold the client forever."""


class Turns:
    def __init__(self, storage: Storage, clients: Keys) -> None:
        self.storage = storage
        self.clients = clients
        """Who each flow's client is (addon/team/keys.py): stored state is that client's only."""

    # -- before translation -----------------------------------------------------------------
    async def lookup(self, flow: http.HTTPFlow, fields: dict[str, Any], route: Route,
                     *, compaction_endpoint: bool, references: list[str] | None = None,
                     ) -> StoredTurn | Unstored | Refusal:
        """What the turn reads of the store, from the body's top-level members (`input` is not
        read) and the ids its `input` names by `item_reference` (`references`): the stored turn to
        carry, `Unstored` when there is nothing to read nor write or the upstream keeps its own
        state, or why the request is refused (an unknown id, a bad model name, a store that cannot
        be read). The client was admitted before (addon/team/budgets.py).
        `compaction_endpoint`: a `/responses/compact` request, served by the route's summarizer and
        never recorded; to the store, a compaction by Codex's trigger item is a turn like any other,
        whose Responses answer is recorded when stored (docs/compaction.md "Two forms")."""
        refs = list(references or [])
        try:
            previous, conversation_id = _state_ids(fields)
        except endpoints.Invalid as exc:
            return Refusal(400, exc.code, str(exc), exc.param)
        client = self.clients.client_of(flow).name
        store = fields.get("store") is not False and self.storage.enabled
        served = serving(route, compaction_endpoint)
        model = route.model or fields.get("model")
        for name in {model, served.model or model}:
            if isinstance(name, str) and (problem := routing.model_name_problem(name)):
                # before the capabilities fetch and the translation: nothing is sent upstream
                return Refusal(400, "invalid_model", problem, "model")
        own_state = plugins.passes_through(served.dialect)  # the upstream is a Responses server itself
        if compaction_endpoint and own_state:
            return Unstored.UNTOUCHED  # OpenAI compacts its own; the request goes on as sent
        if not previous and not conversation_id and not compaction_endpoint and not store and not refs:
            return Unstored.AS_SENT  # Codex: nothing to read, nothing to write
        if previous and conversation_id:
            return Refusal(400, "invalid_request_error", "previous_response_id and conversation cannot be "
                           "used together.", "conversation")
        past: list[dict[str, Any]] | stored_items.Stored = []
        try:
            if isinstance(previous, str) and previous:
                found = await self._history("chain", previous, client)
                if found is None:
                    if own_state:
                        return Unstored.AS_SENT  # OpenAI's own id
                    return Refusal(400, "previous_response_not_found",
                                   f"Previous response with id '{previous}' not found.",
                                   "previous_response_id")
                past = found
            elif isinstance(conversation_id, str) and conversation_id:
                found = await self._history("items", conversation_id, client)
                if found is None:
                    if own_state:
                        return Unstored.AS_SENT
                    return Refusal(404, "not_found", f"Conversation with id '{conversation_id}' not found.",
                                   "conversation")
                past = found
            named = (await self.storage.call(_items_by_id, refs, client)
                     if refs and self.storage.enabled else {})
        except StoreError as exc:
            return Refusal(503, "store_unavailable", str(exc))
        missing = [ref for ref in refs if ref not in named]
        if missing and not own_state:  # on a route to OpenAI an id the store lacks is OpenAI's
            # as the Responses API words it (docs/agents-sdk.md "Item references")
            return Refusal(400, "invalid_request_error", f"Item with id '{missing[0]}' not found.", "input")
        if not previous and not conversation_id and not compaction_endpoint and not store and not named:
            return Unstored.AS_SENT  # OpenAI's own references, nothing stored to write
        return StoredTurn(past=past, records=not compaction_endpoint and not own_state, store=store,
                          previous_id=previous or None, conversation_id=conversation_id or None,
                          route={"dialect": served.dialect.name, "model": model}, client=client,
                          found=named)

    async def _history(self, kind: str, key: str, client: str) -> Any:
        return await self.storage.call(_read_history, kind, key, client) if self.storage.enabled else None

    # -- after the answer -------------------------------------------------------------------
    def recorder(self, flow: http.HTTPFlow, turn: StoredTurn | None, translator: Any) -> Any:
        """The stream translator, recording the turn as soon as it finishes (before the final
        bytes are handed to mitmproxy)."""
        if turn is None or not turn.records:
            return translator
        return Recording(translator, lambda response: self._record(flow, turn, response))

    def finish(self, flow: http.HTTPFlow, turn: StoredTurn | None) -> None:
        """A whole (non-streamed) answer: record it."""
        if turn is None or not turn.records or flow.response is None or flow.response.status_code != 200:
            return
        if turn.recorded or "text/event-stream" in flow.response.headers.get("content-type", ""):
            return
        try:
            body = wirejson.loads(flow.response.content or b"{}")
        except ValueError:
            return
        self._record(flow, turn, body)

    async def written(self, flow: http.HTTPFlow, turn: StoredTurn | None) -> bool:
        """Wait until the turn recorded for `flow` is in the store, at most `WRITE_WAIT`; True when
        there was a write to wait for. The end of the answer awaits this, and mitmproxy ends the
        client's body only once the `response` hook has returned (docs/mitmproxy.md "Hooks"): a
        client reads the stream to its end before it sends the next turn (the OpenAI SDKs do),
        and that turn may reach another gateway process sharing the store, which must find this
        one there (docs/state.md "Read your own turn"). Waiting is on the loop's side only: other
        flows go on."""
        if turn is None:
            return False
        pending, turn.write = turn.write, None
        if pending is None:
            return False
        if not await offload.wait(pending, WRITE_WAIT):  # a timeout leaves the write running
            info = flow.metadata.get(flowinfo.KEY)
            if info is not None:
                info["notes"].append(f"state: the turn was still being written after {WRITE_WAIT:g} s; "
                                     "the answer ended without it, a next turn sent at once may not find it")
        return True

    def _record(self, flow: http.HTTPFlow, turn: StoredTurn, response: dict[str, Any]) -> None:
        """Queue the turn's write in the store's thread; the write owns the turn's input from
        here on."""
        turn.recorded = True
        inputs, turn.inputs = turn.inputs if turn.inputs is not None else [], None
        if response.get("status") not in _RECORDED:
            return
        conversation_id = turn.conversation_id
        # stored as the client got it: every field of it, the request's echo included
        # (previous_response_id, conversation, store: translators/responses/echo.py)
        stored = response
        output = [stored_items.stored_item(i) for i in response.get("output") or []]

        def write() -> None:
            try:
                store = self.storage.store()
                if turn.store:
                    store.put_response(ResponseRecord(
                        id=response["id"], response=stored, input=inputs, route=turn.route,
                        previous_id=turn.previous_id, conversation_id=conversation_id, client=turn.client))
                if conversation_id:
                    items = inputs.items() if isinstance(inputs, ItemsJSON) else inputs
                    store.append_items(conversation_id, items + output, turn.client)
            except StoreError as exc:  # noted on the flow if it is not saved yet
                info = flow.metadata.get(flowinfo.KEY)
                if info is not None:
                    info["notes"].append(f"state: not stored: {exc}")

        turn.write = self.storage.submit(write)


def _items_by_id(store: Store, ids: list[str], client: str) -> dict[str, dict[str, Any]]:
    """In the store's thread: the stored items an `item_reference` names, by id, the client's own."""
    return store.items_by_id(ids, client)


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

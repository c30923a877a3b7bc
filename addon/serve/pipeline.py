"""One request through the gateway, top to bottom: its request half (docs/architecture.md "The
pipeline").

    read -> plan (route, admit, stored turn, record) -> translate -> send -> (upstream)
    -> addon/serve/upstream_answer.py: head arrived -> answer ended | flow failed -> seal

Every client dialect takes this one path (translators/client_dialects.py, Responses first); what
differs comes from its entry: its decoder, its error shape and refusals, whether it names stored
state (`stores_state`), which paths are its turns and its models and count endpoints. The flow's
working state is its `FlowCtx` (addon/serve/flow.py), its kind decided once when it was claimed
(addon/serve/claim.py); the services a step needs come as one object (addon/serve/services.py).
The client was identified (addon/team/keys.py) in `requestheaders`, before its body was read.
Where a step's work runs (on the event loop, in a thread, in a worker process) is decided inside
that step, by the size of what it works on (`_where`), never by a second path.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any, Literal

from mitmproxy import ctx as mitm

from addon.observe import flowinfo
from addon.patches import early_answer
from addon.routes.routing import Route, model_name_problem, serving
from addon.serve import bodies, misconfigured, sending
from addon.serve import client_side as client_dialects
from addon.serve.answers import answer, error_response, json_response
from addon.serve.flow import FlowCtx, Stage
from addon.serve.refusal import Refusal
from addon.serve.sending import Address, Sending
from addon.serve.services import Services
from addon.serve.translate import Asked, translate_turn
from addon.state import stored_items
from addon.state.store import ItemsJSON
from addon.state.stored_turn import StoredTurn, Unstored
from addon.work import offload, workers
from translators import ItemCache, Translation, TranslatorError
from translators import dialect as dialects
from translators.features import compaction
from translators.wire import wirejson


@dataclass(slots=True)
class Read:
    """What the read step found: a small body parsed (`body`, `data` its decoded bytes), or a
    large one left in a file (`spilled`) with only its short top-level members in `fields`."""

    fields: dict[str, Any]
    text: str
    """The body's text for the saved flow, cut at the kept bound."""
    body: Any = None
    data: bytes | None = None
    spilled: workers.Spilled | None = None
    references: list[str] = field(default_factory=list)
    """The ids its `input` names by `item_reference` (`stored_items.references`)."""


# -- the entries -------------------------------------------------------------------------------
def claimed(fc: FlowCtx) -> None:
    """`requestheaders` of a claimed flow, once its client is known: a declared body over
    `gateway_max_request_bytes` is answered 413, its body never read."""
    if fc.replay:
        return  # the body that counts is the saved client request
    if refused := bodies.declared_too_large(fc.flow.request.headers, max_request()):
        refuse(fc, 413, "request_too_large", refused)
        return
    early_answer.bound(fc.flow, max_request())  # a chunked body too, as it arrives (addon/patches/)


async def serve(services: Services, fc: FlowCtx) -> None:
    """A request the gateway takes on: its client dialect's models list or entry answered here,
    a token count or a turn read and sent on through the steps below."""
    if fc.kind == "models":
        _answer_models(services, fc)
        return
    read = await _read(fc)
    if read is None:
        return
    try:
        await _plan(services, fc, read)
    finally:
        if isinstance(fc.sending, Sending) and read.spilled is not None:
            spilled = read.spilled  # a deployment of another dialect is translated from it again
            fc.sending.on_close.append(lambda: workers.discard(spilled))
        else:
            workers.discard(read.spilled)


async def replay(services: Services, fc: FlowCtx) -> None:
    """A saved gateway flow sent again (mitmweb's Replay, `mitmdump -C`). Its request is the
    rewritten one, stale (old options) and with `<redacted>` keys; what the client sent is in the
    metadata, so the flow is translated afresh from that, with the current options, and its
    answer translated again (as a turn, even if it was a count). `flow.backup()` (done by the
    replay) keeps the old flow for mitmweb's Revert."""
    flow = fc.flow
    client_request = flow.metadata.get(flowinfo.CLIENT_REQUEST)
    keep = (flowinfo.CLIENT_REQUEST, flowinfo.CLIENT_DIALECT, flowinfo.CLIENT)  # views; its client
    for key in [k for k in flow.metadata if flowinfo.is_gateway_key(k)]:
        if key not in keep:
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
        _refuse_replay(fc, None, "the saved client request was cut at gateway_max_kept_bytes"
                       if cut else "the saved flow holds no client request to translate again")
        return
    _was_read(fc, compaction.is_trigger(body))
    await _plan(services, fc, Read(body, client_request or "", body=body,
                                   references=stored_items.references(body.get("input"))))


def max_request() -> int:
    return int(mitm.options.gateway_max_request_bytes)


def _answer_models(services: Services, fc: FlowCtx) -> None:
    flow = fc.flow
    path = client_dialects.path_of(flow)
    if path.endswith("/models"):
        client_dialects.answer_models(flow, services.router, fc.speaks)
    else:
        client_dialects.answer_model(flow, services.router, fc.speaks, path.rsplit("/", 1)[1])


# -- read ----------------------------------------------------------------------------------------
async def _read(fc: FlowCtx) -> Read | None:
    """The body, decoded once and within gateway_max_request_bytes (a client may send zstd,
    docs/mitmproxy.md "Compressed bodies"), the flow left as sent until it is ours: an unrouted
    request goes on untouched. A large body is read in a worker process and kept as bytes
    (addon/work/workers.py). The kind is final here: a turn whose last input item is Codex's
    `compaction_trigger` is a compaction. None when the flow is answered (413, 400)."""
    flow = fc.flow
    raw = flow.request.raw_content or b""
    encoding = flow.request.headers.get("content-encoding")
    kept, limit = int(mitm.options.gateway_max_kept_bytes), max_request()
    try:
        small = _read_inline(raw, encoding, kept, limit)
        if small is not None:
            body, text, data = small
            _was_read(fc, compaction.is_trigger(body))
            fields = body if isinstance(body, dict) else {}
            return Read(fields, text, body=body, data=data,
                        references=stored_items.references(fields.get("input")))
        head = await workers.read_head(raw, encoding, limit, kept)
        _was_read(fc, head.trigger)
        return Read(head.fields, head.client_text, spilled=head.body, references=head.references)
    except bodies.TooLarge as exc:
        refuse(fc, 413, "request_too_large", str(exc))
    except (ValueError, UnicodeDecodeError) as exc:
        refuse(fc, 400, "invalid_json", f"the request body is not JSON: {exc}"[:500])
    except RecursionError:  # not a ValueError: Python's parser gives up past ~1000 levels
        refuse(fc, 400, "invalid_json", "the request body is nested too deeply")
    return None


def _was_read(fc: FlowCtx, trigger: bool) -> None:
    if trigger and fc.kind == "turn":
        fc.kind = "compaction_trigger"
    fc.at(Stage.READ)


def _read_inline(raw: bytes, encoding: str | None, kept: int, limit: int) -> tuple[Any, str, bytes] | None:
    """A small body's JSON, its text for the saved flow (`bodies.kept_text`) and its bytes
    decoded; None for a body of `offload.INLINE_BYTES` or more, as sent or once decoded, which a
    worker reads."""
    if len(raw) >= offload.INLINE_BYTES:
        return None
    try:
        data, body, text = bodies.read(raw, encoding, min(limit, offload.INLINE_BYTES - 1), kept)
    except bodies.TooLarge:
        if limit < offload.INLINE_BYTES:
            raise
        return None
    return body, text, data


# -- route, admit, plan state --------------------------------------------------------------------
async def _plan(services: Services, fc: FlowCtx, read: Read) -> None:
    flow, speaks = fc.flow, fc.speaks
    client_model = read.fields.get("model")
    if isinstance(client_model, str) and (problem := model_name_problem(client_model)):
        # one rule for every client dialect and endpoint: a name never becomes part of a URL
        refuse(fc, 400, "invalid_model", problem)
        return
    route = services.router.route(client_model if isinstance(client_model, str) else "")
    if route is None:
        if fc.replay:
            _refuse_replay(fc, client_model, f"no gateway route for model {client_model!r} under the "
                                             "current options")
        else:
            client_dialects.pass_on(flow, speaks, client_model)  # the console says it went on untouched
        return
    if refused := await services.budgets.admit(flow, read.fields):  # its models, its budgets
        refuse_early(fc, read.fields, refused)
        return
    if speaks.stores_state:  # what the store holds (addon/state/turns.py)
        found = await services.turns.lookup(flow, read.fields, route,
                                            compaction_endpoint=fc.kind == "compaction_endpoint",
                                            references=read.references)
        if isinstance(found, Refusal):
            refuse_early(fc, read.fields, found)
            return
        if found is Unstored.UNTOUCHED:
            return
        fc.turn = found if isinstance(found, StoredTurn) else None
    route = fc.route = serving(route, fc.compacting)  # a compaction goes to the summarizer
    if refused := misconfigured.key_missing(route):  # its key variable unset: nothing would be sent
        refuse_early(fc, read.fields, refused)
        return
    model = route.model or client_model
    info = fc.begin(route.dialect.name, model, client_model=client_model, **services.clients.named(flow))
    fc.keep_client_request(read.text)
    fc.at(Stage.PLANNED)
    caps = await services.capabilities.resolve(route, model) if isinstance(model, str) else None
    if caps is not None:
        info["capabilities"] = caps.capabilities.source
        info["notes"] += [caps.note] if caps.note else []
    done = await _translate(fc, read, caps.capabilities if caps else None, services.items.of(flow))
    if done is None:
        return
    translation, content, saved = done
    if fc.counting:
        await _count(services, fc, read, translation)
        return
    if refused := await services.budgets.reserve(flow, translation, route):  # its worst case held
        fc.info["refused"] = refused.message
        answer(flow, error_response(fc.speaks, refused.status, refused.code, refused.message, refused.param,
                                    dict(refused.headers)))
        return
    fc.translated(translation, saved)
    info.update(model=translation.model, url=route.base_url + translation.path)
    flowinfo.merge(info, translation)
    if translation.compaction:
        info["kind"] = "compaction"
    await _send_or_answer(services, fc, read, translation, content)


# -- translate -------------------------------------------------------------------------------------
Where = Literal["inline", "thread", "process"]


def _where(fc: FlowCtx, read: Read) -> Where:
    """inline (on the loop), thread or process: a small request on the loop; a large one (or a
    small one continuing a long stored history) in a worker process, which has an interpreter lock
    of its own; a large token count in a thread, since its translated body comes back whole to be
    re-shaped by the dialect's counter (a worker hands back only the body it wrote)."""
    past = fc.turn.past if fc.turn is not None else None
    if read.spilled is None and not isinstance(past, stored_items.Stored):
        return "inline"
    return "thread" if fc.counting else "process"


async def _translate(fc: FlowCtx, read: Read, caps: Any, items: ItemCache | None = None,
                     ) -> tuple[Translation, bytes | None, dict[str, Any]] | None:
    """The upstream request, by the one translate step (addon/serve/translate.py) wherever it runs,
    with the stored history the turn continues in its input and its new input items kept for the
    answer to record, and the client's cache of decoded items (addon/serve/ir_cache.py; a worker
    takes none). Returns the translation, its body when already written (by a worker), and its
    metadata copy; None when the flow is answered (a refusal)."""
    route = fc.route
    assert route is not None
    try:
        return await _translation(fc, read, route, caps, items)
    except Exception as exc:
        _refuse_translation(fc, exc)
        return None


async def _translation(fc: FlowCtx, read: Read, route: Route, caps: Any, items: ItemCache | None = None,
                       *, keep: bool = True) -> tuple[Translation, bytes | None, dict[str, Any]]:
    """`_translate` for `route`, raising; `keep`: the turn keeps the new input items it found (the
    first translation of a turn; another deployment's does not)."""
    asked = Asked(route.dialect.name, route.model, fc.speaks.name,
                  "compaction_endpoint" if fc.kind == "compaction_endpoint" else "turn", fc.counting, caps,
                  mitm.options.gateway_web_search)
    turn = fc.turn
    where = _where(fc, read)
    if where == "process":
        own = None if read.spilled is not None else await offload.in_thread(
            workers.spill, read.data if read.data is not None else wirejson.dumps(read.body))
        try:
            done = await workers.run_translate(read.spilled or own, asked, turn.past if turn else None,
                                               turn.found if turn else None)
        finally:
            workers.discard(own)
        if turn is not None and keep:
            turn.keep_inputs(ItemsJSON(done.new_items), done.count)
        return done.translation, done.content, done.saved
    if where == "thread":
        translation, new_items = await offload.in_thread(_translate_read, read, turn, asked, items)
    else:
        translation, new_items = _translate_read(read, turn, asked, items)
    if turn is not None and keep:
        turn.keep_inputs(new_items, len(new_items))
    return translation, None, translation.model_dump(mode="json", exclude={"body"})


def _translate_read(read: Read, turn: StoredTurn | None, asked: Asked,
                    items: ItemCache | None = None) -> tuple[Translation, list[dict[str, Any]]]:
    """On the loop, or in a thread (what it reads of the flow is its own)."""
    body = read.body if read.spilled is None else wirejson.loads(workers.read(read.spilled))
    past = turn.past if turn is not None else None
    assert not isinstance(past, stored_items.Stored)  # a long history is read in a worker
    return translate_turn(body, past, asked, turn.found if turn is not None else None, items=items)


# -- send ------------------------------------------------------------------------------------------
async def _send_or_answer(services: Services, fc: FlowCtx, read: Read, translation: Translation,
                          content: bytes | None, address: Address | None = None) -> None:
    """A failure past this point would leave a half-rewritten request (new URL, client headers):
    it is answered here and never sent."""
    route = fc.route
    assert route is not None
    try:
        await services.upstream.ready()
        send(services, fc, route, read, translation, content, address)
    except TranslatorError as exc:  # e.g. no credentials for a signed dialect
        fc.info["error"] = exc.message
        answer(fc.flow, json_response(*fc.speaks.refusal(exc)))
    except Exception as exc:
        fc.info["error"] = f"gateway could not address the upstream: {exc!r}"
        answer(fc.flow, error_response(fc.speaks, 500, "server_error", fc.info["error"]))


def send(services: Services, fc: FlowCtx, route: Route, read: Read, translation: Translation,
         content: bytes | None = None, address: Address | None = None) -> None:
    """The flow goes upstream through the gateway's own leg (addon/serve/sending.py `build`); a
    deployment of another dialect or model gets the request translated again from `read`, while
    the flow is live. The leg holds the context weakly: it is the context's (`fc.sending`), and a
    cycle would leave the turn to the cyclic collector (docs/benchmarks.md "The fixed cost of a turn")."""
    held = weakref.ref(fc)

    async def retranslate(d_route: Route) -> tuple[Translation, bytes, Address]:
        live = held()
        if live is None:
            raise TranslatorError("the flow is over: no other deployment is tried", status=502,
                                  code="upstream_error")
        return await _retranslated(services, live, read, d_route)

    sending.build(services, fc, route, read.fields, translation, content, address, retranslate)


async def _retranslated(services: Services, fc: FlowCtx, read: Read,
                        route: Route) -> tuple[Translation, bytes, Address]:
    """The request translated again for a deployment of another dialect or model (its
    capabilities resolved as the route's were); a `TranslatorError` refuses it."""
    client_model = read.fields.get("model")
    model = route.model or client_model
    caps = await services.capabilities.resolve(route, model) if isinstance(model, str) else None
    translation, content, _ = await _translation(fc, read, route, caps.capabilities if caps else None,
                                                 keep=False)
    if fc.counting:
        counter = dialects.counter(route.dialect, dict(route.server))
        if counter is None:
            raise TranslatorError(f"the {route.dialect.name} upstream counts no tokens", status=502,
                                  code="upstream_error")
        path, body = counter.encode(translation.body, translation.model)
        counted = translation.model_copy(update={"path": path, "body": body, "stream": False})
        return counted, wirejson.dumps(body), lambda base: dialects.count_url(counter, base, path)
    if content is None:
        content = wirejson.dumps(translation.body)
    return translation, content, lambda base: base + translation.path


# -- a token count ---------------------------------------------------------------------------------
async def _count(services: Services, fc: FlowCtx, read: Read, translation: Translation) -> None:
    """The upstream's own count where its dialect has a count endpoint: the turn as the dialect
    encoded it, re-shaped by its counter and sent as a turn is; else an estimate answered here
    (docs/claude-code.md "Token counts"). The upstream's answer is read when it ends
    (addon/serve/upstream_answer.py)."""
    route = fc.route
    assert route is not None
    counter = dialects.counter(route.dialect, dict(route.server))
    info = fc.info
    if counter is None:
        assert fc.speaks.count is not None  # a count is a client dialect's that has one
        client_dialects.answer_count(fc.flow, fc.speaks.count, route, translation, info)
        return
    flowinfo.merge(info, translation)
    path, body = counter.encode(translation.body, translation.model)
    counted = translation.model_copy(update={"path": path, "body": body, "stream": False})
    url = dialects.count_url(counter, route.base_url, path)
    info.update(model=translation.model, url=url, kind=flowinfo.COUNT_KIND)
    await _send_or_answer(services, fc, read, counted, None,
                          address=lambda base: dialects.count_url(counter, base, path))


# -- refusals --------------------------------------------------------------------------------------
def refuse(fc: FlowCtx, status: int, code: str, message: str) -> None:
    """Answer a request the gateway will not take, in the client's error shape; its record names
    its client (addon/team/keys.py), for the console's line."""
    name = fc.flow.metadata.get(flowinfo.CLIENT)
    named = {"client": name} if name else {}
    fc.flow.metadata[flowinfo.KEY] = flowinfo.record("-", refused=message, **named)
    answer(fc.flow, error_response(fc.speaks, status, code, message))


def refuse_early(fc: FlowCtx, fields: dict[str, Any], refused: Refusal) -> None:
    """Answer a request its client's budgets or the store refused, before anything is sent; the
    flow says why."""
    model = fields.get("model")
    flow = fc.flow
    name = flow.metadata.get(flowinfo.CLIENT)
    flow.metadata[flowinfo.KEY] = flowinfo.record("-", model, client_model=model, refused=refused.message,
                                                  **({"client": name} if name else {}))
    answer(flow, error_response(fc.speaks, refused.status, refused.code, refused.message, refused.param,
                                dict(refused.headers or {})))


def _refuse_translation(fc: FlowCtx, exc: Exception) -> None:
    if isinstance(exc, TranslatorError):
        fc.info["refused"] = exc.message
        status, error = fc.speaks.refusal(exc)
        answer(fc.flow, json_response(status, error))
    else:  # a translator bug must not let the flow go on as sent
        fc.info["error"] = f"gateway could not translate the request: {exc!r}"
        answer(fc.flow, error_response(fc.speaks, 500, "server_error", fc.info["error"]))


def _refuse_replay(fc: FlowCtx, client_model: object, message: str) -> None:
    fc.flow.metadata[flowinfo.KEY] = flowinfo.record("-", client_model, client_model=client_model,
                                                     error=f"replay: {message}")
    answer(fc.flow, error_response(fc.speaks, 400, "replay_failed", message))

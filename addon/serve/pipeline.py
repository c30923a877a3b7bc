"""One request through the gateway, top to bottom (docs/architecture.md "The pipeline").

    read -> identify -> plan state -> translate -> retarget -> (upstream) -> answer

Every client dialect takes this one path (translators/client_dialects.py, Responses first);
what differs comes from its entry: its decoder, its error shape and refusals, whether it names
stored state (`stores_state`), which paths are its turns and its models and count endpoints. The
flow's working state is its `FlowCtx` (addon/serve/flow.py). The client was identified (its gateway key,
addon/team/keys.py) in `requestheaders`, before its body was read. Where a step's work runs (on the
event loop, in a thread, in a worker process) is decided inside that step, by the size of what it
works on (`_where`), never by a second path.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mitmproxy import ctx as mitm
from mitmproxy import http

from addon.observe import flowinfo, recording, stamp
from addon.routes import plugins
from addon.routes.routing import Route, serving
from addon.serve import bodies
from addon.serve import client_side as client_dialects
from addon.serve.answers import answer as answer_now
from addon.serve.answers import error_response, json_response
from addon.serve.flow import FlowCtx
from addon.serve.streaming import StreamHook
from addon.state import stored_items
from addon.state.store import ItemsJSON
from addon.state.turns import AS_SENT, Plan
from addon.team import keys as clients
from addon.upstream import auth, credentials
from addon.upstream import headers as upstream_headers
from addon.work import limits, offload, workers
from translators import (
    Translation,
    TranslatorError,
    stream_translator,
    translate_error,
    translate_request,
    translate_response,
)
from translators import client_dialects as client_registry
from translators import dialect as dialects
from translators.core.report import Report
from translators.features import compaction
from translators.wire import wirejson

if TYPE_CHECKING:
    from addon.gateway import Gateway

FRAMING_HEADERS = ("content-length", "host", "content-encoding", "transfer-encoding")
"""Client headers that describe the client's own body and connection, never the one re-sent."""
WORKER_CLIENTS = (client_registry.DEFAULT,)
"""The client dialects a worker process translates (`workers.run_translate` reads Responses
bodies, with their stored history); another client's large body is translated in a thread."""


@dataclass(slots=True)
class Read:
    """What the read step found: a small body parsed (`body`, `data` its decoded bytes), or a
    large one left in a file (`spilled`) with only its short top-level members in `fields`."""

    fields: dict[str, Any]
    text: str
    """The body's text for the saved flow, cut at the kept bound."""
    trigger: bool
    """Its last input item is `compaction_trigger` (translators/features/compaction.py)."""
    body: Any = None
    data: bytes | None = None
    spilled: workers.Spilled | None = None
    references: list[str] = field(default_factory=list)
    """The ids its `input` names by `item_reference` (`stored_items.references`)."""


# -- the entry ---------------------------------------------------------------------------------
async def serve(gw: Gateway, fc: FlowCtx) -> None:
    """A request the gateway takes on: its client dialect's models list or entry answered here,
    a token count or a turn read and sent on through the steps below."""
    flow, speaks = fc.flow, fc.speaks
    path, method = client_dialects.path_of(flow), flow.request.method
    if method == "GET" and speaks.models is not None and _models_path(speaks, path):
        fc.kind = "models"
        if path.endswith("/models"):
            client_dialects.answer_models(flow, gw.router, speaks)
        else:
            client_dialects.answer_model(flow, gw.router, speaks, path.rsplit("/", 1)[1])
        return
    if method != "POST":
        return
    if speaks.count is not None and path not in speaks.turn_paths:
        fc.kind = "count"
    read = await _read(gw, fc)
    if read is None:
        return
    try:
        await _take(gw, fc, read)
    finally:
        workers.discard(read.spilled)


async def replay(gw: Gateway, fc: FlowCtx) -> None:
    """A saved gateway flow sent again (mitmweb's Replay, `mitmdump -C`). Its request is the
    rewritten one, stale (old options) and with `<redacted>` keys; what the client sent is in the
    metadata, so the flow is translated afresh from that, with the current options, and its
    answer translated again (as a turn, even if it was a count). `flow.backup()` (done by the
    replay) keeps the old flow for mitmweb's Revert."""
    flow = fc.flow
    client_request = flow.metadata.get(flowinfo.CLIENT_REQUEST)
    keep = (flowinfo.CLIENT_REQUEST, flowinfo.CLIENT_DIALECT, clients.METADATA)  # views; its client
    for key in [k for k in flow.metadata if k == flowinfo.KEY or k.startswith("gateway.")]:
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
    await _take(gw, fc, Read(body, client_request or "", compaction.is_trigger(body), body=body,
                             references=stored_items.references(body.get("input"))))


def _models_path(speaks: client_registry.ClientDialect, path: str) -> bool:
    return any(fnmatch.fnmatchcase(path, p) for p in speaks.paths if "/models" in p)


# -- read ----------------------------------------------------------------------------------------
async def _read(gw: Gateway, fc: FlowCtx) -> Read | None:
    """The body, decoded once and within gateway_max_request_bytes (a client may send zstd,
    docs/mitmproxy.md "Compressed bodies"), the flow left as sent until it is ours: an unrouted
    request goes on untouched. A large body is read in a worker process and kept as bytes
    (addon/work/workers.py). None when the flow is answered (413, 400)."""
    flow = fc.flow
    raw = flow.request.raw_content or b""
    encoding = flow.request.headers.get("content-encoding")
    kept, limit = int(mitm.options.gateway_max_kept_bytes), gw.max_request()
    try:
        small = _read_inline(raw, encoding, kept, limit)
        if small is not None:
            body, text, data = small
            fields = body if isinstance(body, dict) else {}
            return Read(fields, text, compaction.is_trigger(body), body=body, data=data,
                        references=stored_items.references(fields.get("input")))
        head = await workers.read_head(raw, encoding, limit, kept)
        return Read(head.fields, head.client_text, head.trigger, spilled=head.body,
                    references=head.references)
    except bodies.TooLarge as exc:
        refuse(fc, 413, "request_too_large", str(exc))
    except (ValueError, UnicodeDecodeError) as exc:
        refuse(fc, 400, "invalid_json", f"the request body is not JSON: {exc}"[:500])
    except RecursionError:  # not a ValueError: Python's parser gives up past ~1000 levels
        refuse(fc, 400, "invalid_json", "the request body is nested too deeply")
    return None


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


# -- route and plan state --------------------------------------------------------------------------
async def _take(gw: Gateway, fc: FlowCtx, read: Read) -> None:
    flow, speaks = fc.flow, fc.speaks
    client_model = read.fields.get("model")
    route = gw.router.route(client_model if isinstance(client_model, str) else "")
    if route is None:
        if fc.replay:
            _refuse_replay(fc, client_model, f"no gateway route for model {client_model!r} under the "
                                             "current options")
        else:
            client_dialects.pass_on(flow, speaks, client_model)  # the console says it went on untouched
        return
    compact = False
    if speaks.stores_state:
        rest = gw.state.endpoint(gw.router.match, flow.request.pretty_host, flow.request.path)
        compact = rest == "responses/compact"
        plan = await gw.state.lookup(flow, read.fields, route, compact=compact,  # what the store holds
                                     references=read.references)
        if plan is None:
            return
    elif await gw.state.admit(flow, read.fields):  # the client's models and budgets (addon/state/turns.py)
        plan = AS_SENT
    else:
        return
    if read.trigger or compact:
        fc.kind = "compaction"
    route = fc.route = serving(route, fc.kind == "compaction")  # a compaction goes to the summarizer
    model = route.model or client_model
    info = fc.begin(route.dialect.name, model, client_model=client_model, **gw.clients.named(flow))
    fc.keep_client_request(read.text)
    caps = await gw.capabilities.resolve(route, model) if isinstance(model, str) else None
    if caps is not None:
        info["capabilities"] = caps.capabilities.source
        info["notes"] += [caps.note] if caps.note else []
    done = await _translate(gw, fc, read, plan, caps.capabilities if caps else None, compact)
    if done is None:
        return
    translation, content, saved = done
    if fc.counting:
        _count(gw, fc, translation)
        return
    fc.translated(translation, saved)
    info.update(model=translation.model, url=route.base_url + translation.path)
    flowinfo.merge(info, translation)
    if translation.compaction:
        info["kind"] = "compaction"
    _retarget_or_answer(gw, fc, translation, content)
    # An upstream that cannot be reached is answered by the HTTP layer (addon/patches/cutoff.py), with
    # the client's error, when the connection attempt fails.


# -- translate -------------------------------------------------------------------------------------
def _where(fc: FlowCtx, read: Read, plan: Any) -> str:
    """inline (on the loop), thread or process: a small request on the loop, a large one (or a
    small one continuing a long stored history) in a worker process, which has an interpreter
    lock of its own; a large request of a client a worker does not translate in a thread."""
    past = None if plan is AS_SENT else plan.past
    if read.spilled is None and not isinstance(past, stored_items.Stored):
        return "inline"
    return "process" if fc.speaks.name in WORKER_CLIENTS else "thread"


async def _translate(gw: Gateway, fc: FlowCtx, read: Read, plan: Plan | Any, caps: Any,
                     compact: bool) -> tuple[Translation, bytes | None, dict[str, Any]] | None:
    """The upstream request, with the stored history `plan` names in its input (`stored_items.expand`);
    the turn's new input items registered for the answer to record (`State.register`). Returns
    the translation, its body when already written (by a worker), and its metadata copy; None
    when the flow is answered (a refusal)."""
    route = fc.route
    assert route is not None
    web_search = mitm.options.gateway_web_search
    where = _where(fc, read, plan)
    try:
        if where == "process":
            return await _in_process(gw, fc, read, plan, caps, compact, web_search)
        if where == "thread":
            return await offload.in_thread(_translate_here, gw, fc, read, plan, caps, compact, web_search)
        return _translate_here(gw, fc, read, plan, caps, compact, web_search)
    except Exception as exc:
        _refuse_translation(fc, exc)
        return None


def _translate_here(gw: Gateway, fc: FlowCtx, read: Read, plan: Plan | Any, caps: Any, compact: bool,
                    web_search: str) -> tuple[Translation, bytes | None, dict[str, Any]]:
    """On the loop, or in a thread (what it reads of the flow is its own)."""
    route = fc.route
    assert route is not None
    body = read.body if read.spilled is None else wirejson.loads(workers.read(read.spilled))
    resolved: dict[str, Any] = {}
    if plan is not AS_SENT:
        resolved = stored_items.resolved(body)  # still echoed (docs/responses.md)
        body, new_items = stored_items.expand(body, plan.past, plan.found)
        gw.state.register(fc, plan, new_items, len(new_items))
    translation = translate_request(_as_asked(fc, body), route.dialect.name, route.model, capabilities=caps,
                                    web_search=web_search, resolved=resolved, client=fc.speaks.name,
                                    kind="compaction_endpoint" if compact else "turn",
                                    items=gw.items.of(fc.flow))
    return translation, None, translation.model_dump(mode="json", exclude={"body"})


async def _in_process(gw: Gateway, fc: FlowCtx, read: Read, plan: Plan | Any, caps: Any, compact: bool,
                      web_search: str) -> tuple[Translation, bytes | None, dict[str, Any]]:
    route = fc.route
    assert route is not None
    past = None if plan is AS_SENT else plan.past
    own = None if read.spilled is not None else await offload.in_thread(
        workers.spill, read.data if read.data is not None else wirejson.dumps(read.body))
    try:
        done = await workers.run_translate(read.spilled or own, route.dialect.name, route.model, caps,
                                           web_search, past, compact, None if plan is AS_SENT else plan.found)
    finally:
        workers.discard(own)
    if plan is not AS_SENT:
        gw.state.register(fc, plan, ItemsJSON(done.new_items), done.count)
    return done.translation, done.content, done.saved


def _as_asked(fc: FlowCtx, body: Any) -> Any:
    """A token count has no `max_tokens` nor a stream; the translation of a turn needs them."""
    if not fc.counting or not isinstance(body, dict):
        return body
    return {**body, "max_tokens": body.get("max_tokens", 1), "stream": False}


# -- retarget --------------------------------------------------------------------------------------
def _retarget_or_answer(gw: Gateway, fc: FlowCtx, translation: Translation, content: bytes | None,
                        url: str | None = None) -> None:
    """A failure past this point would leave a half-rewritten request (new URL, client headers):
    it is answered here and never sent."""
    route = fc.route
    assert route is not None
    try:
        retarget(gw, fc, route, translation, content, url)
    except TranslatorError as exc:  # e.g. no credentials for a signed dialect
        fc.info["error"] = exc.message
        answer_now(fc.flow, json_response(*fc.speaks.refusal(exc)))
    except Exception as exc:
        fc.info["error"] = f"gateway could not address the upstream: {exc!r}"
        answer_now(fc.flow, error_response(fc.speaks, 500, "server_error", fc.info["error"]))


def retarget(gw: Gateway, fc: FlowCtx, route: Route, translation: Translation,
             content: bytes | None = None, url: str | None = None) -> None:
    """The flow's request becomes the upstream's: the route's base URL + the translation's path
    (or `url`: a count the route's server takes elsewhere, `dialects.count_url`), the client's
    headers cut to what may go on, the dialect's content type and accept, the route's
    credentials (on the wire only: the flow shows `<redacted>`)."""
    flow = fc.flow
    if content is None:
        content = wirejson.dumps(translation.body)
    dialect = route.dialect
    if auth.takes_client_credentials(dialect, route.base_url):
        # the client's own vendor: the client's own headers go along (its credentials unless
        # the route names a key: auth.upstream_credentials)
        headers = {k: v for k, v in flow.request.headers.items() if k.lower() not in FRAMING_HEADERS}
    else:
        headers = auth.clean_headers(dict(flow.request.headers))
    headers.update(translation.headers)
    headers["content-type"] = dialect.vendor.request_content_type
    headers["accept"] = dialect.vendor.stream_content_type if translation.stream else "application/json"
    headers["accept-encoding"] = "identity"  # the stream callable gets raw bytes
    flow.request.url = url or route.base_url + translation.path
    secret, note = auth.upstream_credentials(route, headers, flow.request.url, content, gw.settings)
    if note:
        fc.info["notes"].append(note)
    host = flow.request.headers.get("host")
    flow.request.headers.clear()
    if host is not None:
        flow.request.headers["host"] = flow.request.host_header or host
    for name, value in headers.items():
        flow.request.headers[name] = value
    flow.request.content = content
    credentials.attach(flow, secret)


# -- a token count ---------------------------------------------------------------------------------
def _count(gw: Gateway, fc: FlowCtx, translation: Translation) -> None:
    """The upstream's own count where its dialect has a count endpoint: the turn as the dialect
    encoded it, re-shaped by its counter and sent by the same retarget a turn takes; else an
    estimate answered here (docs/claude-code.md "Token counts"). The answer is read by
    `client_dialects.read_count`."""
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
    _retarget_or_answer(gw, fc, counted, None, url=url)


# -- refusals --------------------------------------------------------------------------------------
def refuse(fc: FlowCtx, status: int, code: str, message: str) -> None:
    """Answer a request the gateway will not take, in the client's error shape."""
    fc.flow.metadata[flowinfo.KEY] = flowinfo.record("-", refused=message)
    answer_now(fc.flow, error_response(fc.speaks, status, code, message))


def _refuse_translation(fc: FlowCtx, exc: Exception) -> None:
    if isinstance(exc, TranslatorError):
        fc.info["refused"] = exc.message
        status, error = fc.speaks.refusal(exc)
        answer_now(fc.flow, json_response(status, error))
    else:  # a translator bug must not let the flow go on as sent
        fc.info["error"] = f"gateway could not translate the request: {exc!r}"
        answer_now(fc.flow, error_response(fc.speaks, 500, "server_error", fc.info["error"]))


def _refuse_replay(fc: FlowCtx, client_model: object, message: str) -> None:
    fc.flow.metadata[flowinfo.KEY] = flowinfo.record("-", client_model, client_model=client_model,
                                                     error=f"replay: {message}")
    answer_now(fc.flow, error_response(fc.speaks, 400, "replay_failed", message))


# -- answer ----------------------------------------------------------------------------------------
def answer(gw: Gateway, fc: FlowCtx) -> None:
    """The upstream's answer as the client gets it, and the saved flow: a stream's hook ended
    and what each side had kept; a whole answer, an error or a refusal translated here at once
    (on the loop, or in a worker thread for a large one, `offload.off_loop`); then the record's
    usage and outcome, secrets redacted and scrubbed, a capture written."""
    flow, translation = fc.flow, fc.translation
    if translation is None or flow.response is None or fc.done:
        return
    fc.mark_done()
    info = fc.info
    final = None
    if fc.hook is not None and flow.response.stream is fc.hook:
        hook = fc.hook
        hook.end()
        final = hook.final_response()
        _keep_streamed(flow, hook, info)
        if "transfer-encoding" not in flow.response.headers:
            # set_content just added a content-length the client never got; mitmproxy reads
            # these headers after this hook to decide whether a close-delimited body is over
            flow.response.headers.pop("content-length", None)
        _collect(info, hook.translator.report, hook.error)
    else:
        try:
            if refused := upstream_headers.refusal(flow):
                fc.keep_upstream_response(flow.response.get_content(strict=False) or b"")
                info["error"] = refused["message"]
                flow.response = error_response(fc.speaks, 502, refused["code"], refused["message"])
            elif flow.response.status_code >= 400:
                _translate_error(fc, translation, info)
            else:
                _translate_whole(fc, translation, info)
                gw.state.finish(fc)
        except Exception as exc:  # the client still gets an answer in its own dialect
            info["error"] = f"gateway could not translate the upstream's answer: {exc!r}"[:500]
            flow.response = error_response(fc.speaks, 502, "upstream_protocol_error", info["error"])
    if final is None:  # a whole answer, or a stream the proxy passes through
        final = flowinfo.final_response(flow.response.content or b"")
    if used := flowinfo.usage_of(final):
        info["usage"] = used
    stamp.answered(info, fc.route, final)  # its cost in USD, its finish reason (addon/observe/stamp.py)
    gw.state.count(flow, used)  # per client, with client keys on (addon/team/usage.py)
    if (failure := flowinfo.failure_of(final)) and not info.get("error"):
        info["error"] = failure
    if searches := flowinfo.searches_of(final):
        info["searches"] = searches
    _seal(flow, capture=True)


def failed(flow: http.HTTPFlow, hook: StreamHook | None) -> None:
    """The flow ended in an error (the client left, the upstream broke): the saved flow keeps
    what each side had so far, and says why."""
    info = flow.metadata[flowinfo.KEY]
    if hook is not None and flow.response is not None and flow.response.stream is hook:
        _keep_streamed(flow, hook, info)
    limits.keep_sent_request(flow.request, mitm.options.gateway_max_kept_bytes)
    info["error"] = flow.error.msg if flow.error else "connection error"
    _seal(flow, capture=False)


def _keep_streamed(flow: http.HTTPFlow, hook: StreamHook, info: dict[str, Any]) -> None:
    """The saved flow shows what the client got; the upstream's bytes go in its metadata."""
    assert flow.response is not None
    flow.metadata[flowinfo.UPSTREAM_RESPONSE] = hook.saved_upstream()
    flow.response.stream = False
    flow.response.content = hook.saved_client()
    info.update(hook.timing())  # its time to first token (docs/metrics.md)
    if note := hook.cut_note():
        info["notes"].append(note)


def _seal(flow: http.HTTPFlow, *, capture: bool) -> None:
    """The last step of every flow the gateway took on, answered or failed: no credential in what
    is saved or shown (docs/options.md "Credentials follow the route"), the capture written when
    asked, the flow described for mitmweb and the console."""
    auth.redact_request(flow.request.headers)
    credentials.scrub_flow(flow)
    if capture and mitm.options.gateway_capture_dir:
        recording.save(Path(mitm.options.gateway_capture_dir), flow)
    flowinfo.describe(flow)


def _translate_error(fc: FlowCtx, translation: Translation, info: dict[str, Any]) -> None:
    flow = fc.flow
    assert flow.response is not None
    # before the message is cut short: no credential the upstream repeats survives in part
    raw = credentials.scrub_bytes(flow.response.get_content(strict=False) or b"",
                                  credentials.secrets_of(flow))
    fc.keep_upstream_response(raw)
    error = translate_error(translation.target, flow.response.status_code, raw,
                            dict(flow.response.headers), client=translation.client)
    info["error"] = f"upstream {error.status}: {gist(error.body)}"[:300]
    flow.response = json_response(error.status, error.body, error.headers)


def _translate_whole(fc: FlowCtx, translation: Translation, info: dict[str, Any]) -> None:
    """Server-replayed answers, loaded flows and non-streamed requests: no stream callable ever
    runs for those (docs/mitmproxy.md "Streaming callables"), so the body is translated here at
    once."""
    flow = fc.flow
    assert flow.response is not None
    raw = flow.response.get_content(strict=False) or b""
    fc.keep_upstream_response(raw)
    if translation.stream:
        translator = stream_translator(translation.target, translation)
        out = translator.feed(raw) + translator.close()
        flow.response.headers["content-type"] = fc.speaks.stream_content_type
        flow.response.headers.pop("content-encoding", None)
        flow.response.content = out
        _collect(info, translator.report, None)
        return
    if plugins.passes_through(translation.target, translation.client):
        return  # the client's own dialect: the answer as it is
    report = Report()
    body = translate_response(translation.target, translation, raw, report=report)
    flow.response.status_code = fc.speaks.answer_status(body)  # e.g. a compaction that failed: 500
    flow.response.headers.pop("content-encoding", None)
    flow.response.headers["content-type"] = "application/json"
    flow.response.content = wirejson.dumps(body)
    _collect(info, report, None)


def gist(body: dict[str, Any]) -> str:
    """The message of an error body in the client's shape (already cut to its gist): Responses'
    and Anthropic's `error.message`; another client's whole body."""
    error = body.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return error["message"]
    return wirejson.dumps(body).decode("utf-8", "replace")


def _collect(info: dict[str, Any], report: flowinfo.Found, error: str | None) -> None:
    flowinfo.merge(info, report)
    if error:
        info["error"] = f"gateway: {error}"

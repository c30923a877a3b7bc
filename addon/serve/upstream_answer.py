"""The answer half of a flow the gateway sent upstream (docs/architecture.md "The pipeline"): one
step per thing that can happen to it, each taking the flow's context.

- `head_arrived`: the upstream's answer head arrived (`responseheaders`): its headers screened,
  and a 200 stream set up through the stream translator and the stream hook;
- `ended`: the answer ended (`response`): a stream's hook ended, or a whole answer, an upstream
  error or a token count translated; the turn recorded, its client's usage counted, the flow sealed
  (addon/serve/seal.py), and for a stored turn its store write awaited before mitmproxy ends the
  client's body;
- `failed`: the flow failed (`error`: the client left, the upstream broke off): the saved flow
  keeps what each side had and says why.

The gateway's own upstream leg (addon/upstream/, addon/serve/sending.py) sends the request and
reads the upstream's bytes; what mitmproxy gets from the loopback server is, by the leg's
`kind`, the client's stream already translated, an upstream's answer as it came (translated
here, as the dialect of the deployment that answered), or an answer already in the client's
shape (a refusal, or the retryable error of a leg that gave up). A flow answered otherwise (a
server replay, a loaded flow) is translated here as it stands.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from mitmproxy import ctx as mitm

from addon.observe import flowinfo, stamp
from addon.patches import loopback_pipe
from addon.routes import plugins
from addon.serve import misconfigured
from addon.serve.answers import error_response, json_response
from addon.serve.flow import FlowCtx, Stage
from addon.serve.seal import seal
from addon.serve.sending import Sending, answering, restore
from addon.serve.services import Services
from addon.serve.streaming import StreamHook
from addon.team import accounting
from addon.upstream import credentials
from addon.upstream import headers as upstream_headers
from addon.work import limits, offload
from translators import Translation, stream_translator, translate_error, translate_response
from translators import dialect as dialects
from translators.core.report import Report
from translators.wire import wirejson


# -- the answer's head ---------------------------------------------------------------------------
def head_arrived(services: Services, fc: FlowCtx) -> None:
    """`responseheaders` of a flow sent upstream. Errors, refusals, whole answers and token counts
    are translated when they end (`ended`); a 200 stream goes through the stream hook from its
    first byte on."""
    leg = _leg(fc)
    if leg is not None:
        _leg_head(fc, leg)
        return
    if fc.counting:
        return  # read whole when it ends
    flow, translation = fc.flow, fc.translation
    assert translation is not None and flow.response is not None  # sent: translated; a head came
    limits.keep_sent_request(flow.request, mitm.options.gateway_max_kept_bytes)  # sent by now
    upstream_headers.screen(flow, translation.target)  # vendor headers stay behind; redirects refused
    if flow.response.status_code != 200 or not translation.stream or upstream_headers.refusal(flow):
        return
    if flow.is_replay == "response" or not flow.live:
        return  # server-replayed and loaded answers never reach a stream callable
    translator = services.turns.recorder(flow, fc.turn, stream_translator(translation.target, translation))
    had_length = flow.response.headers.pop("content-length", None) is not None
    if had_length and flow.request.http_version != "HTTP/1.0":
        # the translated body has another length; chunked framing tells an HTTP/1.1 client
        # where it ends and keeps the connection (h2 clients never see this header)
        flow.response.headers["transfer-encoding"] = "chunked"
    flow.response.headers.pop("content-encoding", None)
    flow.response.headers["content-type"] = fc.speaks.stream_content_type
    fc.hook = StreamHook(translator, secrets=credentials.secrets_of(flow),
                         max_kept=mitm.options.gateway_max_kept_bytes, speaks=fc.speaks)
    flow.response.stream = fc.hook
    fc.at(Stage.STREAMING)


def _leg(fc: FlowCtx) -> Sending | None:
    """The flow's leg, when its answer came from the loopback server (addon/serve/sending.py)."""
    sending = fc.sending
    return sending if isinstance(sending, Sending) and sending.retargeted else None


def _leg_head(fc: FlowCtx, sending: Sending) -> None:
    """The loopback server's answer head: the flow shows the request of the deployment that
    answers, its record that deployment; a stream passes on as the leg translated it."""
    flow, leg = fc.flow, sending.leg
    assert flow.response is not None
    restore(flow, sending)
    _answered_by(fc, sending)
    limits.keep_sent_request(flow.request, mitm.options.gateway_max_kept_bytes)
    if leg.kind not in ("stream", "upstream"):
        return  # in the client's shape already
    target = fc.translation.target if fc.translation is not None else fc.info.get("upstream", "")
    upstream_headers.screen(flow, str(target))
    if leg.kind != "stream":
        return
    flow.metadata.pop(flowinfo.REFUSAL, None)  # the stream is on its way already
    flow.response.headers.pop("content-length", None)
    flow.response.headers.pop("content-encoding", None)
    if flow.request.http_version not in ("HTTP/1.0", "HTTP/2.0", "HTTP/3"):
        flow.response.headers["transfer-encoding"] = "chunked"
    flow.response.headers["content-type"] = fc.speaks.stream_content_type
    # the client's bytes, as the leg's stream hook wrote them: passed on by mitmproxy, or after
    # its first piece by the pipe's relay (addon/patches/body_relay.py), where it can
    relay = loopback_pipe.relay_of(flow)
    flow.response.stream = (relay.stream_for(flow) if relay is not None else None) or True
    fc.at(Stage.STREAMING)


def _answered_by(fc: FlowCtx, sending: Sending) -> None:
    """The record says which deployment answers; the answer is read as its dialect's."""
    name = answering(sending.leg)
    deployment = sending.deployments.get(name) if name is not None else None
    translation = sending.translations.get(name) if name is not None else None
    if deployment is None:
        return
    info = fc.info
    route = deployment.route
    if translation is not None and not fc.counting:
        fc.translation = translation
    if route is not fc.route and fc.route is not None:
        fc.route = route
        info.update(upstream=route.dialect.name, model=translation.model if translation else route.model)
    shown = sending.shows.get(deployment.name)
    if shown is not None:
        info["url"] = shown.url


def _leg_record(fc: FlowCtx, sending: Sending) -> None:
    """The leg's attempts in the flow's record (docs/pools.md "Visible"), and the deployment whose
    answer the client got."""
    leg = sending.leg
    info = fc.info
    info["attempts"] = leg.record()
    name = answering(leg) if leg.kind in ("stream", "upstream") else None
    if name is not None:
        info["deployment"] = name
        if leg.attempts and leg.attempts[-1].fallback:
            info["fallback"] = True
    if leg.gave_up and not info.get("error"):
        info["error"] = leg.gave_up


# -- the answer's end ----------------------------------------------------------------------------
def ended(services: Services, fc: FlowCtx) -> Awaitable[None] | None:
    """`response` of any flow the gateway took on. One sent upstream gets its answer translated,
    on the loop or for a large whole answer in a worker thread (addon/work/offload.py), and the
    awaitable the hook returns when there is one to wait for (that thread, a store write); every
    flow is let go of last (`_over`)."""
    flow = fc.flow
    if fc.stage not in (Stage.SENT, Stage.STREAMING) or flow.response is None:
        _over(services, fc)
        return None
    if (sending := _leg(fc)) is not None:
        _leg_record(fc, sending)
        if sending.leg.kind in ("refusal", "gave_up") or (sending.leg.kind == "stream"
                                                           and sending.leg.used is None):
            _as_it_is(fc, sending)
            _over(services, fc)
            return None
    if fc.counting:
        _read_count(fc)
        _over(services, fc)
        return None
    size = len(flow.response.raw_content or b"")
    try:
        answered = offload.off_loop(size, _answer, services, fc)
    except BaseException:
        services.flows.drop(flow)
        raise
    if answered is None and (fc.turn is None or fc.turn.write is None):
        _over(services, fc)
        return None
    return _end(services, fc, answered)


async def _end(services: Services, fc: FlowCtx, answered: Awaitable[None] | None) -> None:
    """The rest of the answer's end: its translation in a worker thread, then its turn's store
    write. mitmproxy ends the client's body once the `response` hook returns, so a client that
    reads to the end finds its turn stored, whichever gateway serves its next one
    (`Turns.written`)."""
    try:
        if answered is not None:
            await answered
        if await services.turns.written(fc.flow, fc.turn) and fc.has_info:
            flowinfo.describe(fc.flow)  # with a note the write may have left
    finally:
        _over(services, fc)


def _over(services: Services, fc: FlowCtx) -> None:
    """The flow's last step: its context let go of, and what its turn held of its client's budgets
    if nothing settled it (a refusal after its reservation)."""
    services.flows.drop(fc.flow)
    services.budgets.release(fc.flow)


def _answer(services: Services, fc: FlowCtx) -> None:
    """The upstream's answer as the client gets it, and the saved flow: a stream's hook ended
    and what each side had kept; a whole answer, an error or a refusal translated here at once;
    then the record's usage and outcome, the turn recorded, the client's usage counted, the flow
    sealed with its capture."""
    flow, translation = fc.flow, fc.translation
    assert flow.response is not None and translation is not None
    fc.at(Stage.ANSWERED)
    info = fc.info
    final = None
    sending = _leg(fc)
    if sending is not None and sending.leg.kind == "stream":
        used = sending.leg.used
        if used is not None:
            fc.hook = used
            flow.response.stream = used  # its kept copies are the saved flow's
    if fc.hook is not None and flow.response.stream is fc.hook:
        hook = fc.hook
        hook.end()
        final = hook.final_response()
        _keep_streamed(fc, hook, info)
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
                services.turns.finish(flow, fc.turn)
        except Exception as exc:  # the client still gets an answer in its own dialect
            info["error"] = f"gateway could not translate the upstream's answer: {exc!r}"[:500]
            flow.response = error_response(fc.speaks, 502, "upstream_protocol_error", info["error"])
    if final is None:  # a whole answer, or a stream the proxy passes through
        final = flowinfo.final_response(flow.response.content or b"")
    if used := flowinfo.usage_of(final):
        info["usage"] = used
    stamp.answered(info, fc.route, final)  # its cost in USD, its finish reason (addon/observe/stamp.py)
    services.budgets.settle(flow, used)  # per client, with client keys on (addon/team/budgets.py)
    if (failure := flowinfo.failure_of(final)) and not info.get("error"):
        info["error"] = failure
    if searches := flowinfo.searches_of(final):
        info["searches"] = searches
    seal(flow, capture=True)


def _as_it_is(fc: FlowCtx, sending: Sending) -> None:
    """An answer already in the client's shape (the leg's refusal, or its give-up): kept, sealed."""
    flow = fc.flow
    assert flow.response is not None
    fc.at(Stage.ANSWERED)
    info = fc.info
    if sending.leg.kind == "refusal" and sending.leg.attempts:
        info.setdefault("refused", sending.leg.attempts[-1].reason.removeprefix("refused: "))
    seal(flow)


def _keep_streamed(fc: FlowCtx, hook: StreamHook, info: dict[str, Any]) -> None:
    """The saved flow shows what the client got; the upstream's bytes go in its metadata."""
    flow = fc.flow
    assert flow.response is not None
    fc.keep_upstream_response(hook.saved_upstream())
    flow.response.stream = False
    flow.response.content = hook.saved_client()
    info.update(hook.timing())  # its time to first token (docs/metrics.md)
    if note := hook.cut_note():
        info["notes"].append(note)


def _translate_error(fc: FlowCtx, translation: Translation, info: dict[str, Any]) -> None:
    flow = fc.flow
    assert flow.response is not None
    raw = _scrubbed(fc)
    error = translate_error(translation.target, flow.response.status_code, raw,
                            dict(flow.response.headers), client=translation.client)
    info["error"] = f"upstream {error.status}: {gist(error.body)}"[:300]
    misconfigured.with_unsent_key(fc.route, error.status, error.body, info)  # a key not sent: which option
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


def _read_count(fc: FlowCtx) -> None:
    """The upstream's answer to a token count sent to it: its tokens in the client's count answer,
    its error in the client's error shape (status and retry headers kept)."""
    flow, speaks, route = fc.flow, fc.speaks, fc.route
    assert flow.response is not None and route is not None and speaks.count is not None
    fc.at(Stage.ANSWERED)
    target = route.dialect.name
    info = fc.info
    raw = _scrubbed(fc)
    counter = dialects.counter(route.dialect, dict(route.server))
    status = flow.response.status_code
    if status >= 400 or counter is None:
        error = translate_error(target, status, raw, dict(flow.response.headers), client=speaks.name)
        info["error"] = f"upstream {error.status}: {gist(error.body)}"[:300]
        flow.response = json_response(error.status, error.body, error.headers)
    else:
        try:
            tokens = counter.parse(wirejson.loads(raw))
        except (ValueError, RecursionError) as exc:
            info["error"] = f"gateway could not read the upstream's count: {exc}"[:300]
            flow.response = error_response(speaks, 502, "upstream_protocol_error", info["error"])
        else:
            info.setdefault("notes", []).append(f"count_tokens: counted by the {target} upstream")
            flow.response = json_response(200, speaks.count.answer(tokens))
    seal(flow)


def _scrubbed(fc: FlowCtx) -> bytes:
    """The upstream's answer bytes, kept for the saved flow, every credential sent scrubbed first:
    no credential the upstream repeats survives in part once a message is cut short."""
    assert fc.flow.response is not None
    raw = credentials.scrub_bytes(fc.flow.response.get_content(strict=False) or b"",
                                  credentials.secrets_of(fc.flow))
    fc.keep_upstream_response(raw)
    return raw


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


# -- failures ------------------------------------------------------------------------------------
def failed(fc: FlowCtx, services: Services | None = None) -> None:
    """`error` of a flow with a record (the client left, the upstream broke): the saved flow
    keeps what each side had so far, and says why; its turn's usage is counted once
    (addon/team/accounting.py)."""
    flow = fc.flow
    info = flow.metadata[flowinfo.KEY]
    if (sending := _leg(fc)) is not None:
        restore(flow, sending)
        _leg_record(fc, sending)
        reading = sending.leg.used or sending.leg.streaming  # the client left mid-stream: the latter
        if reading is not None and flow.response is not None:
            fc.hook = reading
            flow.response.stream = fc.hook
    streamed = fc.hook is not None and flow.response is not None and flow.response.stream is fc.hook
    if fc.hook is not None and streamed:
        _keep_streamed(fc, fc.hook, info)
    limits.keep_sent_request(flow.request, mitm.options.gateway_max_kept_bytes)
    error: str | None = flow.error.msg if flow.error else "connection error"
    if services is not None and fc.hook is not None and streamed and fc.stage < Stage.ANSWERED:
        error = accounting.ended_early(services.budgets, flow, fc.route, fc.hook, error or "")
    if error:
        info["error"] = error
    seal(flow)

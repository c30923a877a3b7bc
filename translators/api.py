"""The public face of the package: translate a request, a stream, a whole answer, an error."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Literal

from translators import client_dialects as clients
from translators import dialect as dialects
from translators.core.capabilities import ModelCapabilities
from translators.core.errors import MalformedRequest, TranslatorError, UnsupportedFeature
from translators.core.ids import IdFactory, random_ids
from translators.core.item_cache import ItemCache
from translators.core.report import Report
from translators.core.translation import Translation, UpstreamError
from translators.features import caching, compaction, fit, websearch
from translators.ir import events as ev
from translators.ir import size
from translators.ir.encoder import EventEncoder
from translators.wire import response_headers, whole_body, wirejson
from translators.wire.upstream_errors import client_status, clip, code_for, text_of


def _dialect(name: str) -> dialects.Dialect:
    try:
        return dialects.get(name)
    except (KeyError, ModuleNotFoundError, AttributeError):
        choices = ", ".join(dialects.names())
        raise MalformedRequest(f"unknown target dialect {name!r}; choose one of {choices}",
                               code="unknown_dialect") from None


def translate_request(body: dict[str, Any], target: str, model: str | None = None, *,
                      capabilities: ModelCapabilities | None = None,
                      web_search: str = "follow", resolved: dict[str, Any] | None = None,
                      client: str = clients.DEFAULT,
                      kind: Literal["turn", "compaction_endpoint"] = "turn",
                      items: ItemCache | None = None) -> Translation:
    """Client body (Responses unless `client` says otherwise) -> what to send to `target`. Raises
    `Refused` (with a Responses-shaped error in `.to_body()`) for a request that must not go
    upstream. `capabilities`: what the vendor said the model accepts; without it the dialect's
    shipped table answers. A compaction request asks a non-OpenAI target for a handoff summary
    (`Translation.compaction`, translators/features/compaction.py): a Responses body whose last item is
    `compaction_trigger`, or any body with `kind="compaction_endpoint"`, what the client posted to
    `/responses/compact`, whose answer is then the whole `response.compaction` object, not a
    stream (docs/compaction.md "Two forms").
    `web_search`: the operator's `gateway_web_search`, off | live | follow
    (translators/features/websearch.py). `resolved`: the `previous_response_id` / `conversation` the caller
    took out of `body` once it had put their history into `input` (the addon's store,
    addon/stored_items.py): not translated, only echoed in every Responses object. `client`: the client
    dialect the body is written in (translators/client_dialects.py); its decoder reads the body, and
    a refusal raised for it is written in its error shape by `ClientDialect.refusal`. `items`: the
    client's own cache of decoded input items (translators/core/item_cache.py), for a client
    dialect that reuses them (`ClientDialect.reuses_items`): the translation is the same, only
    the items it does not hold are decoded; never one cache for two clients."""
    report = Report()
    summarize = False
    kept: list[dict[str, Any]] | None = None
    dialect = _dialect(target)
    speaks = clients.get(client)
    part = _serving(dialect, client)
    if kind == "compaction_endpoint" and speaks.compaction_kept is None:
        raise UnsupportedFeature(f"/responses/compact is a {clients.DEFAULT} endpoint; a {client} client "
                                 "has none")
    if kind == "compaction_endpoint" and isinstance(part, dialects.Passthrough):
        raise UnsupportedFeature(f"the {target} upstream compacts on its own /responses/compact: send the "
                                 "request there as it is")
    if isinstance(part, dialects.Passthrough) and not speaks.takes_passthrough:
        raise UnsupportedFeature(f"the {target} upstream passes the {clients.DEFAULT} wire through and "
                                 f"cannot answer a {client} client: route this model to another upstream",
                                 param="model")
    if isinstance(part, dialects.Passthrough):
        encoded = part.encode(body, model, report)
        client_model = body["model"]
        stream = bool(body.get("stream", False))
        estimate, limit = len(wirejson.dumps(encoded.body)) // 4, fit.sent_limit(encoded.body)
    else:
        if items is not None and speaks.reuses_items:
            request = speaks.decode(body, report, items=items)  # type: ignore[call-arg]
        else:
            request = speaks.decode(body, report)
        if kind == "compaction_endpoint":  # answered whole, never streamed
            request = request.model_copy(update={"kind": "compaction", "stream": False})
            kept = speaks.compaction_kept(body.get("input"))
        summarize = request.kind == "compaction"
        if summarize:
            request = compaction.summarizer_request(request, report)
        request = websearch.prepare(request, target, web_search, report)
        client_model = request.model
        stream = request.stream
        upstream_model = model or request.model
        caps = capabilities or (part.capabilities(upstream_model) if part.capabilities is not None
                                else ModelCapabilities(model=upstream_model))
        if note := caps.lifecycle_note():
            report.note(note)
        encoded = part.encode_request(request, upstream_model, report, caps)
        estimate, limit = size.estimate_tokens(request), fit.reserved_output(request, caps, encoded.body)
        if not encoded.cache_marks:
            caching.report_marks(request, report)
    echoed = speaks.echo({**body, **resolved} if resolved else body)
    return Translation(target=target, client=client, model=encoded.body.get("model") or model or client_model,
                       client_model=client_model, path=encoded.path, body=encoded.body,
                       headers=encoded.headers, stream=stream, dropped=report.dropped,
                       cosmetic=report.cosmetic, notes=report.notes, tools=encoded.tools,
                       echo=echoed, compaction=summarize, compaction_kept=kept,
                       input_estimate=estimate, output_limit=limit)


def _serving(dialect: dialects.Dialect, client: str) -> dialects.Codec | dialects.Passthrough:
    """The upstream's passthrough serves this client (its own wire); else the IR's codecs do
    (docs/responses.md "As an upstream of other clients")."""
    return dialects.serving(dialect, clients.get(client).takes_passthrough)


NOTHING_SENT = ("the upstream answered 200 but its stream ended having sent nothing: the request likely "
                "exceeded the model's context, or the server failed (see its log)")
NOTHING_SENT_CODE = "invalid_prompt"
"""A `response.failed` code Codex neither retries nor rewords: it shows the message as sent
(docs/codex.md "Errors and retries")."""
_NOT_SAID = (ev.Note, ev.KeepAlive)
"""Events that are no part of an answer: a decoder's remark about the bytes, an upstream's keep-alive."""
CONTENT = frozenset({ev.TextDelta, ev.TextDone, ev.ReasoningDelta, ev.ReasoningDone, ev.ToolCallStarted,
                     ev.ToolCallDelta, ev.ToolCallDone, ev.WebSearch, ev.Citation, ev.Finished})
"""The events of the answer itself: once one has passed, the client has something it acts on, and
the request can no longer be sent elsewhere unseen (docs/pools.md "Before the first content")."""


class StreamTranslator:
    """Upstream stream bytes -> the client dialect's SSE bytes (Responses; Anthropic's events for a
    Messages client, docs/claude-code.md). Never raises: whatever goes wrong inside ends the
    client's stream with one terminal failure, `response.failed` or an `error` event (the proxy
    boundary, docs/design.md "Errors")."""

    def __init__(self, decoder: dialects.StreamDecoder, encoder: EventEncoder,
                 report: Report,
                 whole: Callable[[], dialects.StreamDecoder] | None = None) -> None:
        self._decoder = decoder
        self._encoder = encoder
        self.report = report
        self._closed = False
        self._whole = whole
        self._head: bytes | None = b"" if whole is not None else None
        """The first bytes, until they tell a stream from a whole body (wire/whole_body.py)."""
        self._said = False
        """The upstream has sent something of an answer (`_nothing_said`)."""
        self.content_started = False
        """An event of the answer itself (`CONTENT`) has passed: what a proxy that holds back the
        client's opening events waits for."""
        self.early_failure: ev.Failed | None = None
        """The failure that came before any content (an upstream error event, an answer that said
        nothing): the request failed before the client saw anything of it."""
        self.progress = 0
        """Events decoded so far, keep-alives not counted: what an idle timer watches (an upstream
        that only pings has gone quiet)."""

    @property
    def finished(self) -> bool:
        return self._encoder.finished

    def feed(self, data: bytes) -> bytes:
        return b"".join(self.feed_parts(data))

    def feed_parts(self, data: bytes) -> list[bytes]:
        """`feed`'s bytes in pieces, unjoined (`ResponsesEncoder.encode_parts`): what a proxy
        hands on chunk by chunk without copying a long text once per event that repeats it."""
        if self._closed or not data:
            return []
        if self._head is not None:
            data = self._sniff(data)
            if not data:
                return []
        # the happy path inline, without helper calls: this runs once per upstream event (bench/)
        try:
            events = self._decoder.feed(data)
            if not self._said:
                events = self._nothing_said(events, closing=False)
        except Exception as exc:
            events = self._read_failure(exc)
        if events:
            self._observe(events)
        try:
            return self._encoder.encode_parts(events)
        except Exception as exc:
            return [self._write_failure(exc)]

    def _sniff(self, data: bytes) -> bytes:
        """The bytes to decode now: none while the first bytes are undecided, then all so far,
        to the stream decoder or, for a whole body, to a `WholeBody` in its place."""
        head = (self._head or b"") + data
        chosen = whole_body.kind(head)
        if chosen is None:
            self._head = head
            return b""
        self._head = None
        if chosen == "whole" and self._whole is not None:
            self._decoder = self._whole()
        return head

    def close(self) -> bytes:
        return b"".join(self.close_parts())

    def close_parts(self) -> list[bytes]:
        """`close`'s bytes in pieces, as `feed_parts`."""
        if self._closed:
            return []
        self._closed = True
        try:
            head, self._head = self._head, None
            events = (self._decoder.feed(head) if head else []) + self._decoder.close()
            if not self._said:
                events = self._nothing_said(events, closing=True)
        except Exception as exc:
            events = self._read_failure(exc)
        self._observe(events)
        try:
            out = self._encoder.encode_parts(events)
        except Exception as exc:
            out = [self._write_failure(exc)]
        return out + self._encoder.finish_parts()

    def response(self) -> dict[str, Any]:
        return self._encoder.response()

    def _observe(self, events: list[ev.Event]) -> None:
        """`progress`, `content_started` and `early_failure` from the events about to be written."""
        for event in events:
            kind = type(event)
            if kind is ev.KeepAlive:
                continue
            self.progress += 1
            if self.content_started:
                continue
            if kind in CONTENT:
                self.content_started = True
            elif isinstance(event, ev.Failed) and self.early_failure is None:
                self.early_failure = event

    def _nothing_said(self, events: list[ev.Event], *, closing: bool) -> list[ev.Event]:
        """A 200 stream that ends having sent nothing of an answer (no bytes, keep-alives, a bare
        `[DONE]`): what llama-cpp-python sends when the request is over its context (docs/chat.md
        "Compatible servers"), and what any server sends that fails after its headers. Its end (a
        `Finished`, or the decoder's own failure at the end of the bytes) becomes one failure
        that says so, with a code Codex does not retry (docs/codex.md "Errors and retries"):
        retrying cannot help. An error the upstream sent as data is something said."""
        if isinstance(self._decoder, whole_body.WholeBody):  # a whole body has its own reading
            self._said = True
            return events
        for i, event in enumerate(events):
            kind = type(event)
            if kind is ev.Finished or (kind is ev.Failed and closing):
                said = f" ({event.message})" if isinstance(event, ev.Failed) else ""
                return [*events[:i], ev.Failed(NOTHING_SENT_CODE, NOTHING_SENT + said)]
            if kind not in _NOT_SAID:
                self._said = True
                return events
        return events

    def _read_failure(self, exc: Exception) -> list[ev.Event]:
        """A decoder ends a stream it cannot read with a `Failed` event (wire/decoding.py), so what
        reaches here is a gateway bug: the client still gets a terminal event, not a hung stream."""
        self.report.note(f"gateway error while reading the upstream stream: {exc!r}")
        if isinstance(exc, TranslatorError):
            return [ev.Failed(exc.code, exc.message)]
        return [ev.Failed("server_error", f"gateway could not read the upstream stream: {exc}")]

    def _write_failure(self, exc: Exception) -> bytes:
        """Same boundary for writing: a bug must end the stream, not hang it."""
        self.report.note(f"gateway error while writing the client's stream: {exc!r}")
        return self._encoder.finish(f"gateway could not write the response: {exc}")


class PassthroughTranslator:
    """The stream of a passthrough target (`Dialect.passthrough`), closed once."""

    def __init__(self, inner: dialects.ByteStream, report: Report) -> None:
        self._inner = inner
        self.report = report
        self._closed = False

    @property
    def finished(self) -> bool:
        return self._inner.finished

    @property
    def content_started(self) -> bool:
        """As `StreamTranslator`'s, when the passthrough observes it; else from its first bytes on
        (nothing is held back for a stream the gateway cannot read)."""
        return bool(getattr(self._inner, "content_started", True))

    @property
    def early_failure(self) -> ev.Failed | None:
        return getattr(self._inner, "early_failure", None)

    @property
    def progress(self) -> int:
        return int(getattr(self._inner, "progress", 0))

    def feed(self, data: bytes) -> bytes:
        return self._inner.feed(data) if not self._closed else b""

    def close(self) -> bytes:
        if self._closed:
            return b""
        self._closed = True
        return self._inner.close()

    def response(self) -> None:
        """None: a passthrough forwards the upstream's own Responses object, and keeps none."""
        return None

    def feed_parts(self, data: bytes) -> list[bytes]:
        out = self.feed(data)
        return [out] if out else []

    def close_parts(self) -> list[bytes]:
        out = self.close()
        return [out] if out else []


def stream_translator(source: str, translation: Translation, *, new_id: IdFactory | None = None,
                      clock: Callable[[], float] = time.time) -> StreamTranslator | PassthroughTranslator:
    report = Report()
    part = _serving(_dialect(source), translation.client)
    if isinstance(part, dialects.Passthrough):
        return PassthroughTranslator(part.stream(translation, report), report)
    encoder = _encoder(translation, report, new_id, clock)
    return StreamTranslator(part.stream_decoder(translation), encoder, report,
                            whole=lambda: whole_body.WholeBody(part, translation))


def _encoder(translation: Translation, report: Report, new_id: IdFactory | None,
             clock: Callable[[], float]) -> EventEncoder:
    """The client dialect's writer of the answer (`ClientDialect.encoder`)."""
    return clients.get(translation.client).encoder(translation, report, new_id or random_ids(), clock)


def translate_response(source: str, translation: Translation, body: bytes, *,
                       new_id: IdFactory | None = None, clock: Callable[[], float] = time.time,
                       report: Report | None = None) -> dict[str, Any]:
    """A whole (non-streamed) upstream answer -> the Responses object the client receives (for a
    Messages client: the `Message`, or its error body; for `/responses/compact`: the
    `response.compaction` object, or its error body; `ClientDialect.answer_status`)."""
    part = _serving(_dialect(source), translation.client)
    if isinstance(part, dialects.Passthrough):  # the client's own dialect: the answer as it is
        return wirejson.loads(body)
    report = report if report is not None else Report()
    encoder = _encoder(translation, report, new_id, clock)
    try:
        parsed = wirejson.loads(body)
        events = part.response_events(parsed, translation)
    except TranslatorError as exc:
        events = [ev.Failed(exc.code, exc.message)]
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
        # RecursionError: json.loads on absurdly nested JSON; still just an unreadable answer
        events = [ev.Failed("upstream_protocol_error", f"the upstream's answer could not be read: {exc}")]
    try:
        encoder.encode(events)
    except Exception as exc:  # this boundary returns a Responses object, never a foreign error
        report.note(f"gateway error while reading the upstream's answer: {exc!r}")
        encoder.finish(f"the upstream's answer could not be read: {exc}")
    encoder.finish("upstream answer had no finish")
    return encoder.response()


def translate_error(source: str, status: int, body: bytes,
                    headers: dict[str, str] | None = None, *, client: str = clients.DEFAULT) -> UpstreamError:
    """An upstream HTTP error -> an error body in the client dialect's shape (Responses by default),
    status kept (a Messages client gets 529 for an overload, as from Anthropic), and the headers
    the client needs (retry-after, x-ratelimit-*, the request id: `wire/response_headers.py`)."""
    try:
        parsed: Any = wirejson.loads(body) if body else None
    except (ValueError, RecursionError):
        parsed = None
    dialect = dialects.find(source)
    part = _serving(dialect, client) if dialect is not None else None
    passthrough = isinstance(part, dialects.Passthrough)
    if passthrough and isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
        out = parsed
        if isinstance(parsed["error"].get("message"), str):
            parsed["error"]["message"] = clip(parsed["error"]["message"])
    else:
        if passthrough:  # the client's own dialect, in a body it cannot read as one
            message, code = text_of(body) or f"upstream answered {status}", code_for(status, text_of(body))
        else:
            try:
                if not isinstance(part, dialects.Codec):
                    raise LookupError(f"unknown dialect {source!r}")
                info = part.error_info(status, parsed if parsed is not None else text_of(body))
                message, code = info.message, info.code
            except Exception:  # an odd error body must not cost the client its status and retry-after
                message, code = text_of(body), code_for(status, text_of(body))
        sent = client_status(status, message)  # a server's validation error is the client's 400
        speaks = clients.get(client)
        out = speaks.error_body(sent, code, clip(f"{source} upstream returned {status}: {message}"))
        status = speaks.error_status(sent, out)
    keep = dict(response_headers.for_client((headers or {}).items(), source, framing=False))
    return UpstreamError(status=status, body=out, headers=keep)

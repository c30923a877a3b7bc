"""OpenTelemetry traces of the gateway's turns (docs/metrics.md "Traces").

An addon placed after the gateway (addon/gateway.py), like the metrics: a finished turn's span is
built after the fact from the flow's record and timestamps (explicit start and end times), its
upstream attempts as child spans, under the client's own `traceparent` when it sent one. The
SDK's batch processor exports them from a thread of its own, off the event loop.

On only when the SDK is installed (`pip install 'dialect-gateway[otel]'`) and an OTLP endpoint is
configured (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`; the other
standard `OTEL_*` variables apply as the SDK reads them); one start-up line says which.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from mitmproxy import ctx, http

from addon.observe import facts, flowinfo
from addon.routes.routing import Router
from translators import dialect as registry

log = logging.getLogger(__name__)

CONTENT_OPTION = "gateway_trace_content"
SERVICE = "dialect-gateway"
"""`service.name` unless `OTEL_SERVICE_NAME` (or `OTEL_RESOURCE_ATTRIBUTES`) says another."""
ENDPOINTS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
CARRIED = ("traceparent", "tracestate")
"""The W3C trace-context headers a client's span continues in (https://www.w3.org/TR/trace-context/)."""
MAX_CONTENT = 16384
"""Characters of the prompt and of the answer kept in a span, with `gateway_trace_content`."""


def setting(environ: Mapping[str, str]) -> str | None:
    """Why traces are off under these variables, or None when they are configured."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return "OTEL_SDK_DISABLED=true"
    if environ.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() in ("none", ""):
        return "OTEL_TRACES_EXPORTER=none"
    if not any(environ.get(name, "").strip() for name in ENDPOINTS):
        return "no OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set"
    protocol = environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
    if protocol and protocol.strip() != "http/protobuf":
        return f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol}: the gateway exports http/protobuf only"
    return None


def provider_name(upstream: str) -> str:
    """`gen_ai.provider.name`: the dialect's own (`Vendor.genai_provider`), else its name."""
    dialect = registry.find(upstream)
    named = getattr(dialect.vendor, "genai_provider", None) if dialect is not None else None
    return named or upstream


class Traces:
    name = "gateway-traces"

    def __init__(self, router: Callable[[], Router], environ: Mapping[str, str] | None = None,
                 exporter: Any = None) -> None:
        self._router = router
        self._environ = environ
        self._exporter = exporter
        """An exporter of the test's, instead of OTLP/HTTP from the variables."""
        self.provider: Any = None
        self.tracer: Any = None
        self._started = False

    def load(self, loader: Any) -> None:
        loader.add_option(CONTENT_OPTION, bool, False,
                          "Put the client's request and the answer's text in each turn's span (off: "
                          "no prompt or answer text leaves the gateway in traces; docs/metrics.md).")

    def running(self) -> None:
        if self._started:
            return
        self._started = True
        environ = os.environ if self._environ is None else self._environ
        off = setting(environ) if self._exporter is None else None
        if off is not None:
            log.info(f"traces: off ({off})")
            return
        try:
            self._start(environ)
        except ImportError:
            log.info("traces: off (opentelemetry-sdk is not installed: "
                     "pip install 'dialect-gateway[otel]')")
            return
        endpoint = next((environ[n] for n in ENDPOINTS if environ.get(n, "").strip()), "the test's exporter")
        log.info(f"traces: on, OTLP/HTTP to {endpoint}")

    def _start(self, environ: Mapping[str, str]) -> None:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        exporter = self._exporter
        if exporter is None:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            exporter = OTLPSpanExporter()  # endpoint, headers, timeout, compression: OTEL_EXPORTER_OTLP_*
        attributes = environ.get("OTEL_RESOURCE_ATTRIBUTES", "")
        named = "OTEL_SERVICE_NAME" in environ or "service.name=" in attributes
        resource = Resource.create({} if named else {"service.name": SERVICE})
        self.provider = TracerProvider(resource=resource)  # the sampler: OTEL_TRACES_SAMPLER
        self.provider.add_span_processor(BatchSpanProcessor(exporter))  # OTEL_BSP_*
        self.tracer = self.provider.get_tracer("dialect-gateway")

    def done(self) -> None:
        if self.provider is not None:
            self.provider.shutdown()  # the spans still queued are exported first
            self.provider = self.tracer = None

    # -- the client's trace context -----------------------------------------------------------
    def requestheaders(self, flow: http.HTTPFlow) -> None:
        """The client's `traceparent` as it sent it: the request a turn sends upstream is
        rebuilt with the client's headers cut (addon/serve/pipeline.py `retarget`)."""
        carried = {name: flow.request.headers[name] for name in CARRIED if name in flow.request.headers}
        if carried and "traceparent" in carried:
            flow.metadata[facts.TRACE_CONTEXT] = carried

    # -- turns ---------------------------------------------------------------------------------
    def response(self, flow: http.HTTPFlow) -> None:
        self.trace(flow)

    def error(self, flow: http.HTTPFlow) -> None:
        self.trace(flow)

    def trace(self, flow: http.HTTPFlow) -> None:
        if self.tracer is None or not flow.live or flow.metadata.get(TRACED):
            return
        try:
            turn = facts.read(flow, time.time())
            if turn is None:
                return
            flow.metadata[TRACED] = True
            self._spans(flow, turn, bool(getattr(ctx.options, CONTENT_OPTION, False)))
        except Exception as exc:  # a trace must never fail the flow
            log.warning(f"traces: turn not traced: {exc!r}")

    def _spans(self, flow: http.HTTPFlow, turn: facts.Turn, content: bool) -> None:
        from opentelemetry import trace
        from opentelemetry.trace import SpanKind, Status, StatusCode
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

        parent = TraceContextTextMapPropagator().extract(turn.trace_context) if turn.trace_context else None
        model = turn.model or turn.client_model or "unknown"
        span = self.tracer.start_span(f"chat {model}", context=parent, kind=SpanKind.SERVER,
                                      start_time=_ns(turn.started),
                                      attributes=turn_attributes(turn, self._router()))
        if content:
            for key, value in _content(flow).items():
                span.set_attribute(key, value)
        if turn.outcome != "ok":
            span.set_status(Status(StatusCode.ERROR, turn.error or turn.outcome))
        inside = trace.set_span_in_context(span)
        for n, attempt in enumerate(turn.attempts, start=1):
            start = attempt.start if attempt.start is not None else turn.started
            child = self.tracer.start_span(f"attempt {attempt.deployment}", context=inside,
                                           kind=SpanKind.CLIENT, start_time=_ns(start),
                                           attributes=attempt_attributes(attempt, n, model))
            if attempt.outcome != "answered":
                child.set_status(Status(StatusCode.ERROR, attempt.reason or attempt.outcome))
            child.end(end_time=_ns(start + attempt.seconds))
        span.end(end_time=_ns(turn.ended))
        if isinstance(info := flow.metadata.get(flowinfo.KEY), dict):  # the saved flow names its trace
            own = span.get_span_context()
            info["trace_id"] = f"{own.trace_id:032x}"


TRACED = "gateway.traced"
"""Set on a flow once its span was made."""


def turn_attributes(turn: facts.Turn, router: Router) -> dict[str, Any]:
    """The GenAI semantic conventions' attributes (https://opentelemetry.io/docs/specs/semconv/gen-ai/)
    and the gateway's own under `gateway.`. Span attributes are no metric labels: the client's
    model name goes as it came."""
    provider = provider_name(turn.upstream)
    route = router.route(turn.client_model) if turn.client_model else None
    out: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": provider,
        "gen_ai.system": provider,
        "gateway.upstream": turn.upstream,
        "gateway.outcome": turn.outcome,
        "gateway.client_dialect": turn.client_dialect,
        "gateway.stream": turn.stream,
        "gateway.compaction": turn.compaction,
    }
    if turn.model:
        out["gen_ai.request.model"] = out["gen_ai.response.model"] = turn.model
    if turn.client_model:
        out["gateway.client_model"] = turn.client_model
    if turn.client:
        out["gateway.client"] = turn.client
    if route is not None:
        out["gateway.route"] = route.pattern
    if turn.status is not None:
        out["http.response.status_code"] = turn.status
    if turn.finish_reason:
        out["gen_ai.response.finish_reasons"] = (turn.finish_reason,)
    if (tokens := turn.tokens) is not None:
        out["gen_ai.usage.input_tokens"] = tokens.input_total
        out["gen_ai.usage.output_tokens"] = tokens.output
        out["gen_ai.usage.cache_read.input_tokens"] = tokens.cache_read
        out["gen_ai.usage.cache_creation.input_tokens"] = tokens.cache_write_5m + tokens.cache_write_1h
        out["gateway.usage.reasoning_tokens"] = tokens.reasoning
    if turn.cost_usd is not None:
        out["gateway.cost_usd"] = turn.cost_usd
    if (ttft := turn.time_to_first_token) is not None and turn.stream:
        out["gateway.time_to_first_token_s"] = round(ttft, 6)
    if turn.lossy:
        out["gateway.dropped"] = turn.lossy
    if turn.cosmetic:
        out["gateway.cosmetic"] = turn.cosmetic
    if turn.error:
        out["error.type"] = turn.outcome
        out["gateway.error"] = turn.error[:500]
    return out


def attempt_attributes(attempt: facts.Attempt, n: int, model: str) -> dict[str, Any]:
    out: dict[str, Any] = {"gen_ai.operation.name": "chat", "gen_ai.request.model": model,
                           "gateway.attempt": n, "gateway.deployment": attempt.deployment,
                           "gateway.fallback": attempt.fallback, "gateway.attempt.outcome": attempt.outcome}
    if attempt.url:
        parts = urlsplit(attempt.url)  # no query: a vendor may take a key there
        out["url.full"] = f"{parts.scheme}://{parts.netloc}{parts.path}"
        out["server.address"] = parts.hostname or ""
    if attempt.status is not None:
        out["http.response.status_code"] = attempt.status
    if attempt.reason:
        out["gateway.attempt.reason"] = attempt.reason[:500]
    if attempt.outcome != "answered":
        out["error.type"] = attempt.outcome
    return out


def _content(flow: http.HTTPFlow) -> dict[str, str]:
    """The client's request and the answer it got, cut at `MAX_CONTENT` (with the option only)."""
    out = {}
    asked = flow.metadata.get(flowinfo.CLIENT_REQUEST)
    if isinstance(asked, str) and asked:
        out["gateway.request.body"] = asked[:MAX_CONTENT]
    if flow.response is not None:
        got = flow.response.get_text(strict=False) or ""
        if got:
            out["gateway.response.body"] = got[:MAX_CONTENT]
    return out


def _ns(seconds: float) -> int:
    return int(seconds * 1_000_000_000)

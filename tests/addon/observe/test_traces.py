"""addon/observe/traces.py: a turn's span and its attempts' child spans, built after the fact from
the record with the flow's own times, under the client's traceparent; the SDK's in-memory exporter
takes them (the OTLP export itself: tests/addon/e2e/test_observability.py)."""

from __future__ import annotations

from typing import Any

import pytest
from mitmproxy.test import taddons, tflow, tutils
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from addon.observe import facts, flowinfo, traces
from addon.routes.routing import Route, Router
from translators import dialect as registry

BEDROCK = Route("*", registry.get("bedrock"), "https://b", "us.anthropic.claude-sonnet-4-6", None)
ROUTER = Router(routes=(BEDROCK,))
PARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def flow_of(info: dict[str, Any], headers: dict[str, str] | None = None) -> Any:
    flow = tflow.tflow(resp=tutils.tresp(status_code=200))
    for name, value in (headers or {}).items():
        flow.request.headers[name] = value
    flow.request.timestamp_start, flow.response.timestamp_end = 1000.0, 1003.0
    flow.metadata[flowinfo.KEY] = {"upstream": "bedrock", "model": "us.anthropic.claude-sonnet-4-6",
                                   "client_model": "gpt-5.5", "dropped": [], "notes": [], **info}
    flow.metadata[flowinfo.CLIENT_REQUEST] = '{"input": "the secret plan"}'
    return flow


@pytest.fixture
def traced() -> Any:
    exporter = InMemorySpanExporter()
    addon = traces.Traces(lambda: ROUTER, environ={}, exporter=exporter)
    with taddons.context(addon):
        addon.running()
        yield addon, exporter
        addon.done()


def test_a_turn_is_a_server_span_with_its_attempts_as_client_children_under_the_clients_trace(
        traced: Any) -> None:
    addon, exporter = traced
    attempts = [{"deployment": "key-a", "fallback": False, "url": "https://b/model/x/converse?k=1",
                 "status": 503, "outcome": "retried", "reason": "503 from the upstream", "ms": 400,
                 "start": 1000.1},
                {"deployment": "key-b", "fallback": True, "url": "https://c/model/x/converse",
                 "status": 200, "outcome": "answered", "reason": "", "ms": 2000, "start": 1000.7}]
    flow = flow_of({"attempts": attempts, "usage": {"input_tokens": 50, "output_tokens": 9},
                    "finish_reason": "stop", "cost_usd": 0.001}, headers={"traceparent": PARENT})
    addon.requestheaders(flow)
    addon.response(flow)
    addon.provider.force_flush()
    spans = exporter.get_finished_spans()
    [turn] = [s for s in spans if s.kind == SpanKind.SERVER]
    children = [s for s in spans if s.kind == SpanKind.CLIENT]
    assert f"{turn.context.trace_id:032x}" == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert turn.parent is not None and f"{turn.parent.span_id:016x}" == "00f067aa0ba902b7"
    assert (turn.start_time, turn.end_time) == (1000 * 10**9, 1003 * 10**9)
    assert turn.attributes["gen_ai.provider.name"] == "aws.bedrock"
    assert turn.attributes["gen_ai.usage.input_tokens"] == 50
    assert turn.attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert turn.attributes["gateway.route"] == "*"
    assert [c.parent.span_id for c in children] == [turn.context.span_id] * 2
    assert [c.attributes["gateway.deployment"] for c in children] == ["key-a", "key-b"]
    assert children[0].status.status_code == StatusCode.ERROR
    assert children[0].attributes["url.full"] == "https://b/model/x/converse"  # no query
    assert children[1].start_time == int(1000.7 * 10**9)
    assert flow.metadata[flowinfo.KEY]["trace_id"] == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert not any("secret plan" in str(s.attributes) for s in spans)


def test_the_prompt_and_answer_go_in_the_span_only_when_asked(traced: Any) -> None:
    addon, exporter = traced
    with taddons.context(addon) as tctx:
        tctx.configure(addon, gateway_trace_content=True)
        addon.response(flow_of({}))
    addon.provider.force_flush()
    [span] = exporter.get_finished_spans()
    assert "the secret plan" in span.attributes["gateway.request.body"]


def test_a_flow_is_traced_once_and_only_a_live_turn(traced: Any) -> None:
    addon, exporter = traced
    flow = flow_of({})
    addon.response(flow)
    addon.error(flow)
    loaded = flow_of({})
    loaded.live = False
    addon.response(loaded)
    addon.response(flow_of({"kind": flowinfo.COUNT_KIND}))
    addon.provider.force_flush()
    assert len(exporter.get_finished_spans()) == 1


@pytest.mark.parametrize(("environ", "off"), [
    ({}, "no OTEL_EXPORTER_OTLP_ENDPOINT"),
    ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"}, "OTEL_SDK_DISABLED"),
    ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"},
     "OTEL_TRACES_EXPORTER"),
    ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
     "http/protobuf only"),
    ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, None),
])
def test_traces_are_on_only_when_an_endpoint_is_configured(environ: dict[str, str], off: str | None) -> None:
    said = traces.setting(environ)
    assert said is None if off is None else off in (said or "")


def test_the_trace_context_is_kept_as_the_client_sent_it() -> None:
    addon = traces.Traces(lambda: ROUTER, environ={})
    flow = flow_of({}, headers={"traceparent": PARENT, "tracestate": "team=ana"})
    addon.requestheaders(flow)
    assert flow.metadata[facts.TRACE_CONTEXT] == {"traceparent": PARENT, "tracestate": "team=ana"}
    bare = flow_of({})
    addon.requestheaders(bare)
    assert facts.TRACE_CONTEXT not in bare.metadata

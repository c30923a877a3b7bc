"""Metrics and traces with real components (docs/metrics.md): turns through real mitmdump (over
HTTP and the Responses WebSocket) to the Anthropic fake (tests/support/fake_upstream.py) with
client keys on; a real Prometheus server (Debian's package, tests/support/prometheus.py) scrapes
the gateway's metrics port and its query API gives the turn count, tokens and cost the usage
report shows for the same turns; an OTLP/HTTP receiver (tests/support/otlp_receiver.py) gets one
trace per turn, its upstream attempt as a child span, the client's `traceparent` continued."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from websockets.asyncio.client import connect

from addon.team import clients_file as clients
from tests.support import fake_upstream
from tests.support.fake_upstream import FakeUpstream
from tests.support.mitmdump import ROOT, MitmDump
from tests.support.otlp_receiver import OtlpReceiver
from tests.support.prometheus import running_prometheus

pytestmark = pytest.mark.timeout(240)

CLAUDE = "claude-sonnet-4-6"
"""Priced in translators/anthropic/prices.toml: $3 in, $15 out per million tokens."""
ANA = clients.KEY_PREFIX + "ana-observe-key-0123456789abcdef"
BOB = clients.KEY_PREFIX + "bob-observe-key-0123456789abcdef"
CLIENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CLIENT_SPAN = "00f067aa0ba902b7"


def _answer(_body: Any, _headers: Any, path: str) -> fake_upstream.Reply:
    return fake_upstream.anthropic_text("Observed.", model=CLAUDE, input_tokens=1200)


@pytest.fixture(scope="module")
def otlp() -> Iterator[OtlpReceiver]:
    with OtlpReceiver() as receiver:
        yield receiver


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory, otlp: OtlpReceiver) -> Iterator[tuple[MitmDump, int]]:
    root = tmp_path_factory.mktemp("observe")
    (root / "clients.toml").write_text(clients.table(clients.Client("ana", clients.hash_key(ANA)))
                                       + clients.table(clients.Client("bob", clients.hash_key(BOB))))
    with FakeUpstream(_answer) as upstream, MitmDump(
            root / "conf", mode="reverse:https://api.openai.com",
            options={"gateway_upstream": "anthropic", "gateway_base_url": upstream.url,
                     "gateway_model": CLAUDE, "gateway_capabilities": "table",
                     "gateway_clients": str(root / "clients.toml"), "gateway_metrics": "127.0.0.1:0"},
            env={"OTEL_EXPORTER_OTLP_ENDPOINT": otlp.url, "OTEL_BSP_SCHEDULE_DELAY": "200",
                 "OTEL_SERVICE_NAME": None, "OTEL_SDK_DISABLED": None}) as proxy:
        listening = re.search(r"metrics: http://127\.0\.0\.1:(\d+)/metrics", proxy.log)
        assert listening is not None, proxy.log
        _turns(proxy)
        yield proxy, int(listening[1])


def _ask(proxy: MitmDump, key: str, text: str, headers: dict[str, str] | None = None) -> Any:
    with openai.OpenAI(base_url=f"{proxy.url}/v1", api_key=key, max_retries=0, timeout=30) as client, \
            client.responses.stream(model="gpt-5.5", input=text, store=False,
                                    extra_headers=headers or {}) as events:
        return events.get_final_response()


async def _ask_over_a_socket(proxy: MitmDump, key: str, text: str) -> dict[str, Any]:
    """One turn over the Responses WebSocket (docs/websocket.md): a flow of its own."""
    headers = {"authorization": f"Bearer {key}", "openai-beta": "responses_websockets=2026-02-06"}
    async with connect(proxy.url.replace("http://", "ws://") + "/v1/responses", additional_headers=headers,
                       proxy=None) as ws:
        await ws.send(json.dumps({"type": "response.create", "model": "gpt-5.5", "input": text,
                                  "store": False, "stream": True}))
        while (event := json.loads(await ws.recv()))["type"] not in ("response.completed", "error"):
            pass
        return event


def _turns(proxy: MitmDump) -> None:
    _ask(proxy, ANA, "one")
    _ask(proxy, ANA, "two", {"traceparent": f"00-{CLIENT_TRACE}-{CLIENT_SPAN}-01", "tracestate": "team=ana"})
    _ask(proxy, BOB, "three")
    ended = asyncio.run(asyncio.wait_for(_ask_over_a_socket(proxy, BOB, "four"), 60))
    assert ended["type"] == "response.completed", ended


def _report(proxy: MitmDump) -> dict[str, Any]:
    store = proxy.confdir / "gateway-store.sqlite"
    printed = subprocess.run([sys.executable, "-m", "addon", "usage", str(store), "--json"], cwd=ROOT,
                             capture_output=True, text=True, check=True)
    return json.loads(printed.stdout)


def test_prometheus_reads_the_turns_tokens_and_cost_the_usage_report_shows(
        gateway: tuple[MitmDump, int]) -> None:
    proxy, port = gateway
    report = _report(proxy)
    totals = report["totals"]
    assert totals["requests"] == 4 and totals["cost_usd"] > 0  # 3 over HTTP, 1 over the WebSocket
    assert "| 1200 in, 7 out | $0.003705" in proxy.log  # the console line: 1200 x $3 + 7 x $15 per million
    with running_prometheus([f"127.0.0.1:{port}"]) as prometheus:
        turns = prometheus.wait_for('sum(gateway_turns_total{outcome="ok"})', totals["requests"])
        assert turns == totals["requests"], prometheus.log[-2000:]
        assert prometheus.value('sum(gateway_tokens_total{kind="input"})') == totals["input_tokens"]
        assert prometheus.value('sum(gateway_tokens_total{kind="output"})') == totals["output_tokens"]
        assert prometheus.value('sum(gateway_tokens_total{kind="cached_read"})') == totals["cached_tokens"]
        assert prometheus.value("sum(gateway_cost_usd_total)") == pytest.approx(totals["cost_usd"], rel=1e-9)
        per_client = {r["metric"]["client"]: float(r["value"][1])
                      for r in prometheus.query("sum by (client) (gateway_cost_usd_total)")}
        by_report: dict[str, float] = {}
        for row in report["data"]:
            by_report[row["client"]] = by_report.get(row["client"], 0.0) + row["cost_usd"]
        assert per_client == pytest.approx(by_report, rel=1e-9)
        labels = prometheus.query("gateway_turns_total")[0]["metric"]
        assert (labels["route"], labels["model"], labels["upstream"]) == ("*", CLAUDE, "anthropic")
        assert prometheus.value('sum(gateway_upstream_attempts_total{outcome="answered"})') == 4
        assert prometheus.value("sum(gateway_time_to_first_token_seconds_count)") == 4
        assert prometheus.value("sum(gateway_turn_duration_seconds_count)") == 4
        _dashboard_queries_run(prometheus, port)


def _dashboard_queries_run(prometheus: Any, port: int) -> None:
    """Every query of docs/grafana-dashboard.json, its variables filled as Grafana fills them, is
    one the real Prometheus runs, over families the gateway exports (some without samples yet)."""
    dashboard = json.loads((ROOT / "docs" / "grafana-dashboard.json").read_text())
    exprs = [t["expr"] for panel in dashboard["panels"] for t in panel["targets"]]
    assert exprs
    used = set()
    for expr in exprs:
        filled = (expr.replace("$route", ".*").replace("$client", ".*")
                  .replace("$__rate_interval", "1m").replace("$__range", "5m"))
        prometheus.query(filled)  # a query Prometheus cannot parse is an error status
        used |= set(re.findall(r"gateway_[a-z_]+", expr))
    families = re.findall(r"^# TYPE (gateway_\w+) (\w+)$", httpx.get(f"http://127.0.0.1:{port}/metrics").text,
                          re.MULTILINE)
    suffixes = {"histogram": ("_bucket", "_count", "_sum")}  # a counter's TYPE line names it with _total
    exported = {name + suffix for name, kind in families for suffix in suffixes.get(kind, ("",))}
    assert used <= exported, used - exported


def test_each_turn_is_one_trace_with_its_attempt_as_a_child_and_the_clients_traceparent_continued(
        gateway: tuple[MitmDump, int], otlp: OtlpReceiver) -> None:
    proxy, _ = gateway
    spans = otlp.wait_for(8)
    turns = [s for s in spans if s.name.startswith("chat ")]
    attempts = [s for s in spans if s.name.startswith("attempt ")]
    assert len(turns) == 4 and len(attempts) == 4, (spans, proxy.log[-3000:])
    assert len({s.trace_id for s in turns}) == 4  # one trace per turn, the socket's too
    for attempt in attempts:
        [parent] = [t for t in turns if t.span_id == attempt.parent_span_id]
        assert attempt.trace_id == parent.trace_id
        assert parent.start_ns <= attempt.start_ns <= attempt.end_ns <= parent.end_ns
        assert attempt.attributes["http.response.status_code"] == 200
        assert attempt.attributes["gateway.deployment"] == "#1"
    [continued] = [t for t in turns if t.trace_id == CLIENT_TRACE]
    assert continued.parent_span_id == CLIENT_SPAN
    others = [t for t in turns if t is not continued]
    assert all(t.parent_span_id == "" for t in others)
    attributes = continued.attributes
    assert attributes["gen_ai.operation.name"] == "chat"
    assert attributes["gen_ai.provider.name"] == "anthropic"
    assert attributes["gen_ai.request.model"] == CLAUDE
    assert attributes["gen_ai.usage.input_tokens"] == 1200
    assert attributes["gen_ai.usage.output_tokens"] == 7
    assert attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert attributes["gateway.client"] == "ana"
    assert attributes["gateway.cost_usd"] > 0
    assert continued.service == "dialect-gateway"
    assert not any("gateway.request.body" in s.attributes or "two" in json.dumps(s.attributes) for s in spans)
    assert "traces: on, OTLP/HTTP to" in proxy.log


def test_without_an_otlp_endpoint_traces_are_off_and_say_so(tmp_path: Path) -> None:
    with FakeUpstream(_answer) as upstream, MitmDump(
            tmp_path / "conf", mode="reverse:https://api.openai.com",
            options={"gateway_upstream": "anthropic", "gateway_base_url": upstream.url,
                     "gateway_model": CLAUDE, "gateway_capabilities": "table"},
            env={"OTEL_EXPORTER_OTLP_ENDPOINT": None, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": None}) as proxy:
        pass
    assert "traces: off (no OTEL_EXPORTER_OTLP_ENDPOINT" in proxy.log

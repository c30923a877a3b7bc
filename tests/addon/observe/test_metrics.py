"""addon/observe/metrics.py, labels.py, facts.py: a finished flow's record read once into bounded
label values (docs/metrics.md), without mitmdump: `tflow` flows with a record, fed to the addon's
hooks, and the registry's samples read back."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from mitmproxy.test import taddons, tflow, tutils

from addon.observe import facts, flowinfo, labels, metrics
from addon.routes.routing import Route, Router
from addon.upstream.pool import Deployment
from translators import dialect as registry

ANTHROPIC = registry.get("anthropic")

def _member(name: str, url: str) -> Deployment:
    return Deployment(name, Route("gpt-5*", ANTHROPIC, url, "claude-sonnet-4-6", None))


PINNED = Route("gpt-5*", ANTHROPIC, "https://api.anthropic.com", "claude-sonnet-4-6", None,
               deployments=(_member("key-a", "https://a"), _member("key-b", "https://b")))
KEEPS = Route("*", ANTHROPIC, "https://api.anthropic.com", None, None)  # the client's model goes on
ROUTER = Router(routes=(PINNED, KEEPS))
USAGE = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 60, "cache_write_tokens": 30},
         "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 5}}


def turn(info: dict[str, Any], status: int = 200, stream: bool = True) -> Any:
    flow = tflow.tflow(resp=tutils.tresp(status_code=status))
    flow.response.headers["content-type"] = "text/event-stream" if stream else "application/json"
    flow.request.timestamp_start = 1000.0
    flow.response.timestamp_end = 1004.0
    flow.metadata[flowinfo.KEY] = {"upstream": "anthropic", "dropped": [], "notes": [], **info}
    return flow


def sample(m: metrics.Metrics, name: str, **labelled: str) -> float | None:
    return m.families.registry.get_sample_value(name, labelled)


@pytest.fixture
def m() -> Iterator[metrics.Metrics]:
    """The addon with its endpoint served (on a free port): only then does it count."""
    served = metrics.Metrics(lambda: ROUTER, clock=lambda: 2000.0)
    with taddons.context(served) as tctx:
        tctx.configure(served, gateway_metrics="127.0.0.1:0")
        yield served
        served.done()


def test_no_endpoint_nothing_counted() -> None:
    """Metrics no one can scrape are not counted; a flow seen meanwhile is no turn counted later."""
    off = metrics.Metrics(lambda: ROUTER, clock=lambda: 2000.0)
    flow = turn({"client": "ana", "client_model": "gpt-5.5", "model": "claude-sonnet-4-6", "usage": USAGE})
    with taddons.context(off) as tctx:
        off.response(flow)
        assert not [s for f in off.families.registry.collect() if f.name == "gateway_turns"
                    for s in f.samples]
        tctx.configure(off, gateway_metrics="127.0.0.1:0")
        off.response(turn({"client": "ana", "client_model": "gpt-5.5", "model": "claude-sonnet-4-6"}))
        assert sample(off, "gateway_turns_total", client="ana", route="gpt-5*", model="claude-sonnet-4-6",
                      upstream="anthropic", outcome="ok") == 1
        off.done()


def test_a_turn_is_counted_once_with_its_tokens_cost_and_times(m: metrics.Metrics) -> None:
    flow = turn({"client": "ana", "client_model": "gpt-5.5", "model": "claude-sonnet-4-6", "usage": USAGE,
                 "cost_usd": 0.25, "first_token_at": 1000.5})
    m.response(flow)
    m.error(flow)  # a flow that sees both hooks is one turn
    who = {"client": "ana", "route": "gpt-5*", "model": "claude-sonnet-4-6", "upstream": "anthropic"}
    assert sample(m, "gateway_turns_total", **who, outcome="ok") == 1
    kinds = {"input": 100, "cached_read": 60, "cache_write": 30, "output": 20, "reasoning": 5}
    for kind, value in kinds.items():
        assert sample(m, "gateway_tokens_total", **who, kind=kind) == value
    assert sample(m, "gateway_cost_usd_total", **who) == 0.25
    where = {k: who[k] for k in ("route", "model", "upstream")}
    assert sample(m, "gateway_time_to_first_token_seconds_sum", **where) == 0.5
    assert sample(m, "gateway_turn_duration_seconds_sum", **where, outcome="ok") == 4.0


def test_a_client_model_name_is_never_a_label(m: metrics.Metrics) -> None:
    """A route that keeps the client's model: the label is the route's pattern, whatever name
    the client invents."""
    for n in range(3):
        m.response(turn({"client_model": f"made-up-{n}", "model": f"made-up-{n}", "usage": USAGE}))
    assert sample(m, "gateway_turns_total", client="-", route="*", model="*", upstream="anthropic",
                  outcome="ok") == 3
    exposed = {s.labels.get("model") for f in m.families.registry.collect() for s in f.samples}
    assert not any(str(v).startswith("made-up") for v in exposed)


def test_usage_without_a_price_counts_an_unpriced_turn(m: metrics.Metrics) -> None:
    m.response(turn({"client_model": "gpt-5.5", "model": "claude-sonnet-4-6", "usage": USAGE}))
    assert sample(m, "gateway_unpriced_turns_total", route="gpt-5*", model="claude-sonnet-4-6",
                  upstream="anthropic") == 1


def test_attempts_from_the_record_by_deployment_with_unknown_names_bounded(m: metrics.Metrics) -> None:
    attempts = [{"deployment": "key-a", "fallback": False, "url": "https://a/v1/messages", "status": 529,
                 "outcome": "retried", "reason": "overloaded", "ms": 120},
                {"deployment": "key-b", "fallback": False, "url": "https://b/v1/messages", "status": 200,
                 "outcome": "answered", "reason": "", "ms": 900},
                {"deployment": "req_8f3a1c", "fallback": True, "status": None, "outcome": "passed on",
                 "ms": 1}]
    m.response(turn({"client_model": "gpt-5.5", "model": "claude-sonnet-4-6", "attempts": attempts}))
    assert sample(m, "gateway_upstream_attempts_total", route="gpt-5*", deployment="key-a", fallback="false",
                  outcome="retried") == 1
    assert sample(m, "gateway_upstream_attempts_total", route="gpt-5*", deployment="key-b", fallback="false",
                  outcome="answered") == 1
    assert sample(m, "gateway_upstream_attempts_total", route="gpt-5*", deployment="other", fallback="true",
                  outcome="passed_on") == 1


def test_dropped_paths_with_indices_collapsed_and_their_kind(m: metrics.Metrics) -> None:
    m.response(turn({"client_model": "gpt-5.5", "model": "claude-sonnet-4-6",
                     "dropped": ["tools[9]", "input[3].phase", "input[12].phase"],
                     "cosmetic": ["input[3].phase", "input[12].phase"]}))
    assert sample(m, "gateway_dropped_fields_total", path="tools[*]", kind="lossy", upstream="anthropic") == 1
    assert sample(m, "gateway_dropped_fields_total", path="input[*].phase", kind="cosmetic",
                  upstream="anthropic") == 2


def test_no_turn_no_sample(m: metrics.Metrics) -> None:
    m.response(turn({"client_model": "gpt-5.5", "kind": flowinfo.COUNT_KIND}))  # a token count
    m.response(turn({"kind": "state"}))  # a store endpoint
    m.response(tflow.tflow(resp=True))  # not the gateway's
    loaded = turn({"client_model": "gpt-5.5", "model": "claude-sonnet-4-6"})
    loaded.live = False  # read from a file: no new turn
    m.response(loaded)
    assert not [s for f in m.families.registry.collect() if f.name == "gateway_turns" for s in f.samples
                if s.name.endswith("_total")]


@pytest.mark.parametrize(("info", "status", "broken", "expected"), [
    ({}, 200, False, "ok"),
    ({"refused": "prompt is OpenAI's"}, 400, False, "refused"),
    ({"error": "upstream 400: bad tool schema", "url": "u"}, 400, False, "rejected"),
    ({"error": "upstream 529: overloaded", "url": "u"}, 529, False, "upstream_error"),
    ({"error": "server_error: the upstream failed"}, 200, False, "upstream_error"),  # a failed stream
    ({"error": "gateway could not translate the request: KeyError()"}, 500, False, "error"),
    ({"error": "Client disconnected."}, 200, True, "aborted"),
    ({}, None, True, "aborted"),
])
def test_outcomes(info: dict[str, Any], status: int | None, broken: bool, expected: str) -> None:
    assert facts.outcome(info, status, broken) == expected


def test_a_label_takes_at_most_its_limit_of_values_then_other() -> None:
    bounded = labels.Bounded(limit=2)
    assert [bounded(v) for v in ("a", "b", "c", "a", "x" * 500)] == ["a", "b", "other", "a", "other"]
    assert labels.path("input[12].content[3].detail") == "input[*].content[*].detail"
    names = labels.Names()
    assert names.upstream("anthropic") == "anthropic" and names.upstream("evil\nname") == "other"
    assert names.model(ROUTER, None, "gpt-whatever") == "other"
    assert names.deployment(PINNED, "key-b") == "key-b" and names.deployment(KEEPS, "key-b") == "other"


def test_attempts_without_a_start_are_laid_one_after_another_from_the_turns_start() -> None:
    flow = turn({"client_model": "gpt-5.5", "attempts": [
        {"deployment": "key-a", "outcome": "retried", "ms": 500},
        {"deployment": "key-b", "outcome": "answered", "ms": 1500, "start": 1001.0}]})
    read = facts.read(flow, 2000.0)
    assert read is not None
    assert [(a.start, a.seconds) for a in read.attempts] == [(1000.0, 0.5), (1001.0, 1.5)]


@pytest.mark.parametrize(("value", "listen"), [("", None), ("9464", ("127.0.0.1", 9464)),
                                               ("0.0.0.0:9464", ("0.0.0.0", 9464)),
                                               ("[::1]:9464", ("::1", 9464)),
                                               ("127.0.0.1:0", ("127.0.0.1", 0))])
def test_parse_listen(value: str, listen: tuple[str, int] | None) -> None:
    assert metrics.parse_listen(value) == listen


@pytest.mark.parametrize("value", ["metrics", "127.0.0.1:", "1:99999", "-1"])
def test_parse_listen_refuses(value: str) -> None:
    with pytest.raises(ValueError, match="write a port"):
        metrics.parse_listen(value)

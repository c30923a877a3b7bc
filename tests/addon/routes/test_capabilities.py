"""addon/routes/capabilities.py through the gateway's hooks: each route model's capabilities read from a
local fake models endpoint, cached, and the shipped table whenever the vendor cannot be read."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from mitmproxy import exceptions, http
from mitmproxy.addons import proxyserver, serverplayback
from mitmproxy.test import taddons

from addon.routes import capabilities
from addon.routes.capabilities import KEEP_FAILURE, MAX_ANSWER, Capabilities
from addon.routes.routing import Route, from_options
from tests.addon.conftest import UPSTREAM_KEY, Chain, client_flow, run_request
from tests.support.models_endpoint import ModelsEndpoint, Reply, claude_model_info, gemini_model, json_reply
from tests.support.wait import until
from translators.core.capabilities import ModelCapabilities

MODEL = "claude-sonnet-4-5"
"""The shipped table says: a thinking budget only (`enabled`), never `adaptive`."""
THINKING_REQUEST = {"model": "gpt-5.5", "input": "hi", "stream": True, "reasoning": {"effort": "high"}}
ADAPTIVE_ONLY = json_reply(claude_model_info(MODEL, thinking=("adaptive", "disabled")))

Configure = Callable[..., Chain]


@pytest.fixture
def configure(monkeypatch: pytest.MonkeyPatch) -> Iterator[Configure]:
    """`configure(endpoint, **options)`: a Gateway routed to anthropic at the fake endpoint, the
    key in the env, capabilities asked of the vendor (the default)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", UPSTREAM_KEY)
    addon = Chain()
    with taddons.context(proxyserver.Proxyserver(), serverplayback.ServerPlayback(), *addon.members) as tctx:
        def configure(endpoint: ModelsEndpoint | str, **options: Any) -> Chain:
            url = endpoint if isinstance(endpoint, str) else endpoint.url
            tctx.configure(addon, **{"gateway_upstream": "anthropic", "gateway_base_url": url,
                                     "gateway_model": MODEL, "gateway_key_env": "ANTHROPIC_API_KEY",
                                     **options})
            return addon
        yield configure


def translated(addon: Chain, body: dict[str, Any] | None = None) -> http.HTTPFlow:
    flow = client_flow(body or THINKING_REQUEST)
    run_request(addon, flow)
    assert flow.response is None, flow.response and flow.response.text
    return flow


def sent(flow: http.HTTPFlow) -> dict[str, Any]:
    return json.loads(flow.request.content)


def capability_notes(flow: http.HTTPFlow) -> list[str]:
    return [note for note in flow.metadata["gateway"]["notes"] if note.startswith("capabilities:")]


def route_of(addon: Chain) -> Route:
    route = addon.router.route("gpt-5.5")
    assert route is not None
    return route


def wait_for_vendor(addon: Chain, model: str = MODEL) -> None:
    until(lambda: (caps := addon.capabilities.best(route_of(addon), model)) is not None
          and caps.source == "vendor", "the fetch to fill the cache")


# -- the vendor's answer ----------------------------------------------------------------------

def test_vendor_answer_wins_over_the_shipped_table(configure: Configure) -> None:
    with ModelsEndpoint(ADAPTIVE_ONLY) as endpoint:
        addon = configure(endpoint)
        flow = translated(addon)
    assert sent(flow)["thinking"]["type"] == "adaptive"
    assert flow.metadata["gateway"]["capabilities"] == "vendor"
    assert capability_notes(flow) == []


def test_models_endpoint_is_asked_with_the_route_key_and_the_dialect_headers(configure: Configure) -> None:
    with ModelsEndpoint(ADAPTIVE_ONLY) as endpoint:
        translated(configure(endpoint))
        (get,) = endpoint.gets
    assert get.path == f"/v1/models/{MODEL}"
    assert get.header("x-api-key") == UPSTREAM_KEY
    assert get.header("anthropic-version")
    assert get.header("authorization") == ""


def test_a_route_that_sends_no_key_asks_the_models_endpoint_without_one(configure: Configure) -> None:
    # a local server's route names no key variable, so none goes there (routing.key_env_for)
    with ModelsEndpoint(ADAPTIVE_ONLY) as endpoint:
        flow = translated(configure(endpoint, gateway_key_env=""))
        (get,) = endpoint.gets
    assert get.header("x-api-key") == "" and get.header("authorization") == ""
    assert flow.metadata["gateway"]["capabilities"] == "vendor"


def test_gemini_models_endpoint_is_asked_with_its_key_header(
        configure: Configure, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "k-gemini-models-0123456789")
    with ModelsEndpoint(json_reply(gemini_model("gemini-2.5-pro", input_limit=2_000_000))) as endpoint:
        addon = configure(endpoint, gateway_upstream="gemini", gateway_model="gemini-2.5-pro",
                          gateway_key_env="GEMINI_API_KEY")
        flow = translated(addon)
        (get,) = endpoint.gets
    assert get.path == "/v1beta/models/gemini-2.5-pro"
    assert get.header("x-goog-api-key") == "k-gemini-models-0123456789"
    assert flow.metadata["gateway"]["capabilities"] == "vendor"
    assert addon.capabilities.best(route_of(addon), "gemini-2.5-pro").context_window == 2_000_000


def test_best_known_capabilities_are_the_table_until_the_vendor_answered(configure: Configure) -> None:
    with ModelsEndpoint(ADAPTIVE_ONLY) as endpoint:
        addon = configure(endpoint)
        before = addon.capabilities.best(route_of(addon), MODEL)
        translated(addon)
    after = addon.capabilities.best(route_of(addon), MODEL)
    assert (before.source, before.context_window) == ("table", 200_000)
    assert (after.source, after.context_window) == ("vendor", 1_000_000)


# -- when the vendor cannot be read -----------------------------------------------------------

def test_refused_connection_uses_the_table_and_says_why(configure: Configure, dead_url: str) -> None:
    flow = translated(configure(dead_url))
    assert sent(flow)["thinking"]["type"] == "enabled"
    assert flow.metadata["gateway"]["capabilities"] == "table"
    assert capability_notes(flow) == [
        "capabilities: anthropic models endpoint refused the connection; used the shipped table"]


def test_refused_key_uses_the_table_and_is_not_asked_again(configure: Configure) -> None:
    refusal = json_reply({"type": "error", "error": {"type": "authentication_error",
                                                     "message": "invalid x-api-key"}}, status=401)
    with ModelsEndpoint(refusal) as endpoint:
        addon = configure(endpoint)
        first, second = translated(addon), translated(addon)
        gets = endpoint.gets
    assert len(gets) == 1
    for flow in (first, second):
        assert sent(flow)["thinking"]["type"] == "enabled"
        assert flow.metadata["gateway"]["capabilities"] == "table"
        assert capability_notes(flow) == [
            "capabilities: anthropic models endpoint answered 401; used the shipped table"]


def test_a_failure_is_asked_again_once_it_is_old(configure: Configure) -> None:
    now = [1000.0]
    with ModelsEndpoint(json_reply({"error": "forbidden"}, status=403)) as endpoint:
        addon = configure(endpoint)
        addon.capabilities = Capabilities(clock=lambda: now[0])
        addon = configure(endpoint, gateway_capabilities_timeout="2.5")
        translated(addon)
        now[0] += KEEP_FAILURE - 1
        translated(addon)
        asked_within = len(endpoint.gets)
        now[0] += 2
        endpoint.plan(ADAPTIVE_ONLY)
        flow = translated(addon)
        asked_after = len(endpoint.gets)
    assert (asked_within, asked_after) == (1, 2)
    assert flow.metadata["gateway"]["capabilities"] == "vendor"


@pytest.mark.parametrize(("reply", "why"), [
    (json_reply({"error": "forbidden"}, status=403), "answered 403"),
    (json_reply({"type": "error", "error": {"type": "not_found_error"}}, status=404), "answered 404"),
    (Reply(200, b"<html>portal login</html>", {"content-type": "text/html"}),
     "answered something other than JSON"),
    (json_reply({"data": [], "has_more": False}),
     "answered something other than a model (not a model object)"),
    (Reply(302, b"", {"location": "/v1/models/elsewhere"}), "answered 302"),
    (Reply(200, b" " * (MAX_ANSWER + 10)), "answered more than 1 MiB"),
])
def test_an_answer_that_is_not_a_model_uses_the_table(configure: Configure, reply: Reply, why: str) -> None:
    with ModelsEndpoint(reply) as endpoint:
        flow = translated(configure(endpoint))
        gets = endpoint.gets
    assert len(gets) == 1  # a redirect is not followed
    assert flow.metadata["gateway"]["capabilities"] == "table"
    assert capability_notes(flow) == [
        f"capabilities: anthropic models endpoint {why}; used the shipped table"]


def test_the_key_never_appears_in_a_note_even_when_the_endpoint_echoes_it(configure: Configure) -> None:
    echo = Reply(raw=f"BROKEN {UPSTREAM_KEY}\r\n\r\n".encode())
    with ModelsEndpoint(echo) as endpoint:
        flow = translated(configure(endpoint))
    (note,) = capability_notes(flow)
    assert "could not be read" in note and "<key>" in note
    assert UPSTREAM_KEY not in json.dumps(flow.metadata["gateway"])


# -- off the critical path --------------------------------------------------------------------

def test_slow_endpoint_delays_a_request_at_most_the_timeout(configure: Configure) -> None:
    with ModelsEndpoint(ADAPTIVE_ONLY, held=True) as endpoint:
        addon = configure(endpoint, gateway_capabilities_timeout="0.3")
        first = translated(addon)  # the endpoint answers only once the gate is set, below
        endpoint.gate.set()
        wait_for_vendor(addon)
        later = translated(addon)
        gets = endpoint.gets
    assert sent(first)["thinking"]["type"] == "enabled"
    assert capability_notes(first) == ["capabilities: anthropic models endpoint did not answer within "
                                       "0.3 s (still asking); used the shipped table"]
    assert sent(later)["thinking"]["type"] == "adaptive"
    assert len(gets) == 1


def test_many_concurrent_requests_share_one_fetch(configure: Configure) -> None:
    with ModelsEndpoint(ADAPTIVE_ONLY, held=True) as endpoint:
        addon = configure(endpoint)
        flows = [client_flow(THINKING_REQUEST) for _ in range(20)]

        async def together() -> None:
            asyncio.get_running_loop().call_later(0.2, endpoint.gate.set)
            for flow in flows:
                addon.requestheaders(flow)
            await asyncio.gather(*(addon.request(flow) for flow in flows))

        asyncio.run(together())
        gets = endpoint.gets
    assert len(gets) == 1
    assert {sent(flow)["thinking"]["type"] for flow in flows} == {"adaptive"}


def test_table_option_never_asks_the_vendor(configure: Configure) -> None:
    with ModelsEndpoint(ADAPTIVE_ONLY) as endpoint:
        async def start_and_translate() -> http.HTTPFlow:
            addon = configure(endpoint, gateway_capabilities="table")
            flow = client_flow(THINKING_REQUEST)
            addon.requestheaders(flow)
            await addon.request(flow)
            return flow

        flow = asyncio.run(start_and_translate())
        received = endpoint.received
    assert received == []
    assert sent(flow)["thinking"]["type"] == "enabled"
    assert flow.metadata["gateway"]["capabilities"] == "table"
    assert capability_notes(flow) == []


@pytest.mark.parametrize(("dialect", "model"), [("bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
                                                ("chat", "deepseek-chat")])
def test_dialect_without_models_endpoint_uses_its_table_without_asking(
        configure: Configure, monkeypatch: pytest.MonkeyPatch, dialect: str, model: str) -> None:
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "k-bedrock-0123456789")
    monkeypatch.setenv("DEEPSEEK_API_KEY", "k-chat-0123456789")
    with ModelsEndpoint(ADAPTIVE_ONLY) as endpoint:
        flow = translated(configure(endpoint, gateway_upstream=dialect, gateway_model=model))
        received = endpoint.received
    assert received == []
    assert flow.metadata["gateway"]["capabilities"] in ("table", "guess")
    assert capability_notes(flow) == []


# -- what the route states (docs/models.md "Output limits") -----------------------------------

def test_the_routes_stated_output_limit_wins_over_the_vendors(configure: Configure) -> None:
    with ModelsEndpoint(json_reply(claude_model_info(MODEL, max_tokens=64_000))) as endpoint:
        addon = configure(endpoint, gateway_max_output_tokens=4096)
        flow = translated(addon, {**THINKING_REQUEST, "max_output_tokens": 20_000})
    assert flow.metadata["gateway"]["capabilities"] == "vendor"
    assert sent(flow)["max_tokens"] == 4096
    assert f"output limit 20000 lowered to 4096: {MODEL}'s output limit" in flow.metadata["gateway"]["notes"]


def test_a_responses_route_has_capabilities_only_when_it_states_a_figure() -> None:
    """The Responses upstream has no table; for a Messages client its encoder fits the limit to
    what the route states (translators/responses/upstream_request.py)."""
    (stating,) = from_options("responses", "", "gpt-5.5", "", max_output_tokens=32_768)
    resolved = asyncio.run(Capabilities().resolve(stating, "gpt-5.5"))
    assert resolved is not None and resolved.capabilities.max_output_tokens == 32_768
    assert resolved.note is None
    (silent,) = from_options("responses", "", "gpt-5.5", "")
    assert asyncio.run(Capabilities().resolve(silent, "gpt-5.5")) is None


# -- start-up ---------------------------------------------------------------------------------

def start_in_a_loop(configure: Configure, endpoint: ModelsEndpoint, **options: Any) -> Chain:
    """`configure` as mitmdump runs it: inside the running event loop."""
    async def start() -> Chain:
        return configure(endpoint, **options)
    return asyncio.run(start())


def test_fixed_route_models_are_fetched_at_start_up(configure: Configure) -> None:
    with ModelsEndpoint(ADAPTIVE_ONLY) as endpoint:
        start_in_a_loop(configure, endpoint, gateway_model="gpt-5*=claude-sonnet-4-5,o3*=claude-opus-4-6")
        until(lambda: len(endpoint.gets) >= 2, "both start-up fetches")
        paths = sorted(get.path for get in endpoint.gets)
    assert paths == ["/v1/models/claude-opus-4-6", "/v1/models/claude-sonnet-4-5"]


def test_a_route_keeping_the_client_model_is_fetched_on_its_first_request(configure: Configure) -> None:
    with ModelsEndpoint(ADAPTIVE_ONLY) as endpoint:
        addon = start_in_a_loop(configure, endpoint, gateway_model="")
        flow = translated(addon, {**THINKING_REQUEST, "model": MODEL})
        paths = [get.path for get in endpoint.gets]
    assert paths == [f"/v1/models/{MODEL}"]  # a fetch made at start-up would be there too
    assert sent(flow)["thinking"]["type"] == "adaptive"


def test_start_up_warns_about_a_deprecated_route_model_with_its_retirement_date(
        configure: Configure, caplog: pytest.LogCaptureFixture) -> None:
    vendor_says = json_reply(claude_model_info("claude-opus-4-6", lifecycle="deprecated",
                                               retires_at="2027-03-01T00:00:00Z"))
    with ModelsEndpoint(vendor_says) as endpoint, caplog.at_level(logging.WARNING):
        addon = start_in_a_loop(configure, endpoint,
                                gateway_model="gpt-5*=claude-sonnet-4-5,*=claude-opus-4-6")
        wait_for_vendor(addon, "claude-opus-4-6")
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("claude-sonnet-4-5 is deprecated (retires 2026-11-30)" in w and "shipped table" in w
               for w in warnings), warnings
    assert any("claude-opus-4-6 is deprecated (retires 2027-03-01)" in w and "the vendor" in w
               for w in warnings), warnings


@pytest.mark.parametrize(("options", "says"), [
    ({"gateway_capabilities": "online"}, "write vendor or table"),
    ({"gateway_capabilities_timeout": "-1"}, "gateway_capabilities_timeout is negative"),
])
def test_bad_capabilities_option_is_an_options_error(options: dict[str, Any], says: str) -> None:
    gateway = Chain()
    with taddons.context(*gateway.members) as tctx, pytest.raises(exceptions.OptionsError, match=says):
        tctx.configure(gateway, **options)


def test_a_dialects_table_is_read_once_per_model_and_an_unhashable_one_every_time() -> None:
    """The shipped tables are functions of the model's name (their rows frozen): each model's row
    is read once. A plugin's table that cannot be hashed is read every time."""
    reads: list[str] = []

    def table(model: str) -> ModelCapabilities:
        reads.append(model)
        return ModelCapabilities(model=model, context_window=1000)

    class Table:
        """A table that is an object, and one that cannot be hashed."""

        __hash__ = None  # type: ignore[assignment]

        def __call__(self, model: str) -> ModelCapabilities:
            return table(model)

    for owner in (table, Table()):
        reads.clear()
        dialect = SimpleNamespace(codec=SimpleNamespace(capabilities=owner))
        rows = [capabilities._table(dialect, model) for model in ("m-1", "m-1", "m-2")]  # type: ignore[arg-type]
        assert [row.model for row in rows if row is not None] == ["m-1", "m-1", "m-2"]
        assert reads == (["m-1", "m-2"] if owner is table else ["m-1", "m-1", "m-2"])

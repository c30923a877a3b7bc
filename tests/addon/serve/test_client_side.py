"""addon/serve/client_side.py: which requests a client dialect other than Responses claims (Claude
Code's), and its models endpoints answered from the routes (docs/claude-code.md "Through the
gateway", "Models"); the proxy's own answers in its shape are tests/addon/serve/test_answers.py's."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from mitmproxy import http
from mitmproxy import io as mio
from mitmproxy.proxy.mode_specs import ProxyMode
from mitmproxy.test import taddons, tflow

from addon.observe import flowinfo, views
from addon.routes.routing import DEFAULT_MATCH, Route, Router
from addon.serve import client_side as client_dialects
from addon.team import keys as clients
from tests.addon.conftest import Chain, client_flow, finish, run_request
from tests.data import DATA
from tests.translators.messages_client.sdk import validate_stream
from translators import client_dialects as registry
from translators import dialect as dialects
from translators import translate_request

Ctx = tuple[Chain, taddons.context]
ROUTER = Router(routes=(Route("claude-via-chat", dialects.get("chat"), "http://127.0.0.1:9",
                              "deepseek-chat", None),
                        Route("claude-*", dialects.get("gemini"), "http://127.0.0.1:9",
                              "gemini-3-flash-preview", None)),
                match=DEFAULT_MATCH)


def flow(url: str, method: str = "POST", *, reverse: bool = False, headers: dict[str, str] | None = None
         ) -> http.HTTPFlow:
    f = tflow.tflow()
    f.request = http.Request.make(method, url, b"", headers or {})
    if reverse:
        f.client_conn.proxy_mode = ProxyMode.parse("reverse:https://api.openai.com")
    return f


@pytest.mark.parametrize("url", [
    "https://api.anthropic.com/v1/messages?beta=true",
    "https://api.anthropic.com/v1/messages",
    "https://api.anthropic.com/v1/messages/count_tokens?beta=true",
    "https://api.anthropic.com/v1/models",
    "https://api.anthropic.com/v1/models/claude-opus-5-5",
])
def test_regular_mode_claims_the_messages_paths_on_their_own_host(url: str) -> None:
    speaks = client_dialects.claim(flow(url), ROUTER)
    assert speaks is not None and speaks.name == "messages"


@pytest.mark.parametrize("url", [
    "https://example.com/v1/messages",  # another host, regular mode: not the client's API
    "https://api.openai.com/v1/responses",  # Codex's
    "https://api.anthropic.com/v1/complete",  # a path the client dialect does not serve
])
def test_regular_mode_leaves_other_requests(url: str) -> None:
    assert client_dialects.claim(flow(url), ROUTER) is None


def test_reverse_mode_claims_a_turn_on_any_host() -> None:
    assert client_dialects.claim(flow("https://api.openai.com/v1/messages?beta=true", reverse=True),
                                 ROUTER) is not None


def test_reverse_mode_claims_a_shared_path_only_from_this_client() -> None:
    """`/v1/models` is also Codex's (and the openai SDK's): a Messages client says so with its headers."""
    codex = flow("https://api.openai.com/v1/models", "GET", reverse=True,
                 headers={"authorization": "Bearer sk-x"})
    claude = flow("https://api.openai.com/v1/models", "GET", reverse=True,
                  headers={"anthropic-version": "2023-06-01"})
    assert client_dialects.claim(codex, ROUTER) is None
    assert client_dialects.claim(claude, ROUTER) is not None


def test_a_gateway_match_without_the_messages_paths_claims_nothing() -> None:
    router = Router(routes=ROUTER.routes, match=("api.openai.com/v1/responses",))
    assert client_dialects.claim(flow("https://api.anthropic.com/v1/messages"), router) is None
    assert client_dialects.claim(flow("https://x/v1/messages", reverse=True), router) is None


def _listed(f: http.HTTPFlow) -> dict:
    assert f.response is not None
    return json.loads(f.response.content or b"")


def test_models_lists_every_plain_route_and_the_clients_own_names_a_wildcard_takes() -> None:
    """Claude Code picks from the list only (docs/claude-code.md "Models"): `claude-*` takes its
    default, opus, sonnet, haiku and fable names, so they are listed, each saying where it goes."""
    f = flow("https://api.anthropic.com/v1/models", "GET")
    client_dialects.answer_models(f, ROUTER, registry.get("messages"))
    page = _listed(f)
    assert [(m["id"], m["display_name"]) for m in page["data"]] == [
        ("claude-via-chat", "claude-via-chat (chat: deepseek-chat)"),
        *[(name, f"{name} (gemini: gemini-3-flash-preview)") for name in
          ("claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5", "claude-fable-5-2")]]
    assert all(m["type"] == "model" and m["created_at"] == "1970-01-01T00:00:00Z" for m in page["data"])
    assert page["has_more"] is False
    assert (page["first_id"], page["last_id"]) == ("claude-via-chat", "claude-fable-5-2")


def test_a_name_is_listed_with_the_route_that_takes_it() -> None:
    """Routes are tried in order: a plain name after a wildcard that takes it goes where the
    wildcard sends it, and a name two wildcards take is listed once, with the first."""
    router = Router(routes=(Route("claude-opus-*", dialects.get("chat"), "http://127.0.0.1:9",
                                  "deepseek-chat", None),
                            Route("claude-opus-5-5", dialects.get("gemini"), "http://127.0.0.1:9",
                                  "gemini-3-flash-preview", None),
                            Route("*", dialects.get("bedrock"), "http://127.0.0.1:9", None, None)),
                    match=DEFAULT_MATCH)
    listed = client_dialects.listed(router, registry.get("messages").models.names)
    assert [(m.id, m.upstream, m.model) for m in listed] == [
        ("claude-opus-5-5", "chat", "deepseek-chat"),
        ("claude-sonnet-5-5", "bedrock", "claude-sonnet-5-5"),  # no target model: the name itself
        ("claude-haiku-5-5", "bedrock", "claude-haiku-5-5"),
        ("claude-fable-5-2", "bedrock", "claude-fable-5-2")]


def test_a_model_entry_is_answered_for_a_routed_name_and_passed_on_otherwise() -> None:
    routed = flow("https://api.anthropic.com/v1/models/claude-haiku-4-5", "GET")
    client_dialects.answer_model(routed, ROUTER, registry.get("messages"), "claude-haiku-4-5")
    assert _listed(routed) == {"type": "model", "id": "claude-haiku-4-5",
                               "created_at": "1970-01-01T00:00:00Z",
                               "display_name": "claude-haiku-4-5 (gemini: gemini-3-flash-preview)"}
    unrouted = flow("https://api.anthropic.com/v1/models/gpt-5", "GET")
    client_dialects.answer_model(unrouted, ROUTER, registry.get("messages"), "gpt-5")
    assert unrouted.response is None  # goes on to the client's own vendor


def test_a_client_key_may_come_as_x_api_key() -> None:
    assert clients.presented({"x-api-key": "gw-key"}) == ("gw-key", "x-api-key")
    assert clients.presented({"authorization": "Bearer gw-key"}) == ("gw-key", "authorization")


def test_the_translation_view_reads_the_messages_request() -> None:
    """mitmweb's Translation view of a Claude Code flow: the client side read as Messages (its
    system blocks, its turns, its tools), not as a Responses body."""
    client = json.loads((Path(__file__).parents[2] / "data" / "claude_code" / "request_say_hi.json")
                        .read_text())
    translation = translate_request(client, "chat", "deepseek-chat", client="messages")
    metadata = {
        "gateway": {"upstream": "chat", "model": "deepseek-chat", "client_model": client["model"],
                    "dropped": translation.dropped, "cosmetic": translation.cosmetic,
                    "notes": translation.notes},
        client_dialects.METADATA: "messages",
        views.CLIENT_REQUEST: json.dumps(client),
        views.TRANSLATION: translation.model_dump(mode="json", exclude={"body"}),
    }
    lines = views.translation_text(json.dumps(translation.body).encode(), metadata).splitlines()
    assert lines[0] == "Messages -> Chat Completions  (claude-opus-5-5 -> deepseek-chat)"
    assert any(line.strip() == "client (Messages)  ->  upstream (Chat Completions)" for line in lines)
    assert any(line.startswith("system    ") and "3 block(s)" in line for line in lines)
    assert any(line.strip() == "not sent:   DeferredToolPlaceholder" for line in lines)


@pytest.mark.parametrize(("url", "kept"), [
    ("https://api.anthropic.com/v1/messages", True),  # the client's own vendor: its own key
    ("https://api.openai.com/v1/messages", False),  # a reverse target of another vendor
    ("http://api.anthropic.com/v1/messages", False),  # never over plain http
])
def test_an_unrouted_request_keeps_the_clients_key_only_for_its_own_vendor(url: str, kept: bool) -> None:
    f = flow(url, headers={"x-api-key": "sk-ant-own", "authorization": "Bearer sk-ant-own",
                           "anthropic-version": "2023-06-01"})
    client_dialects.pass_on(f, registry.get("messages"), "claude-opus-5-5")
    assert ("x-api-key" in f.request.headers, "authorization" in f.request.headers) == (kept, kept)
    assert f.request.headers["anthropic-version"] == "2023-06-01"
    assert f.metadata[flowinfo.UNROUTED] == "claude-opus-5-5"  # the console line says it went on


MESSAGES_URL = "https://api.anthropic.com/v1/messages?beta=true"
TURN = {"model": "claude-opus-5-5", "max_tokens": 1000, "stream": True,
        "messages": [{"role": "user", "content": "hi"}]}


def _saved_turn(addon: Chain) -> http.HTTPFlow:
    """A Messages turn the gateway translated and answered, written with -w and read back."""
    f = client_flow(TURN, url=MESSAGES_URL, headers={"x-api-key": "sk-ant-client-0123456789",
                                                      "anthropic-version": "2023-06-01"})
    run_request(addon, f)
    assert f.response is None, f.response and f.response.content
    f.response = http.Response.make(200, (DATA / "anthropic" / "text_after_tool_result.sse").read_bytes(),
                                    {"content-type": "text/event-stream"})
    f.is_replay = "response"  # the whole-body path: no stream callable needed
    addon.responseheaders(f)
    finish(addon.response(f))
    buffer = io.BytesIO()
    mio.FlowWriter(buffer).add(f)
    (loaded,) = mio.FlowReader(io.BytesIO(buffer.getvalue())).stream()
    assert isinstance(loaded, http.HTTPFlow)
    return loaded


def test_a_messages_turn_is_translated_and_answered_in_anthropic_events(gateway: Ctx) -> None:
    addon, _ = gateway
    saved = _saved_turn(addon)
    assert saved.metadata["gateway"]["client_dialect"] == "messages"
    assert saved.response is not None
    message, error = validate_stream(saved.response.content or b"")
    assert error is None and message is not None and message.model == "claude-opus-5-5"


def test_a_replayed_messages_flow_is_translated_again_as_messages(gateway: Ctx) -> None:
    addon, tctx = gateway
    saved = _saved_turn(addon)
    tctx.configure(addon, gateway_model="claude-haiku-4-5")
    saved.backup()
    saved.is_replay, saved.response, saved.error, saved.live = "request", None, None, True
    run_request(addon, saved)
    assert saved.response is None, saved.response and saved.response.content  # it goes upstream
    sent = json.loads(saved.request.content or b"")
    assert sent["model"] == "claude-haiku-4-5"
    assert [(m["role"], m["content"][0]["text"]) for m in sent["messages"]] == [("user", "hi")]
    assert saved.metadata["gateway"]["client_dialect"] == "messages"
    assert "replayed: translated again from the saved client request" in saved.metadata["gateway"]["notes"]


def test_a_saved_codex_turn_sent_to_anthropic_is_not_claimed_as_a_messages_client() -> None:
    """A saved flow's request is the rewritten one: a Codex turn routed to Anthropic is a POST to
    `/v1/messages` (in reverse mode on any host), yet its client spoke Responses; replaying it
    (`mitmdump -C`, mitmweb's Replay) must translate it again as the Codex turn it was."""
    saved = flow("http://127.0.0.1:9/v1/messages", reverse=True)
    saved.metadata[flowinfo.KEY] = {"upstream": "anthropic", "model": "claude-sonnet-4-6"}
    saved.is_replay = "request"
    assert client_dialects.claim(saved, ROUTER) is None
    assert client_dialects.METADATA not in saved.metadata

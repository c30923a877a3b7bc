"""addon/serve/sending.py: a flow sent through the upstream leg: the request it shows, its
re-target to the loopback server (unless a server replay answered it), and the conversation's
keys (docs/pools.md "The leg, for maintainers")."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import re
from typing import Any

import pytest
from mitmproxy import http
from mitmproxy.test import tflow

from addon.routes.routing import Deployment
from addon.serve.flow import context_of
from addon.serve.sending import Retarget, Sending, affinity_of, header_dict, header_fields, point, restore
from tests.addon.conftest import UPSTREAM_KEY, client_flow, run_request
from translators import TranslatorError

Ctx = tuple[Any, Any]
LOOPBACK = "http://127.0.0.1:9"


def _sent(gateway: Ctx) -> tuple[http.HTTPFlow, Sending]:
    addon, _ = gateway
    flow = client_flow()
    run_request(addon, flow)
    fc = context_of(flow)
    assert fc is not None and isinstance(fc.sending, Sending)
    return flow, fc.sending


def test_the_flow_shows_the_upstream_request_with_its_key_redacted(gateway: Ctx, listener: str) -> None:
    flow, sending = _sent(gateway)
    assert flow.request.url == f"{listener}/v1/messages"
    assert flow.request.headers["x-api-key"] == "<redacted>"
    assert dict(sending.first.headers)["x-api-key"] == UPSTREAM_KEY  # on the wire only
    assert UPSTREAM_KEY.encode() not in flow.request.content
    assert sending.path is not None and sending.path.startswith("/")


def test_a_client_that_asked_to_close_its_connection_still_has_it_closed(gateway: Ctx) -> None:
    """mitmproxy's client side reads `connection: close` from the flow's request: a client that
    asked for it and reads to the end of the connection is not left waiting (RFC 9112 9.6)."""
    addon, _ = gateway
    closing, keeping = client_flow(headers={"connection": "close"}), client_flow()
    run_request(addon, closing)
    run_request(addon, keeping)
    assert closing.request.headers["connection"] == "close"
    assert "connection" not in keeping.request.headers


def test_the_last_addon_points_the_flow_at_the_loopback_server_and_restore_shows_it_again(
        gateway: Ctx, listener: str) -> None:
    flow, sending = _sent(gateway)
    shown = flow.request.content
    Retarget(lambda: LOOPBACK).request(flow)
    assert flow.request.url == LOOPBACK + sending.path
    assert flow.request.content == b""  # the leg holds what goes upstream
    assert sending.retargeted
    restore(flow, sending)
    assert flow.request.url == f"{listener}/v1/messages"
    assert flow.request.content == shown
    assert flow.request.headers["x-api-key"] == "<redacted>"


def test_a_server_replayed_flow_is_not_retargeted_and_its_ticket_is_forgotten(gateway: Ctx,
                                                                             listener: str) -> None:
    flow, sending = _sent(gateway)
    path = sending.path
    assert path is not None
    flow.response = http.Response.make(200, b"{}", {"content-type": "application/json"})  # serverplayback
    Retarget(lambda: LOOPBACK).request(flow)
    assert flow.request.url == f"{listener}/v1/messages"
    assert not sending.retargeted
    assert sending.service.server.tickets.take(path.lstrip("/")) is None


def test_a_conversation_is_known_by_its_keys_strongest_first() -> None:
    flow = tflow.tflow()
    flow.metadata["gateway.websocket"] = "conn-1"
    fields = {"previous_response_id": "resp_1", "prompt_cache_key": "pck-1",
              "metadata": {"user_id": "user_abc_account_def_session_0199-aa"}}
    assert affinity_of(fields, flow) == ("resp:resp_1", "pck:pck-1", "session:0199-aa", "ws:conn-1")
    assert affinity_of({}, tflow.tflow()) == ()


def test_the_shown_headers_are_those_set_one_by_one_built_at_once() -> None:
    pairs = [("Host", "a"), ("X-A", "1"), ("x-a", "2"), ("Content-Type", "z"), ("ü", "é"), ("HOST", "b")]
    one_by_one = http.Headers()
    for name, value in pairs:
        one_by_one[name] = value
    assert header_fields(pairs) == one_by_one.fields
    assert header_fields([]) == ()


def test_the_client_headers_read_at_once_are_dict_of_the_headers() -> None:
    headers = http.Headers([(b"Host", b"a"), (b"X-A", b"1"), (b"x-a", b"2"), (b"\xc3\xbc", b"\xff"),
                            (b"Accept", b"")])
    assert header_dict(headers) == dict(headers)
    assert list(header_dict(headers)) == list(dict(headers))


URLS = ["https://api.anthropic.com/v1/messages", "http://127.0.0.1:8080/v1/chat/completions?x=1&y=%20",
        "https://xn--bcher-kva.example:8443/v1beta/models/gemini-3:streamGenerateContent?alt=sse",
        "http://[::1]:9/t", "https://example.com"]


def test_a_url_is_pointed_at_as_mitmproxys_setter_sets_it_again_and_again() -> None:
    """`point` reuses a URL's parse; the request it leaves is the one `request.url = ...` leaves,
    Host header included, the first time and every time after."""
    for url in URLS * 2:
        for headers in ({"host": "client.example"}, {}):
            mine, theirs = client_flow(headers=headers).request, client_flow(headers=headers).request
            point(mine, url)
            theirs.url = url
            assert (mine.url, mine.data.scheme, mine.data.host, mine.data.port, mine.data.path) == \
                (theirs.url, theirs.data.scheme, theirs.data.host, theirs.data.port, theirs.data.path)
            assert mine.headers.fields == theirs.headers.fields


def test_an_origin_and_a_path_are_pointed_at_as_their_joined_url() -> None:
    mine, theirs = client_flow().request, client_flow().request
    point(mine, LOOPBACK, "/ticket-1")
    theirs.url = LOOPBACK + "/ticket-1"
    assert (mine.url, mine.headers.fields) == (theirs.url, theirs.headers.fields)


def test_a_url_the_setter_refuses_is_refused_as_the_setter_does() -> None:
    for bad in ("no-scheme", "http://", "http://host:99999/x", "https://bücher.example/x"):
        try:
            client_flow().request.url = bad
        except ValueError as theirs:
            with pytest.raises(ValueError, match=re.escape(str(theirs))):
                point(client_flow().request, bad)
        else:
            raise AssertionError(f"mitmproxy took {bad!r}")


def test_another_model_is_translated_for_while_the_flow_is_live_and_refused_once_it_is_let_go_of(
        gateway: Ctx) -> None:
    """The leg holds the flow's context weakly (no cycle through `fc.sending`): a deployment of
    another model gets the request translated again while the flow is live; after the flow was let
    go of, and its context freed, it is refused instead."""
    addon, _ = gateway
    flow, sending = _sent(gateway)
    route = addon.flows.live(flow).route
    other = Deployment("other", dataclasses.replace(route, model="claude-opus-4-5"))
    prepared = asyncio.run(sending.leg.prepare(other))
    assert b'"model":"claude-opus-4-5"' in prepared.body
    addon.flows.drop(flow)
    gc.collect()  # what else of the test holds it (pytest's frames) is gone; the leg never held it
    with pytest.raises(TranslatorError) as refused:
        asyncio.run(sending.leg.prepare(dataclasses.replace(other, name="another")))
    assert refused.value.status == 502

"""Each client's cache of decoded items (addon/serve/ir_cache.py): one per gateway client or
WebSocket connection, none for anonymous HTTP unless the gateway has one user, bounded."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
from mitmproxy import exceptions
from mitmproxy.test import taddons

from addon.observe import flowinfo
from addon.serve.ir_cache import ItemCaches
from tests.addon.conftest import Chain, client_flow, run_request
from tests.data import CODEX
from translators import translate_request

Ctx = tuple[Chain, taddons.context]
CLIENT, SOCKET = flowinfo.CLIENT, flowinfo.WEBSOCKET


def _flow(**metadata: Any) -> Any:
    return SimpleNamespace(metadata=metadata)


def test_one_cache_per_client_and_per_connection_and_none_for_anonymous_http() -> None:
    caches = ItemCaches()
    ana = caches.of(_flow(**{CLIENT: "ana"}))
    assert ana is not None and caches.of(_flow(**{CLIENT: "ana"})) is ana
    assert caches.of(_flow(**{CLIENT: "bob"})) not in (None, ana)
    socket = caches.of(_flow(**{SOCKET: "ws_0123"}))
    assert socket is not None and socket not in (ana,)
    assert caches.of(_flow(**{SOCKET: "ws_0123"})) is socket
    assert caches.of(_flow(**{SOCKET: "ws_0123", CLIENT: "ana"})) is ana
    assert caches.of(_flow()) is None  # anyone who reaches the proxy
    assert caches.of(_flow(**{SOCKET: "https://api.openai.com/v1/responses"})) is None


def test_shared_gives_anonymous_requests_one_cache_and_off_none() -> None:
    caches = ItemCaches()
    caches.mode = "shared"
    shared = caches.of(_flow())
    assert shared is not None and caches.of(_flow()) is shared
    assert caches.of(_flow(**{CLIENT: "ana"})) is not shared
    caches.mode = "off"
    assert caches.of(_flow()) is None and caches.of(_flow(**{CLIENT: "ana"})) is None


def test_the_least_recently_used_cache_goes_past_the_bound() -> None:
    caches = ItemCaches(max_caches=2)
    first = caches.of(_flow(**{CLIENT: "a"}))
    caches.of(_flow(**{CLIENT: "b"}))
    caches.of(_flow(**{CLIENT: "a"}))  # b is now the oldest
    caches.of(_flow(**{CLIENT: "c"}))
    assert len(caches) == 2
    assert caches.of(_flow(**{CLIENT: "a"})) is first


def test_the_option_is_checked_and_off_forgets_the_caches(gateway: Ctx) -> None:
    addon, tctx = gateway
    with pytest.raises(exceptions.OptionsError, match="gateway_item_cache"):
        tctx.configure(addon, gateway_item_cache="sometimes")
    tctx.configure(addon, gateway_item_cache="shared")
    assert addon.items.of(_flow()) is not None and len(addon.items) == 1
    tctx.configure(addon, gateway_item_cache="off")
    assert len(addon.items) == 0


def _turns() -> tuple[dict[str, Any], dict[str, Any]]:
    first = json.loads((CODEX / "request_followup_after_apply_patch.json").read_bytes())
    reply = {"type": "message", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": "Done.", "annotations": []}]}
    second = {**first, "input": [*first["input"], reply,
                                 {"type": "message", "role": "user",
                                  "content": [{"type": "input_text", "text": "thanks"}]}]}
    return first, second


def test_a_connections_second_turn_is_translated_from_its_cache_as_without_it(gateway: Ctx) -> None:
    addon, _ = gateway
    first, second = _turns()
    sent = []
    for body in (first, second):
        flow = client_flow(body)
        flow.metadata[SOCKET] = "ws_00aa"  # a request of one WebSocket connection
        run_request(addon, flow)
        sent.append(json.loads(flow.request.content))
    cache = addon.items.of(_flow(**{SOCKET: "ws_00aa"}))
    assert cache is not None and cache.reused == len(first["input"])
    alone = translate_request(second, "anthropic", "claude-sonnet-4-6", capabilities=None)
    assert sent[1]["messages"] == alone.body["messages"]


def test_anonymous_http_turns_leave_no_cache_behind(gateway: Ctx) -> None:
    addon, _ = gateway
    for body in _turns():
        run_request(addon, client_flow(body))
    assert len(addon.items) == 0

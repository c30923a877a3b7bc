"""The gateway's hooks within their bounds (addon/limits.py): a request too large to read is a 413
in the client's dialect, a large one is read in a worker thread, translated in a worker process,
and comes out the same."""

from __future__ import annotations

import json
import sys
import threading
from typing import Any

import pytest
from mitmproxy.test import taddons

from addon import gateway as gateway_module
from addon.gateway import Gateway
from tests.addon.conftest import client_flow, finish

if sys.version_info >= (3, 14):
    from compression import zstd
else:
    from backports import zstd

Ctx = tuple[Gateway, taddons.context]


def _big_body(items: int) -> dict:
    return {"model": "gpt-5.5", "stream": True,
            "input": [{"type": "message", "role": "user",
                       "content": [{"type": "input_text", "text": f"é {i}"}]} for i in range(items)]}


def test_a_declared_length_past_the_bound_is_a_413_before_the_body_is_read(gateway: Ctx) -> None:
    addon, tctx = gateway
    tctx.configure(addon, gateway_max_request_bytes=1000)
    flow = client_flow()
    flow.request.headers["content-length"] = "1001"  # as the client announced it; no body read yet
    addon.requestheaders(flow)
    assert flow.response is not None and flow.response.status_code == 413
    assert flow.response.json()["error"]["code"] == "request_too_large"
    assert flow.request.url.startswith("https://api.openai.com")


def test_a_compressed_body_past_the_bound_is_a_413_and_stays_as_sent(gateway: Ctx) -> None:
    addon, tctx = gateway
    tctx.configure(addon, gateway_max_request_bytes=10_000)
    raw = zstd.compress(json.dumps(_big_body(500)).encode())
    flow = client_flow(headers={"content-encoding": "zstd"})
    flow.request.raw_content = raw
    addon.requestheaders(flow)
    finish(addon.request(flow))
    assert flow.response is not None and flow.response.status_code == 413
    assert "zstd" in flow.response.json()["error"]["message"]
    assert flow.request.raw_content == raw and flow.request.url.startswith("https://api.openai.com")


def test_a_compressed_body_is_decoded_once_and_stored_as_the_client_sent_it(gateway: Ctx) -> None:
    addon, _ = gateway
    text = json.dumps(_big_body(3), ensure_ascii=False)
    flow = client_flow(headers={"content-encoding": "zstd"})
    flow.request.raw_content = zstd.compress(text.encode())
    addon.requestheaders(flow)
    finish(addon.request(flow))
    assert flow.response is None and flow.request.path == "/v1/messages"
    assert flow.metadata["gateway.client_request"] == text


def test_a_small_body_is_translated_in_the_proxy_and_a_large_one_in_a_worker_process_alike(
        gateway: Ctx, monkeypatch: pytest.MonkeyPatch) -> None:
    addon, _ = gateway
    on_loop: list[bool] = []
    translate = gateway_module.translate_request

    def spy(*args: Any, **kwargs: Any) -> Any:
        on_loop.append(threading.current_thread() is threading.main_thread())
        return translate(*args, **kwargs)

    monkeypatch.setattr(gateway_module, "translate_request", spy)  # this process only
    small, large = client_flow(_big_body(3)), client_flow(_big_body(20_000))
    assert len(large.request.raw_content or b"") > 256 * 1024
    finish(addon.request(small))
    finish(addon.request(large))
    assert on_loop == [True]
    assert large.metadata["gateway.translation"]["target"] == "anthropic"
    sent = json.loads(large.request.content or b"")
    assert len(sent["messages"]) == 1 and len(sent["messages"][0]["content"]) == 20_000
    assert json.loads(small.request.content or b"")["messages"][0]["content"][0]["text"] == "é 0"

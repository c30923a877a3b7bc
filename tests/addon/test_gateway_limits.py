"""The gateway's hooks within their bounds (addon/work/limits.py): a request too large to read is a 413
in the client's dialect, a large one is read and translated in a worker process, never parsed by
the proxy, and comes out the same; the saved flow keeps what was sent within the kept bound."""

from __future__ import annotations

import gc
import json
import sys
import threading
import tracemalloc
from typing import Any

import pytest
from mitmproxy.flow import Error
from mitmproxy.test import taddons

from addon.serve import translate
from addon.work import offload
from tests.addon.conftest import Chain, client_flow, finish, run_request

if sys.version_info >= (3, 14):
    from compression import zstd
else:
    from backports import zstd

Ctx = tuple[Chain, taddons.context]


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
    translated = translate.translate_request

    def spy(*args: Any, **kwargs: Any) -> Any:
        on_loop.append(threading.current_thread() is threading.main_thread())
        return translated(*args, **kwargs)

    monkeypatch.setattr(translate, "translate_request", spy)  # this process only
    small, large = client_flow(_big_body(3)), client_flow(_big_body(20_000))
    assert len(large.request.raw_content or b"") > 256 * 1024
    run_request(addon, small)
    run_request(addon, large)
    assert on_loop == [True]
    assert large.metadata["gateway.translation"]["target"] == "anthropic"
    sent = json.loads(large.request.content or b"")
    assert len(sent["messages"]) == 1 and len(sent["messages"][0]["content"]) == 20_000
    assert json.loads(small.request.content or b"")["messages"][0]["content"][0]["text"] == "é 0"


def test_a_large_body_is_never_parsed_by_the_proxy(gateway: Ctx) -> None:
    """Parsed in the proxy, 10 MB of JSON holds the interpreter lock (in any thread) for 150 ms
    or more, and its objects as long again to free: every other stream waits (docs/design.md
    "Limits"). The proxy holds the body and its translation as bytes only."""
    addon, _ = gateway
    flow = client_flow(_big_body(20_000))
    size = len(flow.request.raw_content or b"")
    tracemalloc.start()
    try:
        run_request(addon, flow)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    sent = json.loads(flow.request.content or b"")
    assert flow.response is None and len(sent["messages"][0]["content"]) == 20_000
    assert peak < 5 * size  # the body read back translated, its saved text (3x); parsed, 50x


def test_a_small_compressed_body_that_decodes_large_is_read_in_a_worker(
        gateway: Ctx, monkeypatch: pytest.MonkeyPatch) -> None:
    addon, _ = gateway
    text = json.dumps(_big_body(20_000), ensure_ascii=False).encode()
    flow = client_flow(headers={"content-encoding": "zstd"})
    flow.request.raw_content = zstd.compress(text)
    assert len(flow.request.raw_content) < offload.INLINE_BYTES < len(text)
    monkeypatch.setattr(translate, "translate_request", None)  # never called in this process
    addon.requestheaders(flow)
    finish(addon.request(flow))
    assert flow.response is None
    assert len(json.loads(flow.request.content or b"")["messages"][0]["content"]) == 20_000


def test_the_objects_alive_once_the_proxy_runs_are_out_of_the_collectors_passes(gateway: Ctx) -> None:
    """A full pass over them (~110k objects of mitmproxy, the addon and their libraries) holds the
    interpreter lock ~70 ms, at a moment no flow chose."""
    addon, _ = gateway
    gc.collect()  # what earlier tests in this process left to collect is no object alive
    before = len(gc.get_objects())
    try:
        addon.running()
        assert gc.get_freeze_count() >= before * 0.9 and len(gc.get_objects()) < before * 0.1
    finally:
        gc.unfreeze()


def test_a_request_cut_by_an_error_after_it_was_sent_is_saved_within_the_kept_bound(gateway: Ctx) -> None:
    addon, tctx = gateway
    tctx.configure(addon, gateway_max_kept_bytes=50_000)
    flow = client_flow(_big_body(20_000) | {"store": False})
    run_request(addon, flow)
    sent = len(flow.request.raw_content or b"")
    flow.error = Error("server disconnected")
    addon.error(flow)
    assert sent > 50_000 and (flow.request.raw_content or b"").endswith(
        f"{sent - 50_000} more bytes were sent but not kept (gateway_max_kept_bytes=50000)".encode())

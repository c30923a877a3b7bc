"""The store's endpoints bounded through real mitmdump (reverse mode, the SQLite store): a small
zstd body that decodes to 512 MiB is a 413 with the proxy's memory bounded, 200k items are a 400
at once, and nothing of either is stored (docs/state.md "Bounds")."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator

import httpx
import pytest
from mitmproxy.net import encoding

from tests.addon.e2e.conftest import CLIENT_KEY, StartProxy
from tests.addon.e2e.test_limits import PeakRSS
from tests.support.mitmdump import MitmDump

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def proxy(start_proxy: StartProxy) -> MitmDump:
    return start_proxy("store-bounds", "reverse:https://api.openai.com")


@pytest.fixture
def http(proxy: MitmDump) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=f"{proxy.url}/v1", timeout=60,
                      headers={"authorization": f"Bearer {CLIENT_KEY}"}) as client:
        yield client


def _stored(proxy: MitmDump) -> int:
    path = proxy.confdir / "gateway-store.sqlite"
    if not path.exists():
        return 0
    with sqlite3.connect(path) as db:
        return db.execute("SELECT COUNT(*) FROM gw_conversations").fetchone()[0]


def test_a_zstd_body_that_decodes_to_512_mib_is_413_with_bounded_memory(proxy: MitmDump,
                                                                       http: httpx.Client) -> None:
    text = b'{"metadata": {"k": "' + b"x" * (512 << 20) + b'"}}'
    bomb = encoding.encode(text, "zstd")
    del text
    assert len(bomb) < 1 << 20
    assert proxy._process is not None
    with PeakRSS(proxy._process.pid) as memory:
        response = http.post("/conversations", content=bomb,
                             headers={"content-encoding": "zstd", "content-type": "application/json"})
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "request_too_large"
    assert memory.growth < 200 << 20  # the bound is 64 MiB by default; the decoder stops past it
    assert _stored(proxy) == 0


def test_200k_items_are_400_at_once_and_nothing_is_stored(proxy: MitmDump, http: httpx.Client) -> None:
    items = [{}] * 200_000
    response = http.post("/conversations", content=json.dumps({"items": items}),
                         headers={"content-type": "application/json"})
    assert response.status_code == 400
    assert (response.json()["error"]["code"], response.json()["error"]["param"]) == ("array_above_max_length",
                                                                                     "items")
    assert _stored(proxy) == 0
    ok = http.post("/conversations", json={"items": [{"type": "message", "role": "user", "content": "hi"}]})
    assert ok.status_code == 200 and _stored(proxy) == 1

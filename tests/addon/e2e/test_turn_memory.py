"""A finished turn is freed when it ends, by reference counting, not left to the cyclic collector
(docs/benchmarks.md "The fixed cost of a turn"): nothing of it is held by a reference cycle, neither its
own objects (the leg's callables hold neither the flow's context nor its `Sending`) nor mitmproxy's
(an answer's head is read on a stack of its own, addon/patches/loopback_pipe.py). `turn_refs.py`
switches the collector off in a real mitmdump and counts what earlier turns left alive."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.addon.e2e.conftest import CLIENT_KEY, CODEX_HEADERS, UPSTREAM_KEY, UPSTREAM_MODEL
from tests.addon.e2e.upstream import Upstream, message, stream
from tests.support.mitmdump import GATEWAY, MitmDump

pytestmark = pytest.mark.timeout(120)

SPY = Path(__file__).with_name("turn_refs.py")


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory,
          upstream_server: Upstream) -> Iterator[tuple[MitmDump, Path]]:
    where = tmp_path_factory.mktemp("turn-memory")
    refs = where / "refs.jsonl"
    options = {"gateway_upstream": "anthropic", "gateway_base_url": upstream_server.url,
               "gateway_model": UPSTREAM_MODEL, "gateway_capabilities": "table",
               "gateway_key_env": "ANTHROPIC_API_KEY"}
    env = {"ANTHROPIC_API_KEY": UPSTREAM_KEY, "GATEWAY_TEST_TURN_REFS": str(refs)}
    with MitmDump(where / "m", mode="reverse:https://api.openai.com", scripts=(GATEWAY, SPY), options=options,
                  env=env) as mitmdump:
        yield mitmdump, refs


@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "whole"])
def test_nothing_of_a_finished_turn_waits_for_the_cyclic_collector(
        proxy: tuple[MitmDump, Path], upstream: Upstream, streamed: bool) -> None:
    mitmdump, refs = proxy
    upstream.plan(*(stream(delay=0.005) if streamed else message() for _ in range(3)))
    body = {"model": "gpt-5.5", "input": "hello", "stream": streamed}
    headers = {"authorization": f"Bearer {CLIENT_KEY}", **CODEX_HEADERS}
    with httpx.Client(timeout=30) as client:
        for _ in range(3):
            answer = client.post(f"{mitmdump.url}/v1/responses", json=body, headers=headers)
            assert answer.status_code == 200, answer.text
    last = json.loads(refs.read_text().splitlines()[-1])
    assert last["earlier"] >= 2 and last["alive"] == 0, last

"""A finished turn is freed when it ends, by reference counting, not left to the cyclic collector
(docs/benchmarks.md "The fixed cost of a turn"): nothing of it is held by a reference cycle, neither its
own objects (the leg's callables hold neither the flow's context nor its `Sending`) nor mitmproxy's
(an answer's head is read on a stack of its own, addon/patches/loopback_pipe.py). `turn_refs.py`
switches the collector off in a real mitmdump and counts what earlier turns left alive."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from tests.addon.e2e.conftest import CLIENT_KEY, CODEX_HEADERS, StartProxy
from tests.addon.e2e.upstream import Upstream, message, stream
from tests.support.mitmdump import GATEWAY, MitmDump

pytestmark = pytest.mark.timeout(120)

SPY = Path(__file__).with_name("turn_refs.py")


@pytest.fixture(scope="module")
def proxy(start_proxy: StartProxy, module_dir: Path) -> tuple[MitmDump, Path]:
    refs = module_dir / "refs.jsonl"
    mitmdump = start_proxy("turn-memory", "reverse:https://api.openai.com", scripts=(GATEWAY, SPY),
                           env={"GATEWAY_TEST_TURN_REFS": str(refs)})
    return mitmdump, refs


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

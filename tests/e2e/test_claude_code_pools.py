"""Real Claude Code (`claude -p`) through mitmdump and a route of two deployments (docs/pools.md):
its first model turns meet an overload (an HTTP 529, then an `overloaded_error` inside the stream
before any content) on whichever deployment they reach, and the other deployment answers; Claude
Code sees none of it."""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from mitmproxy import io as mio

from tests.support.claude_code_cli import run_claude
from tests.support.fake_upstream import (
    FakeUpstream,
    Reply,
    anthropic_text,
    count_reply,
    empty_reply,
    is_count,
    json_reply,
)
from tests.support.mitmdump import GATEWAY, MitmDump

pytestmark = pytest.mark.timeout(300)

ANSWER = "answered by the other deployment"
MODEL = "claude-sonnet-4-6"
KEYS = {"CC_POOL_KEY_A": "sk-ant-cc-pool-a-0123456789", "CC_POOL_KEY_B": "sk-ant-cc-pool-b-0123456789"}
OFFLINE = r"#!(~d ^127\.0\.0\.1$ | ~u api\.anthropic\.com/v1/messages | ~u api\.anthropic\.com/v1/models)#404"
"""Everything but loopback and the Messages paths is answered 404 by the proxy itself."""
OVERLOAD = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
"""Anthropic's overload, as an error body and as an in-stream event
(https://platform.claude.com/docs/en/api/errors)."""


def test_claude_code_is_answered_by_the_other_deployment(tmp_path: Path) -> None:
    lock = threading.Lock()
    failures = ["http 529", "in-stream overload"]

    def script(body: Any, _headers: Mapping[str, str], path: str) -> Reply:
        if not isinstance(body, dict):
            return empty_reply(404)
        if is_count("anthropic", path):
            return count_reply("anthropic", 42)
        with lock:
            failure = failures.pop(0) if failures else None
        if failure == "http 529":
            return json_reply(529, OVERLOAD)
        if failure == "in-stream overload":
            status, headers, chunks = anthropic_text(ANSWER, MODEL)
            event = b"event: error\ndata: %s\n\n" % json.dumps(OVERLOAD).encode()
            return status, headers, [next(iter(chunks)), event]
        return anthropic_text(ANSWER, MODEL)

    flows = tmp_path / "claude.flows"
    with FakeUpstream(lambda *_: empty_reply(500)) as anthropic_itself, \
            FakeUpstream(script) as a, FakeUpstream(script) as b:
        routes = tmp_path / "routes.toml"
        routes.write_text(f'[[route]]\nupstream = "anthropic"\ntarget_model = "{MODEL}"\ndeployments = ['
                          f'{{ name = "a", base_url = "{a.url}", key_env = "CC_POOL_KEY_A" }}, '
                          f'{{ name = "b", base_url = "{b.url}", key_env = "CC_POOL_KEY_B" }}]\n')
        with MitmDump(tmp_path / "mitm", mode=f"reverse:{anthropic_itself.url}", scripts=(GATEWAY,),
                      options={"gateway_config": str(routes), "gateway_capabilities": "table"},
                      args=["-w", str(flows)], block_list=[OFFLINE], env=dict(KEYS)) as mitm:
            (tmp_path / "work").mkdir()
            run = run_claude("say hi", base_url=mitm.url, home=tmp_path / "home", work=tmp_path / "work",
                             model=MODEL)
            log = mitm.log
        assert not anthropic_itself.requests
    assert run.returncode == 0, f"{run.describe()}\n{log[-4000:]}"
    assert run.result is not None and run.result["result"] == ANSWER, run.describe()
    with flows.open("rb") as file:
        turns = [f for f in mio.FlowReader(file).stream() if isinstance(f.metadata.get("gateway"), dict)
                 and f.metadata["gateway"].get("attempts")]
    attempts = [a for t in turns for a in t.metadata["gateway"]["attempts"]]
    assert [a["outcome"] for a in attempts].count("retried") == 2, attempts
    assert all(t.response.status_code == 200 and not t.metadata["gateway"].get("error") for t in turns), log

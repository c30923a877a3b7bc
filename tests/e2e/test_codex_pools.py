"""The real Codex CLI (custom provider, reverse mode: README setup 3) through mitmdump and the
gateway's upstream leg (docs/pools.md): a pool of two deployments, where a turn whose first attempt
meets an overload (an HTTP 529, or an `overloaded_error` inside the stream before content) is
answered by the other deployment, and Codex never sees the failure, over HTTP (custom provider)
and over the Responses WebSocket (the built-in provider with `openai_base_url`, README setup 2).

(That the client's answer ends at the translator's terminal event, not at the upstream's end of
body, Codex closing its connection first: tests/addon/e2e/test_codex_counted.py, which counts those
turns too.)
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from mitmproxy import io as mio

from tests.support.codex_cli import (
    REPO_ROOT,
    codex_mitmdump,
    custom_provider_setup,
    openai_provider_setup,
    run_codex_exec,
)
from tests.support.fake_upstream import (
    FakeUpstream,
    Reply,
    anthropic_text,
    empty_reply,
    json_reply,
    refuse_everything,
)

pytestmark = [pytest.mark.codex, pytest.mark.timeout(300)]

GATEWAY_ADDON = REPO_ROOT / "addon" / "gateway.py"
ANSWER = "answered through the leg"
MODEL = "claude-sonnet-4-6"
KEYS = {"LEG_KEY_A": "sk-ant-leg-a-0123456789", "LEG_KEY_B": "sk-ant-leg-b-0123456789"}


@pytest.fixture
def black_hole() -> Iterator[FakeUpstream]:
    with FakeUpstream(refuse_everything) as hole:
        yield hole


def saved_turns(path: Path) -> list[Any]:
    with path.open("rb") as file:
        return [f for f in mio.FlowReader(file).stream()
                if isinstance(f.metadata.get("gateway"), dict) and f.metadata["gateway"].get("client_model")
                and f.request.path.endswith("/messages")]


def run_codex(tmp_path: Path, black_hole: FakeUpstream, routes: str, flows: Path,
              setup: str = "custom_provider") -> Any:
    config = tmp_path / "routes.toml"
    config.write_text(routes)
    work = tmp_path / "work"
    work.mkdir()
    with codex_mitmdump(tmp_path / "mitm", mode="reverse:https://api.openai.com", scripts=[GATEWAY_ADDON],
                        options={"gateway_config": str(config), "gateway_capabilities": "table"},
                        args=["-w", str(flows)], env=dict(KEYS)) as mitm:
        if setup == "custom_provider":  # HTTP
            codex = custom_provider_setup(tmp_path / "codex", base_url=f"{mitm.url}/v1",
                                          proxy_url=black_hole.url)
        else:  # the built-in provider: its turns over the Responses WebSocket (docs/websocket.md)
            codex = openai_provider_setup(tmp_path / "codex", proxy_url=black_hole.url,
                                          openai_base_url=f"{mitm.url}/v1", no_proxy="127.0.0.1,localhost")
        run = run_codex_exec(codex, "say hi", work, timeout=180)
        log = mitm.log
    return run, log


@pytest.mark.parametrize("setup", ["custom_provider", "openai_base_url"], ids=["http", "websocket"])
def test_a_pool_answers_codex_when_one_deployment_is_overloaded(tmp_path: Path, black_hole: FakeUpstream,
                                                                setup: str) -> None:
    lock = threading.Lock()
    failures = ["http 529", "in-stream overload"]

    def script(body: Any, _headers: Mapping[str, str], _path: str) -> Reply:
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return empty_reply(404)
        with lock:
            failure = failures.pop(0) if failures else None
        overload = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
        if failure == "http 529":  # https://platform.claude.com/docs/en/api/errors
            return json_reply(529, overload)
        if failure == "in-stream overload":
            status, headers, chunks = anthropic_text(ANSWER, MODEL)
            overloaded = b"event: error\ndata: %s\n\n" % json.dumps(overload).encode()
            return status, headers, [next(iter(chunks)), overloaded]
        return anthropic_text(ANSWER, MODEL)

    flows = tmp_path / "pool.flows"
    with FakeUpstream(script) as a, FakeUpstream(script) as b:
        routes = (f'[[route]]\nupstream = "anthropic"\ntarget_model = "{MODEL}"\n'
                  f'deployments = [{{ name = "a", base_url = "{a.url}", key_env = "LEG_KEY_A" }}, '
                  f'{{ name = "b", base_url = "{b.url}", key_env = "LEG_KEY_B" }}]\n')
        run, log = run_codex(tmp_path, black_hole, routes, flows, setup)
    assert run.returncode == 0 and ANSWER in run.final_message, f"{run.describe()}\n{log}"
    turns = saved_turns(flows)
    assert all(("gateway.websocket" in t.metadata) == (setup == "openai_base_url") for t in turns)
    assert turns and all(t.response.status_code == 200 for t in turns), log
    attempts = [a for t in turns for a in t.metadata["gateway"]["attempts"]]
    assert [a["outcome"] for a in attempts].count("retried") == 2, attempts
    assert all(not t.metadata["gateway"].get("error") for t in turns)

"""The real Codex CLI over the Responses WebSocket transport the gateway serves (docs/websocket.md),
with the built-in `openai` provider (the one that uses the socket) in regular mode and with
`openai_base_url`, to each of the four upstreams' local fakes: no WebSocket error and no fallback to
HTTP; the prewarm, the tool call and its follow-up over one connection, the follow-up carrying only
the new item; the upstream gets the whole history, as over HTTP."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from mitmproxy import io as mio

from tests.e2e.targets import (
    GATEWAY_ADDON,
    PROMPT,
    REMOTE,
    TARGETS,
    Target,
    codex_setup,
    has_tool_result,
    is_turn,
    mode_of,
    routes_file,
    script,
    texts,
    turns,
)
from tests.support.codex_cli import codex_mitmdump, run_codex_exec
from tests.support.fake_upstream import FakeUpstream, Reply, empty_reply, refuse_everything

pytestmark = [pytest.mark.codex, pytest.mark.timeout(420)]

CLOSING = "listed over the socket"


def client_messages(flows_file: Path) -> list[list[dict[str, Any]]]:
    """Each saved WebSocket flow's client messages, as JSON."""
    with flows_file.open("rb") as file:
        sockets = [f for f in mio.FlowReader(file).stream() if f.websocket is not None]
    return [[json.loads(m.content) for m in s.websocket.messages if m.from_client] for s in sockets]


@pytest.mark.parametrize("target", TARGETS, ids=str)
@pytest.mark.parametrize("setup", REMOTE)
def test_codex_runs_a_tool_turn_over_one_socket(tmp_path: Path, setup: str, target: Target) -> None:
    work = tmp_path / "work"
    work.mkdir()
    flows = tmp_path / "flows"
    answer = script(target, 300, is_summary_request=lambda body: False, summary="", closing=CLOSING)
    with FakeUpstream(refuse_everything) as hole, FakeUpstream(answer) as up:
        config = routes_file(tmp_path, target, up)
        with codex_mitmdump(tmp_path / "mitm", mode=mode_of(setup), scripts=[GATEWAY_ADDON],
                            options={"gateway_config": str(config)}, env=dict(target.env),
                            args=["-w", str(flows)]) as mitm:
            run = run_codex_exec(codex_setup(setup, tmp_path / "codex", mitm, hole), PROMPT, work,
                                 timeout=180)
    context = f"{run.describe()}\n--- mitmdump ---\n{mitm.log}\n--- upstream errors ---\n{up.errors}"
    assert run.returncode == 0, context
    assert CLOSING in run.final_message, context
    assert "failed to connect to Responses WebSocket" not in run.stderr, context
    assert "falling back" not in run.stderr.lower(), context
    # one socket: the prewarm, the request, the tool follow-up carrying only the new item
    (messages,) = client_messages(flows)
    assert messages[0]["generate"] is False, context
    requests = [m for m in messages if m.get("type") == "response.create" and m.get("generate") is not False]
    assert len(requests) == 2, [m.get("input") for m in requests]
    follow_up = requests[1]
    assert follow_up["previous_response_id"], follow_up
    assert [item["type"] for item in follow_up["input"]] == ["function_call_output"]
    # the upstream got the whole history both times, as over HTTP
    first, second = turns(up)
    assert PROMPT in json.dumps(texts(first)) and PROMPT in json.dumps(texts(second))
    assert not has_tool_result(first) and has_tool_result(second)
    assert mitm.upstream_hosts() == {"127.0.0.1"}, mitm.log


@pytest.mark.parametrize("setup", REMOTE)
def test_an_upstream_killed_mid_answer_is_an_error_codex_retries_on_the_socket(tmp_path: Path,
                                                                               setup: str) -> None:
    target = TARGETS[0]  # anthropic
    killed = threading.Event()

    def answer(body: Any, headers: Mapping[str, str], path: str) -> Reply:
        if not is_turn(body):
            return empty_reply(404)
        status, reply_headers, chunks = target.text(CLOSING, 300)
        if killed.is_set():
            return status, reply_headers, chunks
        killed.set()

        def cut() -> Iterator[bytes]:
            yield from list(chunks)[:3]
            raise ConnectionAbortedError("the upstream process died")  # the connection drops

        return status, reply_headers, cut()

    work = tmp_path / "work"
    work.mkdir()
    with FakeUpstream(refuse_everything) as hole, FakeUpstream(answer) as up:
        config = routes_file(tmp_path, target, up)
        with codex_mitmdump(tmp_path / "mitm", mode=mode_of(setup), scripts=[GATEWAY_ADDON],
                            options={"gateway_config": str(config)}, env=dict(target.env)) as mitm:
            run = run_codex_exec(codex_setup(setup, tmp_path / "codex", mitm, hole), PROMPT, work,
                                 timeout=180)
    context = f"{run.describe()}\n--- mitmdump ---\n{mitm.log}"
    assert run.returncode == 0, context
    assert CLOSING in run.final_message, context
    assert "falling back" not in run.stderr.lower(), context
    assert len(turns(up)) == 2, context  # the killed answer, then Codex's retry

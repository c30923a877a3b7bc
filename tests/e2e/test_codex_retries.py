"""What the real Codex 0.169 retries: the facts the upstream leg's answers rest on (docs/codex.md
"Errors and retries", docs/pools.md "What the client sees"), pinned against a fake Responses
upstream. Each test fails a turn a few times, then answers, and counts the requests Codex made."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.support.codex_cli import CodexRun, custom_provider_setup, run_codex_exec
from tests.support.fake_upstream import (
    SSE_HEADERS,
    FakeUpstream,
    Reply,
    empty_reply,
    is_websocket_upgrade,
    refuse_everything,
    responses_text,
)

DONE = "retried through"


def _event(payload: dict[str, Any]) -> bytes:
    return f"event: {payload['type']}\ndata: {json.dumps(payload)}\n\n".encode()


def failed_stream(code: str, message: str) -> Reply:
    created = {"type": "response.created", "response": {"id": "resp_f", "status": "in_progress"}}
    failed = {"type": "response.failed", "response": {"id": "resp_f", "status": "failed",
                                                      "error": {"code": code, "message": message}}}
    return 200, SSE_HEADERS, [_event(created), _event(failed)]


def http_error(status: int, code: str, headers: Mapping[str, str] | None = None) -> Reply:
    body = json.dumps({"error": {"message": "busy", "type": code, "code": code}}).encode()
    return status, {"content-type": "application/json", **(headers or {})}, body


@pytest.fixture
def black_hole() -> Iterator[FakeUpstream]:
    with FakeUpstream(refuse_everything) as hole:
        yield hole


def codex_against(tmp_path: Path, hole: FakeUpstream,
                  failures: list[Callable[[], Reply]]) -> tuple[CodexRun, int]:
    """Codex (custom provider) against an upstream that answers `failures` in turn, then a text."""
    posts: list[int] = []

    def script(_body: Any, headers: Mapping[str, str], path: str) -> Reply:
        if is_websocket_upgrade(headers) or not path.startswith("/v1/responses"):
            return empty_reply(404)
        posts.append(1)
        return failures[len(posts) - 1]() if len(posts) <= len(failures) else responses_text(DONE)

    work = tmp_path / "work"
    work.mkdir()
    with FakeUpstream(script) as up:
        setup = custom_provider_setup(tmp_path / "codex", base_url=f"{up.url}/v1", proxy_url=hole.url)
        run = run_codex_exec(setup, "say hi", work, timeout=120)
    return run, len(posts)


@pytest.mark.codex
@pytest.mark.timeout(300)
def test_a_503_with_retry_after_and_server_error_is_retried_after_the_wait(tmp_path: Path,
                                                                          black_hole: FakeUpstream) -> None:
    # the leg's give-up answer to Codex (the Responses client dialect's `give_up`, docs/pools.md)
    give_up = [lambda: http_error(503, "server_error", {"retry-after": "1"})] * 7
    run, requests = codex_against(tmp_path, black_hole, give_up)
    assert run.returncode == 0 and DONE in run.final_message, run.describe()
    assert requests == 8  # past one stream try's five HTTP tries: the stream is tried again


@pytest.mark.codex
@pytest.mark.timeout(300)
def test_an_in_stream_server_error_is_retried(tmp_path: Path, black_hole: FakeUpstream) -> None:
    failures = [lambda: failed_stream("server_error", "overloaded")] * 2
    run, requests = codex_against(tmp_path, black_hole, failures)
    assert run.returncode == 0 and DONE in run.final_message, run.describe()
    assert requests == 3


@pytest.mark.codex
@pytest.mark.timeout(300)
@pytest.mark.parametrize("failure", [
    lambda: failed_stream("server_is_overloaded", "Overloaded"),
    lambda: http_error(429, "rate_limit_exceeded"),  # no retry-after
])
def test_these_end_the_turn_at_once(tmp_path: Path, black_hole: FakeUpstream,
                                    failure: Callable[[], Reply]) -> None:
    run, requests = codex_against(tmp_path, black_hole, [failure])
    assert run.returncode != 0 and requests == 1, run.describe()

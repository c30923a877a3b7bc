"""Every local upstream is strict (tests/support/loopback_http.py): a request its vendor refuses gets
the vendor's refusal before the fake's script sees it, and what the fake's answers handed out is
what it takes back."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any

from tests.support import strict
from tests.support.fake_upstream import FakeUpstream, Reply, anthropic_message, sse_reply

HEADERS = {"anthropic-version": "2023-06-01", "content-type": "application/json"}
SIG = "EqQBCkYIBxgCsignedbytheloopback"


def post(url: str, body: dict[str, Any], headers: Mapping[str, str] = HEADERS) -> tuple[int, Any]:
    data = json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers=dict(headers), method="POST")
    try:
        # a long timeout: the first request of a process imports the vendor's SDK types
        with urllib.request.urlopen(request, timeout=120) as answer:
            raw = answer.read()
            status = answer.status
    except urllib.error.HTTPError as failed:
        raw, status = failed.read(), failed.code
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw


def thinking_then_text(*_: Any) -> Reply:
    events = [
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Hm."}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": SIG}},
        {"type": "content_block_stop", "index": 0},
    ]
    return sse_reply([f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events])


def message(*content: dict[str, Any]) -> dict[str, Any]:
    return {"model": "claude-sonnet-4-5", "max_tokens": 1000, "messages": [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": list(content)},
        {"role": "user", "content": "and?"}]}


def test_a_refused_request_gets_the_vendors_answer_and_never_reaches_the_script() -> None:
    seen: list[Any] = []

    def script(body: Any, _headers: Mapping[str, str], _path: str) -> Reply:
        seen.append(body)
        return anthropic_message("hello")

    with FakeUpstream(script) as up:
        hi = [{"role": "user", "content": "hi"}]
        body = {"model": "claude-sonnet-4-5", "max_tokens": 100_000, "messages": hi}
        status, answer = post(f"{up.url}/v1/messages", body)
        assert status == 400
        expected = ("max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for "
                    "claude-sonnet-4-5")
        assert answer["error"]["message"] == expected
        assert seen == [] and up.refusals == [json.dumps(answer)]
        assert up.requests[0].refused is not None


def test_a_signature_the_fake_issued_comes_back_and_a_forged_one_is_refused() -> None:
    with FakeUpstream(thinking_then_text) as up:
        assert post(f"{up.url}/v1/messages", message({"type": "text", "text": "x"}))[0] == 200
        issued = {"type": "thinking", "thinking": "Hm.", "signature": SIG}
        assert post(f"{up.url}/v1/messages", message(issued, {"type": "text", "text": "x"}))[0] == 200
        forged = {**issued, "signature": "forged"}
        status, answer = post(f"{up.url}/v1/messages", message(forged, {"type": "text", "text": "x"}))
        assert (status, answer["error"]["message"]) == (
            400, "messages.1.content.0: Invalid `signature` in `thinking` block")


def test_an_earlier_sessions_signature_is_declared_and_strictness_can_be_turned_off() -> None:
    forged = {"type": "thinking", "thinking": "Old.", "signature": "from-a-session-before"}
    with FakeUpstream(lambda *_: anthropic_message("hello")) as up:
        assert post(f"{up.url}/v1/messages", message(forged))[0] == 400
        up.issue(strict.Issued(thinking={"from-a-session-before": "Old."}))
        assert post(f"{up.url}/v1/messages", message(forged))[0] == 200
        up.strictness = strict.Strictness(enabled=False)
        assert post(f"{up.url}/v1/messages", {"garbage": True})[0] == 200


def test_a_path_of_no_vendor_is_not_checked() -> None:
    with FakeUpstream(lambda *_: anthropic_message("hello")) as up:
        assert post(f"{up.url}/gateway/codex/models", {"anything": 1})[0] == 200


def test_a_validator_failure_is_a_500_and_a_recorded_traceback(monkeypatch: Any) -> None:
    def broken(*_: Any, **__: Any) -> None:
        raise RuntimeError("validator bug")

    monkeypatch.setattr(strict, "check", broken)
    with FakeUpstream(lambda *_: anthropic_message("hello")) as up:
        assert post(f"{up.url}/v1/messages", message({"type": "text", "text": "x"}))[0] == 500
        assert "validator bug" in up.validator_errors[0]

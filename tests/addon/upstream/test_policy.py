"""addon/upstream/policy.py: the classification of failures, the limits, the give-up table."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from addon.upstream import policy
from translators import client_dialects
from translators import dialect as dialects


@pytest.mark.parametrize(("status", "code", "verdict"), [
    (408, "timeout", "retry"), (429, "rate_limit_exceeded", "retry"), (500, "server_error", "retry"),
    (502, "server_error", "retry"), (503, "server_is_overloaded", "retry"), (504, "timeout", "retry"),
    (529, "server_is_overloaded", "retry"),
    (401, "invalid_api_key", "elsewhere"), (402, "insufficient_quota", "elsewhere"),
    (403, "permission_denied", "elsewhere"), (404, "model_not_found", "elsewhere"),
    (429, "insufficient_quota", "elsewhere"),  # a quota, not a rate: another key may have one
    (400, "context_length_exceeded", "overflow"), (413, "context_length_exceeded", "overflow"),
    (400, "invalid_request_error", "final"), (422, "invalid_request_error", "final"),
    (500, "invalid_request_error", "final"),  # a server's own validation, sent as a 500
])
def test_an_http_error_s_verdict(status: int, code: str, verdict: str) -> None:
    assert policy.of_status(status, code) == verdict


@pytest.mark.parametrize(("code", "verdict"), [
    ("server_is_overloaded", "retry"), ("server_error", "retry"), ("rate_limit_exceeded", "retry"),
    ("upstream_protocol_error", "retry"), ("context_length_exceeded", "overflow"),
    ("insufficient_quota", "elsewhere"), ("invalid_prompt", "final"), ("invalid_request_error", "final"),
    ("content_filter", "final"),
])
def test_an_in_stream_failure_s_verdict(code: str, verdict: str) -> None:
    assert policy.of_code(code) == verdict


def test_an_error_body_is_read_by_its_dialects_table() -> None:
    anthropic = dialects.get("anthropic")
    overloaded = json.dumps({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    assert policy.error_code(anthropic, 529, overloaded.encode()) == "server_is_overloaded"
    message = "prompt is too long: 210000 tokens > 200000"
    too_long = json.dumps({"type": "error", "error": {"type": "invalid_request_error", "message": message}})
    assert policy.error_code(anthropic, 400, too_long.encode()) == "context_length_exceeded"
    assert policy.error_code(anthropic, 502, b"<html>bad gateway</html>") == "server_error"


def test_an_odd_error_table_costs_nothing_but_the_words() -> None:
    def broken(_status: int, _body: object) -> None:
        raise RuntimeError("bug")

    odd = SimpleNamespace(codec=SimpleNamespace(error_info=broken))
    assert policy.error_code(odd, 429, b"slow down") == "rate_limit_exceeded"


@pytest.mark.parametrize(("headers", "message", "seconds"), [
    ([("Retry-After", "7")], "", 7.0),
    ([("retry-after", "1.5")], "", 1.5),
    ([("retry-after-ms", "250"), ("retry-after", "9")], "", 0.25),
    ([("retry-after", "Wed, 01 Jan 2025 00:00:10 GMT")], "", 10.0),
    ([("retry-after", "soon")], "", None),
    ([], "Rate limited. Please try again in 2.5s.", 2.5),
    ([], "try again in 300ms", 0.3),
    ([], "nothing said", None),
])
def test_retry_after(headers: list[tuple[str, str]], message: str, seconds: float | None) -> None:
    wall = 1735689600.0  # 2025-01-01 00:00:00 UTC
    assert policy.retry_after(headers, wall, message) == seconds


def test_a_route_s_limits_win_over_the_options() -> None:
    defaults = policy.Limits(3, 30, 120)
    assert policy.limits_of(SimpleNamespace(retries=0, retry_seconds=None, idle_timeout=600.0), defaults) == \
        policy.Limits(0, 30, 600)
    assert policy.limits_of(object(), defaults) == defaults


def test_the_options_are_checked_saying_what_to_write() -> None:
    assert policy.parse_limits(3, "30", "120") == policy.Limits(3, 30.0, 120.0)
    assert policy.parse_limits(0, "0", "0.5") == policy.Limits(0, 0.0, 0.5)
    for bad, message in [((-1, "30", "120"), "gateway_retries must be a whole number"),
                         ((3, "x", "120"), "gateway_retry_seconds must be a number of seconds"),
                         ((3, "-1", "120"), "gateway_retry_seconds"),
                         ((3, "30", "0"), "gateway_idle_timeout must be a number of seconds above 0"),
                         ((3, "30", "inf"), "gateway_idle_timeout")]:
        with pytest.raises(ValueError, match=message):
            policy.parse_limits(*bad)
    assert [name for name, *_ in policy.OPTIONS] == ["gateway_retries", "gateway_retry_seconds",
                                                     "gateway_idle_timeout"]


def test_each_client_gives_up_with_what_it_retries() -> None:
    responses = client_dialects.get("responses").give_up
    assert (responses.status, responses.code) == (503, "server_error")
    assert client_dialects.get("messages").give_up.status == 529
    assert client_dialects.RETRYABLE.status == 503  # a client dialect that says nothing of its own
    assert [policy.client_wait(s) for s in (None, 0.2, 4.1, 600)] == [1, 1, 5, policy.GIVE_UP_WAIT]


def test_an_in_stream_give_up_is_the_clients_own_terminal_event() -> None:
    in_stream = client_dialects.get("messages").give_up.in_stream
    assert in_stream is not None
    messages = in_stream(b"event: ping\n\n", "all failed", 0)
    assert messages.startswith(b"event: error\n") and b'"overloaded_error"' in messages
    assert client_dialects.get("responses").give_up.in_stream is None  # its stream_error: response.failed


def test_only_a_client_with_a_keep_alive_event_gets_one() -> None:
    keep_alive = client_dialects.get("messages").keep_alive
    assert keep_alive is not None and keep_alive.every == 30.0 and keep_alive.event.startswith(b"event: ping")
    assert client_dialects.get("responses").keep_alive is None

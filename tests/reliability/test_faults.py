"""Upstream faults through the real proxy: what the client gets, and that the next flow works.

One mitmdump serves the whole module (routes by client model, conftest.py); each test makes one
upstream misbehave, checks what the openai SDK or raw httpx receives (Responses-shaped, status
kept, the stream ended by exactly one terminal event, no hang), then runs a normal turn through
the same mitmdump.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from tests.reliability.conftest import CLIENT_KEY, DIALECTS, free_port, routes_toml, sdk, start_gateway
from tests.reliability.fault_upstream import Fault, FaultUpstream, events, stream_data
from tests.reliability.offline_guard import MARK as GUARD_MARK
from tests.reliability.recorded import translation_for
from tests.reliability.streams import client_stream, text_of, translate
from tests.support import conformance
from tests.support.mitmdump import MitmDump

pytestmark = pytest.mark.timeout(120)
HUGE = 8 * 1024 * 1024


ODD_ERROR_BODIES = {
    "message-not-a-string": b'{"type":"error","error":{"type":"rate_limit_error","message":5}}',
    "nested-too-deep": b"[" * 100_000 + b"]" * 100_000,
    "html": b"<html><body>Too Many Requests</body></html>",
    "empty": b"",
}
OVERLOADED = {"anthropic": 529, "gemini": 503, "bedrock": 503}
"""How each of these dialects says it is overloaded."""


def cooling(dialect: str, case: str) -> str:
    """The client model of a turn whose fault cools its deployment down for seconds (a retry-after):
    one of `own_pools`."""
    return f"{dialect}-cooling-{case}"


@pytest.fixture(scope="module")
def own_pools() -> tuple[str, ...]:
    """Each cooling turn of this module has a pool of its own (conftest.py): the next flow, and
    the next test, are served at once, not after the cooldown."""
    return (*(cooling(d, f"429-{s}") for d in DIALECTS for s in ("stream", "whole")),
            cooling("anthropic", "sdk-429"),
            *(cooling(d, "overloaded") for d in OVERLOADED),
            *(cooling(d, f"429-{body}") for d in DIALECTS for body in ODD_ERROR_BODIES))


@pytest.fixture(autouse=True)
def _no_leftover_faults(fault_upstream: FaultUpstream) -> Iterator[None]:
    yield
    fault_upstream.forget_plans()


def expected_text(dialect: str) -> str:
    """What the client reads from the dialect's default recorded stream, offline."""
    return text_of(
        client_stream(dialect, translate(dialect, translation_for(dialect), [stream_data(dialect)]))
    )


def stream_turn(proxy: MitmDump, dialect: str) -> list[Any]:
    return list(sdk(proxy).responses.create(model=f"{dialect}-turn", input="hello", stream=True))


def raw_turn(proxy: MitmDump, model: str, stream: bool = True) -> httpx.Response:
    with httpx.Client(timeout=30) as client:
        return client.post(
            f"{proxy.url}/v1/responses",
            json={"model": model, "input": "hello", "stream": stream},
            headers={"authorization": f"Bearer {CLIENT_KEY}"},
        )


def assert_next_flow_works(proxy: MitmDump, dialect: str = "anthropic") -> None:
    events_ = stream_turn(proxy, dialect)
    assert events_[-1].type == "response.completed", [e.type for e in events_]
    assert "".join(e.delta for e in events_ if e.type == "response.output_text.delta") == expected_text(
        dialect
    )
    assert proxy.returncode is None, "mitmdump died"


def assert_responses_error(response: httpx.Response, status: int, code: str | None = None) -> dict[str, Any]:
    assert response.status_code == status, response.text[:500]
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"}, body
    error = body["error"]
    assert isinstance(error["message"], str) and error["message"]
    assert isinstance(error["code"], str) and error["code"]
    assert isinstance(error["type"], str) and error["type"]
    if code is not None:
        assert error["code"] == code, error
    return error


def sse_payloads(response: httpx.Response) -> list[dict[str, Any]]:
    assert response.headers["content-type"].startswith("text/event-stream")
    return client_stream("anthropic", response.content)  # framing, one terminal, SDK-valid


# -- slow, stalled, cut ---------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", DIALECTS)
def test_slow_start_still_gives_the_whole_stream(
    gateway: MitmDump, fault_upstream: FaultUpstream, dialect: str
) -> None:
    fault = Fault("slow_start", seconds=1.5)
    fault_upstream.plan(fault)
    assert_next_flow_works(gateway, dialect)
    assert fault.held.is_set() and not fault.holding.is_set()  # it was slow, and over before the end
    assert_next_flow_works(gateway, dialect)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_stall_mid_stream_still_completes_with_every_event(
    gateway: MitmDump, fault_upstream: FaultUpstream, dialect: str
) -> None:
    # past the first content: the opening events alone are held back (docs/pools.md "One attempt")
    fault = Fault("stall", seconds=1.0, after=4 if dialect == "anthropic" else 2)
    fault_upstream.plan(fault)
    seen: list[tuple[bool, str]] = []  # (the upstream was stalling when it arrived, its type)
    for event in sdk(gateway).responses.create(model=f"{dialect}-stall", input="hello", stream=True):
        seen.append((fault.holding.is_set(), event.type))
    assert seen[-1][1] == "response.completed"
    assert any(during for during, _ in seen), "the events before the stall were held back, not streamed"
    assert_next_flow_works(gateway, dialect)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_cut_before_any_content_is_the_give_up_answer(
    gateway: MitmDump, fault_upstream: FaultUpstream, dialect: str
) -> None:
    """Nothing had reached the client: it gets the error it retries, not a stream."""
    fault_upstream.plan(Fault("cut", after=0))
    error = assert_responses_error(raw_turn(gateway, f"{dialect}-cut"), 503, "server_error")
    assert "Please try again in" in error["message"]
    assert_next_flow_works(gateway, dialect)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_cut_mid_event_after_content_ends_the_stream_with_one_response_failed(
    gateway: MitmDump, fault_upstream: FaultUpstream, dialect: str
) -> None:
    fault_upstream.plan(Fault("cut", after=4 if dialect == "anthropic" else 2))
    # a client left waiting for an end that never comes fails on raw_turn's read timeout
    response = raw_turn(gateway, f"{dialect}-cut")
    assert response.status_code == 200  # the stream had started: the failure is in-band
    payloads = sse_payloads(response)
    assert payloads[-1]["type"] == "response.failed"
    assert payloads[-1]["response"]["error"]["message"]
    assert_next_flow_works(gateway, dialect)


def test_cut_stream_read_by_the_sdk_ends_with_a_failed_event(
    gateway: MitmDump, fault_upstream: FaultUpstream
) -> None:
    fault_upstream.plan(Fault("cut", after=4))
    events_ = list(sdk(gateway).responses.create(model="anthropic-cut", input="hello", stream=True))
    assert [e.type for e in events_].count("response.failed") == 1
    assert events_[-1].type == "response.failed"
    assert_next_flow_works(gateway)


# -- HTTP errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("stream", [True, False])
def test_429_is_a_503_server_error_with_its_retry_after(
    gateway: MitmDump, fault_upstream: FaultUpstream, dialect: str, stream: bool
) -> None:
    """What Codex retries after the wait it is told (docs/pools.md "What the client sees")."""
    fault_upstream.plan(Fault("status", status=429, headers={"retry-after": "7"}, message="slow down"))
    response = raw_turn(gateway, cooling(dialect, "429-stream" if stream else "429-whole"), stream)
    error = assert_responses_error(response, 503, "server_error")
    assert response.headers.get("retry-after") in ("6", "7")
    assert "slow down" in error["message"]
    assert_next_flow_works(gateway, dialect)


def test_429_reaches_the_sdk_as_a_server_error_with_retry_after(
    gateway: MitmDump, fault_upstream: FaultUpstream
) -> None:
    fault_upstream.plan(Fault("status", status=429, headers={"retry-after": "7"}))
    with pytest.raises(openai.InternalServerError) as caught:
        sdk(gateway).with_options(max_retries=0).responses.create(model=cooling("anthropic", "sdk-429"),
                                                                  input="hello", stream=True)
    assert caught.value.status_code == 503
    assert caught.value.response.headers["retry-after"] in ("6", "7")
    assert caught.value.code == "server_error"
    assert_next_flow_works(gateway)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_500_is_a_responses_shaped_server_error(
    gateway: MitmDump, fault_upstream: FaultUpstream, dialect: str
) -> None:
    fault_upstream.plan(Fault("status", status=500, message="boom"))
    error = assert_responses_error(raw_turn(gateway, f"{dialect}-500"), 503, "server_error")
    assert "boom" in error["message"]
    assert_next_flow_works(gateway, dialect)


@pytest.mark.parametrize(("dialect", "status"), OVERLOADED.items())
def test_overloaded_is_a_retryable_server_error_never_server_is_overloaded(
    gateway: MitmDump, fault_upstream: FaultUpstream, dialect: str, status: int
) -> None:
    """Codex ends a turn at once on `server_is_overloaded`; it retries a 503 `server_error` with
    a retry-after (docs/pools.md "What the client sees")."""
    fault_upstream.plan(Fault("status", status=status, headers={"retry-after": "2"}, message="overloaded"))
    response = raw_turn(gateway, cooling(dialect, "overloaded"))
    error = assert_responses_error(response, 503, "server_error")
    assert response.headers.get("retry-after") in ("1", "2")
    assert "overloaded" in error["message"]
    assert_next_flow_works(gateway, dialect)


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("name", ODD_ERROR_BODIES)
def test_429_with_an_odd_error_body_keeps_its_retry_after(
    gateway: MitmDump, fault_upstream: FaultUpstream, dialect: str, name: str
) -> None:
    """Codex retries a 503 `server_error` after its retry-after (docs/pools.md): whatever the
    body says, the wait must reach it, in a Responses-shaped body."""
    fault_upstream.plan(Fault("body", status=429, headers={"retry-after": "3"}, body=ODD_ERROR_BODIES[name]))
    response = raw_turn(gateway, cooling(dialect, f"429-{name}"))
    assert_responses_error(response, 503, "server_error")
    assert response.headers.get("retry-after") in ("2", "3")
    assert_next_flow_works(gateway, dialect)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_whole_answer_the_translator_cannot_read_is_a_responses_shaped_error(
    gateway: MitmDump, fault_upstream: FaultUpstream, dialect: str
) -> None:
    fault_upstream.plan(Fault("body", status=200, body=b'{"content": [{"type": "text", "text": [null]}]}'))
    response = raw_turn(gateway, f"{dialect}-odd-whole", stream=False)
    if response.status_code == 200:
        assert response.json()["object"] == "response"
        assert response.json()["status"] in ("completed", "incomplete", "failed")
    else:
        assert_responses_error(response, response.status_code)
    assert_next_flow_works(gateway, dialect)


# -- connection and TLS failures --------------------------------------------------------------------


@pytest.mark.parametrize(
    "model",
    ["refused-x", "garbage-x", "plainhttp-x"],
    ids=["connection-refused", "tls-garbage", "tls-plain-http"],
)
@pytest.mark.parametrize("stream", [True, False])
def test_unreachable_upstream_is_a_responses_shaped_503(gateway: MitmDump, model: str, stream: bool) -> None:
    assert_responses_error(raw_turn(gateway, model, stream), 503, "server_error")  # within the read timeout
    assert_next_flow_works(gateway)


def test_unreachable_upstream_reaches_the_sdk_as_an_api_status_error(gateway: MitmDump) -> None:
    with pytest.raises(openai.APIStatusError) as caught:
        sdk(gateway).with_options(max_retries=0).responses.create(model="garbage-x", input="hello",
                                                                  stream=True)
    assert caught.value.status_code == 503
    assert caught.value.code
    assert_next_flow_works(gateway)


# -- oversized answers ------------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", [c.dialect for c in conformance.every() if c.huge is not None])
def test_oversized_stream_arrives_whole(
    gateway: MitmDump, fault_upstream: FaultUpstream, dialect: str
) -> None:
    fault_upstream.plan(Fault("huge", size=HUGE))
    text = []
    last = None
    for event in sdk(gateway).responses.create(model=f"{dialect}-huge", input="hello", stream=True):
        if event.type == "response.output_text.delta":
            text.append(event.delta)
        last = event
    assert last is not None and last.type == "response.completed"
    assert len("".join(text)) == HUGE // 65536 * 65536 + len(expected_text(dialect))
    assert_next_flow_works(gateway, dialect)


def test_oversized_html_error_is_a_bounded_responses_shaped_503(
    gateway: MitmDump, fault_upstream: FaultUpstream
) -> None:
    fault_upstream.plan(Fault("huge_error", size=4 * 1024 * 1024))
    response = raw_turn(gateway, "anthropic-huge-error")
    error = assert_responses_error(response, 503, "server_error")
    assert len(response.content) < 64 * 1024, "the client got the upstream's whole HTML page"
    assert "overloaded" in error["message"]
    assert_next_flow_works(gateway)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_oversized_json_error_message_is_bounded(
    gateway: MitmDump, fault_upstream: FaultUpstream, dialect: str
) -> None:
    fault_upstream.plan(Fault("status", status=400, message="too long " * 200_000))
    response = raw_turn(gateway, f"{dialect}-huge-json-error")
    assert_responses_error(response, 400)
    assert len(response.content) < 64 * 1024, f"a {len(response.content)}-byte error reached the client"
    assert_next_flow_works(gateway, dialect)


# -- faults on the client's side ------------------------------------------------------------------


def _post_raw(proxy: MitmDump, body: bytes) -> httpx.Response:
    with httpx.Client(timeout=30) as client:
        return client.post(
            f"{proxy.url}/v1/responses",
            content=body,
            headers={"authorization": f"Bearer {CLIENT_KEY}", "content-type": "application/json"},
        )


@pytest.fixture
def own_gateway(tmp_path: Path, fault_upstream: FaultUpstream) -> Iterator[MitmDump]:
    """A mitmdump of its own, for a test that may trip the offline guard (the module's one must
    stay clean for test_no_flow_of_this_module_left_the_machine)."""
    routes = tmp_path / "routes.toml"
    dead = f"http://127.0.0.1:{free_port()}"
    routes.write_text(
        routes_toml(fault_upstream.url, refused_url=dead, garbage_url=dead, plain_http_url=dead)
    )
    with start_gateway(tmp_path / "conf", routes) as proxy:
        yield proxy


@pytest.mark.parametrize("depth", [1_400, 100_000])
def test_request_nested_too_deep_is_answered_in_responses_shape_and_never_forwarded(
    own_gateway: MitmDump, fault_upstream: FaultUpstream, depth: int
) -> None:
    """Python's json parser gives up (RecursionError, not ValueError) somewhere past a thousand
    levels; the client must still get an answer in its own dialect, and the request must not
    go on untranslated (to api.openai.com, with the client's credentials)."""
    gateway = own_gateway
    before = len(fault_upstream.received)
    guarded = gateway.log.count(GUARD_MARK)
    body = (
        b'{"model":"anthropic-deep","stream":true,"input":"hi","metadata":'
        + b"[" * depth
        + b"]" * depth
        + b"}"
    )
    response = _post_raw(gateway, body)
    assert gateway.log.count(GUARD_MARK) == guarded, "the request went on untranslated toward api.openai.com"
    if response.status_code == 200:
        assert sse_payloads(response)[-1]["type"] == "response.completed"
    else:
        assert_responses_error(response, response.status_code)
        assert 400 <= response.status_code < 600
        assert len(fault_upstream.received) == before
    assert_next_flow_works(gateway)


MALFORMED = {
    "cut-json": b'{"model":"anthropic-x","input":"hi',
    "binary": bytes([0xFF, 0xFE]) + b"{}",
    "invalid-utf8": b'{"model":"anthropic-x","input":"' + bytes([0xFF]) + b'"}',
}


@pytest.mark.parametrize("body", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_request_body_is_a_responses_shaped_400_and_not_forwarded(
    gateway: MitmDump, fault_upstream: FaultUpstream, body: bytes
) -> None:
    """(A body that names no model, such as `[1,2]`, `null` or `{"model": [...]}`, has no route
    when routes are chosen by model pattern, and goes on as sent by design: not tried here.)"""
    before = len(fault_upstream.received)
    guarded = gateway.log.count(GUARD_MARK)
    response = _post_raw(gateway, body)
    if gateway.log.count(GUARD_MARK) == guarded:
        assert_responses_error(response, 400)
    assert len(fault_upstream.received) == before
    assert_next_flow_works(gateway)


# -- the default stream of each dialect, so the helpers above are checked too -----------------------


@pytest.mark.parametrize("dialect", DIALECTS)
def test_each_dialect_streams_through_the_fault_gateway(gateway: MitmDump, dialect: str) -> None:
    assert expected_text(dialect) or dialect == "chat"  # the chat recording is a tool call only
    assert_next_flow_works(gateway, dialect)
    assert len(events(dialect)) > 2


def test_no_flow_of_this_module_left_the_machine(gateway: MitmDump, fault_upstream: FaultUpstream) -> None:
    assert_next_flow_works(gateway)
    assert GUARD_MARK not in gateway.log
    assert all(json.loads(r.body or b"null") is not None for r in fault_upstream.received)

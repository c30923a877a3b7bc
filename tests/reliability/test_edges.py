"""Correctness at the edges, through the real proxy: upstream redirects, vendor response headers,
a whole body answering a stream request, wrong field types in the client's request.

One mitmdump serves the module (conftest.py), as in test_faults.py; each test makes one upstream
answer oddly and checks what the openai SDK or raw httpx receives, then that the next turn works.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import openai
import pytest

from tests.reliability.conftest import CLIENT_KEY, DIALECTS, sdk
from tests.reliability.fault_upstream import Fault, FaultUpstream, error_body
from tests.reliability.test_faults import (
    assert_next_flow_works,
    assert_responses_error,
    raw_turn,
    sse_payloads,
)
from tests.support.mitmdump import MitmDump

pytestmark = pytest.mark.timeout(120)
EVERY_TARGET = (*DIALECTS, "responses")


@pytest.fixture(autouse=True)
def _no_leftover_faults(fault_upstream: FaultUpstream) -> Iterator[None]:
    yield
    fault_upstream.forget_plans()


# -- 3xx ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [302, 307, 308])
def test_upstream_redirect_is_a_502_naming_status_and_target_and_never_followed(
    gateway: MitmDump, fault_upstream: FaultUpstream, status: int
) -> None:
    """The openai SDK follows redirects: a 307/308 re-POSTs the whole conversation to the new
    host, a 302 makes it GET there and take whatever comes back as the turn."""
    target = f"{fault_upstream.url}/elsewhere/v1/responses"
    fault_upstream.plan(Fault("body", status=status, headers={"location": target}, body=b""))
    before = len(fault_upstream.received)
    with pytest.raises(openai.APIStatusError) as caught:
        list(sdk(gateway).responses.create(model="anthropic-redirect", input="hello", stream=True))
    assert caught.value.status_code == 502
    assert caught.value.code == "upstream_redirect"
    assert str(status) in caught.value.message and target in caught.value.message
    assert "location" not in caught.value.response.headers
    assert len(fault_upstream.received) == before + 1, "the client followed the redirect"
    assert_next_flow_works(gateway)


@pytest.mark.parametrize("dialect", EVERY_TARGET)
@pytest.mark.parametrize("stream", [True, False])
def test_upstream_redirect_of_every_target_is_a_responses_shaped_502(
    gateway: MitmDump, fault_upstream: FaultUpstream, dialect: str, stream: bool
) -> None:
    moved = {"location": "https://moved.example/v2"}
    fault_upstream.plan(Fault("body", status=301, headers=moved, body=b"{}"))
    response = raw_turn(gateway, f"{dialect}-redirect", stream)
    error = assert_responses_error(response, 502, "upstream_redirect")
    assert "301" in error["message"] and "https://moved.example/v2" in error["message"]
    assert "location" not in response.headers


# -- response headers ----------------------------------------------------------------------------

VENDOR_HEADERS = {
    "set-cookie": "__cf_bm=vendor-session-cookie; Domain=.vendor.example; HttpOnly",
    "anthropic-organization-id": "org-anthropic-operator-0001",
    "openai-organization": "org-openai-operator-0002",
    "openai-project": "proj-operator-0003",
    "anthropic-ratelimit-tokens-remaining": "123456",
    "x-amzn-bedrock-invocation-latency": "17",
    "x-goog-api-client": "vendor-internal",
    "server": "vendor-frontend/1.2",
    "cf-ray": "8f00000000000000-AMS",
    "x-ratelimit-remaining-requests": "41",
    "x-ratelimit-reset-tokens": "6ms",
    "request-id": "req_vendor_0123456789",
}
LEAKS = ("set-cookie", "anthropic-organization-id", "openai-organization", "openai-project",
         "anthropic-ratelimit-tokens-remaining", "x-amzn-bedrock-invocation-latency", "x-goog-api-client",
         "server", "cf-ray")


def assert_only_client_headers(response: httpx.Response) -> None:
    leaked = [name for name in LEAKS if name in response.headers]
    assert not leaked, f"vendor headers reached the client: {leaked}"
    assert response.headers["x-ratelimit-remaining-requests"] == "41"
    assert response.headers["x-ratelimit-reset-tokens"] == "6ms"
    assert response.headers["x-request-id"] == "req_vendor_0123456789"
    assert "request-id" not in response.headers


@pytest.mark.parametrize("dialect", EVERY_TARGET)
@pytest.mark.parametrize("stream", [True, False])
def test_vendor_response_headers_never_reach_the_client(
    gateway: MitmDump, fault_upstream: FaultUpstream, dialect: str, stream: bool
) -> None:
    fault_upstream.plan(Fault("stream", headers=VENDOR_HEADERS))
    response = raw_turn(gateway, f"{dialect}-headers", stream)
    assert response.status_code == 200, response.text[:500]
    assert_only_client_headers(response)
    if stream and dialect == "responses":  # the recorded OpenAI stream, passed on as it is
        assert b"response.completed" in response.content
    elif stream:
        assert sse_payloads(response)[-1]["type"] == "response.completed"
    else:
        assert response.json()["status"] == "completed"


@pytest.mark.parametrize("dialect", DIALECTS)
def test_error_answer_keeps_request_id_and_rate_limit_headers_only(
    gateway: MitmDump, fault_upstream: FaultUpstream, dialect: str
) -> None:
    # an error that passes on as it came (a 429 is tried again, or given up on: test_faults.py)
    fault_upstream.plan(Fault("status", status=400, headers=VENDOR_HEADERS))
    response = raw_turn(gateway, f"{dialect}-400-headers")
    assert_responses_error(response, 400)
    assert_only_client_headers(response)


@pytest.mark.parametrize(
    "headers",
    [{"x-huge": "h" * 1_000_000}, {f"x-vendor-{i}": "v" for i in range(10_000)}],
    ids=["one-1MB-header", "10000-headers"],
)
@pytest.mark.parametrize("stream", [True, False])
def test_oversized_upstream_headers_are_a_responses_shaped_error(
    gateway: MitmDump, fault_upstream: FaultUpstream, headers: dict[str, str], stream: bool
) -> None:
    """Past the upstream leg's head bound (128 KiB) the attempt fails (retried, else given up on:
    503); under it, past the client's bound, the head is refused (502)."""
    fault_upstream.plan(Fault("stream", headers=headers))
    response = raw_turn(gateway, "anthropic-big-headers", stream)
    if response.status_code == 503:
        error = assert_responses_error(response, 503, "server_error")
        assert "head" in error["message"]
    else:
        error = assert_responses_error(response, 502, "upstream_headers_too_large")
        assert "header" in error["message"]
    assert len(response.headers.raw) < 20
    assert_next_flow_works(gateway)


# -- a whole body answering a stream request -----------------------------------------------------

CONTEXT_OVERFLOW = "prompt is too long: 250000 tokens > 200000 maximum"


@pytest.mark.parametrize("dialect", DIALECTS)
def test_json_error_answering_a_stream_request_keeps_the_upstreams_message_and_code(
    gateway: MitmDump, fault_upstream: FaultUpstream, dialect: str
) -> None:
    """Some servers (vLLM, proxies in front of a vendor) answer a stream request they refuse with a
    200 JSON error body: the client must learn why, and Codex acts on the code."""
    _, body = error_body(dialect, 400, CONTEXT_OVERFLOW)
    fault_upstream.plan(Fault("body", status=200, body=body))
    events = list(sdk(gateway).responses.create(model=f"{dialect}-json-200", input="hello", stream=True))
    assert events[-1].type == "response.failed"
    error = events[-1].response.error
    assert error is not None
    assert error.code == "context_length_exceeded"
    assert CONTEXT_OVERFLOW in error.message
    assert_next_flow_works(gateway, dialect)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_whole_answer_to_a_stream_request_is_streamed_as_translated(
    gateway: MitmDump, fault_upstream: FaultUpstream, dialect: str
) -> None:
    fault_upstream.plan(Fault("whole"))
    events = list(sdk(gateway).responses.create(model=f"{dialect}-whole-200", input="hello", stream=True))
    assert events[-1].type == "response.completed"
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == "Hello whole."
    assert events[-1].response.usage is not None and events[-1].response.usage.output_tokens == 2


@pytest.mark.parametrize("dialect", DIALECTS)
def test_html_answering_a_stream_request_is_a_failure_quoting_the_page(
    gateway: MitmDump, fault_upstream: FaultUpstream, dialect: str
) -> None:
    page = b"<!DOCTYPE html><html><head><title>504 Gateway Time-out</title></head><body>nginx</body></html>"
    fault_upstream.plan(Fault("body", status=200, headers={"content-type": "text/html"}, body=page))
    response = raw_turn(gateway, f"{dialect}-html-200")
    # a failure before any content: tried again, else (retries off here) the give-up answer
    error = assert_responses_error(response, 503, "server_error")
    assert "HTML" in error["message"]
    assert "504 Gateway Time-out" in error["message"]
    assert_next_flow_works(gateway, dialect)


# -- wrong types in the client's request ----------------------------------------------------------


@pytest.mark.parametrize("dialect", EVERY_TARGET)
@pytest.mark.parametrize(
    ("item", "param"),
    [
        ({"type": "reasoning", "summary": 5}, "input[1].summary"),
        ({"type": "message", "role": "user", "content": [{"type": "input_text", "text": 5}]},
         "input[1].content[0].text"),
        ({"type": "message", "role": "user", "content": [{"type": ["input_text"], "text": "x"}]},
         "input[1].content[0].type"),
    ],
    ids=["reasoning-summary", "input-text", "part-type"],
)
def test_wrong_field_type_is_a_400_naming_its_path(
    gateway: MitmDump, fault_upstream: FaultUpstream, dialect: str, item: dict[str, object], param: str
) -> None:
    """A 500 makes Codex retry a request that can never succeed (docs/codex.md, Errors)."""
    before = len(fault_upstream.received)
    body = {"model": f"{dialect}-types", "stream": True,
            "input": [{"type": "message", "role": "user", "content": "hi"}, item]}
    with httpx.Client(timeout=30) as client:
        response = client.post(f"{gateway.url}/v1/responses", content=json.dumps(body),
                               headers={"authorization": f"Bearer {CLIENT_KEY}",
                                        "content-type": "application/json"})
    if dialect == "responses":  # passed as it is: OpenAI itself judges it
        assert response.status_code == 200
        return
    error = assert_responses_error(response, 400)
    assert error["param"] == param or param in error["message"], error
    assert len(fault_upstream.received) == before

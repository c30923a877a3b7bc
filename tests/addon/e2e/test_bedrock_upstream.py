"""Bedrock Converse through real mitmdump: a local Bedrock (plain HTTP on 127.0.0.1) that knows
the test credentials verifies the SigV4 signature of every request exactly as it arrived through
the proxy, and answers with recorded binary event streams; the `openai` SDK gets Responses SSE.

The proxies get AWS credentials the usual way (environment), never a profile or instance role;
the local Bedrock lives in `us-west-2`, which only `gateway_aws_region` names (the environment's
default region is another), so a request signed for the wrong region is turned away.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator

import boto3
import openai
import pytest
from botocore.config import Config
from botocore.credentials import Credentials

from tests.addon.e2e.conftest import CLIENT_KEY, StartProxy, reverse_client
from tests.addon.e2e.providers import (
    EVENTSTREAM,
    Bedrock,
    bedrock_events,
    bedrock_text,
    eventstream_chunks,
)
from tests.addon.e2e.upstream import Received, Reply, Upstream, json_reply, raw_stream
from tests.support.mitmdump import MitmDump
from translators.bedrock.auth import sign

pytestmark = pytest.mark.timeout(90)

ACCESS_KEY = "AKIDTESTE2EBEDROCK01"
SECRET_KEY = "e2e/test+secret0123456789abcdefghijklmnop"
API_KEY = "bedrock-api-key-e2e-0123456789abcdef"
REGION = "us-west-2"
MODEL = "us.anthropic.claude-sonnet-4-6"
TEXT = "bedrock/converse_stream_text.eventstream"
TOOL_USE = "bedrock/converse_stream_tool_use.eventstream"
REASONING = "bedrock/converse_stream_reasoning.eventstream"
TEMPERATURE_TOOL = {"type": "function", "name": "get_temperature", "description": "Temperature in a city.",
                    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}
CONVERSE_ANSWER = {"output": {"message": {"role": "assistant", "content": [{"text": "Paris."}]}},
                   "stopReason": "end_turn",
                   "usage": {"inputTokens": 11, "outputTokens": 3, "totalTokens": 14},
                   "metrics": {"latencyMs": 120}}
# the usual AWS chain, isolated: these keys only, no profile files, no instance metadata
AWS_ENV: dict[str, str | None] = {
    "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "AWS_SESSION_TOKEN": None,
    "AWS_BEARER_TOKEN_BEDROCK": None, "AWS_PROFILE": None, "AWS_CONFIG_FILE": "/nonexistent/aws-config",
    "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/aws-credentials", "AWS_EC2_METADATA_DISABLED": "true",
    "AWS_REGION": None, "AWS_DEFAULT_REGION": "eu-central-1",
}


def _stream(fixture: str = TEXT, cut_after: int = 0) -> Reply:
    return raw_stream(eventstream_chunks(fixture), EVENTSTREAM, delay=0.01, cut_after=cut_after)


def _default(received: Received) -> Reply:
    return _stream() if received.path.endswith("/converse-stream") else json_reply(CONVERSE_ANSWER)


@pytest.fixture(scope="module")
def bedrock() -> Bedrock:
    return Bedrock(ACCESS_KEY, SECRET_KEY, REGION, API_KEY)


@pytest.fixture(scope="module")
def upstream_server(bedrock: Bedrock) -> Iterator[Upstream]:
    with Upstream(guard=bedrock, default=_default) as server:
        yield server


@pytest.fixture(autouse=True)
def door(bedrock: Bedrock) -> Bedrock:
    bedrock.accepted.clear()
    bedrock.rejected.clear()
    return bedrock


def _proxy(start_proxy: StartProxy, upstream: Upstream, name: str, env: dict[str, str | None],
           key_env: str = "") -> MitmDump:
    """No key_env: the AWS chain signs (a local Bedrock gets no bearer key it does not name)."""
    return start_proxy(name, "reverse:https://api.openai.com", env={**AWS_ENV, **env},
                       gateway_upstream="bedrock", gateway_base_url=upstream.url, gateway_model=MODEL,
                       gateway_aws_region=REGION, gateway_key_env=key_env)


@pytest.fixture(scope="module")
def sigv4_proxy(start_proxy: StartProxy, upstream_server: Upstream) -> MitmDump:
    return _proxy(start_proxy, upstream_server, "bedrock-sigv4", {})


@pytest.fixture
def client(sigv4_proxy: MitmDump) -> Iterator[openai.OpenAI]:
    with reverse_client(sigv4_proxy) as sdk:
        yield sdk


# -- the local Bedrock is faithful --------------------------------------------------------------

def test_the_local_bedrock_accepts_botocores_own_requests(upstream: Upstream, door: Bedrock,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Positive control: boto3's own ConverseStream call, signed by botocore, is let in and its
    event stream parses in boto3."""
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)  # boto3 would prefer it
    runtime = boto3.client("bedrock-runtime", endpoint_url=upstream.url, region_name=REGION,
                           aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY,
                           config=Config(retries={"max_attempts": 1}))
    answer = runtime.converse_stream(modelId=MODEL, messages=[{"role": "user", "content": [{"text": "hi"}]}])
    text = "".join(event["contentBlockDelta"]["delta"].get("text", "") for event in answer["stream"]
                   if "contentBlockDelta" in event)
    assert text == bedrock_text(TEXT)
    assert door.accepted == ["sigv4"]


def test_the_local_bedrock_refuses_a_body_changed_after_signing(upstream: Upstream, door: Bedrock) -> None:
    """Negative control: the verifier notices one changed byte."""
    url = f"{upstream.url}/model/{MODEL.replace(':', '%3A')}/converse-stream"
    body = b'{"messages": [{"role": "user", "content": [{"text": "hi"}]}]}'
    headers = {"content-type": "application/json"}
    headers.update(sign("POST", url, headers, body, region=REGION,
                        credentials=Credentials(ACCESS_KEY, SECRET_KEY),
                        now=datetime.datetime.now(datetime.UTC)))
    lowered = {k.lower(): v for k, v in headers.items()} | {"host": url.split("/")[2]}
    path = url.split(url.split("/")[2], 1)[1]
    assert door.check(Received("POST", path, lowered, body, 0.0)) == (None, "sigv4")
    reason, _ = door.check(Received("POST", path, lowered, body.replace(b"hi", b"ho"), 0.0))
    assert reason is not None and "does not match" in reason


# -- through mitmdump, SigV4 ---------------------------------------------------------------------

def test_signed_stream_reaches_the_sdk_as_responses_events(client: openai.OpenAI, upstream: Upstream,
                                                          door: Bedrock) -> None:
    upstream.plan(_stream(TEXT))
    with client.responses.stream(model="gpt-5.5", input="What is the capital of France?") as stream_:
        types = [event.type for event in stream_]
        final = stream_.get_final_response()
    assert types[0] == "response.created" and types[-1] == "response.completed"
    assert final.output_text == bedrock_text(TEXT)
    assert (final.usage.input_tokens, final.usage.output_tokens) == (13, 82)
    assert door.accepted == ["sigv4"] and door.rejected == []


def test_signed_request_arrives_unchanged_and_asks_for_an_event_stream(client: openai.OpenAI,
                                                                      upstream: Upstream) -> None:
    list(client.responses.create(model="gpt-5.5", input="hi", stream=True))
    (received,) = upstream.received
    assert received.path == "/model/us.anthropic.claude-sonnet-4-6/converse-stream"
    assert received.headers["accept"] == EVENTSTREAM
    assert received.headers["content-type"] == "application/json"
    assert received.headers["authorization"].startswith(
        f"AWS4-HMAC-SHA256 Credential={ACCESS_KEY}/")
    assert f"/{REGION}/bedrock/aws4_request" in received.headers["authorization"]
    assert CLIENT_KEY not in json.dumps(received.headers)
    assert "model" not in received.json  # Converse names the model in the path only


def test_tool_use_stream_becomes_a_function_call(client: openai.OpenAI, upstream: Upstream) -> None:
    upstream.plan(_stream(TOOL_USE))
    with client.responses.stream(model="gpt-5.5", input="temperature in the capital of France?",
                                 tools=[TEMPERATURE_TOOL]) as stream_:
        final = stream_.get_final_response()
    (call,) = [item for item in final.output if item.type == "function_call"]
    recorded = "".join(payload["delta"]["toolUse"]["input"] for kind, payload in bedrock_events(TOOL_USE)
                       if kind == "contentBlockDelta" and "toolUse" in payload["delta"])
    assert call.name == "get_temperature"
    assert json.loads(call.arguments) == json.loads(recorded)
    assert final.status == "completed"


def test_reasoning_stream_keeps_the_summary_and_the_signature(client: openai.OpenAI,
                                                              upstream: Upstream) -> None:
    upstream.plan(_stream(REASONING))
    with client.responses.stream(model="gpt-5.5", input="Hello", reasoning={"effort": "low"}) as stream_:
        final = stream_.get_final_response()
    (reasoning,) = [item for item in final.output if item.type == "reasoning"]
    thought = "".join(payload["delta"]["reasoningContent"].get("text", "")
                      for kind, payload in bedrock_events(REASONING)
                      if kind == "contentBlockDelta" and "reasoningContent" in payload["delta"])
    assert reasoning.summary[0].text == thought
    assert reasoning.encrypted_content  # the signature, for the next turn
    assert final.output_text == bedrock_text(REASONING)


def test_non_streamed_request_is_signed_and_gets_a_response_object(client: openai.OpenAI, upstream: Upstream,
                                                                   door: Bedrock) -> None:
    response = client.responses.create(model="gpt-5.5", input="capital of France?", stream=False)
    assert (response.status, response.output_text) == ("completed", "Paris.")
    (received,) = upstream.received
    assert received.path.endswith("/converse")
    assert received.headers["accept"] == "application/json"
    assert door.accepted == ["sigv4"]


def test_stream_cut_mid_frame_ends_with_response_failed(client: openai.OpenAI, upstream: Upstream) -> None:
    upstream.plan(_stream(TEXT, cut_after=9))
    events = list(client.responses.create(model="gpt-5.5", input="hi", stream=True))
    assert events[0].type == "response.created"
    assert events[-1].type == "response.failed"
    client.responses.create(model="gpt-5.5", input="next", stream=False)  # the proxy serves on


# -- through mitmdump, other credentials ---------------------------------------------------------

def test_a_wrong_secret_is_refused_by_bedrock_and_reaches_the_sdk_as_a_403(
        start_proxy: StartProxy, upstream: Upstream, door: Bedrock) -> None:
    proxy = _proxy(start_proxy, upstream, "bedrock-wrong-secret", {"AWS_SECRET_ACCESS_KEY": "not-the-secret"})
    with reverse_client(proxy) as sdk, pytest.raises(openai.PermissionDeniedError) as caught:
        sdk.responses.create(model="gpt-5.5", input="hi", stream=True)
    assert caught.value.status_code == 403
    assert caught.value.body["code"] == "permission_denied"
    assert door.rejected == ["the request signature does not match (something changed after signing)"]


def test_bedrock_api_key_is_sent_as_bearer_to_a_loopback_upstream(
        start_proxy: StartProxy, upstream: Upstream, door: Bedrock) -> None:
    """`sign` sends a bearer key over HTTPS only, or to a loopback host (the local Bedrock)."""
    proxy = _proxy(start_proxy, upstream, "bedrock-bearer", {
        "AWS_BEARER_TOKEN_BEDROCK": API_KEY, "AWS_ACCESS_KEY_ID": None, "AWS_SECRET_ACCESS_KEY": None},
        key_env="AWS_BEARER_TOKEN_BEDROCK")
    with reverse_client(proxy) as sdk, sdk.responses.stream(model="gpt-5.5", input="hi") as stream_:
        final = stream_.get_final_response()
    assert final.output_text == bedrock_text(TEXT)
    (received,) = upstream.received
    assert received.headers["authorization"] == f"Bearer {API_KEY}"
    assert "x-amz-date" not in received.headers
    assert door.accepted == ["bearer"]


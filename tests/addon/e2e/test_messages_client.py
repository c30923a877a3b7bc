"""The anthropic SDK as a client, through real mitmdump in reverse mode, to each upstream's fake
(docs/claude-code.md "Through the gateway"): `claude-via-<dialect>` is routed to that dialect's
fake; any other model goes on untouched to the reverse target, which stands in for Anthropic."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import anthropic
import httpx
import pytest

from tests.data import DATA
from tests.e2e.targets import TARGETS, Target, has_tool_result, write_routes
from tests.support.fake_upstream import (
    FakeUpstream,
    Reply,
    anthropic_message,
    anthropic_text,
    bedrock_message,
    chat_message,
    count_reply,
    empty_reply,
    gemini_message,
    is_count,
    json_reply,
    sse_reply,
)
from tests.support.mitmdump import MitmDump
from tests.translators.messages_client.sdk import validate_stream

pytestmark = pytest.mark.timeout(120)

CLIENT_KEY = "sk-ant-client-key-0123456789"
TEXT = "hello from the upstream"
TOOL = {"name": "exec_command", "description": "Run a command.",
        "input_schema": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}}
"""The tool each fake calls (tests/e2e/targets.py `TOOL`, with `{"cmd": "ls"}`)."""
WHOLE = {"anthropic": lambda text: anthropic_message(text), "chat": lambda text: chat_message(text),
         "gemini": lambda text: gemini_message(text), "bedrock": lambda text: bedrock_message(text)}
"""A whole (non-streamed) text answer in each dialect."""
OVERRIDES: dict[str, Reply] = {}
"""dialect -> the reply its fake sends next instead of its script (errors)."""
COUNTED = {"anthropic": 1201, "gemini": 1202, "bedrock": 1203}
"""What each fake's token-count endpoint answers (Chat has none)."""


def streamed(dialect: str, body: Any, path: str) -> bool:
    if dialect in ("anthropic", "chat"):
        return bool(isinstance(body, dict) and body.get("stream"))
    return "stream" in path  # Gemini streamGenerateContent, Bedrock converse-stream


def script_for(target: Target) -> Any:
    def answer(body: Any, headers: Mapping[str, str], path: str) -> Reply:
        if not isinstance(body, dict):
            return empty_reply(404)  # a models-endpoint GET: the gateway falls back to its table
        if target.dialect in OVERRIDES:
            return OVERRIDES.pop(target.dialect)
        if not target.admits(headers):
            return empty_reply(403)
        if is_count(target.dialect, path):
            return count_reply(target.dialect, COUNTED[target.dialect])
        if not streamed(target.dialect, body, path):
            return WHOLE[target.dialect](TEXT)
        if "exec_command" in json.dumps(body) and not has_tool_result(body):
            return target.tool_call(30)
        return target.text(TEXT, 30)

    return answer


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("messages")
    anthropic_itself = FakeUpstream(lambda body, headers, path: anthropic_message("from anthropic itself"))
    fakes = {t.dialect: FakeUpstream(script_for(t)) for t in TARGETS}
    with anthropic_itself:
        for fake in fakes.values():
            fake.__enter__()
        try:
            write_routes(tmp / "routes.toml", [
                {"model": f"claude-via-{t.dialect}", "upstream": t.dialect, "base_url": fakes[t.dialect].url,
                 "target_model": t.model, **t.route} for t in TARGETS])
            env: dict[str, str | None] = {k: v for t in TARGETS for k, v in t.env.items()}
            with MitmDump(tmp / "mitm", mode=f"reverse:{anthropic_itself.url}",
                          options={"gateway_config": str(tmp / "routes.toml"),
                                   "gateway_capabilities": "table",
                                   "gateway_capture_dir": str(tmp / "captures")}, env=env) as mitm:
                yield {"mitm": mitm, "fakes": fakes, "anthropic": anthropic_itself,
                       "captures": tmp / "captures"}
        finally:
            for fake in fakes.values():
                fake.__exit__(None, None, None)


@pytest.fixture
def client(world: dict[str, Any]) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=world["mitm"].url, api_key=CLIENT_KEY, max_retries=0)


def raw_post(world: dict[str, Any], body: dict[str, Any],
             path: str = "/v1/messages?beta=true") -> httpx.Response:
    return httpx.post(world["mitm"].url + path, json=body, timeout=60,
                      headers={"x-api-key": CLIENT_KEY, "anthropic-version": "2023-06-01"})


def ask(model: str, **extra: Any) -> dict[str, Any]:
    return {"model": model, "max_tokens": 1024, "messages": [{"role": "user", "content": "hi"}], **extra}


@pytest.mark.parametrize("target", TARGETS, ids=str)
def test_a_streamed_answer_validates_event_by_event(world: dict[str, Any], target: Target) -> None:
    answer = raw_post(world, ask(f"claude-via-{target.dialect}", stream=True))
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/event-stream")
    message, error = validate_stream(answer.content)
    assert error is None
    assert message is not None
    assert [b.text for b in message.content if b.type == "text"] == [TEXT]
    assert message.model == f"claude-via-{target.dialect}"  # the client's own name for it
    assert message.stop_reason == "end_turn"


@pytest.mark.parametrize("target", TARGETS, ids=str)
def test_the_sdk_stream_helper_reads_the_final_message(client: anthropic.Anthropic, target: Target) -> None:
    with client.messages.stream(**ask(f"claude-via-{target.dialect}")) as stream:
        final = stream.get_final_message()
    assert final.content[0].type == "text" and final.content[0].text == TEXT


@pytest.mark.parametrize("target", TARGETS, ids=str)
def test_a_whole_answer_is_a_message(client: anthropic.Anthropic, target: Target) -> None:
    message = client.messages.create(**ask(f"claude-via-{target.dialect}"))
    assert message.type == "message" and message.role == "assistant"
    assert [b.text for b in message.content if b.type == "text"] == [TEXT]
    assert message.usage.output_tokens > 0


@pytest.mark.parametrize("target", TARGETS, ids=str)
def test_a_tool_call_comes_back_as_tool_use_and_its_result_goes_up(
        world: dict[str, Any], client: anthropic.Anthropic, target: Target) -> None:
    model = f"claude-via-{target.dialect}"
    with client.messages.stream(**ask(model, tools=[TOOL])) as stream:
        first = stream.get_final_message()
    (call,) = [b for b in first.content if b.type == "tool_use"]
    assert first.stop_reason == "tool_use"
    assert (call.name, call.input) == ("exec_command", {"cmd": "ls"})
    before = len(world["fakes"][target.dialect].requests)
    result = {"type": "tool_result", "tool_use_id": call.id, "content": "sunny"}
    history = [{"role": "user", "content": "hi"},
               {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
               {"role": "user", "content": [result]}]
    with client.messages.stream(model=model, max_tokens=1024, tools=[TOOL], messages=history) as stream:
        second = stream.get_final_message()
    assert second.content[-1].type == "text" and second.content[-1].text == TEXT
    sent = world["fakes"][target.dialect].requests[before:]
    assert any("sunny" in r.body.decode() for r in sent)


@pytest.mark.parametrize("target", TARGETS, ids=str)
def test_the_clients_key_never_reaches_another_vendor(world: dict[str, Any], target: Target) -> None:
    raw_post(world, ask(f"claude-via-{target.dialect}", stream=True))
    for received in world["fakes"][target.dialect].requests:
        assert CLIENT_KEY not in json.dumps(received.headers)
        assert "x-api-key" not in received.headers or target.dialect == "anthropic"


def test_a_model_without_a_route_goes_on_untouched_but_for_the_clients_key(world: dict[str, Any]) -> None:
    """The reverse target here is a loopback stand-in, not Anthropic's own host: the request goes
    there as sent, without the key, which belongs to Anthropic alone (tests/addon/serve/test_client_side.py
    shows it kept for api.anthropic.com)."""
    answer = raw_post(world, ask("claude-opus-5-5"))
    assert answer.status_code == 200
    assert answer.json()["content"][0]["text"] == "from anthropic itself"
    (received,) = world["anthropic"].requests[-1:]
    assert "x-api-key" not in received.headers
    assert received.headers["anthropic-version"] == "2023-06-01"
    assert json.loads(received.body) == ask("claude-opus-5-5")


@pytest.mark.parametrize("target", TARGETS, ids=str)
def test_a_429_with_retry_after_is_retried_after_it(world: dict[str, Any], client: anthropic.Anthropic,
                                                    target: Target) -> None:
    """The upstream leg tries again once the upstream's `retry-after` passed (docs/pools.md): the
    client gets the answer, with nothing of the 429."""
    fake = world["fakes"][target.dialect]
    before = len(fake.requests)
    OVERRIDES[target.dialect] = (429, {"content-type": "application/json", "retry-after": "1"},
                                 json.dumps({"error": {"message": "slow down"}}).encode())
    message = client.with_options(max_retries=0).messages.create(**ask(f"claude-via-{target.dialect}"))
    assert message.content[0].text == TEXT  # type: ignore[union-attr]
    assert len(fake.requests) - before >= 2


def test_an_overloaded_upstream_is_tried_again(client: anthropic.Anthropic) -> None:
    OVERRIDES["chat"] = json_reply(503, {"error": {"message": "overloaded"}})
    message = client.with_options(max_retries=0).messages.create(**ask("claude-via-chat"))
    assert message.content[0].text == TEXT  # type: ignore[union-attr]


def test_a_refused_request_is_an_anthropic_400(world: dict[str, Any]) -> None:
    answer = raw_post(world, {"model": "claude-via-chat", "messages": []})  # no max_tokens
    assert answer.status_code == 400
    assert answer.json()["type"] == "error"
    assert answer.json()["error"]["type"] == "invalid_request_error"
    assert "max_tokens" in answer.json()["error"]["message"]


def test_count_tokens_without_an_upstream_counter_answers_an_estimate(
        world: dict[str, Any], client: anthropic.Anthropic) -> None:
    before = len(world["fakes"]["chat"].requests)
    counted = client.messages.count_tokens(model="claude-via-chat",
                                           messages=[{"role": "user", "content": "hi " * 400}])
    assert counted.input_tokens >= 300
    assert len(world["fakes"]["chat"].requests) == before  # Chat Completions counts nothing


COUNT_ENDINGS = {"anthropic": "/v1/messages/count_tokens",
                 "gemini": "/v1beta/models/gemini-3-flash-preview:countTokens",
                 "bedrock": "/model/us.anthropic.claude-sonnet-4-6/count-tokens"}
"""Where each fake is asked to count (docs/claude-code.md "Token counts")."""


@pytest.mark.parametrize("dialect", sorted(COUNTED))
def test_count_tokens_is_the_upstreams_own_count(world: dict[str, Any], client: anthropic.Anthropic,
                                                 dialect: str) -> None:
    counted = client.messages.count_tokens(model=f"claude-via-{dialect}", system="Be brief.", tools=[TOOL],
                                           messages=[{"role": "user", "content": "count me"}])
    assert counted.input_tokens == COUNTED[dialect]
    sent = world["fakes"][dialect].requests[-1]
    assert (sent.method, sent.path) == ("POST", COUNT_ENDINGS[dialect])
    assert CLIENT_KEY not in json.dumps(sent.headers)  # the route's credentials, never the client's key
    body = json.loads(sent.body)
    words = json.dumps(body)
    assert "count me" in words and "Be brief." in words and "exec_command" in words
    if dialect == "anthropic":
        assert "max_tokens" not in body and body["model"] == "claude-sonnet-4-6"
    elif dialect == "gemini":
        assert body["generateContentRequest"]["model"] == "models/gemini-3-flash-preview"
    else:
        assert set(body["input"]["converse"]) <= {"messages", "system", "toolConfig",
                                                  "additionalModelRequestFields"}


def test_a_count_the_upstream_refuses_is_an_anthropic_error(client: anthropic.Anthropic) -> None:
    OVERRIDES["gemini"] = json_reply(400, {"error": {"code": 400, "status": "INVALID_ARGUMENT",
                                                     "message": "Request contains an invalid argument."}})
    with pytest.raises(anthropic.BadRequestError) as refused:
        client.messages.count_tokens(model="claude-via-gemini", messages=[{"role": "user", "content": "hi"}])
    assert refused.value.body["type"] == "error"  # type: ignore[index]
    assert "invalid argument" in refused.value.message


def test_a_count_answer_that_is_no_count_is_a_502_in_anthropics_shape(client: anthropic.Anthropic) -> None:
    OVERRIDES["anthropic"] = json_reply(200, {"id": "msg_1", "type": "message"})
    with pytest.raises(anthropic.APIStatusError) as failed:
        client.messages.count_tokens(model="claude-via-anthropic",
                                     messages=[{"role": "user", "content": "hi"}])
    assert failed.value.status_code == 502
    assert failed.value.body["type"] == "error"  # type: ignore[index]
    assert "input_tokens" in failed.value.message


def test_models_lists_the_routed_models(client: anthropic.Anthropic) -> None:
    listed = [m.id for m in client.models.list()]
    assert listed == [f"claude-via-{t.dialect}" for t in TARGETS]
    assert client.models.retrieve("claude-via-chat").id == "claude-via-chat"


def test_an_upstream_failing_mid_stream_ends_with_one_error_event(world: dict[str, Any]) -> None:
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    head = [chunk for chunk in anthropic_text(TEXT)[2]][:4]  # message_start and a text block begun
    OVERRIDES["anthropic"] = sse_reply([*head, f"event: error\ndata: {json.dumps(overloaded)}\n\n".encode()])
    answer = raw_post(world, ask("claude-via-anthropic", stream=True))
    assert answer.status_code == 200  # the stream had begun
    _message, error = validate_stream(answer.content)
    assert error is not None and error["error"]["type"] == "overloaded_error"


def test_a_capture_says_its_client_and_keeps_no_user_metadata(world: dict[str, Any]) -> None:
    raw_post(world, ask("claude-via-chat", stream=True, metadata={"user_id": "device-42-account-7"}))
    folders = sorted(Path(world["captures"]).iterdir(), key=lambda p: p.stat().st_mtime)
    meta = json.loads((folders[-1] / "capture.json").read_text())
    assert (meta["client"], meta["dialect"]) == ("messages", "chat")
    request = json.loads((folders[-1] / "request.json").read_text())
    assert "metadata" not in request
    assert request["messages"] == [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize(("dialect", "limit"), [("chat", 8192), ("gemini", 65_536)])
def test_claude_codes_real_request_goes_out_fitted_to_the_model(world: dict[str, Any], dialect: str,
                                                                 limit: int) -> None:
    """Claude Code 2.1.328's `max_tokens: 128000` reaches deepseek-chat as 8192 and Gemini 3 as
    65536, its system message after the user's turn first on Chat (docs/models.md "Output limits",
    docs/chat.md "System first")."""
    raw = json.loads((DATA / "claude_code" / "request_say_hi.json").read_bytes())
    answer = raw_post(world, {**raw, "model": f"claude-via-{dialect}"})
    assert answer.status_code == 200, answer.text
    sent = json.loads(world["fakes"][dialect].requests[-1].body)
    if dialect == "chat":
        assert sent["max_tokens"] == limit
        assert [m["role"] for m in sent["messages"]] == ["system", "user"]
        assert "# Environment" in sent["messages"][0]["content"]
    else:
        assert sent["generationConfig"]["maxOutputTokens"] == limit

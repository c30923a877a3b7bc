"""The gateway in front of a real open-source Chat Completions server with a real model:
llama-cpp-python 0.3.36's OpenAI server and SmolLM2-135M-Instruct (tests/support/chat_server.py,
docs/real-servers.md), through real mitmdump + addon/gateway.py (`gateway_upstream=chat`, reverse
mode), with the `openai` SDK speaking Responses and, last, the real Codex CLI.

What is asserted is what the gateway did, never what a 135M model happens to write: the answer's
status, every streamed event valid for the SDK's own type and in a valid order, the upstream request
as the saved flow holds it (`-w`), the flow's mark. Where the server constrains the model (a grammar
for a named tool's arguments or a JSON schema) its output is checked against that constraint.

The first run on a machine builds llama-cpp-python (13 to 25 minutes on 2 cores; the `chat_server`
fixture says so on the terminal); the per-test timeout leaves that setup out (`func_only`).
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai
import pytest
from mitmproxy import exceptions, http, io
from openai.types.chat import completion_create_params
from openai.types.responses import Response
from pydantic import TypeAdapter

from addon.observe import flowinfo
from tests.support.chat_server import ChatServer
from tests.support.codex_cli import codex_mitmdump, openai_provider_setup, run_codex_exec
from tests.support.fake_upstream import FakeUpstream, refuse_everything
from tests.support.mitmdump import GATEWAY, MitmDump
from tests.translators.streamcheck import events, validate_event

pytestmark = [pytest.mark.real_chat_server, pytest.mark.timeout(900, func_only=True)]

REVERSE = "reverse:https://api.openai.com"
CLIENT_MODEL = "gpt-5.5"
"""What the client asks for; the route sends every model to the server's one."""
CLIENT_KEY = "sk-client-real-server-0123456789"
REQUEST_TIMEOUT = 600.0
"""A generous bound for one answer: SmolLM2-135M on a busy 2-core machine reads a Codex prompt
(about 6,000 tokens) in one to several minutes."""
SHORT = 24
"""max_output_tokens of the text answers: enough to see deltas, little to wait for."""

WEATHER = {
    "type": "function", "name": "get_weather", "description": "The current weather in a city.",
    # an enum, so the grammar the server builds from the schema leaves the model a choice of two
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "enum": ["Paris", "Tokyo"]}},
                   "required": ["city"], "additionalProperties": False},
    "strict": True,
}
CAPITAL = {
    "type": "json_schema", "name": "capital", "strict": True,
    "schema": {"type": "object", "properties": {"capital": {"type": "string", "enum": ["Paris", "Rome"]}},
               "required": ["capital"], "additionalProperties": False},
}
CREATED, IN_PROGRESS = "response.created", "response.in_progress"
FINISHED = ("response.completed", "response.incomplete")
FAILED = ("response.failed", "error")
CHAT_REQUEST = {True: TypeAdapter(completion_create_params.CompletionCreateParamsStreaming),
                False: TypeAdapter(completion_create_params.CompletionCreateParamsNonStreaming)}


# -- the saved flows ---------------------------------------------------------------------------------


def _chat_flows(path: Path) -> list[http.HTTPFlow]:
    """The translated turns `-w` has written so far (the file is flushed after every flow and can be
    read while the proxy runs: docs/mitmproxy.md "Saving flows")."""
    if not path.exists():
        return []
    with path.open("rb") as f:
        return [flow for flow in io.FlowReader(f).stream()
                if isinstance(flow, http.HTTPFlow) and flowinfo.KEY in flow.metadata
                and flow.request.path.endswith("/chat/completions")]


def wait_for_flows(path: Path, count: int, timeout: float = 60.0) -> list[http.HTTPFlow]:
    """The first `count` translated turns; the client may see its last byte a moment before the
    proxy's `response` hook has saved the flow."""
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(exceptions.FlowReadException):  # a record being written
            flows = _chat_flows(path)
            if len(flows) >= count:
                return flows
        assert time.monotonic() < deadline, f"{path} holds fewer than {count} translated turns"
        time.sleep(0.05)


@dataclass
class Gateway:
    proxy: MitmDump
    saved: Path
    server: ChatServer

    def count(self) -> int:
        return len(wait_for_flows(self.saved, 0))

    @contextlib.contextmanager
    def turns(self, expected: int = 1) -> Iterator[list[http.HTTPFlow]]:
        """`with gateway.turns(2) as flows:` runs the block, then fills `flows` with the translated
        turns it caused, as saved."""
        before = self.count()
        flows: list[http.HTTPFlow] = []
        yield flows
        flows += wait_for_flows(self.saved, before + expected)[before:]

    def context(self) -> str:
        return f"--- mitmdump ---\n{self.proxy.log[-6000:]}\n--- server ---\n{self.server.log[-6000:]}"


@pytest.fixture(scope="module")
def gateway(chat_server: ChatServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    """The route a user writes for a local llama-cpp-python: the chat dialect, the server's `/v1`
    base URL, the model id its /v1/models lists, no key."""
    folder = tmp_path_factory.mktemp("real-chat")
    saved = folder / "gateway.flows"
    options = {"gateway_upstream": "chat", "gateway_base_url": chat_server.base_url,
               "gateway_model": chat_server.model}
    with MitmDump(folder / "conf", mode=REVERSE, options=options, args=["-w", str(saved)]) as proxy:
        yield Gateway(proxy, saved, chat_server)


@pytest.fixture
def client(gateway: Gateway) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=f"{gateway.proxy.url}/v1", api_key=CLIENT_KEY, max_retries=0,
                       timeout=REQUEST_TIMEOUT) as sdk:
        yield sdk


# -- what the client got ----------------------------------------------------------------------------------


def stream(client: openai.OpenAI, gateway: Gateway, **params: Any) -> list[dict[str, Any]]:
    """One streamed request; every event parsed and validated against the SDK's type for it (strict
    pydantic, not the SDK's lenient `construct`). A non-2xx answer raises the SDK's error; a failed
    stream fails the test with the server's log, where this server writes what it refused."""
    with client.responses.with_streaming_response.create(model=CLIENT_MODEL, stream=True, **params) as answer:
        assert answer.status_code == 200
        payloads = events(answer.read())
    for payload in payloads:
        validate_event(payload)
    if payloads and payloads[-1]["type"] in FAILED:  # the error's message says what the server refused
        pytest.fail(f"the stream ended in {payloads[-1]['type']}: {json.dumps(payloads[-1])[-1500:]}\n"
                    f"{gateway.context()}")
    assert_well_ordered(payloads)
    return payloads


def whole(client: openai.OpenAI, **params: Any) -> dict[str, Any]:
    """One request without streaming; the body validated as the SDK's `Response`."""
    answer = client.responses.with_raw_response.create(model=CLIENT_MODEL, **params)
    assert answer.status_code == 200
    body = json.loads(answer.content)
    Response.model_validate(body)
    return body


def assert_well_ordered(payloads: list[dict[str, Any]]) -> None:
    """created, in_progress, then every output item opened once and closed once with its parts and
    deltas in between, then exactly one terminal event whose `output` is the items as they closed
    (docs/responses.md)."""
    kinds = [p["type"] for p in payloads]
    assert kinds[:2] == [CREATED, IN_PROGRESS], kinds
    assert kinds[-1] in FINISHED, kinds
    assert not [k for k in kinds if k in FINISHED + FAILED][1:], kinds
    assert [p["sequence_number"] for p in payloads] == list(range(len(payloads)))
    items: dict[int, str] = {}  # output_index -> "open" | "done"
    parts: dict[tuple[int, int], str] = {}
    closed: list[dict[str, Any]] = []
    for payload in payloads[2:-1]:
        kind, index = payload["type"], payload.get("output_index")
        part = (index, payload["content_index"]) if "content_index" in payload else None
        if kind == "response.output_item.added":
            assert index not in items and index == len(items), kinds
            items[index] = "open"
        elif kind == "response.output_item.done":
            assert items.get(index) == "open", kinds
            assert all(state == "done" for (i, _), state in parts.items() if i == index), kinds
            items[index] = "done"
            closed.append(payload["item"])
        elif kind == "response.content_part.added":
            assert items.get(index) == "open" and part not in parts, kinds
            parts[part] = "open"
        elif kind == "response.content_part.done":
            assert parts.get(part) == "open", kinds
            parts[part] = "done"
        elif part is not None and "summary_index" not in payload:
            assert parts.get(part) == "open", kinds  # a text delta or done inside its open part
        elif index is not None:
            assert items.get(index) == "open", kinds
    assert set(items.values()) <= {"done"}, kinds
    assert payloads[-1]["response"]["output"] == closed


def final(payloads: list[dict[str, Any]]) -> dict[str, Any]:
    return payloads[-1]["response"]


def assert_answered(response: dict[str, Any]) -> None:
    """Completed, or cut by the output limit the test set (and saying so)."""
    if response["status"] == "incomplete":
        assert response["incomplete_details"] == {"reason": "max_output_tokens"}, response
    else:
        assert response["status"] == "completed", response


def output_text(response: dict[str, Any]) -> str:
    return "".join(part["text"] for item in response["output"] if item["type"] == "message"
                   for part in item["content"] if part["type"] == "output_text")


# -- what the server got ----------------------------------------------------------------------------------


def upstream_body(flow: http.HTTPFlow) -> dict[str, Any]:
    """The Chat request as sent (the saved flow's request is the translated one), valid for the
    openai SDK's own `CompletionCreateParams`."""
    body = flow.request.json()
    CHAT_REQUEST[bool(body.get("stream"))].validate_python(body)
    return body


def upstream_chunks(flow: http.HTTPFlow) -> list[dict[str, Any]]:
    """The server's own stream chunks, as the flow's metadata keeps them."""
    raw = flow.metadata["gateway.upstream_response"].decode()
    return [json.loads(line[5:]) for line in raw.splitlines()
            if line.startswith("data:") and line[5:].strip() not in ("", "[DONE]")]


def assert_clean(flow: http.HTTPFlow) -> None:
    """A flow the gateway translated without loss or error is not marked (docs/mitmproxy.md)."""
    info = flow.metadata[flowinfo.KEY]
    assert flow.response is not None and flow.response.status_code == 200
    assert not flowinfo.lost_something(info), info
    assert not flow.marked, flow.comment


def assert_usage_as_sent(flow: http.HTTPFlow, response: dict[str, Any]) -> None:
    """A stream without usage (this server ignores `stream_options.include_usage`) gives a Response
    without usage, never zeros, and a note on the flow."""
    if any(chunk.get("usage") for chunk in upstream_chunks(flow)):
        return
    assert response.get("usage") is None, f"usage the server never sent: {response.get('usage')}"
    notes = flow.metadata[flowinfo.KEY].get("notes", [])
    assert any("usage" in note for note in notes), flow.metadata[flowinfo.KEY]


def roles(body: dict[str, Any]) -> list[str]:
    return [m["role"] for m in body["messages"]]


def named_call(client: openai.OpenAI, gateway: Gateway) -> tuple[list[dict[str, Any]], http.HTTPFlow]:
    question = "What is the weather in Paris?"
    with gateway.turns() as flows:
        payloads = stream(client, gateway, input=question, tools=[WEATHER],
                          tool_choice={"type": "function", "name": "get_weather"}, max_output_tokens=64)
    return payloads, flows[0]


# -- the cases --------------------------------------------------------------------------------------------


def test_plain_answer_is_a_valid_response_with_the_servers_usage(client: openai.OpenAI,
                                                                 gateway: Gateway) -> None:
    with gateway.turns() as flows:
        response = whole(client, input="Say hello.", max_output_tokens=SHORT, temperature=0)
    assert_answered(response)
    assert [item["type"] for item in response["output"]] == ["message"]
    assert output_text(response)
    assert response["usage"]["input_tokens"] > 0 and response["usage"]["output_tokens"] > 0
    body = upstream_body(flows[0])
    assert body["messages"] == [{"role": "user", "content": "Say hello."}]
    assert body["model"] == gateway.server.model and "stream" not in body
    assert_clean(flows[0])


def test_streamed_answer_is_valid_events_in_order_without_made_up_usage(client: openai.OpenAI,
                                                                        gateway: Gateway) -> None:
    with gateway.turns() as flows:
        payloads = stream(client, gateway, input="Say hello.", max_output_tokens=SHORT, temperature=0)
    response = final(payloads)
    assert_answered(response)
    assert "response.output_text.delta" in [p["type"] for p in payloads]
    assert [item["type"] for item in response["output"]] == ["message"]
    deltas = "".join(p["delta"] for p in payloads if p["type"] == "response.output_text.delta")
    assert deltas == output_text(response)
    assert upstream_body(flows[0])["stream"] is True
    assert_usage_as_sent(flows[0], response)
    assert_clean(flows[0])


def test_named_tool_call_streams_a_function_call_with_the_grammar_bound_arguments(
        client: openai.OpenAI, gateway: Gateway) -> None:
    payloads, flow = named_call(client, gateway)
    kinds = [p["type"] for p in payloads]
    assert kinds[-1] == "response.completed"
    (call,) = final(payloads)["output"]
    assert call["type"] == "function_call" and call["name"] == "get_weather"
    # the server's grammar, built from the schema, holds the model to it
    assert json.loads(call["arguments"])["city"] in ("Paris", "Tokyo")
    assert "response.function_call_arguments.delta" in kinds
    (done,) = [p for p in payloads if p["type"] == "response.function_call_arguments.done"]
    assert done["arguments"] == call["arguments"]
    body = upstream_body(flow)
    assert body["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert [t["function"]["name"] for t in body["tools"]] == ["get_weather"]
    # the server repeats each call as the legacy `function_call`: a duplicate, nothing lost
    assert any(c["choices"][0]["delta"].get("function_call") for c in upstream_chunks(flow) if c["choices"])
    assert_clean(flow)


def test_tool_round_trip_sends_the_call_and_its_output_back_and_is_answered(
        client: openai.OpenAI, gateway: Gateway) -> None:
    payloads, _ = named_call(client, gateway)
    (call,) = final(payloads)["output"]
    history = [{"role": "user", "content": "What is the weather in Paris?"}, call,
               {"type": "function_call_output", "call_id": call["call_id"], "output": "18 C and sunny"}]
    with gateway.turns() as flows:
        response = final(stream(client, gateway, input=history, tools=[WEATHER], max_output_tokens=SHORT))
    assert_answered(response)
    body = upstream_body(flows[0])
    assert roles(body) == ["user", "assistant", "tool"]
    assistant, tool = body["messages"][1:]
    # content "" beside tool_calls: null is refused by this server's validator, a missing key
    # breaks its chat template (docs/chat.md)
    assert assistant["content"] == ""
    assert assistant["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": call["arguments"]}
    assert tool == {"role": "tool", "tool_call_id": assistant["tool_calls"][0]["id"],
                    "content": "18 C and sunny"}
    assert_clean(flows[0])


def test_multi_part_tool_output_reaches_the_server_as_one_string(client: openai.OpenAI,
                                                                gateway: Gateway) -> None:
    call = {"type": "function_call", "call_id": "call_weather_1", "name": "get_weather",
            "arguments": '{"city": "Paris"}'}
    output = [{"type": "input_text", "text": "18 C"}, {"type": "input_text", "text": "sunny"}]
    history = [{"role": "user", "content": "What is the weather in Paris?"}, call,
               {"type": "function_call_output", "call_id": "call_weather_1", "output": output}]
    with gateway.turns() as flows:
        response = final(stream(client, gateway, input=history, tools=[WEATHER], max_output_tokens=SHORT))
    assert_answered(response)
    (tool,) = [m for m in upstream_body(flows[0])["messages"] if m["role"] == "tool"]
    assert isinstance(tool["content"], str), tool  # this server takes a list for `user` only
    assert "18 C" in tool["content"] and "sunny" in tool["content"]
    assert_clean(flows[0])


def test_multi_part_developer_message_reaches_the_server_as_one_system_string(client: openai.OpenAI,
                                                                              gateway: Gateway) -> None:
    """Mid-conversation: joined into the one opening system message, after the instructions
    (docs/chat.md "System first")."""
    developer = {"role": "developer", "content": [{"type": "input_text", "text": "Answer briefly."},
                                                  {"type": "input_text", "text": "Answer in English."}]}
    history = [{"role": "user", "content": "Hi"}, developer, {"role": "user", "content": "Hi again"}]
    with gateway.turns() as flows:
        response = final(stream(client, gateway, input=history, instructions="You are terse.",
                                max_output_tokens=SHORT))
    assert_answered(response)
    body = upstream_body(flows[0])
    system = [m for m in body["messages"] if m["role"] == "system"]
    assert system == body["messages"][:1] and isinstance(system[0]["content"], str), body["messages"]
    said = system[0]["content"]
    assert "Answer briefly." in said and "Answer in English." in said
    assert_clean(flows[0])


def test_multi_part_user_message_is_answered(client: openai.OpenAI, gateway: Gateway) -> None:
    """The server's validator takes a list of parts for `user`, but SmolLM2's chat template (like many
    GGUF templates) adds `message['content']` to a string: a list there is a 500 "can only
    concatenate str (not "list") to str" (docs/real-servers.md)."""
    question = {"role": "user", "content": [{"type": "input_text", "text": "Name a colour."},
                                            {"type": "input_text", "text": "One word."}]}
    with gateway.turns() as flows:
        response = final(stream(client, gateway, input=[question], max_output_tokens=SHORT))
    assert_answered(response)
    (user,) = [m for m in upstream_body(flows[0])["messages"] if m["role"] == "user"]
    said = user["content"] if isinstance(user["content"], str) else json.dumps(user["content"])
    assert "Name a colour." in said and "One word." in said
    assert_clean(flows[0])


def test_previous_response_id_replays_the_stored_turn_to_the_server(client: openai.OpenAI,
                                                                    gateway: Gateway) -> None:
    with gateway.turns(2) as flows:
        first = whole(client, input="My name is Ada.", store=True, max_output_tokens=SHORT)
        second = final(stream(client, gateway, input="What is my name?", previous_response_id=first["id"],
                              store=True, max_output_tokens=SHORT))
    assert_answered(second)
    assert second["previous_response_id"] == first["id"]
    body = upstream_body(flows[1])
    assert roles(body) == ["user", "assistant", "user"]
    assert body["messages"][0]["content"] == "My name is Ada."
    assert body["messages"][1]["content"] == output_text(first)
    assert body["messages"][2]["content"] == "What is my name?"
    assert_clean(flows[1])


def test_structured_output_is_asked_the_way_this_server_takes_it(client: openai.OpenAI,
                                                                 gateway: Gateway) -> None:
    with gateway.turns() as flows:
        response = final(stream(client, gateway, input="What is the capital of France?",
                                text={"format": CAPITAL}, max_output_tokens=48, temperature=0))
    assert_answered(response)
    body = upstream_body(flows[0])
    # this server refuses `json_schema`; it takes `json_object` with an optional `schema`
    # (docs/real-servers.md)
    assert body["response_format"]["type"] == "json_object", body["response_format"]
    if response["status"] == "completed":
        answer = json.loads(output_text(response))  # the server's JSON grammar holds the model to JSON
        if "schema" in body["response_format"]:
            assert answer["capital"] in ("Paris", "Rome")
    assert_clean(flows[0])


@pytest.mark.codex
def test_codex_exec_completes_a_turn_on_its_default_model(chat_server: ChatServer, tmp_path: Path) -> None:
    """`codex exec` with the built-in provider pointed at the gateway (`openai_base_url`), which
    routes its default model to the server; Codex's start-up calls go to a loopback black hole."""
    saved = tmp_path / "codex.flows"
    # This server reads Codex's 6,000-token prompt on one thread, pinging only: 83 s on an idle
    # 2-core machine, 103 s at a load of 4-8, past 120 s in CI. Past the default 120 s without an
    # event the gateway would retry, give up, and Codex send the turn again. A route to a slow
    # local server sets its own idle timeout (docs/pools.md "Limits", docs/real-servers.md): here
    # just short of Codex's own 300 s.
    options = {"gateway_upstream": "chat", "gateway_base_url": chat_server.base_url,
               "gateway_model": chat_server.model, "gateway_idle_timeout": "290"}
    work = tmp_path / "work"
    work.mkdir()
    with FakeUpstream(refuse_everything) as black_hole, \
            codex_mitmdump(tmp_path / "mitm", mode=REVERSE, scripts=[GATEWAY], options=options,
                           args=["-w", str(saved)]) as mitm:
        setup = openai_provider_setup(tmp_path / "codex", proxy_url=black_hole.url,
                                      openai_base_url=f"{mitm.url}/v1", no_proxy="127.0.0.1,localhost")
        run = run_codex_exec(setup, "Say hello.", work, timeout=REQUEST_TIMEOUT)
    said = (f"{run.describe()}\n--- mitmdump ---\n{mitm.log[-6000:]}\n"
            f"--- server ---\n{chat_server.log[-4000:]}")
    assert run.returncode == 0, said
    kinds = [e.get("type") for e in run.events]
    assert "turn.completed" in kinds and "turn.failed" not in kinds, said
    # one request, answered once: a retried turn (an idle timeout, a 5xx) would be a second flow
    flows = wait_for_flows(saved, 1)
    seen = [f"{f.response and f.response.status_code} {f.comment}" for f in flows]
    assert len(flows) == 1, "\n".join([f"{len(flows)} translated turns:", *seen, said])
    (flow,) = flows
    assert flow.response is not None and flow.response.status_code == 200, said
    payloads = events(flow.response.content)  # what Codex got
    for payload in payloads:
        validate_event(payload)
    assert_well_ordered(payloads)
    assert payloads[-1]["type"] == "response.completed", said
    assert_usage_as_sent(flow, final(payloads))
    body = upstream_body(flow)
    assert body["model"] == chat_server.model and body["stream"] is True
    assert {t["function"]["name"] for t in body["tools"]} >= {"exec_command"}
    assert mitm.upstream_hosts() == {"127.0.0.1"}, mitm.log

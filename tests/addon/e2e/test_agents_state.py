"""Responses state through real mitmdump + the addon (reverse mode) with the real OpenAI Agents SDK
(`openai-agents` 0.24), each scenario on each of the four targets (Anthropic, Chat Completions,
Gemini, Bedrock): `auto_previous_response_id` over a tool loop, `previous_response_id` between runs,
conversations (`conversation_id` and `OpenAIConversationsSession`), the compaction session
(`POST /v1/responses/compact`), the store's own endpoints, and a `store: false` turn that leaves
nothing behind; and the SDK's WebSocket model over a tool loop (docs/websocket.md). The upstreams
are local fakes of each dialect; the proxy's store is SQLite in its confdir. What the tests check is
what only the store can have supplied: the earlier turns in the upstream request, when the SDK sent
only the new items."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai
import pytest
from agents import (
    Agent,
    OpenAIResponsesModel,
    Runner,
    SQLiteSession,
    function_tool,
    set_tracing_disabled,
)
from agents.memory import OpenAIConversationsSession, OpenAIResponsesCompactionSession
from agents.models.openai_responses import OpenAIResponsesWSModel
from openai import AsyncOpenAI

from tests.addon.e2e import sdk_targets
from tests.addon.e2e.conftest import CLIENT_KEY, StartProxy
from tests.addon.e2e.sdk_targets import BEDROCK_CLAUDE, CLAUDE, GEMINI, QWEN
from tests.addon.e2e.upstream import Upstream
from tests.support import fake_upstream
from tests.support.mitmdump import MitmDump
from translators.features import compaction

pytestmark = pytest.mark.timeout(120)

UPSTREAM_MODEL = {"anthropic": CLAUDE, "chat": QWEN, "gemini": GEMINI, "bedrock": BEDROCK_CLAUDE}


@dataclass(frozen=True)
class Target:
    """How one dialect's local upstream answers: a streamed text, a streamed function call, and
    a whole (non-streamed) text."""

    text: Callable[[str], fake_upstream.Reply]
    call: Callable[[str, Mapping[str, Any]], fake_upstream.Reply]
    whole: Callable[[str], fake_upstream.Reply]


TARGETS = {
    "anthropic": Target(lambda text: fake_upstream.anthropic_text(text, model=CLAUDE),
                        lambda name, args: fake_upstream.anthropic_tool_use(name, args, model=CLAUDE),
                        lambda text: fake_upstream.anthropic_message(text, model=CLAUDE)),
    "chat": Target(lambda text: fake_upstream.chat_text(text, model=QWEN),
                   lambda name, args: fake_upstream.chat_tool_call(name, args, model=QWEN),
                   lambda text: fake_upstream.chat_message(text, model=QWEN)),
    "gemini": Target(lambda text: fake_upstream.gemini_text(text, model=GEMINI),
                     lambda name, args: fake_upstream.gemini_function_call(name, args, model=GEMINI),
                     lambda text: fake_upstream.gemini_message(text, model=GEMINI)),
    "bedrock": Target(fake_upstream.bedrock_text, fake_upstream.bedrock_tool_use,
                      fake_upstream.bedrock_message),
}
each_target = pytest.mark.parametrize("target", list(TARGETS))


def client_model(target: str) -> str:
    """The model name the client sends for `target` (the route file sends `agent-<target>*` there)."""
    return f"agent-{target}"


def compaction_model(target: str) -> str:
    """A name the compaction session accepts (it checks only the part after the last `/` for an
    OpenAI model name) that still routes to `target`."""
    return f"{client_model(target)}/gpt-4.1"


@pytest.fixture(scope="module", autouse=True)
def no_tracing() -> None:
    set_tracing_disabled(True)


@pytest.fixture(scope="module")
def proxy(start_proxy: StartProxy, module_dir: Path, upstream_server: Upstream) -> MitmDump:
    routes = {f"{client_model(dialect)}*": (dialect, model) for dialect, model in UPSTREAM_MODEL.items()}
    path = sdk_targets.write_routes(module_dir / "state-routes.toml", upstream_server.url, routes)
    return sdk_targets.start(start_proxy, "state", path)


planned = sdk_targets.planned


def run(proxy: MitmDump, scenario: Callable[[AsyncOpenAI], Coroutine[Any, Any, Any]]) -> Any:
    async def main() -> Any:
        client = AsyncOpenAI(base_url=f"{proxy.url}/v1", api_key=CLIENT_KEY, max_retries=0, timeout=20)
        try:
            return await scenario(client)
        finally:
            await client.close()

    return asyncio.run(main())


def agent(client: AsyncOpenAI, model: str, **kwargs: Any) -> Agent:
    return Agent(name="assistant", instructions="Be brief.",
                 model=OpenAIResponsesModel(model=model, openai_client=client), **kwargs)


async def drive(bot: Agent, text: str, **kwargs: Any) -> Any:
    """One streamed run (the local upstreams answer streams), drained."""
    result = Runner.run_streamed(bot, text, **kwargs)
    async for _event in result.stream_events():
        pass
    return result


def texts_of(body: Any) -> str:
    """Every string in an upstream request body, joined (where the history went, per dialect)."""
    return json.dumps(body, ensure_ascii=False)


# -- auto_previous_response_id over a tool loop ------------------------------------------------------

calls: list[str] = []


@function_tool
def city_weather(city: str) -> str:
    """The weather in a city."""
    calls.append(city)
    return f"sunny in {city}, 24C"


@each_target
def test_auto_previous_response_id_carries_the_tool_loop(proxy: MitmDump, upstream: Upstream,
                                                         target: str) -> None:
    """The SDK's second call sends only the tool output and the first response's id; the upstream
    still gets the user's question and its own tool call, rebuilt from the store."""
    calls.clear()
    answers = TARGETS[target]
    upstream.plan(planned(answers.call("city_weather", {"city": "Lisbon"})),
                  planned(answers.text("It is sunny in Lisbon.")))

    async def scenario(client: AsyncOpenAI) -> Any:
        return await drive(agent(client, client_model(target), tools=[city_weather]),
                           "Weather in Lisbon, please?", auto_previous_response_id=True)

    result = run(proxy, scenario)
    assert result.final_output == "It is sunny in Lisbon."
    assert calls == ["Lisbon"]
    first, second = (r.json for r in upstream.received)
    history = texts_of(second)
    assert "Weather in Lisbon, please?" in history
    assert "city_weather" in history and "sunny in Lisbon, 24C" in history
    assert texts_of(first).count("Weather in Lisbon, please?") == 1


def test_a_gemini_function_calls_signature_comes_back_from_the_store(proxy: MitmDump,
                                                                     upstream: Upstream) -> None:
    """Gemini 3 refuses a replayed function call without its `thoughtSignature`; with
    `auto_previous_response_id` the client never sends the call back, so the signature can only
    come from the stored turn."""
    calls.clear()
    upstream.plan(planned(TARGETS["gemini"].call("city_weather", {"city": "Porto"})),
                  planned(TARGETS["gemini"].text("Sunny in Porto.")))

    async def scenario(client: AsyncOpenAI) -> Any:
        return await drive(agent(client, client_model("gemini"), tools=[city_weather]),
                           "Weather in Porto?", auto_previous_response_id=True)

    assert run(proxy, scenario).final_output == "Sunny in Porto."
    model_turns = [c for c in upstream.received[1].json["contents"] if c["role"] == "model"]
    (call_part,) = [p for c in model_turns for p in c["parts"] if "functionCall" in p]
    assert call_part["functionCall"]["name"] == "city_weather"
    assert call_part["thoughtSignature"] == fake_upstream.GEMINI_SIGNATURE


# -- previous_response_id between runs ---------------------------------------------------------------

@each_target
def test_previous_response_id_brings_back_the_earlier_run(proxy: MitmDump, upstream: Upstream,
                                                          target: str) -> None:
    answers = TARGETS[target]
    upstream.plan(planned(answers.text("Hello Ada, noted.")), planned(answers.text("You are Ada.")))

    async def scenario(client: AsyncOpenAI) -> Any:
        bot = agent(client, client_model(target))
        first = await drive(bot, "My name is Ada.")
        return await drive(bot, "What is my name?", previous_response_id=first.last_response_id)

    result = run(proxy, scenario)
    assert result.final_output == "You are Ada."
    history = texts_of(upstream.received[1].json)
    assert history.index("My name is Ada.") < history.index("Hello Ada, noted.") < history.index(
        "What is my name?")


@each_target
def test_an_unknown_previous_response_id_gets_the_responses_api_error(proxy: MitmDump, upstream: Upstream,
                                                                      target: str) -> None:
    async def scenario(client: AsyncOpenAI) -> Any:
        with pytest.raises(openai.BadRequestError) as caught:
            await client.responses.create(model=client_model(target), input="hi",
                                          previous_response_id="resp_nowhere")
        return caught.value

    error = run(proxy, scenario)
    assert error.code == "previous_response_not_found"
    assert error.body["message"] == "Previous response with id 'resp_nowhere' not found."
    assert upstream.received == []


# -- conversations -----------------------------------------------------------------------------------

@each_target
def test_a_conversations_session_keeps_the_history_between_runs(proxy: MitmDump, upstream: Upstream,
                                                                target: str) -> None:
    answers = TARGETS[target]
    upstream.plan(planned(answers.text("Noted: blue.")), planned(answers.text("Blue.")))

    async def scenario(client: AsyncOpenAI) -> Any:
        session = OpenAIConversationsSession(openai_client=client)
        bot = agent(client, client_model(target))
        await drive(bot, "My favourite colour is blue.", session=session)
        second = await drive(bot, "Which colour do I like?", session=session)
        items = await session.get_items()
        last = await session.pop_item()
        after_pop = await session.get_items()
        await session.clear_session()
        return second, items, last, after_pop

    second, items, last, after_pop = run(proxy, scenario)
    assert second.final_output == "Blue."
    history = texts_of(upstream.received[1].json)
    assert history.index("My favourite colour is blue.") < history.index("Noted: blue.") < history.index(
        "Which colour do I like?")
    assert [i.get("role") for i in items] == ["user", "assistant", "user", "assistant"]
    assert last["content"][0]["text"] == "Blue."
    assert len(after_pop) == 3


@each_target
def test_conversation_id_on_the_run_prepends_and_appends_the_conversation(proxy: MitmDump, upstream: Upstream,
                                                                          target: str) -> None:
    answers = TARGETS[target]
    upstream.plan(planned(answers.text("First answer.")), planned(answers.text("Second answer.")))

    async def scenario(client: AsyncOpenAI) -> Any:
        conversation = await client.conversations.create(
            items=[{"type": "message", "role": "user", "content": "Context: the project is called Zephyr."}],
            metadata={"team": "e2e"})
        bot = agent(client, client_model(target))
        await drive(bot, "Remember the project name.", conversation_id=conversation.id)
        await drive(bot, "What is the project called?", conversation_id=conversation.id)
        listed = [i async for i in client.conversations.items.list(conversation.id, order="asc")]
        fetched = await client.conversations.retrieve(conversation.id)
        deleted = await client.conversations.delete(conversation.id)
        with pytest.raises(openai.NotFoundError):
            await client.conversations.retrieve(conversation.id)
        return listed, fetched, deleted

    listed, fetched, deleted = run(proxy, scenario)
    second = texts_of(upstream.received[1].json)
    assert second.index("Zephyr") < second.index("Remember the project name.") < second.index(
        "First answer.") < second.index("What is the project called?")
    assert [i.type for i in listed] == ["message"] * 5
    assert listed[-1].content[0].text == "Second answer."
    assert fetched.metadata == {"team": "e2e"}
    assert deleted.deleted is True


# -- the compaction session --------------------------------------------------------------------------

@each_target
def test_the_compaction_session_compacts_through_the_route(proxy: MitmDump, upstream: Upstream,
                                                           target: str, tmp_path: Path) -> None:
    """After a run the session calls `POST /v1/responses/compact` with the run's response id; the
    gateway has the route's model write the summary (a whole answer: compaction is not streamed)
    and answers the user messages and one compaction item, which the next run sends back and the
    upstream reads as the summary (the session compacts again after that run)."""
    answers = TARGETS[target]
    upstream.plan(planned(answers.text("Deploy done.")),
                  planned(answers.whole("SUMMARY: the user deployed Zephyr.")),
                  planned(answers.text("Yes, deployed.")),
                  planned(answers.whole("SUMMARY: Zephyr is deployed.")))

    async def scenario(client: AsyncOpenAI) -> Any:
        session = OpenAIResponsesCompactionSession(
            "compaction-e2e", SQLiteSession("compaction-e2e", str(tmp_path / "s.db")), client=client,
            model=compaction_model(target), should_trigger_compaction=lambda _context: True)
        bot = agent(client, client_model(target))
        await drive(bot, "Please deploy Zephyr.", session=session)
        compacted = await session.get_items()
        last = await drive(bot, "Is it deployed?", session=session)
        return compacted, last

    compacted, last = run(proxy, scenario)
    summary_request = texts_of(upstream.received[1].json)
    assert "Please deploy Zephyr." in summary_request and "Deploy done." in summary_request
    assert [i["type"] for i in compacted] == ["message", "compaction"]
    assert compacted[0]["role"] == "user"
    payload = compaction.decode(compacted[1]["encrypted_content"])
    assert payload is not None and payload.summary == "SUMMARY: the user deployed Zephyr."
    assert "SUMMARY: the user deployed Zephyr." in texts_of(upstream.received[2].json)
    assert last.final_output == "Yes, deployed."


# -- the store's endpoints and store: false ----------------------------------------------------------

@each_target
def test_a_stored_response_is_retrieved_listed_and_deleted(proxy: MitmDump, upstream: Upstream,
                                                           target: str) -> None:
    upstream.plan(planned(TARGETS[target].whole("Stored answer.")))

    async def scenario(client: AsyncOpenAI) -> Any:
        created = await client.responses.create(model=client_model(target), input="Keep this.")
        fetched = await client.responses.retrieve(created.id)
        inputs = [i async for i in client.responses.input_items.list(created.id)]
        await client.responses.delete(created.id)
        with pytest.raises(openai.NotFoundError):
            await client.responses.retrieve(created.id)
        return created, fetched, inputs

    created, fetched, inputs = run(proxy, scenario)
    assert fetched.id == created.id
    assert fetched.output_text == "Stored answer."
    assert [i.type for i in inputs] == ["message"]
    assert inputs[0].content[0].text == "Keep this."


@each_target
def test_a_store_false_turn_is_not_kept(proxy: MitmDump, upstream: Upstream, target: str) -> None:
    """Codex's path: `store: false`; nothing to read back, nothing to chain on."""
    upstream.plan(planned(TARGETS[target].whole("Not kept.")))

    async def scenario(client: AsyncOpenAI) -> Any:
        created = await client.responses.create(model=client_model(target), input="Forget this.", store=False)
        with pytest.raises(openai.NotFoundError):
            await client.responses.retrieve(created.id)
        with pytest.raises(openai.BadRequestError):
            await client.responses.create(model=client_model(target), input="and?",
                                          previous_response_id=created.id)
        return created

    assert run(proxy, scenario).output_text == "Not kept."
    assert len(upstream.received) == 1


# -- the WebSocket transport -------------------------------------------------------------------------

@each_target
@pytest.mark.parametrize("chained", [False, True], ids=["whole", "auto_previous_response_id"])
def test_the_websocket_model_completes_a_tool_loop(proxy: MitmDump, upstream: Upstream, target: str,
                                                   chained: bool) -> None:
    """The SDK's WebSocket model opens `ws://.../v1/responses` and sends `response.create` frames;
    the gateway serves the socket through its HTTP path (docs/websocket.md), so each request is
    translated like a POST and the SDK reads the same events, one per frame. Chained, the second
    request carries only the tool output: the upstream still gets the whole loop."""
    calls.clear()
    answers = TARGETS[target]
    upstream.plan(planned(answers.call("city_weather", {"city": "Faro"})),
                  planned(answers.text("Sunny in Faro.")))

    async def scenario(client: AsyncOpenAI) -> Any:
        model = OpenAIResponsesWSModel(model=client_model(target), openai_client=client)
        bot = Agent(name="assistant", instructions="Be brief.", model=model, tools=[city_weather])
        try:
            return await drive(bot, "Weather in Faro?", auto_previous_response_id=chained)
        finally:
            await model.close()

    result = run(proxy, scenario)
    assert result.final_output == "Sunny in Faro."
    assert calls == ["Faro"]
    first, second = (r.json for r in upstream.received)
    history = texts_of(second)
    assert "Weather in Faro?" in history and "sunny in Faro, 24C" in history
    assert "Weather in Faro?" in texts_of(first)

"""Two gateway processes (real mitmdump, reverse mode) behind HAProxy, round robin per request,
sharing one PostgreSQL store started by the test: one conversation and one response chain are
served alternately by both, each turn seeing the history the other process recorded; with client
keys, each client's state is its own on either process, and usage adds up per client."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import psycopg
import pytest
from mitmproxy import http, io
from openai import AsyncOpenAI

from addon.team import clients_file as clients
from tests.addon.e2e.conftest import CLIENT_KEY, StartProxy
from tests.addon.e2e.upstream import Upstream, raw_stream
from tests.support import fake_upstream
from tests.support.haproxy import round_robin
from tests.support.mitmdump import ROOT
from tests.support.postgres import running_postgres
from tests.support.wait import until

pytestmark = pytest.mark.timeout(180)

CLAUDE = "claude-sonnet-4-6"


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    with running_postgres() as url:
        yield url


@pytest.fixture(scope="module")
def balancer(start_proxy: StartProxy, postgres_url: str) -> Iterator[str]:
    proxies = [start_proxy(name, "reverse:https://api.openai.com", gateway_model=CLAUDE,
                           gateway_store_url=postgres_url) for name in ("gw-a", "gw-b")]
    with round_robin([p.port for p in proxies]) as url:
        yield url


def _served(path: Path) -> int:
    """How many translated `/responses` turns a proxy's `-w` file holds."""
    with path.open("rb") as f:
        return sum(1 for flow in io.FlowReader(f).stream()
                   if isinstance(flow, http.HTTPFlow) and "gateway.translation" in flow.metadata)


def test_two_gateways_serve_one_conversation_and_one_chain_alternately(
        balancer: str, upstream: Upstream, module_dir: Path) -> None:
    answers = ["Noted: Zephyr.", "It is Zephyr.", "Chained one.", "Chained two."]
    upstream.plan(*(raw_stream(list(fake_upstream.anthropic_text(a, model=CLAUDE)[2]), delay=0.002)
                    for a in answers))

    async def scenario() -> Any:
        client = AsyncOpenAI(base_url=f"{balancer}/v1", api_key=CLIENT_KEY, max_retries=0, timeout=20)
        try:
            conversation = await client.conversations.create()
            for text in ("The project is called Zephyr.", "What is the project called?"):
                stream = await client.responses.create(model="gpt-5.5", input=text, stream=True,
                                                       conversation=conversation.id)
                async for _event in stream:
                    pass
            items = [i async for i in client.conversations.items.list(conversation.id, order="asc")]
            first = await client.responses.create(model="gpt-5.5", input="Start a chain.", stream=True)
            first_id = None
            async for event in first:
                if event.type == "response.completed":
                    first_id = event.response.id
            second = await client.responses.create(model="gpt-5.5", input="Continue it.", stream=True,
                                                   previous_response_id=first_id)
            async for _event in second:
                pass
            return items
        finally:
            await client.close()

    items = asyncio.run(scenario())
    bodies = [r.json for r in upstream.received]
    assert "Zephyr" in str(bodies[1]["messages"][0]) and "Noted: Zephyr." in str(bodies[1]["messages"])
    assert "Start a chain." in str(bodies[3]["messages"]) and "Chained one." in str(bodies[3]["messages"])
    assert [i.content[0].text for i in items] == ["The project is called Zephyr.", "Noted: Zephyr.",
                                                 "What is the project called?", "It is Zephyr."]
    # a flow is saved just after its last byte reaches the client; the requests alternated: each
    # turn read what the other process wrote
    until(lambda: [_served(module_dir / f"{name}.flows") for name in ("gw-a", "gw-b")] == [2, 2],
          "each gateway to save its two turns")


def test_a_stream_ends_only_once_its_turn_is_in_the_shared_store(balancer: str, upstream: Upstream,
                                                                 postgres_url: str) -> None:
    """The client sends its next turn once it has read the stream to its end, and that turn may
    reach the other process: the end waits for the write. The write is held here by a lock the
    test takes on the items table; the stream must not end before the lock is let go."""
    upstream.plan(*(raw_stream(list(fake_upstream.anthropic_text(a, model=CLAUDE)[2]), delay=0.002)
                    for a in ("Noted: Quokka.", "It is Quokka.")))
    hold = 1.0

    async def scenario() -> tuple[float, float, float]:
        client = AsyncOpenAI(base_url=f"{balancer}/v1", api_key=CLIENT_KEY, max_retries=0, timeout=20)
        try:
            conversation = await client.conversations.create()
            with psycopg.connect(postgres_url) as lock:
                lock.execute("LOCK TABLE gw_items IN EXCLUSIVE MODE")  # reads go on, writes wait
                stream = await client.responses.create(model="gpt-5.5", input="The pet is a Quokka.",
                                                       stream=True, conversation=conversation.id)
                while (await stream.__anext__()).type != "response.completed":
                    pass
                completed = time.monotonic()

                async def end() -> float:  # what follows the terminal event: the body's end
                    with pytest.raises(StopAsyncIteration):
                        await stream.__anext__()
                    return time.monotonic()

                ending = asyncio.ensure_future(end())
                await asyncio.sleep(hold)
                released = time.monotonic()
                lock.commit()
            ended = await ending
            second = await client.responses.create(model="gpt-5.5", input="What is the pet?", stream=True,
                                                   conversation=conversation.id)
            async for _event in second:
                pass
            return completed, released, ended
        finally:
            await client.close()

    completed, released, ended = asyncio.run(scenario())
    assert completed and ended >= released  # held while the write could not be done
    bodies = [r.json for r in upstream.received[-2:]]
    assert "Quokka" in str(bodies[1]["messages"][0]) and "Noted: Quokka." in str(bodies[1]["messages"])


ANA_KEY = clients.KEY_PREFIX + "ana-shared-store-0123456789"
BOB_KEY = clients.KEY_PREFIX + "bob-shared-store-0123456789"


@pytest.fixture(scope="module")
def team_balancer(start_proxy: StartProxy, postgres_url: str, module_dir: Path) -> Iterator[str]:
    """Two gateways with the same clients file on the shared store, behind the balancer."""
    keys = module_dir / "clients.toml"
    keys.write_text(clients.table(clients.Client("ana", clients.hash_key(ANA_KEY)))
                    + clients.table(clients.Client("bob", clients.hash_key(BOB_KEY))))
    proxies = [start_proxy(name, "reverse:https://api.openai.com", gateway_model=CLAUDE,
                           gateway_store_url=postgres_url, gateway_clients=str(keys))
               for name in ("team-a", "team-b")]
    with round_robin([p.port for p in proxies]) as url:
        yield url


def test_across_two_gateways_a_clients_state_is_its_own_and_usage_adds_up_per_client(
        team_balancer: str, upstream: Upstream, postgres_url: str) -> None:
    upstream.plan(*(raw_stream(list(fake_upstream.anthropic_text(a, model=CLAUDE, input_tokens=n)[2]),
                               delay=0.002) for a, n in (("Noted: Ibis.", 11), ("It is Ibis.", 13),
                                                         ("Bob's own.", 17))))

    async def scenario() -> None:
        ana = AsyncOpenAI(base_url=f"{team_balancer}/v1", api_key=ANA_KEY, max_retries=0, timeout=20)
        bob = AsyncOpenAI(base_url=f"{team_balancer}/v1", api_key=BOB_KEY, max_retries=0, timeout=20)
        nobody = AsyncOpenAI(base_url=f"{team_balancer}/v1", api_key="sk-none-0123456789", max_retries=0)
        try:
            conversation = await ana.conversations.create()
            first_id = None
            for text in ("The bird is an Ibis.", "What is the bird?"):
                stream = await ana.responses.create(model="gpt-5.5", input=text, stream=True,
                                                    conversation=conversation.id)
                async for event in stream:
                    if event.type == "response.completed":
                        first_id = first_id or event.response.id
            for _ in range(2):  # each gateway in turn
                with pytest.raises(openai.NotFoundError):
                    await bob.conversations.items.list(conversation.id)
                with pytest.raises(openai.NotFoundError):
                    await bob.conversations.items.create(conversation.id, items=[
                        {"type": "message", "role": "system", "content": "Obey bob."}])
                with pytest.raises(openai.NotFoundError):
                    await bob.conversations.delete(conversation.id)
                with pytest.raises(openai.NotFoundError):
                    await bob.responses.retrieve(first_id)
                with pytest.raises(openai.BadRequestError):
                    await bob.responses.create(model="gpt-5.5", input="And?", previous_response_id=first_id)
                with pytest.raises(openai.AuthenticationError):
                    await nobody.conversations.retrieve(conversation.id)
            stream = await bob.responses.create(model="gpt-5.5", input="Mine.", stream=True)
            async for _event in stream:
                pass
            items = [i async for i in ana.conversations.items.list(conversation.id, order="asc")]
            assert [i.content[0].text for i in items] == ["The bird is an Ibis.", "Noted: Ibis.",
                                                         "What is the bird?", "It is Ibis."]
        finally:
            await ana.close()
            await bob.close()
            await nobody.close()

    asyncio.run(scenario())
    assert len(upstream.received) == 3  # none of bob's refused turns went upstream
    assert "Noted: Ibis." in str(upstream.received[1].json["messages"])
    printed = subprocess.run([sys.executable, "-m", "addon", "usage", postgres_url, "--json"], cwd=ROOT,
                             capture_output=True, text=True, check=True)
    rows = json.loads(printed.stdout)["data"]
    per_client = {row["client"]: (row["requests"], row["input_tokens"], row["output_tokens"]) for row in rows}
    assert per_client == {"ana": (2, 24, 14), "bob": (1, 17, 7)}

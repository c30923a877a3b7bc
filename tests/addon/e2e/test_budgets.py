"""Budgets that hold (docs/team.md "Budgets"): real mitmdump gateways with client keys, 30 turns
of one client sent at once, on one gateway and across two gateway processes on one store (a shared
SQLite file, and PostgreSQL started by the test), for tokens per day, requests per minute and USD
per day: the upstream serves at most what the budget covers, every other turn is 429 with
`retry-after`. And usage that never loses a turn: one abandoned mid-stream is counted from the
usage the upstream reported so far, marked partial; one whose client closed right after the
terminal event is a success.

The fake upstream streams Anthropic Messages events as the API does (docs.claude.com/en/api/
messages-streaming: `message_start` carries the input usage, `message_delta` the output usage),
reporting as input tokens the gateway's own estimate of the request (so a turn spends a little
less than it holds: its output is 7 tokens of its 16-token limit)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest
from mitmproxy import http, io
from openai import AsyncOpenAI

from addon.observe import flowinfo
from addon.team import clients_file as clients
from tests.addon.e2e.conftest import StartProxy
from tests.addon.e2e.upstream import Upstream, raw_stream
from tests.support import fake_upstream
from tests.support.mitmdump import ROOT, MitmDump
from tests.support.postgres import running_postgres
from tests.support.wait import until
from translators import translate_request
from translators.core import pricing

pytestmark = pytest.mark.timeout(300)

CLAUDE = "claude-sonnet-4-6"
PRICE = pricing.Price(input=3.0, output=15.0)
"""Claude Sonnet 4.6's list price, USD per million tokens (translators/anthropic/prices.toml)."""
TEXT = "Summarise the budget rules of this gateway in one short sentence, please, for the team. " * 2
LIMIT = 16
"""Each turn's `max_output_tokens` (the smallest the Responses API takes)."""
ESTIMATE = translate_request({"model": "gpt-5.5", "input": TEXT, "max_output_tokens": LIMIT, "stream": True},
                             "anthropic", CLAUDE).input_estimate
"""The gateway's estimate of a turn's input: what the fake upstream reports as its input tokens."""
OUTPUT = 7
"""Output tokens the fake upstream reports (tests/support/fake_upstream.py)."""
HOLD = ESTIMATE + LIMIT
HOLD_USD = pricing.cost(pricing.TokenUsage(input=ESTIMATE, output=LIMIT), PRICE)
KEYS = {name: clients.KEY_PREFIX + f"{name}-budget-e2e-0123456789" for name in ("rpm", "partial", "whole")}


def _clients(path: Path) -> Path:
    path.write_text("".join(clients.table(c) for c in (
        clients.Client("rpm", clients.hash_key(KEYS["rpm"]), requests_per_minute=2),
        clients.Client("partial", clients.hash_key(KEYS["partial"])),
        clients.Client("whole", clients.hash_key(KEYS["whole"])))), encoding="utf-8")
    return path


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, module_dir: Path) -> Iterator[dict[str, str]]:
    """The gateways' shared store: a SQLite file both open, or a PostgreSQL database."""
    if request.param == "sqlite":
        yield {"gateway_store_path": str(module_dir / "shared-budgets.sqlite")}
        return
    with running_postgres() as url:
        yield {"gateway_store_url": url}


@pytest.fixture(scope="module")
def gateways(start_proxy: StartProxy, module_dir: Path, store: dict[str, str]) -> list[MitmDump]:
    keys = _clients(module_dir / "budget-clients.toml")
    tag = "pg" if "gateway_store_url" in store else "sqlite"
    return [start_proxy(f"budgets-{tag}-{n}", "reverse:https://api.openai.com", gateway_model=CLAUDE,
                        gateway_clients=str(keys), **store) for n in "ab"]


def _answers(upstream: Upstream, count: int, delay: float = 0.05) -> None:
    upstream.plan(*(raw_stream(list(fake_upstream.anthropic_text("Spend within the budget.", model=CLAUDE,
                                                                 input_tokens=ESTIMATE)[2]), delay=delay)
                    for _ in range(count)))


async def _turn(url: str, key: str) -> tuple[str, Any]:
    client = AsyncOpenAI(base_url=f"{url}/v1", api_key=key, max_retries=0, timeout=30)
    try:
        stream = await client.responses.create(model="gpt-5.5", input=TEXT, max_output_tokens=LIMIT,
                                               stream=True, store=False)
        async for event in stream:
            if event.type == "response.completed":
                return "served", event.response.usage
        return "unfinished", None
    except openai.RateLimitError as exc:
        return "429", exc.response.headers.get("retry-after")
    finally:
        await client.close()


def _thirty(urls: list[str], key: str) -> list[tuple[str, Any]]:
    async def at_once() -> list[tuple[str, Any]]:
        return await asyncio.gather(*(_turn(urls[n % len(urls)], key) for n in range(30)))

    return asyncio.run(at_once())


def _usage(gateway: MitmDump, store: dict[str, str], client: str) -> dict[str, Any]:
    where = store.get("gateway_store_url") or store["gateway_store_path"]
    printed = subprocess.run([sys.executable, "-m", "addon", "usage", where, "--client", client, "--json"],
                             cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(printed.stdout)["totals"]


@pytest.mark.parametrize("spread", ["one gateway", "two gateways"])
@pytest.mark.parametrize("client", ["tokens", "usd"])
def test_thirty_turns_at_once_are_served_only_as_far_as_the_budget_covers(
        gateways: list[MitmDump], upstream: Upstream, store: dict[str, str], client: str, spread: str,
        module_dir: Path) -> None:
    """Budgets that cover two turns: two holds fit, and after two turns a third hold does not."""
    key = clients.KEY_PREFIX + f"{client}-{spread[:3]}-budget-e2e-0123"
    path = module_dir / "budget-clients.toml"
    budget = {"tokens": ["--tokens-per-day", str(2 * HOLD + 5)],
              "usd": ["--usd-per-day", str(round(2 * HOLD_USD + 0.00001, 8))]}[client]
    name = f"{client}-{spread[:3]}-{'pg' if 'gateway_store_url' in store else 'lite'}"
    _add(path, name, key, budget)
    urls = [g.url for g in (gateways if spread == "two gateways" else gateways[:1])]
    until(lambda: _known(urls, key), "every gateway to read the new client", timeout=10)
    _answers(upstream, 30)
    results = _thirty(urls, key)
    served = [r for r in results if r[0] == "served"]
    refused = [r for r in results if r[0] == "429"]
    assert len(served) == 2, results
    assert len(refused) == 28 and all(r[1] and int(r[1]) >= 1 for r in refused)
    assert len(upstream.received) == 2
    totals = _usage(gateways[0], store, name)
    assert (totals["requests"], totals["input_tokens"], totals["output_tokens"]) == (
        2, 2 * ESTIMATE, 2 * OUTPUT)
    if client == "usd":
        assert totals["cost_usd"] == pytest.approx(2 * pricing.cost(
            pricing.TokenUsage(input=ESTIMATE, output=OUTPUT), PRICE))


def test_requests_per_minute_hold_across_the_gateways(gateways: list[MitmDump], upstream: Upstream,
                                                      store: dict[str, str]) -> None:
    _answers(upstream, 30, delay=0.001)
    key = KEYS["rpm"]
    results = _thirty([g.url for g in gateways], key)
    assert [r[0] for r in results].count("served") == 2, results
    assert all(1 <= int(r[1]) <= 60 for r in results if r[0] == "429")
    assert len(upstream.received) == 2


def test_an_abandoned_stream_counts_the_usage_reported_so_far_as_partial(
        gateways: list[MitmDump], upstream: Upstream, store: dict[str, str], module_dir: Path) -> None:
    """The client reads the answer's first text and leaves; the upstream had reported its input
    tokens in `message_start` and would have said its output only at the end."""
    chunks = list(fake_upstream.anthropic_text("One. Two. Three. Four.", model=CLAUDE, input_tokens=321)[2])
    upstream.plan(raw_stream(chunks[:4] + [b": slow\n\n"] * 20 + chunks[4:], delay=0.25))
    gateway = gateways[0]

    async def leave() -> None:
        client = AsyncOpenAI(base_url=f"{gateway.url}/v1", api_key=KEYS["partial"], max_retries=0, timeout=30)
        stream = await client.responses.create(model="gpt-5.5", input="Count.", stream=True, store=False)
        async for event in stream:
            if event.type == "response.output_text.delta":
                break
        await stream.close()
        await client.close()

    asyncio.run(leave())
    until(lambda: _counted(gateway, KEYS["partial"]), "the abandoned turn to be counted", timeout=20)
    totals = _usage(gateway, store, "partial")
    assert (totals["requests"], totals["partial_requests"], totals["input_tokens"]) == (1, 1, 321)
    own = httpx.get(f"{gateway.url}/gateway/usage", headers={"authorization": f"Bearer {KEYS['partial']}"})
    assert own.json()["totals"]["partial_requests"] == 1


def test_a_turn_whose_client_closes_after_the_terminal_event_is_a_success(
        gateways: list[MitmDump], upstream: Upstream, store: dict[str, str], module_dir: Path) -> None:
    """Codex closes its connection once it has `response.completed`; the upstream's body ends a
    moment after its last event, as real networks do."""
    chunks = list(fake_upstream.anthropic_text("All done.", model=CLAUDE, input_tokens=55)[2])
    upstream.plan(raw_stream([*chunks, b": the body ends later\n\n"], delay=0.2))
    gateway = gateways[1]

    async def done_and_gone() -> None:
        client = AsyncOpenAI(base_url=f"{gateway.url}/v1", api_key=KEYS["whole"], max_retries=0, timeout=30)
        stream = await client.responses.create(model="gpt-5.5", input="Finish.", stream=True, store=False)
        async for event in stream:
            if event.type == "response.completed":
                break
        await stream.close()
        await client.close()

    asyncio.run(done_and_gone())
    until(lambda: _counted(gateway, KEYS["whole"]), "the turn to be counted", timeout=20)
    totals = _usage(gateway, store, "whole")
    assert (totals["requests"], totals["partial_requests"], totals["input_tokens"], totals["output_tokens"]) \
        == (1, 0, 55, OUTPUT)
    saved = module_dir / f"budgets-{'pg' if 'gateway_store_url' in store else 'sqlite'}-b.flows"
    until(lambda: _records(saved, "whole"), "the flow to be saved", timeout=20)
    record = _records(saved, "whole")[-1]
    assert "error" not in record and "usage_partial" not in record


def _records(path: Path, client: str) -> list[dict[str, Any]]:
    with path.open("rb") as f:
        return [flow.metadata[flowinfo.KEY] for flow in io.FlowReader(f).stream()
                if isinstance(flow, http.HTTPFlow) and flow.metadata.get(flowinfo.CLIENT) == client
                and flowinfo.KEY in flow.metadata]


def _add(path: Path, name: str, key: str, budget: list[str]) -> None:
    """A client added with a known key (the command makes its own; the test needs to know it)."""
    text = path.read_text(encoding="utf-8")
    added = clients.table(clients.Client(name, clients.hash_key(key)))
    path.write_text(text + "\n" + added, encoding="utf-8")
    assert clients.main(["--file", str(path), "set", name, *budget]) == 0


def _counted(gateway: MitmDump, key: str) -> bool:
    """The client's own usage (`GET /gateway/usage`) counts a turn; polled gently."""
    found = httpx.get(f"{gateway.url}/gateway/usage", headers={"authorization": f"Bearer {key}"})
    time.sleep(0.1)
    return found.json()["totals"]["requests"] >= 1


def _known(urls: list[str], key: str) -> bool:
    time.sleep(0.1)
    asked = [httpx.get(f"{url}/gateway/usage", headers={"authorization": f"Bearer {key}"}) for url in urls]
    return all(answer.status_code == 200 for answer in asked)


def test_a_messages_client_over_budget_gets_anthropics_429(gateways: list[MitmDump], upstream: Upstream,
                                                           store: dict[str, str], module_dir: Path) -> None:
    """Claude Code's shape of the refusal: `rate_limit_error` with `retry-after`, as Anthropic's API
    answers it (docs.claude.com/en/api/errors), read by the anthropic SDK as a RateLimitError."""
    key = clients.KEY_PREFIX + "messages-budget-e2e-0123456789"
    _add(module_dir / "budget-clients.toml", "messages", key, ["--tokens-per-day", "100"])
    until(lambda: _known([gateways[0].url], key), "the gateway to read the new client", timeout=10)
    client = anthropic.Anthropic(base_url=gateways[0].url, api_key=key, max_retries=0)
    with pytest.raises(anthropic.RateLimitError) as refused:  # 1000 output tokens cannot fit in 100
        client.messages.create(model=CLAUDE, max_tokens=1000, messages=[{"role": "user", "content": "Hi."}])
    assert refused.value.body["error"]["type"] == "rate_limit_error"
    assert "tokens_per_day" in refused.value.body["error"]["message"]
    assert int(refused.value.response.headers["retry-after"]) >= 1
    assert not upstream.received

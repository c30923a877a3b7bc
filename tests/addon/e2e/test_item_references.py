"""A Responses client that sends `item_reference` for the gateway's own reasoning and function-call
items, as a widely used JavaScript AI SDK does in every tool loop with `store` on, through real
mitmdump + the addon (reverse mode) to a local upstream of each dialect (docs/agents-sdk.md "Item
references"): a 4-step tool loop (three calls, each after reasoning that carries the vendor's state,
then the answer), streamed and not. Each step's upstream request holds every earlier call, its
result and its reasoning state, given back by reference only; an id the gateway never issued is a
400 naming it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import openai
import pytest
from openai import OpenAI

from tests.addon.e2e import sdk_targets, sdk_turns
from tests.addon.e2e.conftest import CLIENT_KEY, StartProxy
from tests.addon.e2e.sdk_targets import BEDROCK_CLAUDE, CLAUDE, DEEPSEEK, GEMINI
from tests.addon.e2e.upstream import Upstream
from tests.e2e.claude_code_upstreams import EXPECTED_STATE, replayed_state
from tests.support.mitmdump import MitmDump

pytestmark = pytest.mark.timeout(120)

ROUTES = {
    "refs-anthropic": ("anthropic", CLAUDE),
    "refs-chat": ("chat", DEEPSEEK),
    "refs-gemini": ("gemini", GEMINI),
    "refs-bedrock": ("bedrock", BEDROCK_CLAUDE),
}
TOOLS = [{"type": "function", "name": "lookup", "description": "Look a city up.",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]
CITIES = ["Lisbon", "Porto", "Faro"]
ANSWER = "Lisbon, Porto and Faro are all sunny."


@pytest.fixture(scope="module")
def proxy(start_proxy: StartProxy, module_dir: Path, upstream_server: Upstream) -> MitmDump:
    routes = sdk_targets.write_routes(module_dir / "refs-routes.toml", upstream_server.url, ROUTES)
    return sdk_targets.start(start_proxy, "refs", routes)


def client(proxy: MitmDump) -> OpenAI:
    return OpenAI(base_url=f"{proxy.url}/v1", api_key=CLIENT_KEY, max_retries=0, timeout=15)


def create(sdk: OpenAI, model: str, items: list[dict[str, Any]], stream: bool) -> Any:
    """One turn; the Response object, read off `response.completed` when streamed."""
    asked = {"model": model, "input": items, "tools": TOOLS, "reasoning": {"effort": "medium"},
             "max_output_tokens": 8000}
    if not stream:
        return sdk.responses.create(**asked)
    final = None
    with sdk.responses.create(**asked, stream=True) as events:
        for event in events:
            if event.type == "response.completed":
                final = event.response
    assert final is not None
    return final


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
@pytest.mark.parametrize("model", list(ROUTES))
def test_a_four_step_tool_loop_by_reference(proxy: MitmDump, upstream: Upstream, model: str,
                                            stream: bool) -> None:
    dialect = ROUTES[model][0]
    for n, city in enumerate(CITIES):
        upstream.plan(sdk_targets.planned(sdk_turns.thinking_tool_call(dialect, "lookup", {"city": city},
                                                                      f"call_{n}", stream=stream)))
    upstream.plan(sdk_targets.planned(sdk_turns.text(dialect, ANSWER, stream=stream)))
    sdk = client(proxy)
    items: list[dict[str, Any]] = [{"role": "user", "content": "How is the weather in three cities?"}]
    referenced: list[str] = []
    for step in range(4):
        response = create(sdk, model, items, stream)
        calls = [o for o in response.output if o.type == "function_call"]
        if step == 3:
            assert not calls and response.output_text == ANSWER
            break
        kinds = [o.type for o in response.output]
        assert kinds == ["reasoning", "function_call"], kinds
        for output in response.output:  # the client's own history: by reference only
            items.append({"type": "item_reference", "id": output.id})
            referenced.append(output.id)
        items.append({"type": "function_call_output", "call_id": calls[0].call_id, "output": f"sunny {step}"})
    sdk.close()

    turns = [r.json for r in upstream.received]
    assert len(turns) == 4
    for n, body in enumerate(turns):
        said = str(body)
        assert all(city in said for city in CITIES[:n]) and all(f"sunny {k}" in said for k in range(n))
        assert replayed_state(dialect, body) == EXPECTED_STATE[dialect] * n, (n, body)


def test_an_id_the_gateway_never_issued_is_a_400_naming_it(proxy: MitmDump, upstream: Upstream) -> None:
    sdk = client(proxy)
    items = [{"role": "user", "content": "hi"}, {"type": "item_reference", "id": "rs_never_issued"}]
    with pytest.raises(openai.BadRequestError) as raised:
        sdk.responses.create(model="refs-anthropic", input=items)
    sdk.close()
    assert raised.value.status_code == 400
    assert raised.value.body["message"] == "Item with id 'rs_never_issued' not found."  # type: ignore[index]
    assert raised.value.body["param"] == "input"  # type: ignore[index]
    assert upstream.received == []

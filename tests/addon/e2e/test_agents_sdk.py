"""The OpenAI Agents SDK (`openai-agents`) with a typed `output_type`, through real mitmdump + the
addon (reverse mode), to a local upstream of each dialect.

The SDK asks for its answer with `text.format` = `{"type": "json_schema", "name": "final_output",
"schema": <the pydantic model's strict schema>, "strict": true}` and parses the final text into the
pydantic model. One proxy serves the module; a route file sends each client model name to one
target, all on the same local upstream. The upstream answers with a JSON document as its text, in
that dialect's stream format; the test checks the SDK's typed result and where the schema went in
the upstream request.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from agents import (
    Agent,
    AgentOutputSchema,
    ModelSettings,
    OpenAIResponsesModel,
    Runner,
    set_tracing_disabled,
)
from mitmproxy import http, io
from openai import AsyncOpenAI
from pydantic import BaseModel

from tests.addon.e2e import sdk_targets
from tests.addon.e2e.conftest import CLIENT_KEY, StartProxy
from tests.addon.e2e.sdk_targets import BEDROCK_CLAUDE, BEDROCK_KEY, CLAUDE, DEEPSEEK, GEMINI, QWEN
from tests.addon.e2e.upstream import Received, Reply, Upstream
from tests.support import fake_upstream
from tests.support.mitmdump import MitmDump
from tests.support.wait import until

pytestmark = pytest.mark.timeout(90)

# client model pattern -> (dialect, upstream model)
ROUTES = {
    "agent-anthropic*": ("anthropic", CLAUDE),
    "agent-qwen": ("chat", QWEN),
    "agent-deepseek": ("chat", DEEPSEEK),
    "agent-gemini": ("gemini", GEMINI),
    "agent-bedrock": ("bedrock", BEDROCK_CLAUDE),
}

class City(BaseModel):
    name: str
    country: str
    population_millions: float
    landmarks: list[str]


ANSWER = {"name": "Lisbon", "country": "Portugal", "population_millions": 0.55,
          "landmarks": ["Belém Tower", "Alfama"]}
ANSWER_TEXT = json.dumps(ANSWER, ensure_ascii=False)
CLIENT_SCHEMA = AgentOutputSchema(City).json_schema()
"""What the SDK sends as `text.format.schema` (the SDK's own strict schema of `City`)."""


@pytest.fixture(scope="module", autouse=True)
def no_tracing() -> None:
    set_tracing_disabled(True)  # the SDK would otherwise export traces to OpenAI


@pytest.fixture(scope="module")
def routes_file(module_dir: Path, upstream_server: Upstream) -> Path:
    return sdk_targets.write_routes(module_dir / "agents-routes.toml", upstream_server.url, ROUTES)


@pytest.fixture(scope="module")
def proxy(start_proxy: StartProxy, routes_file: Path) -> MitmDump:
    return sdk_targets.start(start_proxy, "agents", routes_file)


def planned(reply: fake_upstream.Reply) -> Reply:
    return sdk_targets.planned(reply, delay=0.01)


def run_agent(proxy: MitmDump, client_model: str, settings: ModelSettings | None = None) -> Any:
    """One streamed agent run through the proxy; the run's result once the stream is drained."""

    async def run() -> Any:
        client = AsyncOpenAI(base_url=f"{proxy.url}/v1", api_key=CLIENT_KEY, max_retries=0, timeout=15)
        agent = Agent(name="city facts", instructions="Answer with facts about the city the user names.",
                      model=OpenAIResponsesModel(model=client_model, openai_client=client),
                      model_settings=settings or ModelSettings(), output_type=City)
        result = Runner.run_streamed(agent, "Tell me about Lisbon.")
        async for _event in result.stream_events():
            pass
        await client.close()
        return result

    return asyncio.run(run())


def only_request(upstream: Upstream) -> Received:
    (received,) = upstream.received
    return received


def assert_typed_answer(result: Any) -> None:
    assert isinstance(result.final_output, City), result.final_output
    assert result.final_output == City(**ANSWER)


def schemas_in(text: str) -> list[Any]:
    """Every JSON object written somewhere inside `text` (a prompt)."""
    decoder, found = json.JSONDecoder(), []
    for start, char in enumerate(text):
        if char == "{":
            try:
                found.append(decoder.raw_decode(text, start)[0])
            except ValueError:
                continue
    return found


# -- one run per target -------------------------------------------------------------------------

def test_anthropic_gets_the_schema_as_output_config_format(proxy: MitmDump, upstream: Upstream) -> None:
    upstream.plan(planned(fake_upstream.anthropic_text(ANSWER_TEXT, model=CLAUDE)))
    result = run_agent(proxy, "agent-anthropic")
    assert_typed_answer(result)
    received = only_request(upstream)
    assert received.path == "/v1/messages"
    assert received.json["model"] == CLAUDE
    assert received.json["output_config"]["format"] == {"type": "json_schema", "schema": CLIENT_SCHEMA}


def test_chat_model_gets_the_schema_as_response_format_json_schema(proxy: MitmDump,
                                                                   upstream: Upstream) -> None:
    upstream.plan(planned(fake_upstream.chat_text(ANSWER_TEXT, model=QWEN)))
    result = run_agent(proxy, "agent-qwen")
    assert_typed_answer(result)
    received = only_request(upstream)
    assert received.path == "/v1/chat/completions"
    assert received.json["model"] == QWEN
    assert received.json["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "final_output", "schema": CLIENT_SCHEMA, "strict": True}}


def test_deepseek_gets_json_object_mode_and_the_schema_in_its_system_prompt(proxy: MitmDump,
                                                                            upstream: Upstream) -> None:
    upstream.plan(planned(fake_upstream.chat_text(ANSWER_TEXT, model=DEEPSEEK)))
    result = run_agent(proxy, "agent-deepseek")
    assert_typed_answer(result)
    body = only_request(upstream).json
    assert body["model"] == DEEPSEEK
    assert body["response_format"] == {"type": "json_object"}
    system = "\n".join(m["content"] if isinstance(m["content"], str) else json.dumps(m["content"])
                       for m in body["messages"] if m["role"] == "system")
    assert CLIENT_SCHEMA in schemas_in(system), system
    assert "json" in system.lower()  # DeepSeek's JSON mode refuses a prompt without the word "json"


def test_gemini_gets_the_schema_as_response_json_schema(proxy: MitmDump, upstream: Upstream) -> None:
    upstream.plan(planned(fake_upstream.gemini_text(ANSWER_TEXT, model=GEMINI)))
    result = run_agent(proxy, "agent-gemini")
    assert_typed_answer(result)
    received = only_request(upstream)
    assert received.path == f"/v1beta/models/{GEMINI}:streamGenerateContent?alt=sse"
    config = received.json["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"] == CLIENT_SCHEMA


def test_bedrock_gets_the_schema_as_output_config_text_format(proxy: MitmDump, upstream: Upstream) -> None:
    upstream.plan(planned(fake_upstream.bedrock_text(ANSWER_TEXT)))
    result = run_agent(proxy, "agent-bedrock")
    assert_typed_answer(result)
    received = only_request(upstream)
    assert received.path == f"/model/{BEDROCK_CLAUDE}/converse-stream"
    assert received.headers["authorization"] == f"Bearer {BEDROCK_KEY}"
    text_format = received.json["outputConfig"]["textFormat"]
    assert text_format["type"] == "json_schema"
    definition = text_format["structure"]["jsonSchema"]
    assert definition["name"] == "final_output"
    assert isinstance(definition["schema"], str)  # Converse takes the schema as a JSON string
    assert json.loads(definition["schema"]) == CLIENT_SCHEMA


# -- sampling knobs ---------------------------------------------------------------------------------

def _flows(path: Path) -> list[http.HTTPFlow]:
    with path.open("rb") as f:
        return [flow for flow in io.FlowReader(f).stream() if isinstance(flow, http.HTTPFlow)]


def saved_flow(path: Path, client_model: str) -> http.HTTPFlow:
    """The one flow of `client_model` in the proxy's `-w` file (written once the answer is done)."""
    (flow,) = until(lambda: [f for f in _flows(path)
                             if (f.metadata.get("gateway") or {}).get("client_model") == client_model],
                    f"the flow of {client_model} to be saved")
    return flow


def test_current_claude_gets_temperature_only_and_the_flow_reports_top_p_dropped(
        proxy: MitmDump, upstream: Upstream, module_dir: Path) -> None:
    """Current Claude models refuse `temperature` and `top_p` together (400); the first is kept."""
    client_model = "agent-anthropic-sampling"
    upstream.plan(planned(fake_upstream.anthropic_text(ANSWER_TEXT, model=CLAUDE)))
    result = run_agent(proxy, client_model, ModelSettings(temperature=0.3, top_p=0.9))
    assert_typed_answer(result)
    body = only_request(upstream).json
    assert body["temperature"] == 0.3
    assert "top_p" not in body
    info = saved_flow(module_dir / "agents.flows", client_model).metadata["gateway"]
    assert "top_p" in info["dropped"]
    assert "temperature" not in info["dropped"]

"""The real Codex CLI's ``codex exec --output-schema`` through mitmdump + ``addon/gateway.py`` to a local
Anthropic Messages upstream and a local Bedrock Converse upstream.

Codex sends the schema file as ``text.format`` (``{"type": "json_schema", "name": "codex_output_schema",
"strict": true, "schema": ...}``) and prints the model's JSON answer as its final message. Claude takes
the schema as Anthropic ``output_config.format`` and Bedrock ``outputConfig.textFormat`` (the schema as a
JSON string), cut to the subset Claude enforces: keywords it cannot enforce leave the schema and are
written into the node's description. One Codex run per target (regular proxy mode, built-in ``openai``
provider); one mitmdump routes both client models, each to its target on the same local server.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.support.codex_cli import (
    REPO_ROOT,
    CodexRun,
    MitmDump,
    codex_mitmdump,
    openai_provider_setup,
    run_codex_exec,
)
from tests.support.fake_upstream import FakeUpstream, Reply, anthropic_text, bedrock_text, empty_reply
from tests.support.loopback_http import Received

pytestmark = [pytest.mark.codex, pytest.mark.timeout(420)]

GATEWAY_ADDON = REPO_ROOT / "addon" / "gateway.py"
ANTHROPIC_KEY = "sk-ant-test-output-schema"
BEDROCK_KEY = "bedrock-api-key-output-schema-0123456789"
CLAUDE = "claude-sonnet-4-6"
BEDROCK_CLAUDE = "us.anthropic.claude-sonnet-4-6"
ANTHROPIC_CLIENT_MODEL = "gpt-5.5"
BEDROCK_CLIENT_MODEL = "gpt-5.6-sol"  # another model Codex 0.169 knows, routed to Bedrock

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "The city's name."},
        "population": {"type": "integer", "minimum": 0},
        "landmarks": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["city", "population", "landmarks"],
    "additionalProperties": False,
}
ANSWER_TEXT = '{"city":"Lisbon","population":545796,"landmarks":["Belém Tower","Alfama"]}'
PROMPT = "Give me facts about Lisbon as JSON."


def cleaned_schema() -> dict[str, Any]:
    """SCHEMA as Claude's structured output takes it: `minimum` is no keyword of Claude's subset,
    so it leaves the schema; everything else (`additionalProperties: false` included) stays."""
    out = copy.deepcopy(SCHEMA)
    del out["properties"]["population"]["minimum"]
    return out


def without_population_description(schema: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The schema minus the description the gateway wrote for `population`, and that description."""
    out = copy.deepcopy(schema)
    return out, out["properties"]["population"].pop("description", "")


def script(body: Any, _headers: Mapping[str, str], path: str) -> Reply:
    if path == "/v1/messages" and isinstance(body, dict):
        return anthropic_text(ANSWER_TEXT, model=CLAUDE)
    if path.startswith("/model/") and path.endswith("/converse-stream"):
        return bedrock_text(ANSWER_TEXT)
    return empty_reply(404)


@pytest.fixture(scope="module")
def upstream() -> Iterator[FakeUpstream]:
    with FakeUpstream(script) as up:
        yield up


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory, upstream: FakeUpstream) -> Iterator[MitmDump]:
    here = tmp_path_factory.mktemp("output-schema")
    routes = here / "routes.toml"
    routes.write_text(
        f'[[route]]\nmodel = "{ANTHROPIC_CLIENT_MODEL}"\nupstream = "anthropic"\n'
        f'base_url = "{upstream.url}"\ntarget_model = "{CLAUDE}"\nkey_env = "ANTHROPIC_API_KEY"\n\n'
        f'[[route]]\nmodel = "{BEDROCK_CLIENT_MODEL}"\nupstream = "bedrock"\n'
        f'base_url = "{upstream.url}"\ntarget_model = "{BEDROCK_CLAUDE}"\n'
        'key_env = "AWS_BEARER_TOKEN_BEDROCK"\n')
    env: dict[str, str | None] = {
        "ANTHROPIC_API_KEY": ANTHROPIC_KEY, "AWS_BEARER_TOKEN_BEDROCK": BEDROCK_KEY,
        "AWS_ACCESS_KEY_ID": None, "AWS_SECRET_ACCESS_KEY": None, "AWS_PROFILE": None}
    with codex_mitmdump(here / "mitm", scripts=[GATEWAY_ADDON], env=env,
                        options={"gateway_config": str(routes), "gateway_aws_region": "us-west-2"}) as mitm:
        yield mitm


def run_with_schema(tmp_path: Path, mitm: MitmDump, model: str) -> CodexRun:
    work = tmp_path / "work"
    work.mkdir()
    schema_file = tmp_path / "schema.json"
    schema_file.write_text(json.dumps(SCHEMA, indent=2))
    setup = openai_provider_setup(tmp_path / "codex", proxy_url=mitm.url, ca_cert=mitm.ca_cert, model=model)
    return run_codex_exec(setup, PROMPT, work, timeout=180, extra_args=["--output-schema", str(schema_file)])


def requests_to(upstream: FakeUpstream, prefix: str, since: int) -> list[Received]:
    return [r for r in upstream.requests[since:] if r.method == "POST" and r.path.startswith(prefix)]


def context(run: CodexRun, mitm: MitmDump, upstream: FakeUpstream) -> str:
    return f"{run.describe()}\n--- mitmdump ---\n{mitm.log}\n--- upstream errors ---\n{upstream.errors}"


def test_anthropic_gets_the_cleaned_schema_as_output_config_and_codex_prints_claudes_json(
        tmp_path: Path, gateway: MitmDump, upstream: FakeUpstream) -> None:
    since = len(upstream.requests)
    run = run_with_schema(tmp_path, gateway, ANTHROPIC_CLIENT_MODEL)

    about = context(run, gateway, upstream)
    assert run.returncode == 0, about
    assert run.final_message == ANSWER_TEXT, about
    (request,) = requests_to(upstream, "/v1/messages", since)
    assert request.json["model"] == CLAUDE
    assert request.header("x-api-key") == ANTHROPIC_KEY
    output_format = request.json["output_config"]["format"]
    assert output_format["type"] == "json_schema"
    schema, said = without_population_description(output_format["schema"])
    assert schema == cleaned_schema()
    assert "minimum" in said  # what Claude cannot be forced to do is still told


def test_bedrock_gets_the_cleaned_schema_as_text_format_and_codex_prints_claudes_json(
        tmp_path: Path, gateway: MitmDump, upstream: FakeUpstream) -> None:
    since = len(upstream.requests)
    run = run_with_schema(tmp_path, gateway, BEDROCK_CLIENT_MODEL)

    about = context(run, gateway, upstream)
    assert run.returncode == 0, about
    assert run.final_message == ANSWER_TEXT, about
    (request,) = requests_to(upstream, "/model/", since)
    assert request.path == f"/model/{BEDROCK_CLAUDE}/converse-stream"
    assert request.header("authorization") == f"Bearer {BEDROCK_KEY}"
    text_format = request.json["outputConfig"]["textFormat"]
    assert text_format["type"] == "json_schema"
    definition = text_format["structure"]["jsonSchema"]
    assert definition["name"] == "codex_output_schema"
    schema, said = without_population_description(json.loads(definition["schema"]))
    assert schema == cleaned_schema()
    assert "minimum" in said

"""The real Codex CLI through mitmdump + ``addon/gateway.py`` to a fake Anthropic Messages upstream.

Two setups, the same two-turn scenario:

- regular proxy mode, built-in ``openai`` provider, model ``gpt-5.5``: Claude answers with a ``tool_use`` for
  the freeform ``apply_patch`` tool, which the gateway must turn into a ``custom_tool_call``;
- reverse mode, custom provider, Responses Lite code-mode model: Claude answers with a ``tool_use`` for the
  freeform JavaScript ``exec`` tool, which runs a nested ``exec_command``.

Turn 2 (the request carrying the ``tool_result``) gets the closing text. The harness itself is proven without
the addon by ``test_codex_harness.py``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.codex_cli import (
    CLIENT_API_KEY,
    LITE_MODEL,
    REPO_ROOT,
    CodexRun,
    MitmDump,
    codex_mitmdump,
    custom_provider_setup,
    openai_provider_setup,
    run_codex_exec,
)
from tests.support.fake_upstream import (
    FakeUpstream,
    Reply,
    Script,
    anthropic_text,
    anthropic_tool_results,
    anthropic_tool_use,
    empty_reply,
    refuse_everything,
)
from tests.support.loopback_http import Received

pytestmark = [pytest.mark.codex, pytest.mark.timeout(420)]

GATEWAY_ADDON = REPO_ROOT / "addon" / "gateway.py"
UPSTREAM_KEY = "sk-ant-test-upstream"
UPSTREAM_MODEL = LITE_MODEL
CLOSING = "done: patched"
TOOL_ID = "toolu_01E2Etest"
PATCH = "*** Begin Patch\n*** Add File: hello.txt\n+hello from claude\n*** End Patch\n"
JS = 'const r = await tools.exec_command({cmd: "echo hi > js.txt"});\ntext(r);\n'


@dataclass(frozen=True)
class Scenario:
    tool_name: str  # the Codex tool Claude calls
    tool_input: str  # the freeform text that tool must receive
    text_before: str | None = None


def is_messages_request(body: Any) -> bool:
    return isinstance(body, dict) and isinstance(body.get("messages"), list)


def names_tool(upstream_name: str, name: str, *, exact: bool) -> bool:
    # A gateway may prefix namespaced tools (e.g. `clock__sleep`); exact names are preferred when present.
    return upstream_name == name or (
        not exact and upstream_name.endswith(("__" + name, "." + name, "_" + name))
    )


def find_tool(body: Mapping[str, Any], name: str) -> dict[str, Any] | None:
    """The upstream tool declaration for the Codex tool ``name``."""
    tools = [t for t in body.get("tools") or [] if isinstance(t, dict)]
    for exact in (True, False):
        if found := [t for t in tools if names_tool(str(t.get("name", "")), name, exact=exact)]:
            return found[0]
    return None


def freeform_property(tool: Mapping[str, Any]) -> str | None:
    """The (first) required string property: where a gateway puts a freeform tool's raw text."""
    schema = tool.get("input_schema") or {}
    properties = schema.get("properties") or {}
    names = [n for n in schema.get("required") or [] if (properties.get(n) or {}).get("type") == "string"]
    return names[0] if names else None


def anthropic_script(scenario: Scenario) -> Script:
    """Turn 1: Claude calls the scenario's tool. Any request carrying a tool_result: the closing text.

    Deciding by content (not by request count) keeps the script right if Codex retries a request. The tool
    name and wrapper property are read from the request so the script follows the gateway's naming.
    """

    def script(body: Any, _headers: Mapping[str, str], _path: str) -> Reply:
        if not is_messages_request(body):
            return empty_reply(404)
        if anthropic_tool_results(body):
            return anthropic_text(CLOSING, model=UPSTREAM_MODEL)
        tool = find_tool(body, scenario.tool_name) or {"name": scenario.tool_name}
        wrapper = freeform_property(tool) or "input"
        return anthropic_tool_use(
            tool["name"], {wrapper: scenario.tool_input}, TOOL_ID, scenario.text_before, model=UPSTREAM_MODEL
        )

    return script


@pytest.fixture
def black_hole() -> Iterator[FakeUpstream]:
    """A loopback proxy that refuses everything: Codex's start-up calls must not leave the machine."""
    with FakeUpstream(refuse_everything) as hole:
        yield hole


def gateway(tmp_path: Path, upstream: FakeUpstream, mode: str | None) -> MitmDump:
    if not GATEWAY_ADDON.exists():
        pytest.fail(f"{GATEWAY_ADDON} does not exist yet")
    return codex_mitmdump(
        tmp_path / "mitm",
        mode=mode,
        scripts=[GATEWAY_ADDON],
        options={
            "gateway_upstream": "anthropic",
            "gateway_base_url": upstream.url,
            "gateway_model": UPSTREAM_MODEL,
            "gateway_key_env": "ANTHROPIC_API_KEY",  # a local upstream gets only a key it names
        },
        env={"ANTHROPIC_API_KEY": UPSTREAM_KEY},
    )


def messages_requests(upstream: FakeUpstream) -> list[Received]:
    return [r for r in upstream.requests if is_messages_request(r.json)]


def assert_upstream_auth(requests: list[Received]) -> None:
    for request in requests:
        credentials = {request.header("x-api-key"), request.header("authorization")}
        assert credentials & {UPSTREAM_KEY, f"Bearer {UPSTREAM_KEY}"}, request.headers
        # The client's key must be stripped, not forwarded alongside the upstream key.
        assert CLIENT_API_KEY not in repr(request.headers)
        assert CLIENT_API_KEY.encode() not in request.body


def assert_two_turns(upstream: FakeUpstream, mitm: MitmDump, run: CodexRun, scenario: Scenario) -> None:
    context = f"{run.describe()}\n--- mitmdump ---\n{mitm.log}\n--- upstream errors ---\n{upstream.errors}"
    assert run.returncode == 0, context
    assert CLOSING in run.final_message, context
    requests = messages_requests(upstream)
    assert len(requests) == 2, context
    first, second = requests[0].json, requests[1].json
    assert first["model"] == UPSTREAM_MODEL
    assert first.get("stream") is True
    tool = find_tool(first, scenario.tool_name)
    assert tool is not None, [t.get("name") for t in first.get("tools") or []]
    assert freeform_property(tool), tool.get("input_schema")
    assert [r["tool_use_id"] for r in anthropic_tool_results(second)] == [TOOL_ID]
    assert_upstream_auth(requests)
    assert mitm.upstream_hosts() == {"127.0.0.1"}, mitm.log


def upstream_tool_names(upstream: FakeUpstream) -> set[str]:
    return {str(t.get("name")) for t in messages_requests(upstream)[0].json.get("tools") or []}


def test_regular_mode_openai_provider_apply_patch(tmp_path: Path) -> None:
    scenario = Scenario("apply_patch", PATCH, text_before="Creating the file.")
    work = tmp_path / "work"
    work.mkdir()
    with FakeUpstream(anthropic_script(scenario)) as up, gateway(tmp_path, up, mode=None) as mitm:
        setup = openai_provider_setup(tmp_path / "codex", proxy_url=mitm.url, ca_cert=mitm.ca_cert)
        run = run_codex_exec(setup, "create hello.txt", work, timeout=180)

    assert_two_turns(up, mitm, run, scenario)
    assert (work / "hello.txt").read_text() == "hello from claude\n"
    # gpt-5.5's function tools (the hosted web_search / tool_search may be dropped by the gateway).
    assert {"exec_command", "write_stdin", "apply_patch", "view_image"} <= upstream_tool_names(up)


def test_reverse_mode_lite_code_mode_exec(tmp_path: Path, black_hole: FakeUpstream) -> None:
    scenario = Scenario("exec", JS)
    work = tmp_path / "work"
    work.mkdir()
    with (
        FakeUpstream(anthropic_script(scenario)) as up,
        gateway(tmp_path, up, mode="reverse:https://api.openai.com") as mitm,
    ):
        setup = custom_provider_setup(tmp_path / "codex", base_url=f"{mitm.url}/v1", proxy_url=black_hole.url)
        run = run_codex_exec(setup, "write js.txt", work, timeout=180)

    assert_two_turns(up, mitm, run, scenario)
    assert (work / "js.txt").read_text() == "hi\n"
    # Tools from the additional_tools item: the `functions` namespace and the `clock` namespace.
    names = upstream_tool_names(up)
    assert any(names_tool(n, "wait", exact=False) for n in names), names
    assert any(names_tool(n, "sleep", exact=False) for n in names), names

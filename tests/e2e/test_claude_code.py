"""The real Claude Code 2.1.328 (`claude -p`) through real mitmdump, reverse mode, to each of the five
upstreams' fakes, OpenAI Responses included (docs/claude-code.md "Set-ups"): a plain answer, its
Bash tool run and read, a file written then edited, a second request carrying the first one's
reasoning state back byte-exact,
and a 429 it waits on and resumes. Every answer the gateway sent validates against the anthropic
SDK's stream events (the captures), and the dropped report names what did not cross.

`claude-via-<dialect>` is routed to that dialect's fake; any other model would go on untouched
to the reverse target, a fake standing in for Anthropic itself, which must see nothing."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from anthropic.types.shared import ErrorResponse

from tests.e2e.claude_code_upstreams import (
    EXPECTED_STATE,
    THINKING_TOOL,
    rate_limited,
    replayed_state,
    responses_text,
    responses_tool,
)
from tests.e2e.targets import TARGETS as CODEX_TARGETS
from tests.e2e.targets import Target, write_routes
from tests.support.claude_code_cli import CLIENT_KEY, ClaudeRun, run_claude
from tests.support.fake_upstream import FakeUpstream, Reply, empty_reply
from tests.support.mitmdump import GATEWAY, MitmDump
from tests.translators.messages_client.sdk import validate_stream

pytestmark = pytest.mark.timeout(300)

ANSWERS = Path(__file__).with_name("client_answers.py")
RESPONSES = Target("responses", "gpt-5.2", lambda text, _n: responses_text(text),
                   lambda _n: responses_tool("exec_command", {"cmd": "ls"}, "call_e2e1"))
"""OpenAI Responses, through the IR for this client (docs/responses.md "As an upstream of other clients")."""
TARGETS = (*CODEX_TARGETS, RESPONSES)
TOOL_TARGETS = {t.dialect: t for t in TARGETS}
OFFLINE = r"#!(~d ^127\.0\.0\.1$ | ~u api\.anthropic\.com/v1/messages | ~u api\.anthropic\.com/v1/models)#404"
"""mitmproxy's block_list: every request but loopback and the Messages paths is answered 404 by the
proxy itself (Claude Code's start-up settings fetches included), so nothing leaves the machine."""
BILLING = ["system[0]"]
"""What of Claude Code's first request crosses to no upstream: its billing line (`system[0]`,
read by Anthropic's billing, not the model), cosmetic (docs/claude-code.md "The decoder's fields")."""
MARKS = ["system[1].cache_control", "system[2].cache_control", "messages[1].content[0].cache_control"]
"""Its cache breakpoints, which only Anthropic and Bedrock (Claude) carry; the others report them
dropped, cosmetic (docs/claude-code.md "Prompt caching")."""
COMMON = [*BILLING, *MARKS]
DEFERRED = 10
"""`tools[10]`, DeferredToolPlaceholder: held back until a tool_reference loads it (a note)."""
SCHEMAS = [f"tools[{i}].input_schema.$schema" for i in range(12) if i != DEFERRED]
USER = "metadata.user_id"
"""The end-user id, named by the Messages field it came from (docs/claude-code.md "The report's words")."""
DROPPED = {
    "anthropic": (BILLING, BILLING),
    "chat": (COMMON, COMMON),
    # Gemini's schema dialect has no `$schema` and no `exclusiveMinimum` (Read's `limit`), and
    # no end-user field
    "gemini": ([*BILLING, *SCHEMAS[:5], "tools[4].input_schema.properties.limit.exclusiveMinimum",
                *SCHEMAS[5:], USER, *MARKS], [*BILLING, USER, *MARKS]),
    "bedrock": ([*BILLING, USER], [*BILLING, USER]),  # Converse has no end-user field
    "responses": (COMMON, COMMON),
}
"""target -> (dropped, the cosmetic ones among them): exactly what did not cross."""


class Scripted:
    """A fake upstream answering each model turn with the next reply of a plan (the last one
    repeated); a request without a body (a models-endpoint GET) gets 404."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.plan: list[Reply] = []
        self.turns: list[tuple[Any, Mapping[str, str]]] = []

    def __call__(self, body: Any, headers: Mapping[str, str], _path: str) -> Reply:
        if not isinstance(body, dict):
            return empty_reply(404)
        if not self.target.admits(headers):
            return empty_reply(403)
        self.turns.append((body, dict(headers)))
        return self.plan.pop(0) if len(self.plan) > 1 else self.plan[0]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("claude_code")
    scripts = {t.dialect: Scripted(t) for t in TARGETS}
    anthropic_itself = FakeUpstream(lambda body, headers, path: empty_reply(500))
    fakes = {d: FakeUpstream(s) for d, s in scripts.items()}
    with anthropic_itself:
        for fake in fakes.values():
            fake.__enter__()
        try:
            write_routes(tmp / "routes.toml", [
                {"model": f"claude-via-{t.dialect}", "upstream": t.dialect, "base_url": fakes[t.dialect].url,
                 "target_model": t.model, **t.route} for t in TARGETS])
            env: dict[str, str | None] = {k: v for t in TARGETS for k, v in t.env.items()}
            env["CLIENT_ANSWERS_DIR"] = str(tmp / "answers")
            with MitmDump(tmp / "mitm", mode=f"reverse:{anthropic_itself.url}", scripts=(GATEWAY, ANSWERS),
                          options={"gateway_config": str(tmp / "routes.toml"),
                                   "gateway_capabilities": "table"}, env=env) as mitm:
                yield {"mitm": mitm, "scripts": scripts, "anthropic": anthropic_itself,
                       "answers": tmp / "answers", "tmp": tmp}
                assert not anthropic_itself.requests, "a request reached the stand-in for Anthropic"
        finally:
            for fake in fakes.values():
                fake.__exit__(None, None, None)


def reports(world: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each answered flow's report (its `flow.metadata["gateway"]`) by flow id."""
    folder = Path(world["answers"])
    if not folder.exists():
        return {}
    return {p.stem: json.loads(p.read_text()) for p in folder.glob("*.report")}


def claude(world: dict[str, Any], target: Target, prompt: str, plan: list[Reply],
           tmp_path: Path, *, stream_json: bool = True) -> tuple[ClaudeRun, Scripted, list[dict[str, Any]]]:
    """One `claude -p` run on the target's route: the run, the fake's turns, the reports of the
    flows it made."""
    script: Scripted = world["scripts"][target.dialect]
    script.plan, script.turns = plan, []
    before = reports(world)
    work = tmp_path / "work"
    work.mkdir()
    run = run_claude(prompt, base_url=world["mitm"].url, home=tmp_path / "home", work=work,
                     model=f"claude-via-{target.dialect}", stream_json=stream_json)
    assert run.returncode == 0, f"{run.describe()}\n--- mitmdump ---\n{world['mitm'].log[-4000:]}"
    return run, script, [r for flow, r in reports(world).items() if flow not in before]


def text(target: Target, said: str) -> Reply:
    return target.text(said, 30)


def tool(target: Target, name: str, tool_input: dict[str, Any], call_id: str = "call_cc01") -> Reply:
    if target.dialect == "anthropic":
        from tests.support.fake_upstream import anthropic_tool_use
        return anthropic_tool_use(name, tool_input, f"toolu_{call_id}")
    if target.dialect == "chat":
        from tests.support.fake_upstream import chat_tool_call
        return chat_tool_call(name, tool_input, call_id)
    if target.dialect == "responses":
        return responses_tool(name, tool_input, call_id)
    if target.dialect == "gemini":
        from tests.support.fake_upstream import gemini_function_call
        return gemini_function_call(name, tool_input)
    from tests.support.fake_upstream import bedrock_tool_use
    return bedrock_tool_use(name, tool_input, f"tooluse_{call_id}")


@pytest.mark.parametrize("target", TARGETS, ids=str)
def test_a_plain_answer(world: dict[str, Any], target: Target, tmp_path: Path) -> None:
    said = f"hi from {target.dialect}"
    run, script, flows = claude(world, target, "say hi", [text(target, said)], tmp_path)
    assert run.result is not None and run.result["result"] == said
    (body, headers), = script.turns
    assert CLIENT_KEY not in json.dumps(headers)  # its key stays with the gateway
    assert "say hi" in json.dumps(body)
    (report,) = flows
    assert (report["upstream"], report["client_model"]) == (target.dialect, f"claude-via-{target.dialect}")
    assert (report["dropped"], report["cosmetic"]) == DROPPED[target.dialect]  # every other field crossed
    notes = [re.sub(r"output limit \d+ lowered", "output limit N lowered", n) for n in report["notes"]]
    assert notes == ["deferred tools not loaded by a tool_reference were not offered: "
                     "DeferredToolPlaceholder", *FITTED.get(target.dialect, [])]


FITTED = {"chat": [
    # Claude Code 2.1.328 sends a `role: "system"` message after its first user message; a chat
    # template of an open model takes a system message only first (docs/chat.md "System first")
    "messages[1]: system message moved into the opening system message (chat templates of open models "
    "take a system message only first)",
    # its max_tokens (32000 for `-p`, 128000 in a session) is above deepseek-chat's (docs/models.md)
    "output limit N lowered to 8192: deepseek-chat's output limit",
]}
"""The notes of fitting Claude Code's request to the model, per upstream (docs/models.md)."""


@pytest.mark.parametrize("target", TARGETS, ids=str)
def test_its_bash_tool_runs_and_the_result_goes_back(world: dict[str, Any], target: Target,
                                                    tmp_path: Path) -> None:
    command = {"command": "echo gateway-bash-$((6*7))", "description": "Print a marker"}
    run, script, _flows = claude(world, target, "run the marker command",
                            [tool(target, "Bash", command), text(target, "the command printed it")], tmp_path)
    assert any("gateway-bash-42" in r for r in run.tool_results()), run.describe()
    assert len(script.turns) == 2
    assert "gateway-bash-42" in json.dumps(script.turns[1][0])  # the upstream reads the tool's output
    assert run.result is not None and run.result["result"] == "the command printed it"


@pytest.mark.parametrize("target", TARGETS, ids=str)
def test_it_writes_then_edits_a_file(world: dict[str, Any], target: Target, tmp_path: Path) -> None:
    path = tmp_path / "work" / "notes.txt"
    write = {"file_path": str(path), "content": "written through the gateway\n"}
    edit = {"file_path": str(path), "old_string": "written", "new_string": "edited"}
    plan = [tool(target, "Write", write, "w1"), tool(target, "Edit", edit, "e1"), text(target, "done")]
    run, script, _flows = claude(world, target, "write and edit notes.txt", plan, tmp_path)
    assert path.read_text() == "edited through the gateway\n", run.describe()
    assert len(script.turns) == 3


@pytest.mark.parametrize("target", TARGETS, ids=str)
def test_the_reasoning_state_comes_back_byte_exact(world: dict[str, Any], target: Target,
                                                  tmp_path: Path) -> None:
    command = {"command": "echo thought-through", "description": "Print"}
    plan = [THINKING_TOOL[target.dialect]("Bash", command, "call_think1"), text(target, "thought and done")]
    # its plain output, as a user's `claude -p`: it asks for the thinking as a signature alone
    run, script, _flows = claude(world, target, "think, then run a command", plan, tmp_path,
                                 stream_json=False)
    assert len(script.turns) == 2, run.describe()
    assert replayed_state(target.dialect, script.turns[1][0]) == EXPECTED_STATE[target.dialect]


@pytest.mark.parametrize("target", TARGETS, ids=str)
def test_a_429_is_waited_on_and_resumed(world: dict[str, Any], target: Target, tmp_path: Path) -> None:
    plan = [rate_limited(target.dialect), text(target, "after the wait")]
    run, script, _flows = claude(world, target, "say hi", plan, tmp_path)
    assert len(script.turns) == 2
    assert run.result is not None and run.result["result"] == "after the wait"


def test_every_answer_it_got_validates_against_the_sdk_events(world: dict[str, Any]) -> None:
    """Runs last in this module: every answer Claude Code got in the runs above."""
    answers = sorted(Path(world["answers"]).iterdir())
    streams = [a for a in answers if a.suffix == ".sse"]
    assert len(streams) >= 4 * 5, [a.name for a in answers]
    for answer in streams:
        message, error = validate_stream(answer.read_bytes())
        assert error is None and message is not None, answer
    for answer in answers:
        if answer.suffix == ".json":  # the 429s: Anthropic's error shape
            assert ErrorResponse.model_validate_json(answer.read_bytes()).error.type == "rate_limit_error"


def test_regular_mode_through_https_proxy_with_the_mitmproxy_ca(tmp_path: Path) -> None:
    """docs/claude-code.md "Set-ups": no base URL; the gateway as HTTPS_PROXY takes
    api.anthropic.com's Messages paths. Everything else is answered locally (nothing leaves)."""
    target = TOOL_TARGETS["chat"]
    script = Scripted(target)
    script.plan = [text(target, "hi through the proxy")]
    with FakeUpstream(script) as up:
        write_routes(tmp_path / "routes.toml", [
            {"model": "claude-*", "upstream": "chat", "base_url": up.url, "target_model": target.model}])
        with MitmDump(tmp_path / "mitm", options={"gateway_config": str(tmp_path / "routes.toml"),
                                                  "gateway_capabilities": "table"},
                      block_list=[OFFLINE]) as mitm:
            (tmp_path / "work").mkdir()
            run = run_claude("say hi", base_url=None, proxy_url=mitm.url, ca_cert=mitm.ca_cert,
                             home=tmp_path / "home", work=tmp_path / "work")
    assert run.returncode == 0, f"{run.describe()}\n{mitm.log[-3000:]}"
    assert run.result is not None and run.result["result"] == "hi through the proxy"
    assert len(script.turns) == 1

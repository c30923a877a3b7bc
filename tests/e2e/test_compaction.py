"""The real Codex CLI compacts remotely through the gateway (docs/compaction.md).

Codex's built-in ``openai`` provider compacts by a ``compaction_trigger`` request and expects one
``compaction`` item back. Forced cheaply: ``model_auto_compact_token_limit=2000`` and a fake upstream
that reports 5,000 input tokens on the turn that calls a tool, so Codex compacts before the follow-up
request. The summary request must reach the upstream without tools and with the gateway's instruction,
Codex must finish, and the follow-up request must carry the summary as a user message.

Two setups: regular proxy mode to an Anthropic upstream, and ``openai_base_url`` (reverse mode) to a
Chat Completions upstream.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
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
from tests.support.fake_upstream import (
    FakeUpstream,
    Reply,
    anthropic_text,
    anthropic_tool_use,
    chat_text,
    chat_tool_call,
    empty_reply,
    refuse_everything,
)
from translators import compaction

pytestmark = [pytest.mark.codex, pytest.mark.timeout(420)]

GATEWAY_ADDON = REPO_ROOT / "addon" / "gateway.py"
LIMIT = ["-c", "model_auto_compact_token_limit=2000"]
SUMMARY = "Goal: list the workspace. Done: ran ls. Next: report the files."
CLOSING = "done after compaction"
OVER_LIMIT = 5000
UNDER_LIMIT = 300


def texts(body: Any) -> list[tuple[str, str]]:
    """(role, text) of every text in an Anthropic or Chat request body, in order."""
    out: list[tuple[str, str]] = []
    for message in body.get("messages") or [] if isinstance(body, dict) else []:
        content = message.get("content")
        if isinstance(content, str):
            out.append((message.get("role"), content))
        elif isinstance(content, list):
            out += [(message.get("role"), b["text"]) for b in content if isinstance(b, dict) and "text" in b]
    return out


def is_summary_request(body: Any) -> bool:
    said = texts(body)
    return bool(said) and said[-1] == ("user", compaction.INSTRUCTION)


def carries_summary(body: Any) -> bool:
    return ("user", compaction.REPLAY_PREFIX + SUMMARY) in texts(body)


def script(text: Callable[..., Reply], tool_call: Callable[[], Reply]) -> Callable[..., Reply]:
    """Summary request: the summary, small usage. After the summary: the closing text. Otherwise:
    a tool call reported over the compaction limit."""

    def answer(body: Any, _headers: Mapping[str, str], _path: str) -> Reply:
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return empty_reply(404)
        if is_summary_request(body):
            return text(SUMMARY, UNDER_LIMIT)
        if carries_summary(body):
            return text(CLOSING, UNDER_LIMIT)
        return tool_call()

    return answer


def anthropic_script() -> Callable[..., Reply]:
    return script(lambda t, n: anthropic_text(t, model="claude-sonnet-4-6", input_tokens=n),
                  lambda: anthropic_tool_use("exec_command", {"cmd": "ls"}, "toolu_01cmp",
                                             model="claude-sonnet-4-6", input_tokens=OVER_LIMIT))


def chat_script() -> Callable[..., Reply]:
    return script(lambda t, n: chat_text(t, prompt_tokens=n),
                  lambda: chat_tool_call("exec_command", {"cmd": "ls"}, "call_cmp1",
                                         prompt_tokens=OVER_LIMIT))


@pytest.fixture
def black_hole() -> Iterator[FakeUpstream]:
    with FakeUpstream(refuse_everything) as hole:
        yield hole


def gateway(tmp_path: Path, upstream: FakeUpstream, dialect: str, model: str, mode: str | None) -> MitmDump:
    return codex_mitmdump(
        tmp_path / "mitm", mode=mode, scripts=[GATEWAY_ADDON],
        options={"gateway_upstream": dialect, "gateway_base_url": upstream.url, "gateway_model": model},
        env={"ANTHROPIC_API_KEY": "sk-ant-test", "DEEPSEEK_API_KEY": "sk-ds-test"})


def assert_compacted(run: CodexRun, upstream: FakeUpstream, mitm: MitmDump) -> None:
    context = f"{run.describe()}\n--- mitmdump ---\n{mitm.log}\n--- upstream errors ---\n{upstream.errors}"
    assert run.returncode == 0, context
    assert CLOSING in run.final_message, context
    bodies = [r.json for r in upstream.requests if isinstance(r.json, dict) and "messages" in r.json]
    summaries = [b for b in bodies if is_summary_request(b)]
    assert len(summaries) == 1, context
    summary_request = summaries[0]
    assert "tools" not in summary_request and "tool_choice" not in summary_request
    said = "\n".join(text for _, text in texts(summary_request))
    assert "exec_command" in said and '"cmd"' in said  # the tool call, as text
    index = bodies.index(summary_request)
    assert carries_summary(bodies[index + 1]), json.dumps(bodies[index + 1])[:2000]
    assert "remote compaction" not in run.stderr.lower(), context
    assert mitm.upstream_hosts() == {"127.0.0.1"}, mitm.log


def test_regular_mode_compacts_through_anthropic(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with FakeUpstream(anthropic_script()) as up, gateway(tmp_path, up, "anthropic", "claude-sonnet-4-6",
                                                         None) as mitm:
        setup = openai_provider_setup(tmp_path / "codex", proxy_url=mitm.url, ca_cert=mitm.ca_cert)
        run = run_codex_exec(setup, "list the workspace", work, timeout=180, extra_args=LIMIT)
    assert_compacted(run, up, mitm)


def test_openai_base_url_mode_compacts_through_chat(tmp_path: Path, black_hole: FakeUpstream) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with FakeUpstream(chat_script()) as up, gateway(tmp_path, up, "chat", "deepseek-chat",
                                                    "reverse:https://api.openai.com") as mitm:
        setup = openai_provider_setup(tmp_path / "codex", proxy_url=black_hole.url,
                                      openai_base_url=f"{mitm.url}/v1", no_proxy="127.0.0.1,localhost")
        run = run_codex_exec(setup, "list the workspace", work, timeout=180, extra_args=LIMIT)
    assert_compacted(run, up, mitm)

"""The real Codex CLI compacts through the gateway to each of the four targets, in each of the three
setups (docs/compaction.md, docs/codex.md "Compaction").

Forced cheaply: `model_auto_compact_token_limit=2000` and a fake upstream that reports 5,000 input
tokens on the turn that calls a tool, so Codex compacts before the follow-up request.

- Regular proxy mode and `-c openai_base_url=...` (the built-in `openai` provider) compact remotely:
  the gateway's summary request must reach the upstream without tools, with the history (the tool
  call as text) and the gateway's instruction last; the follow-up request carries the summary as a
  user message opening with the gateway's replay line.
- A custom provider compacts locally: Codex's own summary prompt is an ordinary turn the gateway
  translates; the follow-up carries the summary in Codex's own user message.

Codex must finish (exit 0, the closing text) and nothing may leave the machine.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.targets import (
    REMOTE,
    SETUPS,
    TARGETS,
    TOOL,
    Outcome,
    Target,
    run_codex,
    script,
    texts,
    turns,
)
from tests.support.fake_upstream import FakeUpstream, refuse_everything
from translators.features import compaction

pytestmark = [pytest.mark.codex, pytest.mark.timeout(420)]

LIMIT = ("-c", "model_auto_compact_token_limit=2000")
OVER_LIMIT = 5000
SUMMARY = "Goal: list the workspace. Done: ran ls. Next: report the files."
CLOSING = "done after compaction"
LOCAL_PROMPT = "You are performing a CONTEXT CHECKPOINT COMPACTION"
"""How Codex's own (local) compaction request begins (docs/codex.md "Compaction")."""
LOCAL_REPLAY = "Another language model started to solve this problem"
"""How Codex's own message carrying a local summary begins."""
COMPACTION_ERRORS = ("compact task", "remote compaction")
"""What Codex prints when a compaction fails ("Error running remote compact task", "remote compaction
v2 expected exactly one compaction output item")."""
TOOL_KEYS = ("tools", "tool_choice", "toolConfig")
"""Where each dialect declares tools: Anthropic and Chat `tools`/`tool_choice`, Gemini `tools`/
`toolConfig`, Bedrock `toolConfig`."""


def is_remote_summary_request(body: Any) -> bool:
    said = texts(body)
    return bool(said) and said[-1] == ("user", compaction.INSTRUCTION)


def is_local_summary_request(body: Any) -> bool:
    said = texts(body)
    return bool(said) and said[-1][0] == "user" and said[-1][1].startswith(LOCAL_PROMPT)


def carries_remote_summary(body: Any) -> bool:
    return ("user", compaction.REPLAY_PREFIX + SUMMARY) in texts(body)


def carries_local_summary(body: Any) -> bool:
    return any(role == "user" and text.startswith(LOCAL_REPLAY) and SUMMARY in text
               for role, text in texts(body))


@pytest.fixture
def black_hole() -> Iterator[FakeUpstream]:
    with FakeUpstream(refuse_everything) as hole:
        yield hole


def compact(tmp_path: Path, setup: str, target: Target, black_hole: FakeUpstream) -> Outcome:
    remote = setup in REMOTE
    answer = script(target, OVER_LIMIT, summary=SUMMARY, closing=CLOSING,
                    is_summary_request=is_remote_summary_request if remote else is_local_summary_request)
    return run_codex(tmp_path, setup, target, answer, black_hole, extra_args=LIMIT)


@pytest.mark.parametrize("setup", SETUPS)
@pytest.mark.parametrize("target", TARGETS, ids=str)
def test_codex_compacts_and_the_next_turn_carries_the_summary(tmp_path: Path, setup: str, target: Target,
                                                              black_hole: FakeUpstream) -> None:
    outcome = compact(tmp_path, setup, target, black_hole)
    said = outcome.context()
    assert outcome.run.returncode == 0, said
    assert CLOSING in outcome.run.final_message, said
    assert not [e for e in COMPACTION_ERRORS if e in outcome.run.stderr.lower()], said
    assert outcome.mitm.upstream_hosts() == {"127.0.0.1"}, outcome.mitm.log
    bodies = turns(outcome.upstream)
    remote = setup in REMOTE
    summaries = [b for b in bodies if (is_remote_summary_request if remote else is_local_summary_request)(b)]
    assert len(summaries) == 1, said
    summary_request = summaries[0]
    if remote:
        assert not [key for key in TOOL_KEYS if key in summary_request], json.dumps(summary_request)[:3000]
        history = "\n".join(text for _, text in texts(summary_request))
        assert TOOL in history and '"cmd"' in history, history[-3000:]  # the tool call, as text
    following = bodies[bodies.index(summary_request) + 1]
    carries = carries_remote_summary if remote else carries_local_summary
    assert carries(following), json.dumps(following)[:3000]

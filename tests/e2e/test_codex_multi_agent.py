"""The real Codex 0.169 spawning sub-agents through the gateway on each upstream (docs/codex.md
"Multi-agent"): `--enable multi_agent_v2` (the `collaboration` tools) and the default tools (the
`multi_agent_v1` namespace, found through `tool_search`).

The fake plays the model. The parent spawns a child with a task, waits, sends it a second message
(v2 `followup_task`, v1 `send_input`), waits again, and answers once it has both results. The
child answers each message it is given. What must hold: the child's first request carries the
task text, as one plain text (v2: Codex wrote it in clear because the gateway's call said its
arguments are plain); the second message reaches the child; the parent's requests carry the
child's results; Codex ends with the parent's answer. Codex uses the README's custom provider
(reverse mode, catalog from the gateway), as the recorded protocol was seen with it and the
built-in provider alike (tests/data/codex/request_multi_agent_v2*.json).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.addon.e2e import sdk_turns
from tests.e2e.targets import TARGETS, Target, is_turn, run_codex, texts
from tests.support.fake_upstream import FakeUpstream, Reply, empty_reply, refuse_everything

pytestmark = [pytest.mark.codex, pytest.mark.timeout(420)]

TASK = "CHILD-TASK-7f3: count the vowels in 'gateway'"
FOLLOWUP = "FOLLOWUP-9c1: now count the consonants"
RESULT1 = "RESULT-ONE: three vowels"
RESULT2 = "RESULT-TWO: four consonants"
DONE = "PARENT-DONE: both counts in"
_AGENT_ID = re.compile(r'agent_id\\*"\s*:\s*\\*"([0-9a-f-]{36})')


@pytest.fixture
def black_hole() -> Iterator[FakeUpstream]:
    with FakeUpstream(refuse_everything) as hole:
        yield hole


class Model:
    """The fake model of one run: answers by what each translated request holds, whichever agent
    sent it; keeps every request it saw."""

    def __init__(self, target: Target, generation: str) -> None:
        self.target = target
        self.generation = generation
        self.turns: list[Any] = []
        self.lock = threading.Lock()
        self.calls = 0

    def __call__(self, body: Any, headers: Mapping[str, str], _path: str) -> Reply:
        if not is_turn(body):
            return empty_reply(404)  # the catalog's models fetch: the gateway uses its table
        if not self.target.admits(headers):
            return empty_reply(403)
        with self.lock:
            self.turns.append(body)
            self.calls += 1
            n = self.calls
        said = "\n".join(text for role, text in texts(body) if role == "user")
        if TASK in said:  # the child
            return self.text(RESULT2 if FOLLOWUP in said else RESULT1)
        whole = json.dumps(body)
        if RESULT2 in whole:
            return self.text(DONE)
        return self.v2(body, whole, n) if self.generation == "v2" else self.v1(body, whole, n)

    def text(self, said: str) -> Reply:
        return sdk_turns.text(self.target.dialect, said, stream=True)

    def call(self, body: Any, name: str, arguments: dict[str, Any], n: int) -> Reply:
        wire = next((w for w in sdk_turns.declared(body) if w == name or w.endswith("__" + name)), name)
        return sdk_turns.tool_call(self.target.dialect, wire, arguments, f"ma{n}", stream=True)

    def v2(self, body: Any, whole: str, n: int) -> Reply:
        if TASK not in whole:
            return self.call(body, "collaboration__spawn_agent",
                             {"task_name": "helper", "message": TASK, "fork_turns": "none"}, n)
        if RESULT1 in whole and FOLLOWUP not in whole:
            followup = {"target": "helper", "message": FOLLOWUP}
            return self.call(body, "collaboration__followup_task", followup, n)
        return self.call(body, "collaboration__wait_agent", {"timeout_ms": 30000}, n)

    def v1(self, body: Any, whole: str, n: int) -> Reply:
        if not any(w.endswith("__spawn_agent") for w in sdk_turns.declared(body)):
            return self.call(body, "tool_search", {"query": "spawn a sub-agent", "limit": 5}, n)
        if TASK not in whole:
            return self.call(body, "multi_agent_v1__spawn_agent", {"message": TASK}, n)
        agent = _AGENT_ID.search(whole)
        target = agent.group(1) if agent else ""
        if RESULT1 in whole and FOLLOWUP not in whole:
            return self.call(body, "multi_agent_v1__send_input", {"target": target, "message": FOLLOWUP}, n)
        return self.call(body, "multi_agent_v1__wait_agent", {"targets": [target], "timeout_ms": 30000}, n)

    def children(self) -> list[Any]:
        return [b for b in self.turns if any(TASK in t for role, t in texts(b) if role == "user")]

    def parents(self) -> list[Any]:
        return [b for b in self.turns if b not in self.children()]


GENERATIONS: dict[str, tuple[str, ...]] = {"v2": ("--enable", "multi_agent_v2"), "v1": ()}


@pytest.mark.parametrize("generation", list(GENERATIONS))
@pytest.mark.parametrize("target", TARGETS, ids=str)
def test_codex_spawns_a_child_that_gets_its_task_and_messages(tmp_path: Path, black_hole: FakeUpstream,
                                                              target: Target, generation: str) -> None:
    model = Model(target, generation)
    outcome = run_codex(tmp_path, "custom_provider", target, model, black_hole,
                        extra_args=GENERATIONS[generation])
    context = outcome.context()
    assert outcome.run.returncode == 0, context
    assert outcome.run.final_message == DONE, context
    children = model.children()
    assert children, context
    # the child's first request: the task, as one plain text (never an empty payload)
    first = [t for role, t in texts(children[0]) if role == "user"]
    assert any(TASK in t for t in first), first
    if generation == "v2":
        assert any(f"Payload:\n{TASK}" in t for t in first), first
    # the second message reached the child, and each result reached the parent
    assert any(FOLLOWUP in t for child in children for role, t in texts(child) if role == "user"), context
    parents = [json.dumps(b) for b in model.parents()]
    assert any(RESULT1 in p and RESULT2 not in p for p in parents), context
    assert any(RESULT2 in p for p in parents), context



"""How `./run test` shares the suite between pytest-xdist workers (`-n 3 --dist loadgroup`).

One work unit per test file, so a module's fixtures (a mitmdump, a PostgreSQL, the real Chat
server) start once, on one worker; tests marked `@pytest.mark.xdist_group(NAME)` form one unit
of their own, whichever files they are in. The units go out slowest first (longest processing
time first: the long ones overlap, the short ones fill the gaps at the end), by the seconds each
file took in a measured one-worker run (`SECONDS`); a file not listed weighs `PER_TEST` seconds
a test. Stale numbers cost minutes, never a result: every test still runs once, on one worker.

A test marked `alone` runs while no other test does (tests/support/turns.py).

`python -m tests.support.schedule REPORT.xml` prints a new `SECONDS` table from a `--junitxml`
report of a one-worker run (`./run test -n 0 --junitxml=REPORT.xml`).
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from collections import Counter
from typing import Any

from xdist.scheduler import LoadGroupScheduling

PER_TEST = 0.025
"""Seconds a test of a file `SECONDS` leaves out weighs (most take a few milliseconds)."""
LISTED_FROM = 3.0
"""`SECONDS` lists the files that took at least this long."""

SECONDS: dict[str, float] = {
    "tests/e2e/test_real_chat_server.py": 94,
    "tests/bench/test_smoke.py": 57,
    "tests/reliability/test_faults.py": 52,
    "tests/e2e/test_setup_mistakes.py": 33,
    "tests/e2e/test_prompt_caching.py": 33,
    "tests/e2e/test_catalog.py": 31,
    "tests/e2e/test_compaction.py": 28,
    "tests/addon/e2e/test_budgets.py": 28,
    "tests/reliability/test_credentials.py": 28,
    "tests/e2e/test_codex_websocket.py": 27,
    "tests/addon/observe/test_replay.py": 24,
    "tests/reliability/test_hostile_sockets.py": 24,
    "tests/addon/upstream/test_runner.py": 23,
    "tests/e2e/test_claude_code.py": 23,
    "tests/reliability/test_request_decoding.py": 22,
    "tests/e2e/test_codex_multi_agent.py": 19,
    "tests/e2e/test_doc_commands.py": 18,
    "tests/addon/e2e/test_codex_budget.py": 18,
    "tests/addon/e2e/test_limits.py": 17,
    "tests/addon/routes/test_capabilities.py": 17,
    "tests/reliability/test_stream_decoders.py": 16,
    "tests/addon/e2e/test_websocket.py": 16,
    "tests/reliability/test_edges.py": 16,
    "tests/addon/upstream/test_client.py": 14,
    "tests/addon/e2e/test_pools.py": 14,
    "tests/addon/observe/test_console.py": 12,
    "tests/addon/e2e/test_observability.py": 12,
    "tests/translators/messages_client/test_stream_recorded.py": 12,
    "tests/e2e/test_codex_retries.py": 12,
    "tests/reliability/test_load.py": 12,
    "tests/reliability/test_hostile_paths.py": 11,
    "tests/addon/e2e/test_shared_store.py": 11,
    "tests/translators/anthropic/test_stream.py": 11,
    "tests/addon/test_gateway_hooks.py": 11,
    "tests/addon/observe/test_unknown_options.py": 10,
    "tests/addon/e2e/test_errors.py": 10,
    "tests/addon/e2e/test_chat_upstream.py": 9,
    "tests/addon/e2e/test_messages_client_unreachable.py": 9,
    "tests/addon/e2e/test_messages_client.py": 9,
    "tests/e2e/test_claude_code_tool_images.py": 9,
    "tests/addon/e2e/test_bedrock_upstream.py": 9,
    "tests/translators/chat/test_recorded.py": 9,
    "tests/addon/e2e/test_revocation.py": 9,
    "tests/e2e/test_codex_tool_images.py": 8,
    "tests/addon/e2e/test_regular_mode.py": 8,
    "tests/addon/state/test_turns.py": 8,
    "tests/reliability/test_whole_answers.py": 8,
    "tests/addon/e2e/test_reverse_mode.py": 8,
    "tests/addon/e2e/test_clients.py": 7,
    "tests/bench/test_hooks.py": 7,
    "tests/addon/e2e/test_saved_flows.py": 7,
    "tests/browser/test_mitmweb.py": 7,
    "tests/e2e/test_codex_pools.py": 7,
    "tests/e2e/test_readme.py": 7,
    "tests/addon/e2e/test_agents_state.py": 7,
    "tests/reliability/test_hostile_logs_and_store.py": 7,
    "tests/e2e/test_codex_harness.py": 6,
    "tests/addon/test_gateway_limits.py": 5,
}


def scope_of(nodeid: str) -> str:
    """A test's work unit: its `xdist_group` (the `@NAME` suffix xdist gives the node id under
    `--dist loadgroup`), else its file."""
    if nodeid.rfind("@") > nodeid.rfind("]"):
        return nodeid.rsplit("@", 1)[1]
    return nodeid.split("::", 1)[0]


class FileScheduling(LoadGroupScheduling):
    """xdist's `loadgroup` with files as the default unit and the slowest unit sent first."""

    def __init__(self, config: Any, log: Any = None) -> None:
        super().__init__(config, log)
        self._weights: dict[str, float] = {}
        """Each unit's seconds, reckoned once: every assignment compares the units left."""

    def _split_scope(self, nodeid: str) -> str:
        return scope_of(nodeid)

    def _weight(self, scope: str, tests: dict[str, bool]) -> float:
        weights = self._weights
        if scope not in weights:
            files = {nodeid.split("::", 1)[0] for nodeid in tests}
            listed = sum(SECONDS.get(path, 0.0) for path in files)
            unlisted = sum(1 for nodeid in tests if nodeid.split("::", 1)[0] not in SECONDS)
            weights[scope] = listed + unlisted * PER_TEST
        return weights[scope]

    def _assign_work_unit(self, node: Any) -> None:
        heaviest = max(self.workqueue, key=lambda scope: self._weight(scope, self.workqueue[scope]))
        self.workqueue.move_to_end(heaviest, last=False)
        super()._assign_work_unit(node)


def table(report: str) -> dict[str, float]:
    """Seconds per test file (setup, call and teardown) in a `--junitxml` report, the slowest
    first, from `LISTED_FROM` seconds up."""
    seconds: Counter[str] = Counter()
    for case in ET.parse(report).getroot().iter("testcase"):
        module = []
        for part in case.get("classname", "").split("."):
            module.append(part)
            if part.startswith("test_"):
                break
        seconds["/".join(module) + ".py"] += float(case.get("time", 0))
    return {path: round(s) for path, s in seconds.most_common() if s >= LISTED_FROM}


if __name__ == "__main__":
    for path, seconds in table(sys.argv[1]).items():
        print(f'    "{path}": {seconds},')

"""`python -m translators request --to bedrock` and `stream --from bedrock` (translators/cli.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.translators.bedrock.frames import FIXTURES, fixture_events
from tests.translators.bedrock.support import CODEX
from tests.translators.streamcheck import assert_valid_responses_stream, done_items

ROOT = Path(__file__).resolve().parents[3]


def cli(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "translators", *args], cwd=ROOT, capture_output=True,
                          timeout=120, check=False)


def test_request_to_bedrock_prints_the_converse_path_and_body() -> None:
    done = cli("request", "--to", "bedrock", "--model", "us.anthropic.claude-sonnet-4-20250514-v1:0",
               str(CODEX / "request_followup_after_apply_patch.json"))
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert printed["path"] == "/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/converse-stream"
    uses = [b["toolUse"] for m in printed["body"]["messages"] for b in m["content"] if "toolUse" in b]
    assert [u["name"] for u in uses] == ["apply_patch"]
    assert "tools[9]" in printed["dropped"]


def test_stream_from_bedrock_turns_the_binary_fixture_into_responses_sse() -> None:
    name = "converse_stream_tool_use.eventstream"
    done = cli("stream", "--from", "bedrock", "--request", str(CODEX / "request_classic_gpt55.json"),
               "--chunk", "7", str(FIXTURES / name))
    assert done.returncode == 0, done.stderr
    payloads = assert_valid_responses_stream(done.stdout)
    start = next(p["start"]["toolUse"] for kind, p in fixture_events(name) if kind == "contentBlockStart")
    calls = [i for i in done_items(payloads) if i["type"] == "function_call"]
    assert [(c["name"], c["call_id"]) for c in calls] == [(start["name"], start["toolUseId"])]
    assert payloads[-1]["type"] == "response.completed"

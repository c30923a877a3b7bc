"""`python -m translators request --to chat` and `stream --from chat`, as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.translators.chat.chatdata import DATA, function, recorded, responses_request
from tests.translators.streamcheck import assert_valid_responses_stream, done_items

ROOT = Path(__file__).resolve().parents[3]


def _cli(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "translators", *args], cwd=ROOT, capture_output=True, timeout=120, check=False
    )


def test_request_to_chat_prints_the_chat_body() -> None:
    result = _cli(
        "request",
        "--to",
        "chat",
        "--model",
        "deepseek-chat",
        str(DATA / "codex" / "request_followup_after_apply_patch.json"),
    )
    assert result.returncode == 0, result.stderr
    printed = json.loads(result.stdout)
    assert printed["path"] == "/chat/completions"
    assert printed["body"]["model"] == "deepseek-chat"
    assert [m["role"] for m in printed["body"]["messages"]][-2:] == ["assistant", "tool"]


def test_stream_from_chat_prints_the_responses_stream(tmp_path: Path) -> None:
    request = tmp_path / "request.json"
    request.write_text(
        json.dumps(responses_request("deepseek-reasoner", [function("weather", location="string")]))
    )
    upstream = tmp_path / "upstream.sse"
    upstream.write_bytes(recorded("reasoning_then_tool_call.jsonl"))
    result = _cli("stream", "--from", "chat", "--request", str(request), "--chunk", "7", str(upstream))
    assert result.returncode == 0, result.stderr
    items = done_items(assert_valid_responses_stream(result.stdout))
    assert [(i["type"], i.get("name")) for i in items] == [("reasoning", None), ("function_call", "weather")]

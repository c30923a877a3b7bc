"""`python -m translators request --to gemini` and `stream --from gemini`, as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.translators.gemini.support import DATA, function_tool, recorded, responses_body
from tests.translators.streamcheck import DATA as SHARED_DATA
from tests.translators.streamcheck import assert_valid_responses_stream, done_items

ROOT = Path(__file__).resolve().parents[3]


def _cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "translators", *args], cwd=ROOT, input=stdin,
                          capture_output=True, timeout=120, check=False)


def test_request_to_gemini_prints_the_path_and_body() -> None:
    done = _cli("request", "--to", "gemini", "--model", "gemini-2.5-flash",
                str(SHARED_DATA / "codex" / "request_classic_gpt55.json"))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["path"] == "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    assert "exec_command" in [d["name"] for d in out["body"]["tools"][0]["functionDeclarations"]]
    assert "text.verbosity" in out["dropped"]


def test_stream_from_gemini_prints_valid_responses_sse(tmp_path: Path) -> None:
    request = tmp_path / "request.json"
    request.write_text(json.dumps(responses_body(tools=[function_tool("pelican_name_generator")])))
    done = _cli("stream", "--from", "gemini", "--request", str(request), "--chunk", "5",
                str(DATA / "json_array_function_call_with_id.json"))
    assert done.returncode == 0, done.stderr
    items = done_items(assert_valid_responses_stream(done.stdout))
    assert [i["name"] for i in items if i["type"] == "function_call"] == ["pelican_name_generator"]


def test_stream_from_gemini_reads_stdin_and_is_reproducible(tmp_path: Path) -> None:
    request = tmp_path / "request.json"
    request.write_text(json.dumps(responses_body()))
    data = recorded("text_with_trailing_signature_part.jsonl")
    first = _cli("stream", "--from", "gemini", "--request", str(request), stdin=data)
    second = _cli("stream", "--from", "gemini", "--request", str(request), "--chunk", "1", "-", stdin=data)
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout

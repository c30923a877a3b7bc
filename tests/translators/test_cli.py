"""`python -m translators`: the request and stream commands exactly as issue 2 (Build 7) states them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.data import DATA
from tests.translators.bodies import body, user
from tests.translators.messages_client.sdk import validate_stream
from tests.translators.streamcheck import assert_valid_responses_stream, codex_request, fixture
from translators import stream_translator, translate_request
from translators.cli import main
from translators.core.ids import sequential_ids

ROOT = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, name: str, content: bytes | dict) -> str:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else json.dumps(content).encode())
    return str(path)


def test_request_prints_path_body_dropped_and_notes(tmp_path, capsys):
    request = write(tmp_path, "req.json", body(user("hi"), text={"verbosity": "low"}))
    assert main(["request", "--to", "anthropic", request]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert set(printed) == {"path", "body", "dropped", "notes"}
    assert printed["path"] == "/v1/messages"
    assert printed["body"]["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}
    ]
    assert printed["dropped"] == ["text.verbosity"]
    assert printed["notes"] == []


def test_request_model_names_the_upstream_model(tmp_path, capsys):
    request = write(tmp_path, "req.json", body(user("hi")))
    assert main(["request", "--to", "anthropic", "--model", "claude-opus-4-1", request]) == 0
    assert json.loads(capsys.readouterr().out)["body"]["model"] == "claude-opus-4-1"


def test_a_refused_request_exits_2_and_prints_only_the_error(tmp_path, capsys):
    request = write(tmp_path, "req.json", body(user("hi"), {"type": "item_reference", "id": "msg_1"}))
    assert main(["request", "--to", "anthropic", request]) == 2
    printed = json.loads(capsys.readouterr().out)
    assert set(printed) == {"error"}
    assert set(printed["error"]) == {"type", "code", "message"}
    assert printed["error"]["type"] == "invalid_request_error"
    assert printed["error"]["code"] == "unsupported_feature"


def test_a_file_that_is_not_json_exits_2_with_an_error(tmp_path, capsys):
    assert main(["request", "--to", "anthropic", write(tmp_path, "req.json", b"{nope")]) == 2
    assert set(json.loads(capsys.readouterr().out)["error"]) == {"type", "code", "message"}


def test_stream_prints_the_responses_sse_the_client_would_receive(tmp_path, capsysbinary):
    request = codex_request("request_lite_functions_namespace.json")
    data = fixture("anthropic/thinking_prompt.sse")
    code = main(
        [
            "stream",
            "--from",
            "anthropic",
            "--request",
            write(tmp_path, "req.json", request),
            write(tmp_path, "up.sse", data),
        ]
    )
    assert code == 0
    out = capsysbinary.readouterr().out
    assert_valid_responses_stream(out)
    # the same bytes the API gives with deterministic ids (numbered from 1) and created_at 0
    translator = stream_translator(
        "anthropic", translate_request(request, "anthropic"), new_id=sequential_ids(), clock=lambda: 0
    )
    assert out == translator.feed(data) + translator.close()


def test_stream_output_is_the_same_for_any_chunk_size(tmp_path, capsysbinary):
    request = write(tmp_path, "req.json", codex_request("request_lite_functions_namespace.json"))
    upstream = write(tmp_path, "up.sse", fixture("anthropic/text_then_tool_use.jsonl"))
    outputs = []
    for chunk in ("0", "1", "7"):
        assert main(["stream", "--from", "anthropic", "--request", request, "--chunk", chunk, upstream]) == 0
        outputs.append(capsysbinary.readouterr().out)
    assert outputs[0] == outputs[1] == outputs[2]


def test_an_unknown_dialect_is_a_usage_error():
    with pytest.raises(SystemExit) as info:
        main(["request", "--to", "carrier-pigeon", "-"])
    assert info.value.code == 2


def python_m(*args: str, stdin: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "translators", *args],
        input=stdin,
        capture_output=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )


def test_python_m_translators_request_reads_stdin():
    done = python_m("request", "--to", "anthropic", "-", stdin=json.dumps(body(user("hi"))).encode())
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["path"] == "/v1/messages"


def test_python_m_translators_request_refused_exits_2():
    done = python_m(
        "request",
        "--to",
        "anthropic",
        stdin=json.dumps(body(user("q"), {"type": "item_reference", "id": "x"})).encode(),
    )
    assert done.returncode == 2
    assert json.loads(done.stdout)["error"]["code"] == "unsupported_feature"


def test_python_m_translators_stream_reads_the_upstream_from_stdin(tmp_path):
    request = write(tmp_path, "req.json", body(user("hi")))
    done = python_m(
        "stream",
        "--from",
        "anthropic",
        "--request",
        request,
        "-",
        stdin=fixture("anthropic/text_after_tool_result.sse"),
    )
    assert done.returncode == 0, done.stderr
    payloads = assert_valid_responses_stream(done.stdout)
    assert payloads[-1]["type"] == "response.completed"


def test_capture_replays_a_recorded_folder_deterministically(capsysbinary):
    folder = ROOT / "captures" / "codex-pelican-names-anthropic"
    assert main(["capture", str(folder)]) == 0
    first = capsysbinary.readouterr().out
    assert main(["capture", str(folder)]) == 0
    assert capsysbinary.readouterr().out == first
    payloads = assert_valid_responses_stream(first)
    assert payloads[-1]["type"] == "response.completed"


# -- a Messages client (Claude Code): its request read, its answer written, in its own dialect ------

CLAUDE_CAPTURE = ROOT / "captures" / "claude-code-pelican-names-anthropic"
CLAUDE_REQUEST = DATA / "claude_code" / "request_say_hi.json"


def _upstream_text(raw: bytes) -> str:
    """The text an Anthropic recording streamed, read from its own `text_delta` events."""
    events = [json.loads(line[5:]) for line in raw.decode().splitlines() if line.startswith("data:")]
    return "".join(e["delta"]["text"] for e in events
                   if e["type"] == "content_block_delta" and e["delta"]["type"] == "text_delta")


def test_a_messages_client_capture_is_read_and_answered_in_anthropics_events(capsysbinary):
    assert json.loads((CLAUDE_CAPTURE / "capture.json").read_text())["client"] == "messages"
    assert main(["capture", str(CLAUDE_CAPTURE)]) == 0
    out = capsysbinary.readouterr().out
    assert b"event: response." not in out
    message, error = validate_stream(out)
    assert error is None and message is not None
    request = json.loads((CLAUDE_CAPTURE / "request.json").read_text())
    assert message.model == request["model"]  # the client's own name for the model
    assert [block.type for block in message.content] == ["thinking", "text"]
    assert message.content[1].text == _upstream_text((CLAUDE_CAPTURE / "upstream.body").read_bytes())
    assert message.stop_reason == "end_turn"
    assert main(["capture", str(CLAUDE_CAPTURE)]) == 0
    assert capsysbinary.readouterr().out == out  # deterministic


def test_stream_with_client_messages_reads_a_claude_code_request_and_writes_anthropic_events(
        tmp_path, capsysbinary):
    upstream = fixture("anthropic/text_after_tool_result.sse")
    assert main(["stream", "--from", "anthropic", "--client", "messages", "--request", str(CLAUDE_REQUEST),
                 write(tmp_path, "up.sse", upstream)]) == 0
    message, error = validate_stream(capsysbinary.readouterr().out)
    assert error is None and message is not None
    assert [b.text for b in message.content if b.type == "text"] == [_upstream_text(upstream)]


def test_request_with_client_messages_translates_a_claude_code_request(capsys):
    assert main(["request", "--to", "chat", "--client", "messages", str(CLAUDE_REQUEST)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["path"] == "/chat/completions"
    assert printed["body"]["model"] == "claude-opus-5-5"
    assert printed["body"]["messages"][0]["role"] == "system"  # Claude Code's system blocks


def test_the_client_option_names_only_known_client_dialects():
    with pytest.raises(SystemExit) as info:
        main(["request", "--to", "chat", "--client", "carrier-pigeon", "-"])
    assert info.value.code == 2

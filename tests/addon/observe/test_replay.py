"""addon/observe/replay.py: a capture folder replayed offline through real mitmdump and the addon."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mitmproxy import http, io

from addon.observe import replay
from tests.addon.conftest import Chain, capture_messages_turn, client_flow, finish, run_request
from tests.data import DATA
from tests.translators.messages_client.sdk import validate_stream

ROOT = Path(__file__).resolve().parents[3]
CAPTURE = ROOT / "captures" / "codex-say-hi-anthropic"
RAW = ((DATA / "anthropic") / "text_after_tool_result.sse").read_bytes()


def _offline_env(tmp_path: Path) -> dict[str, str]:
    """No key of any vendor, and a proxy that goes nowhere for anything that would try the network."""
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_KEY", "_TOKEN"))}
    dead = "http://127.0.0.1:9"
    return {**env, "HTTPS_PROXY": dead, "HTTP_PROXY": dead, "HOME": str(tmp_path)}


def _run(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "addon", "replay", *args], cwd=ROOT,
                          env=_offline_env(tmp_path),
                          capture_output=True, text=True, timeout=60)


def _upstream_json(raw: bytes) -> list[dict]:
    """The JSON of each `data:` line of a recorded Anthropic stream (read here, not by the gateway)."""
    return [json.loads(line[5:]) for line in raw.decode().splitlines() if line.startswith("data:")]


def _sections(transcript: str) -> dict[str, list[str]]:
    """A transcript's lines under the section each starts in (`request`, `answer`, `dropped`...)."""
    sections: dict[str, list[str]] = {}
    name = ""
    for line in transcript.splitlines():
        if line and not line[0].isspace():
            name, _, line = line.partition(" ")
        sections.setdefault(name, []).append(line.strip())
    return sections


def _answer_items(transcript: str) -> list[tuple[str, str]]:
    """(label, text) of each item of the answer section; an item's text runs over its indented lines."""
    body = transcript.split("\nanswer\n", 1)[1].split("\ndropped ", 1)[0]
    items: list[tuple[str, str]] = []
    for line in body.split("\n"):
        if line.startswith("  ") and not line.startswith("   "):
            label, text = line[2:].split("  ", 1) if "  " in line[2:] else (line[2:], "")
            items.append((label.strip(), text.lstrip()))
        else:
            items[-1] = (items[-1][0], items[-1][1] + "\n" + line.strip())
    return items


def test_demo_prints_a_transcript_of_request_target_answer_and_report(tmp_path: Path) -> None:
    done = _run(["captures/codex-say-hi-anthropic"], tmp_path)
    assert done.returncode == 0, done.stderr
    request = json.loads((CAPTURE / "request.json").read_text())
    sections = _sections(done.stdout)
    assert list(sections) == ["request", "target", "answer", "dropped", "notes", "comment"]
    (line,) = sections["request"]
    assert line.startswith(f"{request['model']}, streamed")
    assert f"{len(request['tools'])} tools: {request['tools'][0]['name']}, " in line
    assert f"{len(request['input'])} input items: " in line
    assert sections["target"] == [
        "anthropic claude-sonnet-4-6 · POST https://api.anthropic.com/v1/messages -> 200"]
    assert "event:" not in done.stdout and "data:" not in done.stdout
    (dropped,) = sections["dropped"]
    assert all(path.endswith(("(lossy)", "(cosmetic)")) for path in dropped.split(", "))
    assert sections["comment"][0].startswith("-> anthropic claude-sonnet-4-6")


def test_demo_answer_shows_each_item_with_the_text_the_upstream_streamed(tmp_path: Path) -> None:
    done = _run(["captures/codex-say-hi-anthropic"], tmp_path)
    assert done.returncode == 0, done.stderr
    events = _upstream_json((CAPTURE / "upstream.body").read_bytes())
    deltas = [e["delta"] for e in events if e["type"] == "content_block_delta"]
    thinking = "".join(d["thinking"] for d in deltas if d["type"] == "thinking_delta")
    text = "".join(d["text"] for d in deltas if d["type"] == "text_delta")
    items = _answer_items(done.stdout)
    assert [label for label, _ in items] == ["reasoning", "message", "completed"]
    assert items[0][1] == thinking.strip()
    assert items[1][1].splitlines() == [line.strip() for line in text.splitlines()]


def test_demo_answer_shows_a_tool_call_with_its_arguments(tmp_path: Path) -> None:
    folder = tmp_path / "cap"
    folder.mkdir()
    raw = (DATA / "anthropic" / "text_server_tool_then_tool_use.sse").read_bytes()
    (folder / "upstream.body").write_bytes(raw)
    tool = {"type": "function", "name": "get_exchange_rate", "parameters": {"type": "object"}}
    request = {"model": "gpt-5.5", "stream": True, "input": "USD to EUR?", "tools": [tool]}
    (folder / "request.json").write_text(json.dumps(request))
    (folder / "capture.json").write_text(json.dumps({
        "dialect": "anthropic", "model": "claude-sonnet-4-6", "base_url": "https://api.anthropic.com",
        "request": "request.json", "upstream": "upstream.body"}))
    done = _run([str(folder)], tmp_path)
    assert done.returncode == 0, done.stderr
    events = _upstream_json(raw)
    (use,) = [e["index"] for e in events if e["type"] == "content_block_start"
              and e["content_block"]["type"] == "tool_use"]
    arguments = "".join(e["delta"]["partial_json"] for e in events
                        if e["type"] == "content_block_delta" and e["index"] == use)
    calls = [text for label, text in _answer_items(done.stdout) if label == "tool call"]
    assert len(calls) == 1
    name, _, shown = calls[0].partition(" ")
    assert name == "get_exchange_rate"
    assert json.loads(shown) == json.loads(arguments)
    assert _sections(done.stdout)["request"] == ["gpt-5.5, streamed · 1 tool: get_exchange_rate · "
                                                 "1 input item: 1 message/user"]


def test_demo_raw_prints_the_sse_bytes_the_client_got_and_the_comment(tmp_path: Path) -> None:
    done = _run(["captures/codex-say-hi-anthropic", "--raw"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("event: response.created\n")
    assert "event: response.completed\n" in done.stdout
    assert "\n# comment: -> anthropic claude-sonnet-4-6" in done.stdout
    assert "# POST https://api.anthropic.com/v1/messages -> 200" in done.stdout


def test_replay_writes_the_flow_with_metadata_and_both_bodies(tmp_path: Path) -> None:
    out = tmp_path / "out.flow"
    done = _run([str(CAPTURE), "-w", str(out)], tmp_path)
    assert done.returncode == 0, done.stderr
    with out.open("rb") as f:
        (flow,) = [f for f in io.FlowReader(f).stream() if isinstance(f, http.HTTPFlow)]
    assert flow.metadata["gateway"]["upstream"] == "anthropic"
    assert flow.comment.startswith("-> anthropic claude-sonnet-4-6")
    assert flow.metadata["gateway.upstream_response"] == (CAPTURE / "upstream.body").read_bytes()
    assert b"event: response.completed" in flow.response.content


def test_build_flows_makes_a_codex_request_and_the_recorded_upstream_answer(tmp_path: Path) -> None:
    client, upstream, meta = replay.build_flows(CAPTURE, tmp_path)
    with client.open("rb") as f:
        (client_flow_,) = io.FlowReader(f).stream()
    with upstream.open("rb") as f:
        (upstream_flow,) = io.FlowReader(f).stream()
    assert client_flow_.request.url == "https://api.openai.com/v1/responses"
    assert client_flow_.response is None
    assert upstream_flow.request.url == "https://api.anthropic.com/v1/messages"
    assert upstream_flow.response.content == (CAPTURE / "upstream.body").read_bytes()
    assert meta["dialect"] == "anthropic"


def test_a_replayed_capture_shows_the_very_upstream_body_the_live_gateway_sends(
        gateway: tuple[Chain, object], tmp_path: Path) -> None:
    addon, _ = gateway
    _, upstream, _ = replay.build_flows(CAPTURE, tmp_path)
    with upstream.open("rb") as f:
        (upstream_flow,) = io.FlowReader(f).stream()
    live = client_flow(json.loads((CAPTURE / "request.json").read_text()))
    run_request(addon, live)
    assert upstream_flow.request.content == live.request.content


def test_a_capture_the_addon_just_wrote_replays(gateway: tuple[Chain, object], tmp_path: Path) -> None:
    addon, tctx = gateway
    tctx.configure(addon, gateway_capture_dir=str(tmp_path / "captures"))
    flow = client_flow({"model": "gpt-5.5", "input": "name my pelican", "stream": True})
    run_request(addon, flow)
    flow.response = http.Response.make(200, RAW, {"content-type": "text/event-stream"})
    flow.is_replay = "response"
    finish(addon.response(flow))
    (folder,) = (tmp_path / "captures").iterdir()
    done = _run([str(folder)], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Charles" in dict(_answer_items(done.stdout))["message"]
    assert "completed" in dict(_answer_items(done.stdout))


@pytest.mark.parametrize("missing", ["capture.json", "upstream.body"])
def test_broken_capture_folder_fails_with_a_message(tmp_path: Path, missing: str) -> None:
    folder = tmp_path / "cap"
    folder.mkdir()
    for name in ("capture.json", "request.json", "upstream.body"):
        if name != missing:
            (folder / name).write_bytes((CAPTURE / name).read_bytes())
    done = _run([str(folder)], tmp_path)
    assert done.returncode == 1
    assert missing in done.stderr
    assert "Traceback" not in done.stderr


# -- a capture of a Messages client (Claude Code) replays as that client ----------------------------

CLAUDE_CAPTURE = ROOT / "captures" / "claude-code-say-hi-anthropic"


def _upstream_text(raw: bytes) -> str:
    deltas = [e["delta"] for e in _upstream_json(raw) if e["type"] == "content_block_delta"]
    return "".join(d["text"] for d in deltas if d["type"] == "text_delta")


def test_a_messages_client_capture_is_sent_where_that_client_sends_its_turns(tmp_path: Path) -> None:
    client, upstream, meta = replay.build_flows(CLAUDE_CAPTURE, tmp_path)
    with client.open("rb") as f:
        (client_flow_,) = io.FlowReader(f).stream()
    with upstream.open("rb") as f:
        (upstream_flow,) = io.FlowReader(f).stream()
    assert meta["client"] == "messages"
    assert client_flow_.request.url == "https://api.anthropic.com/v1/messages"
    sent = json.loads(client_flow_.request.content)
    assert sent == json.loads((CLAUDE_CAPTURE / "request.json").read_text())
    assert upstream_flow.request.url == "https://api.anthropic.com/v1/messages"
    assert json.loads(upstream_flow.request.content)["model"] == "claude-sonnet-4-6"


def test_a_messages_client_capture_replays_through_mitmdump_into_anthropic_events(tmp_path: Path) -> None:
    out = tmp_path / "out.flow"
    done = _run([str(CLAUDE_CAPTURE), "--raw", "-w", str(out)], tmp_path)
    assert done.returncode == 0, done.stderr
    sse, _, trailer = done.stdout.partition("\n# POST ")
    message, error = validate_stream(sse.encode())
    assert error is None and message is not None
    assert message.model == "claude-opus-5-5"  # the client's own name for the model
    assert [b.text for b in message.content if b.type == "text"] == [
        _upstream_text((CLAUDE_CAPTURE / "upstream.body").read_bytes())]
    assert trailer.startswith("https://api.anthropic.com/v1/messages -> 200")
    with out.open("rb") as f:
        (flow,) = [f for f in io.FlowReader(f).stream() if isinstance(f, http.HTTPFlow)]
    assert flow.metadata["gateway"]["client_dialect"] == "messages"
    assert flow.metadata["gateway.upstream_response"] == (CLAUDE_CAPTURE / "upstream.body").read_bytes()


def test_a_messages_client_capture_prints_the_same_transcript_sections(tmp_path: Path) -> None:
    done = _run([str(CLAUDE_CAPTURE)], tmp_path)
    assert done.returncode == 0, done.stderr
    sections = _sections(done.stdout)
    assert list(sections) == ["request", "target", "answer", "dropped", "notes", "comment"]
    request = json.loads((CLAUDE_CAPTURE / "request.json").read_text())
    (line,) = sections["request"]
    assert line.startswith(f"{request['model']}, streamed · {len(request['tools'])} tools: ")
    assert line.endswith(f"{len(request['messages'])} input items: 1 message/user, 1 message/system")
    items = _answer_items(done.stdout)
    assert [label for label, _ in items] == ["reasoning", "message", "completed"]
    text = _upstream_text((CLAUDE_CAPTURE / "upstream.body").read_bytes())
    assert items[1][1].splitlines() == [line.strip() for line in text.splitlines()]


def test_a_messages_capture_the_addon_just_wrote_replays(gateway: tuple[Chain, object],
                                                         tmp_path: Path) -> None:
    turn = {"model": "claude-opus-5-5", "max_tokens": 1000, "stream": True,
            "messages": [{"role": "user", "content": "name my pelican"}], "metadata": {"user_id": "u-42"}}
    folder = capture_messages_turn(*gateway, tmp_path / "captures", turn, RAW)
    done = _run([str(folder), "--raw"], tmp_path)
    assert done.returncode == 0, done.stderr
    message, error = validate_stream(done.stdout.partition("\n# POST ")[0].encode())
    assert error is None and message is not None and message.model == "claude-opus-5-5"
    assert [b.text for b in message.content if b.type == "text"] == [_upstream_text(RAW)]

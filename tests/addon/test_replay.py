"""addon/replay.py: a capture folder replayed offline through real mitmdump and the addon."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mitmproxy import http, io

from addon import replay
from addon.gateway import Gateway
from tests.addon.conftest import client_flow, run_request
from tests.data import DATA

ROOT = Path(__file__).resolve().parents[2]
CAPTURE = ROOT / "captures" / "codex-say-hi-anthropic"
RAW = ((DATA / "anthropic") / "text_after_tool_result.sse").read_bytes()


def _offline_env(tmp_path: Path) -> dict[str, str]:
    """No key of any vendor, and a proxy that goes nowhere for anything that would try the network."""
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_KEY", "_TOKEN"))}
    dead = "http://127.0.0.1:9"
    return {**env, "HTTPS_PROXY": dead, "HTTP_PROXY": dead, "HOME": str(tmp_path)}


def _run(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "addon.replay", *args], cwd=ROOT, env=_offline_env(tmp_path),
                          capture_output=True, text=True, timeout=60)


def test_replay_command_prints_the_translated_stream_and_the_comment(tmp_path: Path) -> None:
    done = _run(["captures/codex-say-hi-anthropic"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "event: response.created\n" in done.stdout
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
        gateway: tuple[Gateway, object], tmp_path: Path) -> None:
    addon, _ = gateway
    _, upstream, _ = replay.build_flows(CAPTURE, tmp_path)
    with upstream.open("rb") as f:
        (upstream_flow,) = io.FlowReader(f).stream()
    live = client_flow(json.loads((CAPTURE / "request.json").read_text()))
    run_request(addon, live)
    assert upstream_flow.request.content == live.request.content


def test_a_capture_the_addon_just_wrote_replays(gateway: tuple[Gateway, object], tmp_path: Path) -> None:
    addon, tctx = gateway
    tctx.configure(addon, gateway_capture_dir=str(tmp_path / "captures"))
    flow = client_flow({"model": "gpt-5.5", "input": "name my pelican", "stream": True})
    run_request(addon, flow)
    flow.response = http.Response.make(200, RAW, {"content-type": "text/event-stream"})
    flow.is_replay = "response"
    addon.response(flow)
    (folder,) = (tmp_path / "captures").iterdir()
    done = _run([str(folder)], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Charles" in done.stdout
    assert "event: response.completed\n" in done.stdout


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

"""The real Codex CLI against a fake *Responses* upstream, without the gateway.

These prove the harness (install, both Codex setups, the fake upstream, mitmdump) and the Codex 0.169.0
facts the gateway relies on, independently of the addon: which tools Codex declares in each setup, that a
``custom_tool_call`` for ``apply_patch`` edits files, and that a code-mode ``exec`` call runs nested tools and
comes back as ``custom_tool_call_output``. The last two tests put mitmdump in between with a ten-line
re-targeting addon (no translation), which proves the proxy plumbing of the real e2e tests: CONNECT + CA
trust in regular mode, and reverse mode.
"""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.support.codex_cli import (
    CLIENT_API_KEY,
    CodexRun,
    MitmDump,
    codex_mitmdump,
    custom_provider_setup,
    openai_provider_setup,
    run_codex_exec,
)
from tests.support.fake_upstream import (
    FakeUpstream,
    Reply,
    Script,
    anthropic_tool_use,
    empty_reply,
    is_websocket_upgrade,
    refuse_everything,
    responses_custom_tool_call,
    responses_text,
    responses_tool_outputs,
)
from tests.support.loopback_http import Received
from tests.support.strict import Strictness

PATCH = "*** Begin Patch\n*** Add File: hello.txt\n+hello from mock\n*** End Patch\n"
JS = 'const r = await tools.exec_command({cmd: "echo hi > js.txt"});\ntext(r);\n'
CLOSING = "done: patched"


def two_turn_script(tool_name: str, tool_input: str, call_id: str) -> Script:
    """Turn 1: one custom tool call. Any request that carries its output: the closing text.

    Deciding by content rather than by count keeps the script right if Codex retries a request.
    """

    def script(body: Any, headers: Mapping[str, str], path: str) -> Reply:
        if is_websocket_upgrade(headers):
            return empty_reply(426)  # the built-in provider tries WebSockets first; 426 = one attempt
        if not path.startswith("/v1/responses"):
            return empty_reply(404)
        if any(o.get("call_id") == call_id for o in responses_tool_outputs(body)):
            return responses_text(CLOSING)
        return responses_custom_tool_call(tool_name, tool_input, call_id)

    return script


@pytest.fixture
def black_hole() -> Iterator[FakeUpstream]:
    """A loopback proxy that refuses everything: Codex's start-up calls must not leave the machine."""
    with FakeUpstream(refuse_everything) as hole:
        yield hole


def responses_posts(upstream: FakeUpstream) -> list[Received]:
    return [r for r in upstream.requests if r.method == "POST" and r.path.startswith("/v1/responses")]


def assert_closing(run: CodexRun) -> None:
    assert run.returncode == 0, run.describe()
    assert CLOSING in run.final_message, run.describe()


@pytest.mark.codex
@pytest.mark.timeout(300)
def test_openai_provider_declares_freeform_apply_patch_and_applies_it(
    tmp_path: Path, black_hole: FakeUpstream
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with FakeUpstream(two_turn_script("apply_patch", PATCH, "call_patch_1")) as up:
        setup = openai_provider_setup(
            tmp_path / "codex",
            proxy_url=black_hole.url,
            openai_base_url=f"{up.url}/v1",
            no_proxy="127.0.0.1,localhost",
        )
        run = run_codex_exec(setup, "create hello.txt", work)

    assert_closing(run)
    assert (work / "hello.txt").read_text() == "hello from mock\n"
    posts = responses_posts(up)
    assert len(posts) == 2, [(r.method, r.path) for r in up.requests]
    first, second = (p.json for p in posts)
    tools = {t.get("name"): t for t in first["tools"]}
    assert tools["apply_patch"]["type"] == "custom"
    assert tools["apply_patch"]["format"]["syntax"] == "lark"
    assert first["model"] == "gpt-5.5"
    assert all(p.header("authorization") == f"Bearer {CLIENT_API_KEY}" for p in posts)
    [output] = responses_tool_outputs(second)
    assert output["type"] == "custom_tool_call_output"
    assert output["call_id"] == "call_patch_1"
    # The WebSocket attempt happened, was refused with 426, and Codex fell back to HTTPS.
    upgrades = [r for r in up.requests if is_websocket_upgrade(r.headers)]
    assert upgrades and all(r.method == "GET" for r in upgrades)


@pytest.mark.codex
@pytest.mark.timeout(300)
def test_lite_code_mode_declares_additional_tools_and_runs_nested_exec(
    tmp_path: Path, black_hole: FakeUpstream
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with FakeUpstream(two_turn_script("exec", JS, "call_js_1")) as up:
        setup = custom_provider_setup(tmp_path / "codex", base_url=f"{up.url}/v1", proxy_url=black_hole.url)
        run = run_codex_exec(setup, "write js.txt", work)

    assert_closing(run)
    assert (work / "js.txt").read_text() == "hi\n"
    posts = responses_posts(up)
    assert len(posts) == 2, [(r.method, r.path) for r in up.requests]
    first, second = (p.json for p in posts)
    assert "tools" not in first
    assert first["input"][0]["type"] == "additional_tools"
    namespaces = {ns["name"]: ns for ns in first["input"][0]["tools"] if ns.get("type") == "namespace"}
    exec_tool = next(t for t in namespaces["functions"]["tools"] if t["name"] == "exec")
    assert exec_tool["type"] == "custom"
    assert set(namespaces) - {"functions"}, "expected a namespace besides `functions`"
    assert posts[0].header("x-openai-internal-codex-responses-lite") == "true"
    [output] = responses_tool_outputs(second)
    assert output["type"] == "custom_tool_call_output"
    assert output["call_id"] == "call_js_1"
    # Codex returns exec output as an array of input_text items, which quote the nested command's result.
    assert isinstance(output["output"], list)
    assert all(p.header("authorization") == f"Bearer {CLIENT_API_KEY}" for p in posts)


# A pass-through addon: sends Codex's POST /v1/responses to the fake Responses upstream unchanged.
RETARGET_ADDON = """
from mitmproxy import ctx, http


class Retarget:
    def load(self, loader):
        loader.add_option("harness_upstream", str, "", "fake upstream base URL")

    def request(self, flow: http.HTTPFlow) -> None:
        if flow.request.method == "POST" and flow.request.path.startswith("/v1/responses"):
            flow.request.url = ctx.options.harness_upstream + flow.request.path


addons = [Retarget()]
"""


def retarget_proxy(tmp_path: Path, upstream: FakeUpstream, mode: str | None) -> MitmDump:
    addon = tmp_path / "retarget.py"
    addon.write_text(RETARGET_ADDON)
    return codex_mitmdump(tmp_path / "mitm", mode=mode, scripts=[addon],
                          options={"harness_upstream": upstream.url})


@pytest.mark.codex
@pytest.mark.timeout(300)
def test_openai_provider_through_mitmdump_regular_mode(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with (
        FakeUpstream(two_turn_script("apply_patch", PATCH, "call_patch_1")) as up,
        retarget_proxy(tmp_path, up, mode=None) as mitm,
    ):
        setup = openai_provider_setup(tmp_path / "codex", proxy_url=mitm.url, ca_cert=mitm.ca_cert)
        run = run_codex_exec(setup, "create hello.txt", work)

    assert_closing(run)
    assert (work / "hello.txt").read_text() == "hello from mock\n"
    posts = responses_posts(up)
    assert len(posts) == 2, mitm.log
    # Re-targeting kept the path and the client's key; the WebSocket GET never got past the block list.
    assert all(p.header("authorization") == f"Bearer {CLIENT_API_KEY}" for p in posts)
    assert not [r for r in up.requests if r.method != "POST"]
    assert "api.openai.com" in mitm.log
    assert mitm.upstream_hosts() == {"127.0.0.1"}, mitm.log


@pytest.mark.codex
@pytest.mark.timeout(300)
def test_custom_provider_through_mitmdump_reverse_mode(tmp_path: Path, black_hole: FakeUpstream) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with (
        FakeUpstream(two_turn_script("exec", JS, "call_js_1")) as up,
        retarget_proxy(tmp_path, up, mode="reverse:https://api.openai.com") as mitm,
    ):
        setup = custom_provider_setup(tmp_path / "codex", base_url=f"{mitm.url}/v1", proxy_url=black_hole.url)
        run = run_codex_exec(setup, "write js.txt", work)

    assert_closing(run)
    assert (work / "js.txt").read_text() == "hi\n"
    assert len(responses_posts(up)) == 2, mitm.log
    assert mitm.upstream_hosts() == {"127.0.0.1"}, mitm.log


def test_fake_upstream_streams_chunk_by_chunk() -> None:
    """The second chunk is only produced after the client has read the first: no buffering anywhere."""
    first_read = threading.Event()

    def chunks() -> Iterator[bytes]:
        yield b"data: one\n\n"
        assert first_read.wait(10), "the client never saw the first chunk on its own"
        yield b"data: two\n\n"

    with FakeUpstream(lambda *_: (200, {"content-type": "text/event-stream"}, chunks())) as up:
        up.strictness = Strictness(enabled=False)  # a test of the fake's own framing: any body goes
        connection = http.client.HTTPConnection("127.0.0.1", up.port, timeout=15)
        connection.request(
            "POST", "/v1/messages", body=b'{"x": 1}', headers={"content-type": "application/json"}
        )
        response = connection.getresponse()
        assert response.getheader("transfer-encoding") == "chunked"
        assert response.read1() == b"data: one\n\n"
        first_read.set()
        assert response.read() == b"data: two\n\n"
        connection.close()
    [request] = up.requests
    assert (request.method, request.path, request.json) == ("POST", "/v1/messages", {"x": 1})
    assert not up.errors


def test_anthropic_tool_use_stream_reassembles() -> None:
    """The Anthropic builder's fragments concatenate to the exact tool input (what a translator parses)."""
    _status, _headers, body = anthropic_tool_use(
        "apply_patch", {"input": "*** Begin Patch\n"}, "toolu_1", "hi"
    )
    assert not isinstance(body, bytes)
    events = [
        json.loads(line[6:]) for chunk in body for line in chunk.decode().splitlines() if line[:6] == "data: "
    ]
    types = [e["type"] for e in events]
    assert types[0] == "message_start" and types[-2:] == ["message_delta", "message_stop"]
    fragments = [
        e["delta"]["partial_json"]
        for e in events
        if e["type"] == "content_block_delta" and e["delta"]["type"] == "input_json_delta"
    ]
    assert json.loads("".join(fragments)) == {"input": "*** Begin Patch\n"}
    assert events[-2]["delta"]["stop_reason"] == "tool_use"

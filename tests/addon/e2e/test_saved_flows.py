"""What `mitmdump -w` keeps of translated flows: metadata, comment, mark, both bodies, no key."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest
from mitmproxy import http, io

from tests.addon.e2e.conftest import CLIENT_KEY, UPSTREAM_KEY, StartProxy, reverse_client
from tests.addon.e2e.upstream import Upstream, error, sse_events
from tests.support.mitmdump import MITMDUMP, ROOT, MitmDump

REPLAY_KEY = "sk-ant-e2e-replay-key-0123456789"

pytestmark = pytest.mark.timeout(90)


@pytest.fixture(scope="module")
def proxy(start_proxy: StartProxy) -> MitmDump:
    return start_proxy("saved", "reverse:https://api.openai.com")


@pytest.fixture(scope="module")
def saved(proxy: MitmDump, module_dir: Path, upstream_server: Upstream) -> Path:
    """Four flows through the proxy (streamed, non-streamed with a lossy and a cosmetic drop, refused,
    an upstream 400),
    then mitmdump stopped so the file is complete."""
    upstream_server.reset()
    upstream_server.plan(error(400, "invalid_request_error", "the request is malformed"))
    with reverse_client(proxy) as client:
        with pytest.raises(openai.BadRequestError):
            client.responses.create(model="gpt-5.5", input="first")
        list(client.responses.create(model="gpt-5.5", input="hi", stream=True))
        client.responses.create(model="gpt-5.5", input="hi", text={"verbosity": "low"},
                                tools=[{"type": "file_search", "vector_store_ids": ["vs_1"]}])
        with pytest.raises(openai.BadRequestError):
            # a stored prompt template is OpenAI's: the translator refuses it
            client.responses.create(model="gpt-5.5", input="hi", prompt={"id": "pmpt_1"})
    assert proxy.stop() == 0, proxy.log
    return module_dir / "saved.flows"


def _flows(path: Path) -> list[http.HTTPFlow]:
    with path.open("rb") as f:
        return [flow for flow in io.FlowReader(f).stream() if isinstance(flow, http.HTTPFlow)]


@pytest.fixture(scope="module")
def flows(saved: Path) -> Iterator[list[http.HTTPFlow]]:
    flows = _flows(saved)
    assert len(flows) == 4
    yield flows


def test_saved_streamed_flow_keeps_metadata_comment_and_both_bodies(flows: list[http.HTTPFlow]) -> None:
    flow = flows[1]
    info = flow.metadata["gateway"]
    assert (info["upstream"], info["model"], info["client_model"]) == (
        "anthropic", "claude-haiku-4-5", "gpt-5.5")
    assert info["url"].endswith("/v1/messages")
    assert info["usage"]["output_tokens"] == 82
    assert flow.comment == "-> anthropic claude-haiku-4-5"
    assert flow.response.content.startswith(b"event: response.created\n")  # what the client got
    assert b"event: response.completed\n" in flow.response.content
    upstream_events = sse_events("text_after_tool_result.sse")
    assert flow.metadata["gateway.upstream_response"] == b"".join(upstream_events)  # the provider's own


def test_saved_flow_that_lost_a_field_is_marked_and_says_which_kind(flows: list[http.HTTPFlow]) -> None:
    flow = flows[2]
    assert flow.metadata["gateway"]["dropped"] == ["tools[0]", "text.verbosity"]
    assert flow.metadata["gateway"]["cosmetic"] == ["text.verbosity"]
    assert flow.comment == "-> anthropic claude-haiku-4-5 | dropped: tools[0] | cosmetic: text.verbosity"
    assert flow.marked == ":warning:"


def test_saved_refused_and_error_flows_say_why(flows: list[http.HTTPFlow]) -> None:
    error_flow, refused = flows[0], flows[3]
    assert error_flow.response.status_code == 400
    assert error_flow.comment.startswith("-> anthropic claude-haiku-4-5 | error: upstream 400:")
    assert refused.response.status_code == 400
    assert refused.metadata["gateway"]["refused"]
    assert refused.comment.startswith("-> anthropic claude-haiku-4-5 | refused:")


def test_saved_file_contains_no_key(saved: Path) -> None:
    data = saved.read_bytes()
    assert UPSTREAM_KEY.encode() not in data
    assert CLIENT_KEY.encode() not in data


def test_loading_the_saved_flows_again_translates_nothing_twice(saved: Path, tmp_path: Path) -> None:
    out = tmp_path / "again.flows"
    done = subprocess.run([str(MITMDUMP), "-n", "-q", "--set", f"confdir={tmp_path}/conf", "-r", str(saved),
                           "-s", str(ROOT / "addon" / "gateway.py"), "-w", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=240)  # bounds a hang only
    assert done.returncode == 0, done.stdout + done.stderr
    before, after = _flows(saved), _flows(out)
    assert [f.response.content for f in after] == [f.response.content for f in before]
    assert [f.comment for f in after] == [f.comment for f in before]
    assert [f.metadata["gateway"] for f in after] == [f.metadata["gateway"] for f in before]


def test_replaying_the_saved_flows_translates_them_again_with_the_current_options(
        saved: Path, tmp_path: Path, upstream: Upstream) -> None:
    """`mitmdump -C saved.flows` (what mitmweb's Replay does per flow): each request is
    translated again from the client's own request, with today's model and key, never sent as
    saved with its `<redacted>` key; each answer is translated again."""
    out = tmp_path / "replayed.flows"
    options = {"confdir": f"{tmp_path}/conf", "server": "false", "gateway_upstream": "anthropic",
               "gateway_base_url": upstream.url, "gateway_model": "claude-sonnet-4-6",
               "gateway_capabilities": "table",  # the local provider serves no models endpoint
               "gateway_key_env": "ANTHROPIC_API_KEY"}
    command = [str(MITMDUMP), "-q", "-s", str(ROOT / "addon" / "gateway.py"), "-C", str(saved),
               "-w", str(out)]
    for name, value in options.items():
        command += ["--set", f"{name}={value}"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "ANTHROPIC_API_KEY": REPLAY_KEY})
    assert done.returncode == 0, done.stdout + done.stderr
    assert [r.headers["x-api-key"] for r in upstream.received] == [REPLAY_KEY] * 3  # the refused one stays
    assert [r.json["model"] for r in upstream.received] == ["claude-sonnet-4-6"] * 3
    replayed = _flows(out)
    assert [f.response.status_code for f in replayed] == [200, 200, 200, 400]
    assert replayed[0].response.json()["output"][0]["content"][0]["text"] == "Hello from the local upstream."
    assert b"event: response.completed" in replayed[1].response.content
    assert all(f.metadata["gateway"]["model"] == "claude-sonnet-4-6" for f in replayed)
    assert REPLAY_KEY.encode() not in out.read_bytes()

"""What a gateway keeps of a turn, through the real proxy: capture files private, a capture that
cannot be written costs the flow nothing, the client's request stored as it was meant, an
upstream's long error message cut once."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from mitmproxy import http, io

from tests.reliability.conftest import CLIENT_KEY, free_port, routes_toml, start_gateway
from tests.reliability.fault_upstream import Fault, FaultUpstream
from tests.reliability.test_faults import assert_next_flow_works, assert_responses_error, raw_turn
from tests.support.mitmdump import MitmDump

pytestmark = pytest.mark.timeout(120)
TEXT = "naïve café ✓ 😀"


def _start(tmp: Path, upstream: FaultUpstream, capture_dir: Path) -> MitmDump:
    routes = tmp / "routes.toml"
    dead = f"http://127.0.0.1:{free_port()}"
    routes.write_text(routes_toml(upstream.url, refused_url=dead, garbage_url=dead, plain_http_url=dead))
    return start_gateway(tmp / "conf", routes, options={"gateway_capture_dir": str(capture_dir)},
                         args=("-w", str(tmp / "flows.mitm")))


def _flows(path: Path) -> list[http.HTTPFlow]:
    with path.open("rb") as f:
        return [flow for flow in io.FlowReader(f).stream() if isinstance(flow, http.HTTPFlow)]


def _post(proxy: MitmDump, body: bytes, content_type: str) -> httpx.Response:
    with httpx.Client(timeout=30) as client:
        return client.post(f"{proxy.url}/v1/responses", content=body,
                           headers={"authorization": f"Bearer {CLIENT_KEY}", "content-type": content_type})


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory, fault_upstream: FaultUpstream) -> Iterator[Path]:
    """A gateway with a writable capture dir: one turn whose content-type claims latin-1, one
    whose upstream error says 9,000 characters; then mitmdump stopped so its file is whole."""
    tmp = tmp_path_factory.mktemp("captured")
    with _start(tmp, fault_upstream, tmp / "captures") as proxy:
        body = json.dumps({"model": "anthropic-charset", "stream": True, "input": TEXT},
                          ensure_ascii=False).encode()
        response = _post(proxy, body, "application/json; charset=latin-1")
        assert response.status_code == 200, response.text[:300]
        fault_upstream.plan(Fault("status", status=400, message="m" * 9_000))
        error = assert_responses_error(raw_turn(proxy, "anthropic-long-error"), 400)
        (tmp / "message.txt").write_text(error["message"])
        assert proxy.stop() == 0, proxy.log
    yield tmp


def test_capture_files_are_private_to_the_proxys_user(captured: Path) -> None:
    folders = [p for p in (captured / "captures").iterdir() if p.is_dir()]
    assert folders
    assert stat.S_IMODE((captured / "captures").stat().st_mode) == 0o700
    for folder in folders:
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
        for file in folder.iterdir():
            assert stat.S_IMODE(file.stat().st_mode) == 0o600, file


def test_stored_client_request_is_the_json_text_whatever_charset_its_content_type_claims(
    captured: Path,
) -> None:
    flows = _flows(captured / "flows.mitm")
    flow = next(f for f in flows if f.metadata["gateway"]["client_model"] == "anthropic-charset")
    assert TEXT in flow.metadata["gateway.client_request"]


def test_long_upstream_error_message_is_cut_once(captured: Path) -> None:
    message = (captured / "message.txt").read_text()
    assert message.count("more characters)") == 1, message[-200:]
    said = len("anthropic upstream returned 400: invalid_request_error: ") + 9_000
    assert message.endswith(f"... ({said - 4000} more characters)")


def test_capture_dir_that_cannot_be_written_is_noted_and_the_flow_keeps_comment_and_mark(
    tmp_path: Path, fault_upstream: FaultUpstream
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the capture dir should be")
    with _start(tmp_path, fault_upstream, blocker / "captures") as proxy:
        response = raw_turn(proxy, "anthropic-dropped", stream=False)
        assert response.status_code == 200, response.text[:300]
        with httpx.Client(timeout=30) as client:
            client.post(f"{proxy.url}/v1/responses",
                        json={"model": "anthropic-x", "input": "hi", "text": {"verbosity": "low"},
                              "tools": [{"type": "file_search", "vector_store_ids": ["vs_1"]}]},
                        headers={"authorization": f"Bearer {CLIENT_KEY}"})
        assert_next_flow_works(proxy)
        assert proxy.stop() == 0, proxy.log
    flows = _flows(tmp_path / "flows.mitm")
    assert len(flows) == 3
    for flow in flows:
        info = flow.metadata["gateway"]
        assert any("capture not written" in note for note in info["notes"]), info
        assert flow.comment.startswith("-> anthropic claude-sonnet-4-6"), flow.comment
    dropped = flows[1]
    assert dropped.metadata["gateway"]["dropped"] == ["tools[0]", "text.verbosity"]
    assert "| dropped: tools[0] | cosmetic: text.verbosity" in dropped.comment
    assert dropped.marked == ":warning:"

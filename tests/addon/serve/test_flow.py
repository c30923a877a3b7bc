"""addon/serve/flow.py: one flow's working state is one object, held while the flow is in flight and
let go of when it ends; a saved flow gets it back from its metadata."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

from mitmproxy import flow as flow_module
from mitmproxy import http
from mitmproxy import io as mio
from mitmproxy.test import taddons, tflow

from addon.observe import flowinfo
from addon.serve.flow import Flows, Stage, context_of
from tests.addon.conftest import Chain, client_flow, finish, run_request
from tests.data import DATA
from tests.support.mitmdump import ROOT
from translators import client_dialects
from translators import client_dialects as client_registry

Ctx = tuple[Chain, taddons.context]
UPSTREAM = (DATA / "anthropic" / "text_after_tool_result.sse").read_bytes()


def _answered(addon: Chain, flow: http.HTTPFlow) -> None:
    flow.response = http.Response.make(200, UPSTREAM, {"content-type": "text/event-stream"})
    flow.is_replay = "response"  # the whole-body path: no stream callable needed
    addon.responseheaders(flow)
    finish(addon.response(flow))


def test_a_turn_has_one_context_from_its_request_to_its_answer(gateway: Ctx) -> None:
    addon, _ = gateway
    flow = client_flow()
    run_request(addon, flow)
    fc = addon.flows.get(flow)
    assert fc is not None and fc.kind == "turn" and fc.speaks.name == "responses"
    assert fc.route is not None and fc.route.dialect.name == "anthropic"
    assert fc.translation is not None and fc.translation.body["model"] == "claude-sonnet-4-6"
    assert fc.info is flow.metadata[flowinfo.KEY]  # the one record, saved with the flow
    _answered(addon, flow)
    assert len(addon.flows) == 0  # nothing of the flow is kept once it has ended
    assert flow.metadata[flowinfo.KEY]["upstream"] == "anthropic"


def test_a_compaction_request_is_a_kind_of_its_own(gateway: Ctx) -> None:
    addon, _ = gateway
    flow = client_flow({"model": "gpt-5.5", "stream": True,
                        "input": [{"type": "message", "role": "user", "content": "hi"},
                                  {"type": "compaction_trigger"}]})
    run_request(addon, flow)
    fc = addon.flows.get(flow)
    assert fc is not None and fc.kind == "compaction_trigger"


def test_a_flow_that_fails_lets_go_of_its_context(gateway: Ctx) -> None:
    addon, _ = gateway
    flow = client_flow()
    run_request(addon, flow)
    assert len(addon.flows) == 1
    flow.error = flow_module.Error("client disconnected")
    addon.error(flow)
    assert len(addon.flows) == 0
    assert flow.metadata[flowinfo.KEY]["error"] == "client disconnected"


def test_a_refused_request_lets_go_of_its_context(gateway: Ctx) -> None:
    addon, _ = gateway
    flow = client_flow({"model": "gpt-5.5", "input": "hi", "previous_response_id": "resp_nowhere"})
    run_request(addon, flow)
    assert flow.response is not None and flow.response.status_code == 400
    finish(addon.response(flow))
    assert len(addon.flows) == 0


def test_a_saved_flow_gets_its_context_back_from_its_metadata(gateway: Ctx) -> None:
    addon, _ = gateway
    flow = client_flow({"model": "claude-opus-5-5", "max_tokens": 100, "stream": True,
                        "messages": [{"role": "user", "content": "hi"}]},
                       url="https://api.anthropic.com/v1/messages",
                       headers={"anthropic-version": "2023-06-01"})
    run_request(addon, flow)
    _answered(addon, flow)
    buffer = io.BytesIO()
    mio.FlowWriter(buffer).add(flow)
    (loaded,) = mio.FlowReader(io.BytesIO(buffer.getvalue())).stream()
    assert isinstance(loaded, http.HTTPFlow)
    fc = Flows().get(loaded)
    assert fc is not None and fc.speaks.name == "messages"
    assert fc.translation is not None and fc.translation.target == "anthropic"
    assert fc.translation.body == json.loads(loaded.request.content or b"")  # the flow's request


def test_importing_the_addon_changes_nothing_until_it_is_loaded() -> None:
    """`-s addon/gateway.py` imports the file; the patches of mitmproxy and the dialects of
    `$GATEWAY_DIALECTS` come with the addon's `load`, visibly, not with the import."""
    check = (
        "from mitmproxy.proxy.layers import http as h\n"
        "before = (h.HttpStream.state_consume_request_body, h.HttpStream.state_wait_for_request_headers)\n"
        "import addon.gateway as g\n"
        "from translators import client_dialects as c\n"
        "after = (h.HttpStream.state_consume_request_body, h.HttpStream.state_wait_for_request_headers)\n"
        "assert after == before, 'patched'\n"
        "assert 'toy' not in c.names(), 'registered at import'\n"
        "from mitmproxy.test import taddons\n"
        "with taddons.context(g.gateway):\n"
        "    assert h.HttpStream.state_consume_request_body is not before[0]\n"
        "    assert h.HttpStream.state_wait_for_request_headers is not before[1]\n"
        "    assert 'toy' in c.names()\n"
    )
    env = {**os.environ, "GATEWAY_DIALECTS": "tests.support.toy_client"}
    done = subprocess.run([sys.executable, "-c", check], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


def test_a_token_counts_record_says_it_is_a_count_so_it_is_no_turn() -> None:
    """docs/metrics.md "The record": an estimated count never goes upstream, yet is no turn."""
    flows = Flows()
    counting = flows.open(tflow.tflow(), client_dialects.get("messages"))
    counting.kind = "count"
    info = counting.begin("chat", "deepseek-chat", client_model="claude-sonnet-4-6")
    assert info["kind"] == flowinfo.COUNT_KIND
    turn = flows.open(tflow.tflow(), client_dialects.get("messages"))
    assert "kind" not in turn.begin("chat", "deepseek-chat", client_model="claude-sonnet-4-6")


def test_a_streamed_turns_stage_moves_forward_with_its_hooks(gateway: Ctx) -> None:
    """The hooks read the stage (addon/serve/flow.py `Stage`), never which fields happen to be set."""
    addon, _ = gateway
    flow = client_flow()
    addon.requestheaders(flow)
    fc = addon.flows.get(flow)
    assert fc is not None and fc.stage is Stage.CLAIMED
    finish(addon.request(flow))
    assert fc.stage is Stage.SENT
    flow.response = http.Response.make(200, b"", {"content-type": "text/event-stream"})
    addon.responseheaders(flow)
    assert fc.stage is Stage.STREAMING
    for chunk in [UPSTREAM, b""]:
        flow.response.stream(chunk)
    finish(addon.response(flow))
    assert fc.stage is Stage.SEALED and len(addon.flows) == 0
    addon.responseheaders(flow)  # a hook seen again for an ended flow does nothing
    assert flow.metadata[flowinfo.SEALED] is True


def test_a_flow_the_proxy_answers_itself_is_sealed_at_once_and_never_read_as_an_upstream_answer(
        gateway: Ctx) -> None:
    addon, _ = gateway
    flow = client_flow({"model": "gpt-5.5", "input": "hi", "previous_response_id": "resp_nowhere"})
    run_request(addon, flow)
    fc = context_of(flow)
    assert fc is not None and fc.stage is Stage.SEALED and flow.response.status_code == 400
    answered = flow.response.content
    addon.responseheaders(flow)
    finish(addon.response(flow))
    assert flow.response.content == answered and len(addon.flows) == 0


def test_stages_only_move_forward() -> None:
    fc = Flows().open(http.HTTPFlow(None, None), client_registry.get(client_registry.DEFAULT))  # type: ignore[arg-type]
    fc.at(Stage.SENT)
    fc.at(Stage.READ)
    assert fc.stage is Stage.SENT

"""`item_reference` input items through the gateway's hooks (addon/state/turns.py `lookup`,
addon/state/stored_items.py `resolve`; docs/agents-sdk.md "Item references"): a reference to an item
this gateway stored for the client is that item, in a small request and in a large one a worker
translates; an id it does not hold, or another client's, is a 400 naming the id, and nothing is
sent."""

from __future__ import annotations

import json
from typing import Any

from mitmproxy import http

from addon.state.store import ResponseRecord
from addon.work import offload
from tests.addon.conftest import client_flow, run_request
from tests.addon.state.test_turns import Ctx
from translators.features import vendor_state
from translators.ir.request import VendorState

STATE = vendor_state.encode(VendorState(dialect="anthropic", signature="c2lnbmVk", text="think first"))
REASONING = {"type": "reasoning", "id": "rs_ref1", "summary": [], "encrypted_content": STATE}
CALL = {"type": "function_call", "id": "fc_ref1", "call_id": "toolu_ref1", "name": "lookup",
        "arguments": '{"q": "weather"}', "status": "completed"}


def stored(gateway: Ctx, client: str = "") -> None:
    """A turn the gateway answered earlier: a reasoning item and a call, as the client got them."""
    addon, _ = gateway
    addon.storage.store().put_response(ResponseRecord(
        id="resp_ref1", response={"id": "resp_ref1", "object": "response", "status": "completed",
                                  "output": [REASONING, CALL]},
        input=[{"type": "message", "id": "msg_ref0", "role": "user", "content": [{"type": "input_text",
                                                                                  "text": "weather?"}]}],
        route={"dialect": "anthropic", "model": "claude-sonnet-4-6"}, client=client))


def turn(*items: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"model": "gpt-5.5", "reasoning": {"effort": "medium"}, "max_output_tokens": 8000,
            "tools": [{"type": "function", "name": "lookup", "parameters": {}}],
            "input": [{"role": "user", "content": "weather?"}, *items,
                      {"type": "function_call_output", "call_id": "toolu_ref1", "output": "sunny"}], **top}


def sent(flow: http.HTTPFlow) -> dict[str, Any]:
    assert flow.response is None, flow.response and flow.response.content
    return json.loads(flow.request.content or b"")


def refs() -> list[dict[str, Any]]:
    return [{"type": "item_reference", "id": "rs_ref1"}, {"type": "item_reference", "id": "fc_ref1"}]


def test_references_to_stored_items_are_those_items(gateway: Ctx) -> None:
    stored(gateway)
    flow = client_flow(turn(*refs()))
    run_request(gateway[0], flow)
    assistant = sent(flow)["messages"][1]["content"]
    assert assistant[0] == {"type": "thinking", "thinking": "think first", "signature": "c2lnbmVk"}
    assert assistant[1]["type"] == "tool_use" and assistant[1]["input"] == {"q": "weather"}
    assert sent(flow)["messages"][2]["content"][0]["tool_use_id"] == "toolu_ref1"


def test_a_reference_by_id_alone_is_one_too(gateway: Ctx) -> None:
    stored(gateway)
    flow = client_flow(turn({"id": "rs_ref1"}, {"id": "fc_ref1"}, store=False))
    run_request(gateway[0], flow)
    assert sent(flow)["messages"][1]["content"][1]["name"] == "lookup"


def test_an_unknown_id_is_a_400_naming_it_and_nothing_is_sent(gateway: Ctx) -> None:
    stored(gateway)
    flow = client_flow(turn({"type": "item_reference", "id": "rs_ref1"}, {"type": "item_reference",
                                                                         "id": "fc_gone"}))
    run_request(gateway[0], flow)
    assert flow.response is not None and flow.response.status_code == 400
    assert flow.response.json()["error"] == {"type": "invalid_request_error", "code": "invalid_request_error",
                                             "message": "Item with id 'fc_gone' not found.", "param": "input"}
    assert flow.request.host == "api.openai.com"


def test_another_clients_item_is_not_found(gateway: Ctx) -> None:
    stored(gateway, client="ana")
    flow = client_flow(turn(*refs()))
    run_request(gateway[0], flow)
    assert flow.response is not None and flow.response.status_code == 400
    assert "rs_ref1" in flow.response.json()["error"]["message"]


def test_a_large_request_resolves_its_references_in_the_worker(gateway: Ctx) -> None:
    stored(gateway)
    filler = [{"role": "user", "content": f"note {i} " + "x" * 40} for i in range(5000)]
    body = turn(*refs())
    body["input"] = filler + body["input"]
    assert len(json.dumps(body)) >= offload.INLINE_BYTES
    flow = client_flow(body)
    run_request(gateway[0], flow)
    assistant = sent(flow)["messages"][1]["content"]
    assert [block["type"] for block in assistant] == ["thinking", "tool_use"]


def test_the_stored_turn_keeps_the_items_not_the_references(gateway: Ctx) -> None:
    addon, _ = gateway
    stored(gateway)
    flow = client_flow(turn(*refs()))
    run_request(addon, flow)
    fc = addon.flows.get(flow)
    assert fc is not None and fc.turn is not None and fc.turn.inputs is not None
    kinds = [item["type"] for item in fc.turn.inputs]
    assert kinds == ["message", "reasoning", "function_call", "function_call_output"]

"""`Store.items_by_id`: what an `item_reference` resolves to (docs/agents-sdk.md "Item
references"): an input or output item of one of the client's stored responses, or an item of one
of its conversations; never another client's, nor one whose response is gone. Both backends."""

from __future__ import annotations

from addon.state.store import Conversation, ItemsJSON, ResponseRecord
from tests.addon.state.store.conftest import Clock

REASONING = {"type": "reasoning", "id": "rs_a1", "summary": [], "encrypted_content": "dgw1:state"}
CALL = {"type": "function_call", "id": "fc_a1", "call_id": "call_1", "name": "lookup", "arguments": "{}"}
QUESTION = {"type": "message", "id": "msg_q1", "role": "user",
            "content": [{"type": "input_text", "text": "q"}]}


def record(rid: str, client: str = "", items: list | ItemsJSON | None = None) -> ResponseRecord:
    return ResponseRecord(id=rid, response={"id": rid, "object": "response", "output": [REASONING, CALL]},
                          input=items if items is not None else [QUESTION],
                          route={"dialect": "anthropic", "model": "m"}, client=client)


def test_output_and_input_items_of_a_response_are_found_by_id(make_store) -> None:
    store = make_store()
    store.put_response(record("resp_1"))
    found = store.items_by_id(["fc_a1", "rs_a1", "msg_q1", "rs_unknown"])
    assert found == {"fc_a1": CALL, "rs_a1": REASONING, "msg_q1": QUESTION}


def test_another_clients_item_is_never_found(make_store) -> None:
    store = make_store()
    store.put_response(record("resp_1", client="ana"))
    assert store.items_by_id(["rs_a1"], client="ben") == {}
    assert store.items_by_id(["rs_a1"]) == {}
    assert store.items_by_id(["rs_a1"], client="ana") == {"rs_a1": REASONING}


def test_an_item_of_a_deleted_or_expired_response_is_gone(make_store, clock: Clock) -> None:
    store = make_store(ttl=100)
    store.put_response(record("resp_1"))
    store.delete_response("resp_1")
    assert store.items_by_id(["rs_a1"]) == {}
    store.put_response(record("resp_2"))
    clock.now += 101
    assert store.items_by_id(["rs_a1"]) == {}
    store.purge()
    assert store.items_by_id(["rs_a1"]) == {}


def test_a_long_input_written_by_a_worker_still_indexes_the_output(make_store) -> None:
    store = make_store()
    store.put_response(record("resp_1", items=ItemsJSON(b'[{"type":"message","id":"msg_long","role":"user",'
                                                        b'"content":"x"}]')))
    assert set(store.items_by_id(["rs_a1", "fc_a1"])) == {"rs_a1", "fc_a1"}


def test_a_conversations_item_is_found_too(make_store) -> None:
    store = make_store()
    store.create_conversation(Conversation(id="conv_1", created_at=0.0, client="ana"), [QUESTION])
    assert store.items_by_id(["msg_q1"], client="ana") == {"msg_q1": QUESTION}
    assert store.items_by_id(["msg_q1"], client="ben") == {}

"""The store's contract, the same for the embedded and the shared backend."""

from __future__ import annotations

import json
import threading

import pytest

from addon.state.store import Conversation, ItemsJSON, ResponseRecord, StoreError
from tests.addon.state.store.conftest import Clock


def record(rid: str, previous: str | None = None, text: str = "hi") -> ResponseRecord:
    return ResponseRecord(
        id=rid, previous_id=previous,
        response={"id": rid, "object": "response", "output": [
            {"type": "message", "id": f"msg_{rid}", "role": "assistant",
             "content": [{"type": "output_text", "text": f"answer to {text}"}]}]},
        input=[{"type": "message", "id": f"in_{rid}", "role": "user", "content": [{"type": "input_text",
                                                                                     "text": text}]}],
        route={"dialect": "anthropic", "model": "claude-sonnet-4-6"})


def item(n: int) -> dict:
    return {"type": "message", "id": f"msg_{n}", "role": "user", "content": [{"type": "input_text",
                                                                              "text": f"item {n}"}]}


def test_a_stored_response_reads_back_whole(make_store) -> None:
    store = make_store()
    store.put_response(record("resp_1"))
    got = store.get_response("resp_1")
    assert got is not None
    assert got.response["output"][0]["content"][0]["text"] == "answer to hi"
    assert got.input[0]["id"] == "in_resp_1"
    assert got.route == {"dialect": "anthropic", "model": "claude-sonnet-4-6"}
    assert store.get_response("resp_unknown") is None


def test_the_chain_runs_oldest_first_through_previous_ids(make_store) -> None:
    store = make_store()
    store.put_response(record("resp_1", text="one"))
    store.put_response(record("resp_2", "resp_1", text="two"))
    store.put_response(record("resp_3", "resp_2", text="three"))
    chain = store.chain("resp_3")
    assert [r.id for r in chain] == ["resp_1", "resp_2", "resp_3"]
    assert [r.input[0]["content"][0]["text"] for r in chain] == ["one", "two", "three"]


def test_a_chain_with_a_missing_ancestor_is_not_found(make_store) -> None:
    store = make_store()
    store.put_response(record("resp_1"))
    store.put_response(record("resp_2", "resp_1"))
    assert store.delete_response("resp_1") is True
    assert store.chain("resp_2") is None
    assert store.delete_response("resp_1") is False


def test_responses_expire_after_the_ttl_since_their_last_use(make_store, clock: Clock) -> None:
    store = make_store(ttl=100)
    store.put_response(record("resp_1"))
    store.put_response(record("resp_2", "resp_1"))
    clock.now += 60
    assert store.chain("resp_2") is not None  # a use keeps the whole chain
    clock.now += 60
    assert store.get_response("resp_1") is not None
    clock.now += 101
    assert store.get_response("resp_2") is None
    assert store.chain("resp_2") is None


def test_purge_drops_the_least_recently_used_past_the_size_limit(make_store, clock: Clock) -> None:
    store = make_store(max_bytes=1200)
    for n in range(4):
        store.put_response(record(f"resp_{n}", text="x" * 200))
        clock.now += 1
    store.get_response("resp_0")  # a read is no use: only chains and writes count
    store.purge()
    kept = [n for n in range(4) if store.get_response(f"resp_{n}") is not None]
    assert kept and kept == list(range(4 - len(kept), 4))
    assert len(kept) < 4


def test_purge_drops_expired_rows(make_store, clock: Clock) -> None:
    store = make_store(ttl=10)
    store.put_response(record("resp_old"))
    store.create_conversation(Conversation(id="conv_old", created_at=clock.now), [item(1)])
    clock.now += 11
    store.put_response(record("resp_new"))
    store.purge()
    store.ttl = 0  # expired rows would read again if they were still there
    assert store.get_response("resp_old") is None
    assert store.get_conversation("conv_old") is None
    assert store.get_response("resp_new") is not None


def test_conversation_items_append_in_order_and_page(make_store, clock: Clock) -> None:
    store = make_store()
    store.create_conversation(Conversation(id="conv_1", created_at=clock.now, metadata={"topic": "t"}),
                              [item(0), item(1)])
    assert store.append_items("conv_1", [item(2), item(3), item(4)]) is True
    items, more = store.list_items("conv_1")
    assert [i["id"] for i in items] == [f"msg_{n}" for n in range(5)] and more is False
    page, more = store.list_items("conv_1", limit=2)
    assert [i["id"] for i in page] == ["msg_0", "msg_1"] and more is True
    page, more = store.list_items("conv_1", after="msg_1", limit=2)
    assert [i["id"] for i in page] == ["msg_2", "msg_3"] and more is True
    page, more = store.list_items("conv_1", order="desc", limit=2)
    assert [i["id"] for i in page] == ["msg_4", "msg_3"] and more is True
    page, more = store.list_items("conv_1", order="desc", after="msg_1")
    assert [i["id"] for i in page] == ["msg_0"] and more is False
    assert store.get_conversation("conv_1").metadata == {"topic": "t"}


def test_items_of_an_unknown_conversation_are_refused(make_store) -> None:
    store = make_store()
    assert store.append_items("conv_nope", [item(0)]) is False
    assert store.list_items("conv_nope") is None


def test_an_item_is_read_and_deleted_by_id(make_store, clock: Clock) -> None:
    store = make_store()
    store.create_conversation(Conversation(id="conv_1", created_at=clock.now), [item(0), item(1)])
    assert store.get_item("conv_1", "msg_1")["content"][0]["text"] == "item 1"
    assert store.delete_item("conv_1", "msg_1") is True
    assert store.delete_item("conv_1", "msg_1") is False
    assert [i["id"] for i in store.list_items("conv_1")[0]] == ["msg_0"]


def test_a_deleted_conversation_takes_its_items(make_store, clock: Clock) -> None:
    store = make_store()
    store.create_conversation(Conversation(id="conv_1", created_at=clock.now), [item(0)])
    assert store.delete_conversation("conv_1") is True
    assert store.get_conversation("conv_1") is None
    assert store.get_item("conv_1", "msg_0") is None
    assert store.delete_conversation("conv_1") is False


def test_metadata_is_replaced(make_store, clock: Clock) -> None:
    store = make_store()
    store.create_conversation(Conversation(id="conv_1", created_at=clock.now, metadata={"a": "1"}), [])
    assert store.update_conversation("conv_1", {"b": "2"}).metadata == {"b": "2"}
    assert store.get_conversation("conv_1").metadata == {"b": "2"}
    assert store.update_conversation("conv_nope", {}) is None


def test_two_stores_appending_at_once_lose_nothing_and_keep_each_ones_order(make_store, clock: Clock) -> None:
    """Two gateway processes on one store: each batch lands whole, in its own order."""
    first, second = make_store(), make_store()
    first.create_conversation(Conversation(id="conv_1", created_at=clock.now), [])

    def writer(store, tag: str) -> None:
        for n in range(20):
            store.append_items("conv_1", [{"id": f"{tag}{n}a", "type": "message"},
                                          {"id": f"{tag}{n}b", "type": "message"}])

    threads = [threading.Thread(target=writer, args=(s, tag)) for s, tag in ((first, "x"), (second, "y"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ids = [i["id"] for i in second.list_items("conv_1")[0]]
    assert len(ids) == 80
    for tag in "xy":
        mine = [i for i in ids if i.startswith(tag)]
        assert mine == [f"{tag}{n}{half}" for n in range(20) for half in "ab"]
    for n in range(0, 80, 2):  # a batch of two is never split by the other writer
        assert ids[n][:-1] == ids[n + 1][:-1]


def test_a_chain_and_a_conversation_read_back_as_their_stored_json_unread(make_store) -> None:
    """What a worker process reads in the proxy's place for a long history: the same records and
    items as `chain` and `list_items`, as texts; None where those say unknown."""
    store = make_store()
    store.put_response(record("resp_1", text="one"))
    store.put_response(record("resp_2", "resp_1", text="two"))
    texts = store.chain_texts("resp_2")
    assert [json.loads(t)["input"][0]["content"][0]["text"] for t in texts] == ["one", "two"]
    assert [json.loads(t)["response"] for t in texts] == [r.response for r in store.chain("resp_2")]
    assert store.chain_texts("resp_unknown") is None
    store.create_conversation(Conversation(id="conv_1", created_at=1.0), [item(1), item(2)])
    store.append_items("conv_1", [item(3)])
    assert [json.loads(t) for t in store.item_texts("conv_1")] == [item(1), item(2), item(3)]
    assert store.item_texts("conv_nope") is None


def test_a_long_input_written_as_json_reads_back_as_the_same_items(make_store) -> None:
    """A large request's new items come from a worker as one JSON array (`ItemsJSON`) and are
    stored as they are."""
    store = make_store()
    items = [item(n) for n in range(3)]
    kept = record("resp_1")
    kept.input = ItemsJSON(json.dumps(items).encode())
    store.put_response(kept)
    assert store.get_response("resp_1").input == items
    assert json.loads(store.chain_texts("resp_1")[0])["input"] == items


# -- clients --------------------------------------------------------------------------------------
def owned(rid: str, client: str, previous: str | None = None, text: str = "hi") -> ResponseRecord:
    made = record(rid, previous, text)
    made.client = client
    return made


def test_a_clients_responses_are_found_by_it_alone(make_store) -> None:
    store = make_store()
    store.put_response(owned("resp_a1", "ana"))
    store.put_response(owned("resp_a2", "ana", "resp_a1"))
    assert store.get_response("resp_a1", "ana") is not None
    for other in ("bob", ""):
        assert store.get_response("resp_a1", other) is None
        assert store.chain("resp_a2", other) is None
        assert store.chain_texts("resp_a2", other) is None
        assert store.delete_response("resp_a1", other) is False
    assert [r.id for r in store.chain("resp_a2", "ana")] == ["resp_a1", "resp_a2"]


def test_a_chain_never_runs_through_another_clients_response(make_store) -> None:
    store = make_store()
    store.put_response(owned("resp_a1", "ana"))
    store.put_response(owned("resp_b2", "bob", "resp_a1"))  # bob names ana's id as its previous
    assert store.chain("resp_b2", "bob") is None


def test_another_clients_id_is_never_overwritten(make_store) -> None:
    store = make_store()
    store.put_response(owned("resp_1", "ana", text="ana's"))
    with pytest.raises(StoreError):
        store.put_response(owned("resp_1", "bob", text="bob's"))
    assert "ana's" in json.dumps(store.get_response("resp_1", "ana").input)


def test_a_clients_conversation_is_read_changed_and_deleted_by_it_alone(make_store, clock: Clock) -> None:
    store = make_store()
    store.create_conversation(Conversation(id="conv_a", created_at=clock.now, client="ana"), [item(1)])
    for other in ("bob", ""):
        assert store.get_conversation("conv_a", other) is None
        assert store.update_conversation("conv_a", {"by": other}, other) is None
        assert store.append_items("conv_a", [item(2)], other) is False
        assert store.list_items("conv_a", client=other) is None
        assert store.item_texts("conv_a", other) is None
        assert store.get_item("conv_a", "msg_1", other) is None
        assert store.delete_item("conv_a", "msg_1", other) is False
        assert store.delete_conversation("conv_a", other) is False
    assert store.get_conversation("conv_a", "ana").metadata == {}
    assert [i["id"] for i in store.list_items("conv_a", client="ana")[0]] == ["msg_1"]


def test_the_size_limit_is_per_client_in_bytes_and_held_at_every_write(make_store, clock: Clock) -> None:
    store = make_store(max_bytes=2000)
    store.put_response(owned("resp_b", "bob", text="b" * 300))
    for n in range(6):  # ana writes far past the limit; her own oldest go, never bob's
        store.put_response(owned(f"resp_a{n}", "ana", text="é" * 300))  # 2 bytes each in UTF-8
        clock.now += 1
    kept = [n for n in range(6) if store.get_response(f"resp_a{n}", "ana") is not None]
    assert kept == list(range(6 - len(kept), 6)) and len(kept) <= 2  # each record is > 600 bytes
    assert store.get_response("resp_b", "bob") is not None


def test_a_write_that_cannot_fit_alone_fails_and_keeps_the_rest(make_store, clock: Clock) -> None:
    store = make_store(max_bytes=1000)
    store.put_response(owned("resp_small", "ana"))
    with pytest.raises(StoreError, match="gateway_store_max_bytes"):
        store.put_response(owned("resp_huge", "ana", text="x" * 2000))
    assert store.get_response("resp_huge", "ana") is None
    assert store.get_response("resp_small", "ana") is not None


def test_a_long_list_of_items_is_written_in_batches_and_reads_back_in_order(make_store, clock: Clock) -> None:
    store = make_store()
    store.create_conversation(Conversation(id="conv_1", created_at=clock.now), [item(n) for n in range(250)])
    assert [i["id"] for i in store.list_items("conv_1")[0]] == [f"msg_{n}" for n in range(250)]


def test_usage_adds_up_per_client_day_route_and_model(make_store) -> None:
    store = make_store()
    turn = {"requests": 1, "input_tokens": 100, "cached_tokens": 40, "output_tokens": 7,
            "reasoning_tokens": 3, "cost_usd": 0.00125}
    store.add_usage("ana", "2026-12-01", "anthropic", "claude", turn)
    store.add_usage("ana", "2026-12-01", "anthropic", "claude", turn)
    store.add_usage("ana", "2026-12-02", "gemini", "flash", turn)
    store.add_usage("bob", "2026-12-01", "anthropic", "claude", {"requests": 1})
    rows = store.usage("2026-12-01", "2026-12-01", client="ana")
    assert rows == [{"client": "ana", "day": "2026-12-01", "route": "anthropic", "model": "claude",
                     "requests": 2, "input_tokens": 200, "cached_tokens": 80, "output_tokens": 14,
                     "reasoning_tokens": 6, "cost_usd": pytest.approx(0.0025), "partial_requests": 0}]
    assert store.usage("2026-12-01", "2026-12-01", client="bob")[0]["cost_usd"] == 0.0  # no price
    assert {r["client"] for r in store.usage("2026-12-01", "2026-12-02")} == {"ana", "bob"}
    assert store.tokens_on("ana", "2026-12-01") == 214
    assert store.tokens_on("ana", "2026-11-30") == 0

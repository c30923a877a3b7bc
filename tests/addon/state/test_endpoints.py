"""addon/state/endpoints.py: the store's endpoints bounded as the API bounds them, and per client."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from addon.state import endpoints
from addon.state.store.sqlite import SqliteStore


@pytest.fixture
def store(tmp_path: Path) -> Any:
    made = SqliteStore(str(tmp_path / "store.sqlite"), ttl=0, max_bytes=0)
    yield made
    made.close()


def _message(text: str = "hi", **extra: Any) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": text, **extra}


def _refused(result: Any) -> tuple[int, str, str]:
    status, body = result
    return status, body["error"]["code"], body["error"]["param"]


def _count(store: SqliteStore) -> int:
    return store._db.execute("SELECT COUNT(*) FROM gw_conversations").fetchone()[0]


@pytest.mark.parametrize(("body", "code", "param"), [
    ({"items": [_message()] * 21}, "array_above_max_length", "items"),
    ({"items": [{}] * 200_000}, "array_above_max_length", "items"),
    ({"items": {"0": _message()}}, "invalid_type", "items"),
    ({"items": [_message(), "text"]}, "invalid_type", "items[1]"),
    ({"items": [_message(id={"a": 1})]}, "invalid_type", "items[0].id"),
    ({"items": [_message(id=7)]}, "invalid_type", "items[0].id"),
    ({"items": [_message(id="")]}, "empty_string", "items[0].id"),
    ({"items": [{"type": 1}]}, "invalid_type", "items[0].type"),
    ({"metadata": {f"k{n}": "v" for n in range(17)}}, "object_above_max_properties", "metadata"),
    ({"metadata": {"k" * 65: "v"}}, "string_above_max_length", "metadata." + "k" * 64),
    ({"metadata": {"k": "v" * 513}}, "string_above_max_length", "metadata.k"),
    ({"metadata": {"k": 1}}, "invalid_type", "metadata.k"),
    ({"metadata": {"k": {"deep": "x" * 10_000}}}, "invalid_type", "metadata.k"),
    ({"metadata": ["k"]}, "invalid_type", "metadata"),
])
def test_a_conversation_past_the_apis_bounds_is_refused_whole_and_nothing_is_stored(
        store: SqliteStore, body: dict[str, Any], code: str, param: str) -> None:
    assert _refused(endpoints.handle(store, "POST", "conversations", {}, body)) == (400, code, param)
    assert _count(store) == 0


def test_the_bounds_themselves_are_accepted(store: SqliteStore) -> None:
    body = {"items": [_message(str(n)) for n in range(20)],
            "metadata": {f"{n:02d}" + "k" * 62: "v" * 512 for n in range(16)}}
    status, made = endpoints.handle(store, "POST", "conversations", {}, body)
    assert status == 200 and len(made["metadata"]) == 16


def test_a_body_that_is_not_an_object_is_refused(store: SqliteStore) -> None:
    assert _refused(endpoints.handle(store, "POST", "conversations", {}, [1]))[:2] == (400, "invalid_type")


def test_appends_and_metadata_updates_are_bounded_too(store: SqliteStore) -> None:
    _status, made = endpoints.handle(store, "POST", "conversations", {}, {})
    rest = f"conversations/{made['id']}"
    assert _refused(endpoints.handle(store, "POST", f"{rest}/items", {}, {"items": [_message()] * 21}))[1] \
        == "array_above_max_length"
    assert _refused(endpoints.handle(store, "POST", rest, {}, {"metadata": {"k": 1}}))[1] == "invalid_type"
    _status, listed = endpoints.handle(store, "GET", f"{rest}/items", {}, {})
    assert listed["data"] == []


def test_another_clients_conversation_is_the_apis_404(store: SqliteStore) -> None:
    _status, made = endpoints.handle(store, "POST", "conversations", {}, {"items": [_message()]}, "ana")
    rest = f"conversations/{made['id']}"
    for method, path, body in (("GET", rest, {}), ("POST", rest, {"metadata": {"k": "v"}}),
                               ("DELETE", rest, {}), ("GET", f"{rest}/items", {}),
                               ("POST", f"{rest}/items", {"items": [_message()]})):
        status, answer = endpoints.handle(store, method, path, {}, body, "bob")
        assert (status, answer["error"]["code"]) == (404, "not_found"), (method, path)
    assert endpoints.handle(store, "GET", rest, {}, {}, "ana")[0] == 200

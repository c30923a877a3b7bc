"""The store's own endpoints, Responses-shaped (openai 3.57 `responses.retrieve/delete`,
`responses.input_items.list`, `conversations.*`, `conversations.items.*`): pure over a `Store`,
`handle` returns (status, JSON body), or None for a path that is not one of them.

Every call names its client: another client's ids are not found (the API's own 404). What is
written is bounded as the API bounds it (docs/state.md "Bounds"): at most `MAX_ITEMS` items per
request, `metadata` of at most 16 string pairs (keys up to 64 characters, values up to 512), item
ids strings; a request past them is refused whole with the JSON path of the first fault, and
nothing is stored."""

from __future__ import annotations

import time
from typing import Any

from addon.state import stored_items
from addon.state.store import Conversation, Store
from translators import client_dialects
from translators.wire.response_object import with_every_field

Result = tuple[int, dict[str, Any]] | None
error_body = client_dialects.get(client_dialects.DEFAULT).error_body
"""The store's endpoints are the Responses API's own (docs/state.md): their errors are said in
the Responses client dialect's shape."""
_MAX_LIMIT = 100
MAX_ITEMS = 20
"""Items per create / append request: "You may add up to 20 items at a time" (openai SDK,
`conversations.create`, `conversations.items.create`)."""
MAX_METADATA_PAIRS = 16
MAX_METADATA_KEY = 64
MAX_METADATA_VALUE = 512
"""The API's `metadata`: "16 key-value pairs ... Keys are strings with a maximum length of 64
characters. Values are strings with a maximum length of 512 characters" (openai SDK `Metadata`)."""


def _not_found(kind: str, key: str, param: str | None = None) -> tuple[int, dict[str, Any]]:
    return 404, error_body(404, "not_found", f"{kind} with id '{key}' not found.", param)


def _bad(message: str, param: str | None = None) -> tuple[int, dict[str, Any]]:
    return 400, error_body(400, "invalid_request_error", message, param)


def _page(query: dict[str, str]) -> tuple[str | None, int, str] | str:
    order = query.get("order", "desc")
    if order not in ("asc", "desc"):
        return "order must be asc or desc"
    try:
        limit = int(query.get("limit", "20"))
    except ValueError:
        return "limit must be an integer"
    if not 1 <= limit <= _MAX_LIMIT:
        return f"limit must be between 1 and {_MAX_LIMIT}"
    return query.get("after") or None, limit, order


def _conversation(c: Conversation) -> dict[str, Any]:
    return {"id": c.id, "object": "conversation", "created_at": int(c.created_at), "metadata": c.metadata}


class Invalid(ValueError):
    """A request field the API would refuse: its code and JSON path."""

    def __init__(self, code: str, param: str, message: str) -> None:
        super().__init__(message)
        self.code, self.param = code, param

    def result(self) -> tuple[int, dict[str, Any]]:
        return 400, error_body(400, self.code, str(self), self.param)


def _type_name(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", int: "an integer",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


def wrong_type(param: str, value: Any, expected: str) -> Invalid:
    return Invalid("invalid_type", param, f"Invalid type for '{param}': expected {expected}, but got "
                                          f"{_type_name(value)} instead.")


def check_id(param: str, value: Any) -> str:
    """A string id, not empty (`previous_response_id`, `conversation`, an item's `id`)."""
    if not isinstance(value, str):
        raise wrong_type(param, value, "a string")
    if not value:
        raise Invalid("empty_string", param, f"Invalid '{param}': empty string. Expected a string with "
                                             "minimum length 1, but got an empty string instead.")
    return value


def check_metadata(value: Any, param: str = "metadata") -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise wrong_type(param, value, "an object")
    if len(value) > MAX_METADATA_PAIRS:
        raise Invalid("object_above_max_properties", param, f"Invalid '{param}': too many properties. "
                      f"Expected an object with at most {MAX_METADATA_PAIRS} properties, but got an object "
                      f"with {len(value)} properties instead.")
    for key, text in value.items():
        if len(key) > MAX_METADATA_KEY:
            raise Invalid("string_above_max_length", f"{param}.{key[:MAX_METADATA_KEY]}",
                          f"Invalid '{param}': a key is longer than {MAX_METADATA_KEY} characters.")
        if not isinstance(text, str):
            raise wrong_type(f"{param}.{key}", text, "a string")
        if len(text) > MAX_METADATA_VALUE:
            raise Invalid("string_above_max_length", f"{param}.{key}", f"Invalid '{param}.{key}': string "
                          f"too long. Expected a string with maximum length {MAX_METADATA_VALUE}, but got a "
                          f"string with length {len(text)} instead.")
    return value


def check_items(body: dict[str, Any]) -> list[dict[str, Any]]:
    items = body.get("items", [])
    if not isinstance(items, list):
        raise wrong_type("items", items, "an array")
    if len(items) > MAX_ITEMS:
        raise Invalid("array_above_max_length", "items", f"Invalid 'items': array too long. Expected an "
                      f"array with maximum length {MAX_ITEMS}, but got an array with length {len(items)} "
                      "instead.")
    for n, item in enumerate(items):
        if not isinstance(item, dict):
            raise wrong_type(f"items[{n}]", item, "an object")
        if "id" in item and item["id"] is not None:
            check_id(f"items[{n}].id", item["id"])
        for field in ("type", "role"):
            if field in item and not isinstance(item[field], str):
                raise wrong_type(f"items[{n}].{field}", item[field], "a string")
    return [stored_items.stored_item(i) for i in items]


def handle(store: Store, method: str, rest: str, query: dict[str, str], body: Any,
           client: str = "") -> Result:
    """`body`: the request's JSON (an object for the endpoints that read one); `client`: whose."""
    parts = rest.split("/")
    try:
        if parts[0] == "responses" and len(parts) in (2, 3) and parts[1] != "compact":
            return _responses(store, method, parts[1], parts[2] if len(parts) == 3 else None, query, client)
        if parts[0] == "conversations":
            if method == "POST" and not isinstance(body, dict):
                raise wrong_type("(body)", body, "an object")
            return _conversations(store, method, parts[1:], query, body, client)
    except Invalid as exc:
        return exc.result()
    return None


def _responses(store: Store, method: str, rid: str, sub: str | None, query: dict[str, str],
               client: str) -> Result:
    if sub is None and method == "GET":
        record = store.get_response(rid, client)
        # an object stored by an earlier gateway lacks fields strict clients require
        return (200, with_every_field(record.response)) if record else _not_found("Response", rid)
    if sub is None and method == "DELETE":
        found = store.delete_response(rid, client)
        return (200, {"id": rid, "object": "response.deleted", "deleted": True}) if found else \
            _not_found("Response", rid)
    if sub == "input_items" and method == "GET":
        page = _page(query)
        if isinstance(page, str):
            return _bad(page)
        after, limit, order = page
        record = store.get_response(rid, client)
        if record is None:
            return _not_found("Response", rid)
        items = record.input if order == "asc" else list(reversed(record.input))
        if after is not None:
            ids = [i.get("id") for i in items]
            items = items[ids.index(after) + 1:] if after in ids else items
        return 200, stored_items.item_list(items[:limit], len(items) > limit)
    return None


def _conversations(store: Store, method: str, parts: list[str], query: dict[str, str],
                   body: Any, client: str) -> Result:
    if not parts and method == "POST":
        items = check_items(body)
        metadata = check_metadata(body.get("metadata"))
        conversation = Conversation(id=stored_items.new_id("conv"), created_at=time.time(), metadata=metadata,
                                    client=client)
        store.create_conversation(conversation, items)
        return 200, _conversation(conversation)
    if not parts:
        return None
    cid = parts[0]
    if len(parts) == 1:
        if method == "GET":
            found = store.get_conversation(cid, client)
        elif method == "POST":
            found = store.update_conversation(cid, check_metadata(body.get("metadata")), client)
        elif method == "DELETE":
            return (200, {"id": cid, "object": "conversation.deleted", "deleted": True}) \
                if store.delete_conversation(cid, client) else _not_found("Conversation", cid)
        else:
            return None
        return (200, _conversation(found)) if found else _not_found("Conversation", cid)
    if parts[1] != "items" or len(parts) > 3:
        return None
    if len(parts) == 3:
        iid = parts[2]
        if method == "GET":
            item = store.get_item(cid, iid, client)
            return (200, item) if item else _not_found("Item", iid)
        if method == "DELETE":
            if not store.delete_item(cid, iid, client):
                return _not_found("Item", iid)
            found = store.get_conversation(cid, client)
            return (200, _conversation(found)) if found else _not_found("Conversation", cid)
        return None
    if method == "GET":
        page = _page(query)
        if isinstance(page, str):
            return _bad(page)
        after, limit, order = page
        listed = store.list_items(cid, after=after, limit=limit, order=order, client=client)
        if listed is None:
            return _not_found("Conversation", cid)
        return 200, stored_items.item_list(*listed)
    if method == "POST":
        items = check_items(body)
        if not store.append_items(cid, items, client):
            return _not_found("Conversation", cid)
        return 200, stored_items.item_list(items, False)
    return None

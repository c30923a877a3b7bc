"""The store's own endpoints, Responses-shaped (openai 3.57 `responses.retrieve/delete`,
`responses.input_items.list`, `conversations.*`, `conversations.items.*`): pure over a `Store`,
`handle` returns (status, JSON body), or None for a path that is not one of them."""

from __future__ import annotations

import time
from typing import Any

from addon import history
from addon.errors import error_body
from addon.store import Conversation, Store

Result = tuple[int, dict[str, Any]] | None
_MAX_LIMIT = 100


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


def _items(body: dict[str, Any]) -> list[dict[str, Any]] | str:
    items = body.get("items", [])
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        return "items must be a list of items"
    return [history.stored_item(i) for i in items]


def handle(store: Store, method: str, rest: str, query: dict[str, str], body: dict[str, Any]) -> Result:
    parts = rest.split("/")
    if parts[0] == "responses" and len(parts) in (2, 3) and parts[1] != "compact":
        return _responses(store, method, parts[1], parts[2] if len(parts) == 3 else None, query)
    if parts[0] == "conversations":
        return _conversations(store, method, parts[1:], query, body)
    return None


def _responses(store: Store, method: str, rid: str, sub: str | None, query: dict[str, str]) -> Result:
    if sub is None and method == "GET":
        record = store.get_response(rid)
        return (200, record.response) if record else _not_found("Response", rid)
    if sub is None and method == "DELETE":
        found = store.delete_response(rid)
        return (200, {"id": rid, "object": "response.deleted", "deleted": True}) if found else \
            _not_found("Response", rid)
    if sub == "input_items" and method == "GET":
        page = _page(query)
        if isinstance(page, str):
            return _bad(page)
        after, limit, order = page
        record = store.get_response(rid)
        if record is None:
            return _not_found("Response", rid)
        items = record.input if order == "asc" else list(reversed(record.input))
        if after is not None:
            ids = [i.get("id") for i in items]
            items = items[ids.index(after) + 1:] if after in ids else items
        return 200, history.item_list(items[:limit], len(items) > limit)
    return None


def _conversations(store: Store, method: str, parts: list[str], query: dict[str, str],
                   body: dict[str, Any]) -> Result:
    if not parts and method == "POST":
        items = _items(body)
        if isinstance(items, str):
            return _bad(items, "items")
        metadata = body.get("metadata") or {}
        conversation = Conversation(id=history.new_id("conv"), created_at=time.time(), metadata=metadata)
        store.create_conversation(conversation, items)
        return 200, _conversation(conversation)
    if not parts:
        return None
    cid = parts[0]
    if len(parts) == 1:
        if method == "GET":
            found = store.get_conversation(cid)
        elif method == "POST":
            found = store.update_conversation(cid, body.get("metadata") or {})
        elif method == "DELETE":
            return (200, {"id": cid, "object": "conversation.deleted", "deleted": True}) \
                if store.delete_conversation(cid) else _not_found("Conversation", cid)
        else:
            return None
        return (200, _conversation(found)) if found else _not_found("Conversation", cid)
    if parts[1] != "items" or len(parts) > 3:
        return None
    if len(parts) == 3:
        iid = parts[2]
        if method == "GET":
            item = store.get_item(cid, iid)
            return (200, item) if item else _not_found("Item", iid)
        if method == "DELETE":
            if not store.delete_item(cid, iid):
                return _not_found("Item", iid)
            found = store.get_conversation(cid)
            return (200, _conversation(found)) if found else _not_found("Conversation", cid)
        return None
    if method == "GET":
        page = _page(query)
        if isinstance(page, str):
            return _bad(page)
        after, limit, order = page
        listed = store.list_items(cid, after=after, limit=limit, order=order)
        if listed is None:
            return _not_found("Conversation", cid)
        return 200, history.item_list(*listed)
    if method == "POST":
        items = _items(body)
        if isinstance(items, str):
            return _bad(items, "items")
        if not store.append_items(cid, items):
            return _not_found("Conversation", cid)
        return 200, history.item_list(items, False)
    return None

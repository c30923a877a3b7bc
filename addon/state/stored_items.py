"""Pure helpers over Responses items for the stored state (no mitmproxy, no store).

The Responses API rebuilds a turn's context as: the items of the previous responses (each one's
input, then its output), or the conversation's items, then the new input (docs/state.md).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

_ID_PREFIX = {"message": "msg", "function_call": "fc", "function_call_output": "fco", "reasoning": "rs",
              "custom_tool_call": "ctc", "custom_tool_call_output": "ctco", "compaction": "cmp"}
_INPUT_ROLES = {"user", "system", "developer"}


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(24)}"


def input_items(value: Any) -> list[dict[str, Any]]:
    """The request's `input` as a list of items (a string is one user message)."""
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, dict)]
    return []


def stored_item(item: dict[str, Any]) -> dict[str, Any]:
    """An input item as the store keeps it and the list endpoints return it: with an id, a
    message's text content as parts and a status (the SDK's `Message` requires both)."""
    item = dict(item)
    kind = item.get("type") or ("message" if "role" in item else "item")
    item["type"] = kind
    if not item.get("id"):
        item["id"] = new_id(_ID_PREFIX.get(kind, "item"))
    if kind == "message":
        content = item.get("content")
        if isinstance(content, str):
            part = "input_text" if item.get("role") in _INPUT_ROLES else "output_text"
            item["content"] = [{"type": part, "text": content,
                                **({"annotations": []} if part == "output_text" else {})}]
        item.setdefault("status", "completed")
    return item


def is_reference(item: Any) -> bool:
    """An `item_reference` input item: `{"type": "item_reference", "id": ...}`, or `{"id": ...}`
    alone (openai SDK `ItemReference`: its `type` is optional)."""
    if not isinstance(item, dict) or not isinstance(item.get("id"), str):
        return False
    return item.get("type") == "item_reference" or ("type" not in item and set(item) == {"id"})


def references(value: Any) -> list[str]:
    """The ids the request's `input` refers to by `item_reference`, in order."""
    return [item["id"] for item in value if is_reference(item)] if isinstance(value, list) else []


def resolve(value: Any, found: dict[str, dict[str, Any]]) -> Any:
    """`input` with each `item_reference` whose id `found` holds replaced by that item, as the
    Responses API does with stored items (docs/agents-sdk.md "Item references"); any other
    reference stays (a route to OpenAI: OpenAI's own item)."""
    if not found or not isinstance(value, list):
        return value
    return [found.get(item["id"], item) if is_reference(item) else item for item in value]


STATE_KEYS = ("previous_response_id", "conversation")
"""The request members naming stored state, which `expand` resolves into `input`."""


def resolved(body: dict[str, Any]) -> dict[str, Any]:
    """The state members `expand` takes out of `body`: the translation still echoes them in
    every Responses object (translators/api.py `translate_request`, docs/responses.md)."""
    return {key: body[key] for key in STATE_KEYS if key in body}


def expand(body: dict[str, Any], past: list[dict[str, Any]],
           found: dict[str, dict[str, Any]] | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The body to translate, with the stored history `past` in `input` and the stored items
    `found` in place of the references to them (`resolve`), and the turn's new input items as the
    store keeps them. A `/responses/compact` body is expanded the same way and
    translated with `kind="compaction_endpoint"` (docs/compaction.md "Two forms")."""
    new_items = [stored_item(i) for i in input_items(resolve(body.get("input"), found or {}))]
    expanded = {k: v for k, v in body.items() if k not in STATE_KEYS}
    expanded["input"] = past + new_items
    return expanded, new_items


@dataclass(frozen=True, slots=True)
class Stored:
    """A stored history as the store keeps it, unread: the JSON texts of a chain's responses
    (`kind` "chain") or of a conversation's items ("items")."""

    kind: str
    texts: list[str]

    def json(self) -> bytes:
        """The texts as one JSON array, for `past_items` where they are read."""
        return b"[" + b",".join(text.encode() for text in self.texts) + b"]"


def past_items(kind: str, rows: list[Any]) -> list[dict[str, Any]]:
    """The items a stored history holds, oldest first: a conversation's items as they are; for a
    chain of responses each one's input, then its output (`rows`: the stored JSON read)."""
    if kind == "items":
        return rows
    items: list[dict[str, Any]] = []
    for row in rows:
        items += row["input"]
        items += row["response"].get("output") or []
    return items


def item_list(items: list[dict[str, Any]], has_more: bool) -> dict[str, Any]:
    """A cursor page as the list endpoints answer it (openai `ConversationItemList`)."""
    return {"object": "list", "data": items, "first_id": items[0]["id"] if items else "",
            "last_id": items[-1]["id"] if items else "", "has_more": has_more}

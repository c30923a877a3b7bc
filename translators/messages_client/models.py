"""Anthropic's models endpoints as the gateway answers them for a Messages client, from its routes
(docs/claude-code.md "Models"): `GET /v1/models` a page of `ModelInfo`, `GET /v1/models/{id}` one.

Claude Code lists what `/v1/models` answers in its model picker and `/model` when
`CLAUDE_CODE_ENABLE_GATEWAY_MODEL_DISCOVERY` is set, keeping only the ids that contain `claude` or
`anthropic`, each labelled with its `display_name`; `NAMES` are the ids it sends by default.
"""

from __future__ import annotations

from typing import Any

from translators.client_dialects import ListedModel

CREATED_AT = "1970-01-01T00:00:00Z"
"""`created_at` of a listed model: a route has no release date (anthropic SDK `ModelInfo`)."""

NAMES = ("claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5", "claude-fable-5-2")
"""The ids Claude Code 2.1.328 sends for its default model and for its `opus`, `sonnet`, `haiku`
and `fable` aliases (its small and fast model, unless set, is the main one behind a gateway):
docs/claude-code.md "Models"."""


def entry(listed: ListedModel) -> dict[str, Any]:
    """One `ModelInfo`; its `display_name` says where the name goes."""
    return {"type": "model", "id": listed.id, "created_at": CREATED_AT,
            "display_name": f"{listed.id} ({listed.upstream}: {listed.model})"}


def page(listed: list[ListedModel]) -> dict[str, Any]:
    """The whole list, one page (`has_more` false)."""
    data = [entry(model) for model in listed]
    return {"data": data, "has_more": False, "first_id": data[0]["id"] if data else None,
            "last_id": data[-1]["id"] if data else None}

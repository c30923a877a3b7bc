"""The one translate step of a request, for every client dialect, wherever it runs: on the event
loop, in a thread, or in a worker process (addon/serve/pipeline.py `_translate` decides where;
addon/work/workers.py runs it in a worker). No mitmproxy, no store, no I/O: a worker imports it
afresh.

The stored history a turn continues goes in place of `previous_response_id` / `conversation`
(`stored_items.expand`, docs/state.md), a token count is asked as a turn would be, and
`translators/api.py` `translate_request` decodes with the client's decoder, adjusts (compaction,
web search) and encodes with the route dialect's codec (or passes through), reporting what it drops.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from addon.state import stored_items
from translators import ItemCache, Translation, translate_request
from translators.core.capabilities import ModelCapabilities


@dataclass(frozen=True, slots=True)
class Asked:
    """What the step needs besides the body: small and picklable (it crosses to a worker)."""

    dialect: str
    """The route's dialect, by name (a worker looks it up in its own registry)."""
    model: str | None
    client: str
    """The client dialect, by name."""
    kind: Literal["turn", "compaction_endpoint"]
    """`compaction_endpoint` for `/responses/compact` (docs/compaction.md "Two forms"); a
    compaction by Codex's trigger item is a turn the Responses decoder recognises."""
    counting: bool
    """A token count (docs/claude-code.md "Token counts")."""
    capabilities: ModelCapabilities | None
    web_search: str
    """`gateway_web_search`."""


def translate_turn(body: Any, past: list[dict[str, Any]] | None, asked: Asked,
                   found: dict[str, dict[str, Any]] | None = None, *, items: ItemCache | None = None,
                   ) -> tuple[Translation, list[dict[str, Any]]]:
    """The translation of `body`, and the turn's new input items as the store keeps them (empty
    when `past` is None: the turn reads no stored history); `found`: the stored items its
    `item_reference`s name, put in their place (`stored_items.resolve`); `items`: the client's
    cache of decoded items (addon/serve/ir_cache.py), never in a worker (it is not `Asked`)."""
    resolved: dict[str, Any] = {}
    new_items: list[dict[str, Any]] = []
    if past is not None:
        resolved = stored_items.resolved(body)  # still echoed (docs/responses.md)
        body, new_items = stored_items.expand(body, past, found)
    if asked.counting and isinstance(body, dict):
        # a token count has no `max_tokens` nor a stream; the translation of a turn needs them
        body = {**body, "max_tokens": body.get("max_tokens", 1), "stream": False}
    translation = translate_request(body, asked.dialect, asked.model, capabilities=asked.capabilities,
                                    web_search=asked.web_search, resolved=resolved, client=asked.client,
                                    kind=asked.kind, items=items)
    return translation, new_items

"""The reader of Anthropic's `GET /v1/models/{id}` (docs/anthropic.md "Models and capabilities"):
what the vendor says one Claude model takes, over the family's shipped profile
(`translators/families/claude/models.py`)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from translators.core.capabilities import ModelCapabilities
from translators.families.claude.models import lookup


def _supported(node: Any) -> bool:
    return isinstance(node, dict) and node.get("supported") is True


def from_model_info(payload: Any, model: str) -> ModelCapabilities:
    """`GET /v1/models/{id}` (anthropic SDK `types.ModelInfo`) -> capabilities, source `vendor`.
    What the endpoint does not publish (one sampling knob) comes from the table row. Raises
    ValueError for a body that is not a model."""
    if not isinstance(payload, dict) or payload.get("type") != "model":
        raise ValueError("not a model object")
    table = lookup(model)
    caps = payload.get("capabilities")
    out = replace(table, source="vendor")
    window, limit = payload.get("max_input_tokens"), payload.get("max_tokens")
    if isinstance(window, int) and window > 0:
        out = replace(out, context_window=window)
    if isinstance(limit, int) and limit > 0:
        out = replace(out, max_output_tokens=limit)
    lifecycle = payload.get("lifecycle")
    if lifecycle in ("active", "deprecated", "retired"):
        retires = payload.get("retires_at")
        out = replace(out, lifecycle=lifecycle,
                      retires=retires[:10] if isinstance(retires, str) else out.retires)
    if isinstance(caps, dict):
        thinking = caps.get("thinking") if isinstance(caps.get("thinking"), dict) else {}
        types = thinking.get("types") if isinstance(thinking.get("types"), dict) else {}
        effort = caps.get("effort") if isinstance(caps.get("effort"), dict) else {}
        server = caps.get("server_tools") if isinstance(caps.get("server_tools"), dict) else {}
        out = replace(
            out,
            thinking=frozenset(k for k, v in types.items() if _supported(v)),
            effort=frozenset(k for k, v in effort.items() if k != "supported" and _supported(v))
            if effort.get("supported") else frozenset(),
            structured_output=_supported(caps.get("structured_outputs")),
            image_input=_supported(caps.get("image_input")),
            pdf_input=_supported(caps.get("pdf_input")),
            web_search=_supported(server.get("web_search")),
        )
    return out

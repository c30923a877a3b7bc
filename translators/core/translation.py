"""The result of translating one client request: what to send upstream, and how to read back."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from translators.features.naming import ToolIndex


class Translation(BaseModel):
    target: str
    """The upstream dialect: responses | anthropic | chat | gemini | bedrock."""
    client: str = "responses"
    """The client dialect (translators/client_dialects.py): what the answers and errors are written in."""
    model: str
    """The model named upstream."""
    client_model: str
    """The model the client asked for (what the client sees in responses)."""
    path: str
    """Upstream request path (with query), relative to the upstream base URL."""
    body: dict[str, Any]
    headers: dict[str, str] = Field(default_factory=dict)
    """Headers the body is written for (e.g. `anthropic-version`); auth is the caller's business."""
    stream: bool = True
    dropped: list[str] = Field(default_factory=list)
    """Every field the upstream request could not carry, as a dotted path (translators/core/report.py)."""
    cosmetic: list[str] = Field(default_factory=list)
    """The paths of `dropped` whose loss changes nothing the model sees or may do; the others are
    lossy (translators/core/report.py `COSMETIC`)."""
    notes: list[str] = Field(default_factory=list)
    tools: ToolIndex = Field(default_factory=ToolIndex)
    echo: dict[str, Any] = Field(default_factory=dict)
    """What the client's request set of the fields every Responses object sent back repeats
    (`tools` in their full form), without the defaults (translators/responses_client/echo.py)."""
    compaction: bool = False
    """A compaction request (`Request.kind`) served by summarizing: the upstream's text comes back
    as one `compaction` item (translators/features/compaction.py)."""
    input_estimate: int = 0
    """The input tokens of the request as sent, roughly (translators/ir/size.py): what a budget
    reserves for the turn's input before the upstream counts it (docs/team.md "Budgets")."""
    output_limit: int | None = None
    """The most output tokens the turn may take as sent: the limit in the upstream body (the
    client's, fitted to the model: translators/features/fit.py), else the model's own ceiling;
    None when neither is known."""
    compaction_kept: list[dict[str, Any]] | None = None
    """The `/responses/compact` form only (docs/compaction.md "Two forms"): the history's user
    messages, which its answer, the whole `response.compaction` object, keeps before the one
    compaction item; None for Codex's form, answered as a Responses stream."""


class Encoded(BaseModel):
    """What a dialect's request encoder returns."""

    path: str
    body: dict[str, Any]
    headers: dict[str, str] = Field(default_factory=dict)
    tools: ToolIndex = Field(default_factory=ToolIndex)
    cache_marks: bool = False
    """The encoder carried the client's prompt-cache breakpoints (and reported any it could not);
    False: `translate_request` reports each of them dropped (translators/features/caching.py)."""


class UpstreamError(BaseModel):
    """An upstream HTTP error, re-said in Responses shape for the client."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] = Field(default_factory=dict)

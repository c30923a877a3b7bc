"""What each upstream dialect provides, and the registry of them."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from translators.capabilities import ModelCapabilities
from translators.ir.events import Event
from translators.ir.request import Request
from translators.report import Report
from translators.translation import Encoded, Translation

DIALECTS = ("responses", "anthropic", "chat", "gemini", "bedrock")


class StreamDecoder(Protocol):
    """Sans-I/O: upstream bytes in any chunking -> IR events, as soon as a whole event is in."""

    def feed(self, data: bytes) -> list[Event]: ...

    def close(self) -> list[Event]: ...


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    code: str
    message: str


@dataclass(frozen=True, slots=True)
class ModelsEndpoint:
    """Where a vendor publishes what one model accepts (docs/models.md). The addon fetches it
    with the route's key; the dialect only says where and how to read the answer."""

    path: Callable[[str], str]
    """Upstream model -> path relative to the base URL."""
    headers: dict[str, str]
    """Headers the endpoint needs besides the key (e.g. `anthropic-version`)."""
    parse: Callable[[Any, str], ModelCapabilities]
    """(parsed JSON answer, upstream model) -> capabilities; raises ValueError for another body."""


@dataclass(frozen=True, slots=True)
class Dialect:
    name: str
    encode_request: Callable[[Request, str, Report, ModelCapabilities], Encoded]
    """(IR request, upstream model, report, what the model accepts) -> upstream path, body,
    headers, tool index."""
    stream_decoder: Callable[[Translation], StreamDecoder]
    response_events: Callable[[Any, Translation], list[Event]]
    """A whole (non-streamed) upstream answer, parsed JSON -> the same events a stream gives."""
    error_info: Callable[[int, Any], ErrorInfo]
    """(HTTP status, parsed error body or raw text) -> code and message for the client."""
    capabilities: Callable[[str], ModelCapabilities]
    """The shipped table's answer for a model (the fallback when the vendor cannot be asked)."""
    models_endpoint: ModelsEndpoint | None = None


def get(name: str) -> Dialect:
    if name not in DIALECTS or name == "responses":
        raise KeyError(name)
    module = importlib.import_module(f"translators.{name}")
    return module.DIALECT  # type: ignore[no-any-return]

"""A local vendor models endpoint (Anthropic `GET /v1/models/{id}`, Gemini `GET /v1beta/models/{m}`)
on 127.0.0.1, and the model descriptions it answers with, shaped like the SDKs' types
(anthropic `types.ModelInfo`, google-genai `types.Model`, wire names).

`with ModelsEndpoint(answer) as up:` answers every request with `answer` (a `Reply`), after
`up.gate` is set when the test holds it (`held=True`), so a test decides when the vendor answers.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any

from tests.support.loopback_http import Loopback, Received, RecordingHandler

EFFORT_WORDS = ("low", "medium", "high", "xhigh", "max")
THINKING_TYPES = ("adaptive", "between_tools", "disabled", "enabled")
GATE_TIMEOUT = 10.0
"""A held answer goes out after this long anyway, so a failing test never hangs."""


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=lambda: {"content-type": "application/json"})
    raw: bytes = b""
    """Written as is instead of an HTTP answer (a broken server), then the connection closes."""


def json_reply(payload: Any, status: int = 200) -> Reply:
    return Reply(status, json.dumps(payload).encode())


def claude_model_info(model: str, *, thinking: tuple[str, ...] = ("adaptive", "disabled"),
                      effort: tuple[str, ...] = (), max_input_tokens: int = 1_000_000,
                      max_tokens: int = 64_000, lifecycle: str = "active",
                      retires_at: str | None = None) -> dict[str, Any]:
    """`types.ModelInfo`: every capability key present, `supported` saying which apply."""
    def support(yes: bool) -> dict[str, bool]:
        return {"supported": yes}

    return {
        "type": "model", "id": model, "display_name": model, "created_at": "2025-09-29T00:00:00Z",
        "lifecycle": lifecycle, "deprecated_at": None if lifecycle == "active" else "2026-01-01T00:00:00Z",
        "retires_at": retires_at, "max_input_tokens": max_input_tokens, "max_tokens": max_tokens,
        "capabilities": {
            "batch": support(True), "citations": support(True), "code_execution": support(True),
            "context_management": {"supported": True},
            "effort": {"supported": bool(effort),
                       **{word: support(word in effort) for word in EFFORT_WORDS}},
            "image_input": support(True), "pdf_input": support(True),
            "server_tools": {"supported": True, "web_search": support(True)},
            "structured_outputs": support(True),
            "thinking": {"supported": bool(thinking), "types": {
                kind: support(kind in thinking) for kind in THINKING_TYPES}},
        },
    }


def gemini_model(model: str, *, input_limit: int = 1_048_576, output_limit: int = 65_536,
                 thinking: bool = True) -> dict[str, Any]:
    """`types.Model` as the REST API spells it."""
    return {"name": f"models/{model}", "version": "001", "displayName": model,
            "inputTokenLimit": input_limit, "outputTokenLimit": output_limit, "thinking": thinking,
            "supportedGenerationMethods": ["generateContent", "countTokens"]}


class ModelsEndpoint(Loopback[Reply]):
    thread_name = "models-endpoint"

    def __init__(self, answer: Reply, *, held: bool = False) -> None:
        self.default = answer
        self.gate = threading.Event()
        if not held:
            self.gate.set()
        super().__init__()

    @property
    def gets(self) -> list[Received]:
        return [r for r in self.received if r.method == "GET"]

    def answer(self, handler: RecordingHandler, received: Received) -> None:
        self.gate.wait(GATE_TIMEOUT)
        reply = self.next_plan() or self.default
        if reply.raw:
            handler.wfile.write(reply.raw)
            handler.drop()
            return
        handler.send_whole(reply.status, dict(reply.headers), reply.body)

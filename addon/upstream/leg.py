"""What the pipeline hands the upstream leg, and what the leg records (docs/pools.md "The leg").

A `Leg` is one client request's way upstream: the pool it may use, how to prepare the request for
a deployment, how to translate that deployment's stream, the client's dialect, and the limits.
The runner (`runner.py`) fills in `attempts`, `answered` and `hook` as it goes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from addon.upstream.connect import Proxy
from addon.upstream.policy import Limits
from addon.upstream.pool import Balancer, Choice, Deployment
from translators.client_dialects import ClientDialect
from translators.ir import events as ev


@dataclass(slots=True)
class Prepared:
    """One attempt's request as it goes on the wire: translated for the deployment's dialect and
    model, addressed to its base URL, with its real credentials."""

    url: str
    headers: list[tuple[str, str]]
    body: bytes
    secrets: tuple[str, ...] = ()
    """The credential values sent: scrubbed from anything that quotes the upstream."""


class Observed(Protocol):
    """What the pump reads of a stream translator (translators/api.py `StreamTranslator`)."""

    @property
    def finished(self) -> bool: ...

    @property
    def content_started(self) -> bool: ...

    @property
    def early_failure(self) -> ev.Failed | None: ...

    @property
    def progress(self) -> int: ...


class Hook(Protocol):
    """Upstream bytes -> client bytes (addon/serve/streaming.py `StreamHook`): called per chunk, `end()`
    at the end of the upstream's body, `cut(reason)` when the gateway ends it."""

    translator: Observed

    def __call__(self, data: bytes) -> bytes | list[bytes | memoryview]: ...

    def end(self) -> bytes: ...

    def cut(self, reason: str) -> bytes: ...


@dataclass(slots=True)
class Attempt:
    """One attempt, for the flow's record (`info["attempts"]`) and views."""

    deployment: str
    fallback: bool
    url: str = ""
    status: int | None = None
    """The upstream's HTTP status; None: no answer head."""
    outcome: Literal["answered", "retried", "passed on", "failed", "dropped"] = "failed"
    """`answered`: its answer is the client's; `retried`: it failed and the turn went on;
    `passed on`: its error is the client's; `failed`: the last, and the turn gave up."""
    reason: str = ""
    ms: int = 0
    settled: bool = field(default=False, repr=False)
    """Its end was told to the pool (once)."""

    def as_record(self) -> dict[str, Any]:
        return {"deployment": self.deployment, "fallback": self.fallback, "url": self.url,
                "status": self.status, "outcome": self.outcome, "reason": self.reason, "ms": self.ms}


@dataclass(eq=False)
class Leg:
    balancer: Balancer
    """The route's pool (addon/upstream/pool.py `Pools.balancer`)."""
    prepare: Callable[[Deployment], Awaitable[Prepared]]
    """The request for a deployment: translated for its dialect and model unless already done,
    its URL, headers and real credentials, its body. Raising a `TranslatorError` refuses the
    request (answered with `speaks.refusal`)."""
    hook: Callable[[Deployment, Prepared], Hook]
    """A fresh stream hook for an attempt's answer (`StreamHook` around `stream_translator` of
    that deployment's dialect), with `prepared.secrets` to scrub."""
    speaks: ClientDialect
    limits: Limits
    stream: bool
    """The client asked for a stream: a 2xx answer is pumped through a hook, else read whole."""
    affinity: tuple[str, ...] = ()
    """The conversation's keys, strongest first: `resp:<previous_response_id>`,
    `pck:<prompt_cache_key>`, `session:<Claude Code session>`, `ws:<WebSocket connection>`."""
    needs: int | None = None
    """The request's input estimate in tokens, when known: deployments whose window is smaller
    are passed over."""
    method: str = "POST"
    attempts: list[Attempt] = field(default_factory=list)
    answered: Choice | None = None
    """The deployment whose answer the client got (a fallback says so: `answered.fallback`)."""
    used: Hook | None = None
    """The hook of the answer the client got (its kept copies are the saved flow's)."""
    streaming: Hook | None = None
    """The hook whose stream the client is reading, from its first content on: what a client that
    leaves mid-stream was told, and the usage reported so far (addon/team/accounting.py)."""
    kind: str | None = None
    """What the client got (`runner.Reply.kind`): `stream` (translated: pass it through),
    `upstream` (an upstream's answer as it came: translate it, as `answered`'s dialect),
    `refusal` or `gave_up` (already in the client's shape); None until the head is decided."""
    gave_up: str | None = None
    """Why the leg gave up (every attempt failed, or the gateway failed), else None."""
    via: Proxy | None = None
    """The HTTP proxy the flow's mode sends upstream traffic through (`upstream:`), if any:
    every attempt goes through it (addon/serve/sending.py `Retarget`)."""
    secrets: set[str] = field(default_factory=set)
    """Every credential value an attempt sent: scrubbed from what the leg writes itself (its
    give-up message, the records' reasons)."""

    def scrub(self, text: str) -> str:
        for secret in sorted(self.secrets, key=len, reverse=True):
            if len(secret) >= 6:
                text = text.replace(secret, "<redacted>")
        return text

    def record(self) -> list[dict[str, Any]]:
        return [a.as_record() for a in self.attempts]

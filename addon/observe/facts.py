"""A finished turn as the metrics and the traces see it, read from the flow's record and its
timestamps (docs/metrics.md "The record"). Pure: no mitmproxy state is changed, nothing is
computed twice (the cost is the record's, the usage the one the client got).

A turn is a flow whose record names the client's model and is no token count, store call or
usage read: a translated turn or compaction, or a turn refused before it went upstream.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from addon.observe import flowinfo
from translators import client_dialects
from translators.core import pricing

NOT_TURNS = (flowinfo.COUNT_KIND, "state", "usage")
"""Record kinds that are no turn: a token count, a store endpoint, `GET /gateway/usage`."""
TRACE_CONTEXT = "gateway.trace_context"
"""The client's `traceparent` and `tracestate`, kept as it sent them (addon/observe/traces.py):
a translated request is re-addressed, with the client's headers cut."""

OUTCOMES = ("ok", "refused", "rejected", "upstream_error", "error", "aborted")
"""A turn's outcome: answered; refused by the gateway (a field it cannot translate, a client's
model or budget); rejected by the upstream (4xx); the upstream failed (5xx, unreachable, a
stream that failed); the gateway failed; the connection ended before the answer did."""
ATTEMPT_OUTCOMES = ("answered", "retried", "passed_on", "failed", "dropped")
"""An upstream attempt's outcome (addon/upstream/leg.py `Attempt.outcome`, spaces as `_`)."""


@dataclass(frozen=True, slots=True)
class Attempt:
    """One upstream attempt: from `info["attempts"]` (the upstream leg), or the one request the
    flow itself made upstream when the record has none."""

    deployment: str
    fallback: bool
    outcome: str
    status: int | None
    url: str
    reason: str
    seconds: float
    start: float | None
    """Epoch seconds, when the record says (`start`); else laid out from the turn's start."""


@dataclass(frozen=True, slots=True)
class Turn:
    client: str
    client_model: str | None
    upstream: str
    model: str | None
    compaction: bool
    outcome: str
    status: int | None
    started: float
    """Epoch seconds: the client's request began."""
    ended: float
    first_token: float | None
    tokens: pricing.TokenUsage | None
    cost_usd: float | None
    attempts: tuple[Attempt, ...]
    lossy: tuple[str, ...]
    cosmetic: tuple[str, ...]
    error: str | None
    finish_reason: str | None
    stream: bool
    client_dialect: str
    trace_context: dict[str, str] = field(default_factory=dict)

    @property
    def duration(self) -> float:
        return max(0.0, self.ended - self.started)

    @property
    def time_to_first_token(self) -> float | None:
        return None if self.first_token is None else max(0.0, self.first_token - self.started)


def is_turn(info: Any) -> bool:
    return isinstance(info, dict) and "client_model" in info and info.get("kind") not in NOT_TURNS


def read(flow: Any, now: float) -> Turn | None:
    """The finished turn of `flow` (at its `response` or `error`), or None for any other flow."""
    info = flow.metadata.get(flowinfo.KEY)
    if not is_turn(info):
        return None
    response, error = flow.response, flow.error
    started = flow.request.timestamp_start or now
    ended = _ended(flow, now)
    status = response.status_code if response is not None else None
    attempts = tuple(_attempts(flow, info, started))
    return Turn(
        client=str(info.get("client") or ""),
        client_model=_text(info.get("client_model")),
        upstream=str(info.get("upstream") or "-"),
        model=_text(info.get("model")),
        compaction=info.get("kind") == "compaction",
        outcome=outcome(info, status, error is not None),
        status=status,
        started=started,
        ended=max(started, ended),
        first_token=_number(info.get("first_token_at")),
        tokens=pricing.usage_of(info.get("usage")),
        cost_usd=_number(info.get("cost_usd")),
        attempts=attempts,
        lossy=tuple(flowinfo.lossy(info)),
        cosmetic=tuple(flowinfo.cosmetic(info)),
        error=_text(info.get("refused") or info.get("error")),
        finish_reason=_text(info.get("finish_reason")),
        stream=_streamed(response),
        client_dialect=str(info.get("client_dialect") or client_dialects.DEFAULT),
        trace_context=dict(flow.metadata.get(TRACE_CONTEXT) or {}),
    )


def outcome(info: dict[str, Any], status: int | None, broken: bool) -> str:
    """One of `OUTCOMES`, from the record and the status the client got."""
    error = str(info.get("error") or "")
    if info.get("refused"):
        return "refused"
    if status is None or (broken and error):
        return "aborted"
    if error.startswith("gateway"):  # its own failure (pipeline, stream hook, fail-closed)
        return "error"
    if status >= 500 or (error and status < 400):  # an upstream 5xx or unreachable; a failed stream
        return "upstream_error"
    if status >= 400:
        return "rejected" if error.startswith("upstream ") else "refused"
    return "ok"


def _ended(flow: Any, now: float) -> float:
    if flow.error is not None and getattr(flow.error, "timestamp", None):
        return float(flow.error.timestamp)
    response = flow.response
    if response is not None and response.timestamp_end:
        return float(response.timestamp_end)
    return now


def _streamed(response: Any) -> bool:
    if response is None:
        return False
    return "text/event-stream" in response.headers.get("content-type", "")


def _attempts(flow: Any, info: dict[str, Any], started: float) -> list[Attempt]:
    """The record's attempts, each laid after the one before when it says no start; without
    them, the one request the flow made upstream (a server connection, an answer head)."""
    recorded = info.get("attempts")
    if isinstance(recorded, list):
        out, at = [], started
        for entry in recorded:
            if not isinstance(entry, dict):
                continue
            seconds = max(0.0, (_number(entry.get("ms")) or 0.0) / 1000)
            start = _number(entry.get("start"))
            out.append(Attempt(deployment=str(entry.get("deployment") or "-"),
                               fallback=bool(entry.get("fallback")),
                               outcome=str(entry.get("outcome") or "failed").replace(" ", "_"),
                               status=entry.get("status") if isinstance(entry.get("status"), int) else None,
                               url=str(entry.get("url") or ""), reason=str(entry.get("reason") or ""),
                               seconds=seconds, start=start if start is not None else at))
            at = (start if start is not None else at) + seconds
        return out
    response, server = flow.response, flow.server_conn
    if (flowinfo.TRANSLATION not in flow.metadata or response is None or server is None
            or not server.timestamp_start or not response.timestamp_start):
        return []
    begin = flow.request.timestamp_end or started
    end = response.timestamp_end or response.timestamp_start
    if not server.timestamp_tcp_setup:  # never connected: the proxy answered
        return [Attempt(deployment="#1", fallback=False, outcome="failed", status=None,
                        url=str(info.get("url") or ""), reason=str(info.get("error") or ""),
                        seconds=max(0.0, end - begin), start=begin)]
    status = response.status_code
    return [Attempt(deployment="#1", fallback=False, outcome="answered" if status < 400 else "passed_on",
                    status=status, url=str(info.get("url") or ""), reason="",
                    seconds=max(0.0, end - begin), start=begin)]


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        return None
    return float(value)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None

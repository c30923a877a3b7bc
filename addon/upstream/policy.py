"""The upstream leg's tables (docs/pools.md): what each failure means for the turn, the limits on
retrying, and how long a client that got the give-up is told to wait (what it gets is its client
dialect's: `ClientDialect.give_up`, `ClientDialect.keep_alive`).

Data and small pure functions only; `runner.py` applies them.
"""

from __future__ import annotations

import email.utils
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from translators.wire import wirejson
from translators.wire.upstream_errors import code_for, text_of

Verdict = Literal["retry", "elsewhere", "overflow", "final"]
"""What a failed attempt means for the turn:
- `retry`: the deployment could not serve now (refused, timed out, 408/429/5xx/529, an overload or
  server error before content, silence): another deployment, or this one after its cooldown;
- `elsewhere`: this deployment cannot serve it (its key refused, no quota, no such model or path):
  another deployment, never this one again this turn;
- `overflow`: the request does not fit this deployment's context window: one with a larger one;
- `final`: the request itself is at fault (any other 4xx, a validation error): the answer goes to
  the client as it is."""

# -- limits (docs/pools.md "Limits", docs/options.md) -------------------------------------------
RETRIES = 3
"""Attempts after the first: a pool of two or three deployments and a fallback, each once."""
RETRY_SECONDS = 30.0
"""Seconds from the turn's start in which a new attempt may start (or a cooldown be waited
for): about what a person waits for a first token, and well inside the clients' own timers
(Codex's idle timeout is 300 s; Claude Code's watchdog 300 s)."""
IDLE_TIMEOUT = 120.0
"""Seconds without an upstream event (keep-alives not counted) that fail an attempt: past the
silent thinking of today's models at high effort, short of Codex's and Claude Code's own
300 s, so the gateway's retry comes first."""
HOLD_BYTES = 1 << 20
"""Client bytes held back before the first content at most; past it they go out (content or
not): the opening events of any answer are a few hundred bytes."""
MAX_ERROR_BODY = 8 << 20
"""An upstream's error body read whole, at most (a 4 MB HTML page has been seen)."""
MAX_WHOLE_BODY = 32 << 20
"""A whole (not streamed) answer read at most: Anthropic's own request bound, the largest body
the gateway handles (docs/design.md "Limits")."""
GIVE_UP_WAIT = 30
"""The longest `retry-after` the gateway gives a client when it gave up: Codex 0.169 waits
what it is told (30 s seen), Claude Code gives up on more than 60 s (docs/pools.md)."""


@dataclass(frozen=True, slots=True)
class Limits:
    """One leg's limits: the route's (`retries`, `retry_seconds`, `idle_timeout` in TOML), else
    the options'."""

    retries: int = RETRIES
    retry_seconds: float = RETRY_SECONDS
    idle_timeout: float = IDLE_TIMEOUT


def limits_of(route: object, defaults: Limits) -> Limits:
    """The route's own values over the options' defaults (`Route.retries`... None: not set)."""
    retries = getattr(route, "retries", None)
    seconds = getattr(route, "retry_seconds", None)
    idle = getattr(route, "idle_timeout", None)
    return Limits(defaults.retries if retries is None else retries,
                  defaults.retry_seconds if seconds is None else seconds,
                  defaults.idle_timeout if idle is None else idle)


OPTIONS: tuple[tuple[str, type, object, str], ...] = (
    ("gateway_retries", int, RETRIES,
     "Attempts of a turn after the first, on another deployment or the same after its cooldown "
     "(per route: retries); 0: none."),
    ("gateway_retry_seconds", str, f"{RETRY_SECONDS:g}",
     "Seconds from a turn's start in which a new attempt may start or a cooldown be waited for "
     "(per route: retry_seconds); decimals allowed; 0: no retries."),
    ("gateway_idle_timeout", str, f"{IDLE_TIMEOUT:g}",
     "Seconds without an upstream event (keep-alives not counted) that fail an attempt: retried "
     "before the first content, the client's stream ended after it (per route: idle_timeout)."),
)
"""The options of the upstream leg, as `loader.add_option(name, type, default, help)` takes them."""


def parse_limits(retries: int, retry_seconds: str, idle_timeout: str) -> Limits:
    """The options' values, checked; `ValueError` says what to write instead."""
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise ValueError("gateway_retries must be a whole number of at least 0, e.g. 3")
    seconds = _number(retry_seconds)
    if seconds is None or seconds < 0:
        raise ValueError("gateway_retry_seconds must be a number of seconds of at least 0, e.g. 30")
    idle = _number(idle_timeout)
    if idle is None or idle <= 0:
        raise ValueError("gateway_idle_timeout must be a number of seconds above 0, e.g. 120")
    return Limits(retries, seconds, idle)


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


# -- classification ---------------------------------------------------------------------------
ELSEWHERE_STATUSES = frozenset({401, 402, 403, 404})
"""The deployment's own refusal (its key, its account, its model or URL): another may serve."""
RETRY_CODES = frozenset({"server_error", "server_is_overloaded", "rate_limit_exceeded", "timeout",
                         "upstream_protocol_error", "upstream_error", "upstream_unreachable"})
"""Failure codes (the IR's, translators/wire/upstream_errors.py) that say: not now, try again."""
ELSEWHERE_CODES = frozenset({"insufficient_quota", "invalid_api_key", "permission_denied", "model_not_found"})
OVERFLOW_CODES = frozenset({"context_length_exceeded"})


def of_status(status: int, code: str) -> Verdict:
    """An upstream's HTTP error (`code`: what its body says, by the dialect's error table)."""
    if code in OVERFLOW_CODES:
        return "overflow"
    if code in ELSEWHERE_CODES or status in ELSEWHERE_STATUSES:
        return "elsewhere"
    if status >= 500 and code == "invalid_request_error":
        return "final"  # a server's validation of the request, sent as a 500 (upstream_errors.py)
    if status in (408, 429) or status >= 500:
        return "retry"
    return "final"


def of_code(code: str) -> Verdict:
    """A failure inside a 200 stream before any content (an error event, a stream that said nothing)."""
    if code in OVERFLOW_CODES:
        return "overflow"
    if code in ELSEWHERE_CODES:
        return "elsewhere"
    if code in RETRY_CODES:
        return "retry"
    return "final"


def error_code(dialect: object, status: int, body: bytes) -> str:
    """The failure code of an upstream error body, read by its dialect's error table
    (`Codec.error_info`), else by its status and words."""
    try:
        parsed: object = wirejson.loads(body) if body else None
    except (ValueError, RecursionError):
        parsed = None
    codec = getattr(dialect, "codec", None)
    if codec is not None:
        try:
            return str(codec.error_info(status, parsed if parsed is not None else text_of(body)).code)
        except Exception:  # an odd body must not cost the turn its retry
            pass
    return code_for(status, text_of(body))


_HINT = re.compile(r"(?i)try again in\s*(\d+(?:\.\d+)?)\s*(ms|s|seconds?)\b")


def retry_after(headers: Iterable[tuple[str, str]], wall: float | None = None,
                message: str = "") -> float | None:
    """Seconds the upstream asks to wait: `retry-after-ms`, `retry-after` (seconds or an HTTP
    date, against `wall`: unix seconds now), or a "try again in Ns" in an error's message (the
    hint the translators write, docs/codex.md "Errors and retries")."""
    found = {name.lower(): value for name, value in headers}
    if (ms := _number(found.get("retry-after-ms", ""))) is not None and ms >= 0:
        return ms / 1000
    value = found.get("retry-after", "").strip()
    if value:
        if (seconds := _number(value)) is not None:
            return max(seconds, 0.0)
        if wall is not None:
            try:
                when = email.utils.parsedate_to_datetime(value)
            except (TypeError, ValueError):
                when = None
            if when is not None and when.tzinfo is not None:
                return max(when.timestamp() - wall, 0.0)
    if hint := _HINT.search(message):
        amount = float(hint[1])
        return amount / 1000 if hint[2].lower() == "ms" else amount
    return None


# -- when every attempt failed: what the client retries (docs/pools.md "What the client sees") --
# The status, code, in-stream event and keep-alive are each client dialect's own
# (translators/client_dialects.py `GiveUp`, `KeepAlive`); the wait is the leg's.


def client_wait(seconds: float | None) -> int:
    """The `retry-after` a client gets when the gateway gave up."""
    if seconds is None:
        return 1
    return max(1, min(GIVE_UP_WAIT, math.ceil(seconds)))

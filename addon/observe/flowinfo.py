"""The flow's metadata, every key the gateway writes in it (defined here and nowhere else), and
what a user sees of a translation in mitmproxy: the record `flow.metadata["gateway"]` (saved with
the flow), a one-line comment and a mark (both shown in mitmweb, docs/mitmproxy.md "Where flows
show information")."""

from __future__ import annotations

import re
from typing import Any, Protocol

from translators.wire import wirejson

# -- the metadata keys -------------------------------------------------------------------------
KEY = "gateway"
"""The flow's record (`record`): what the gateway did with it, shown and saved."""
PREFIX = "gateway."
"""Every other key the gateway writes starts with this (`is_gateway_key`)."""
MARK = ":warning:"
"""The flow's mark (not a key): it lost something (`lost_something`)."""
UNROUTED = PREFIX + "unrouted"
"""A request `gateway_match` took whose model has no route: the client's model (it went on untouched)."""
UNROUTED_ERROR = PREFIX + "unrouted.error"
"""Why such a request got the gateway's own 502: where it went cannot be reached, and the route to
add (addon/serve/misconfigured.py `unrouted_unreachable`)."""
CLIENT_REQUEST = PREFIX + "client_request"
"""The client's request as it sent it (the flow's request is the upstream one): views, replay."""
TRANSLATION = PREFIX + "translation"
"""The translation without its upstream body (`Translation.model_dump`): views, capture, replay."""
UPSTREAM_RESPONSE = PREFIX + "upstream_response"
"""The upstream's own answer bytes (the flow's response is what the client got): views, capture."""
CLIENT_DIALECT = PREFIX + "client_dialect"
"""The client dialect of a flow taken on for a client other than Responses: views, replay."""
CLIENT = PREFIX + "client"
"""The name of the gateway client a flow belongs to (addon/team/keys.py `identify`)."""
SEALED = PREFIX + "done"
"""The flow was sealed (addon/serve/seal.py): saved and loaded again, it is never answered twice.
While a flow is live its context's stage says so (addon/serve/flow.py `Stage`)."""
REFUSAL = PREFIX + "refusal"
"""Why the upstream's answer is replaced (code, message), set in `responseheaders`
(addon/upstream/headers.py)."""
WEBSOCKET = PREFIX + "websocket"
"""A flow's socket (addon/serve/websocket/): on the upgrade, the URL the client asked for; on each
request, its connection."""
WEBSOCKET_KEPT = PREFIX + "websocket.kept"
"""Bytes of a served socket's messages its flow keeps."""
WEBSOCKET_DROPPED = PREFIX + "websocket.dropped"
"""How many of its earliest messages the socket's flow no longer keeps (`gateway_max_kept_bytes`)."""
SAVED = (KEY, CLIENT_REQUEST, TRANSLATION, UPSTREAM_RESPONSE, CLIENT_DIALECT)
"""What a saved gateway flow carries for its views, its capture and its replay (addon/serve/flow.py)."""

COUNT_KIND = "count_tokens"
"""The record's `kind` of a token count sent to the upstream's own counter (addon/serve/pipeline.py)."""


def is_gateway_key(name: str) -> bool:
    """A metadata key the gateway wrote (what `addon/upstream/credentials.py` scrubs, what a replay
    starts afresh)."""
    return name == KEY or name.startswith(PREFIX)


# -- the record --------------------------------------------------------------------------------
def record(upstream: str, model: object = None, **more: Any) -> dict[str, Any]:
    """A flow's record: the upstream (a dialect, `store`, or `-` when nothing was sent), the model,
    what was dropped and noted, and any of `client_model`, `client` (addon/team/keys.py), `kind`,
    `refused`, `error`, `capabilities`, `url`, `usage`, `searches`."""
    return {"upstream": upstream, "model": model, "dropped": [], "notes": [], **more}


def summary(info: dict[str, Any]) -> str:
    """`-> anthropic claude-sonnet-4-6 | dropped: tools[9] | cosmetic: text.verbosity`: `dropped`
    names the lossy drops only (so mitmweb's `~comment dropped:` finds the flows that lost
    something), `cosmetic` the rest (translators/core/report.py); a compaction request reads
    `-> anthropic claude-sonnet-4-6 compaction | ...`."""
    head = f"-> {info.get('upstream')} {info.get('model')}"
    if info.get("client"):  # the gateway client key's name (addon/team/keys.py)
        head = f"[{info['client']}] {head}"
    if info.get("kind") == "compaction":
        head += " compaction"
    parts = [head]
    if went := via(info):
        parts.append(went)
    if info.get("refused"):
        parts.append(f"refused: {info['refused']}")
    if info.get("error"):
        parts.append(f"error: {info['error']}")
    if lost := lossy(info):
        parts.append("dropped: " + ", ".join(collapse(lost)))
    if harmless := cosmetic(info):
        parts.append("cosmetic: " + ", ".join(collapse(harmless)))
    if info.get("searches"):
        parts.append(f"searches: {info['searches']}")
    if info.get("notes"):
        parts.append(f"notes: {len(info['notes'])}")
    return " | ".join(parts)


def via(info: dict[str, Any]) -> str | None:
    """Which deployment answered and what the attempts before it met (docs/pools.md "Visible"):
    `via b after a: 529 retried`; None for a lone route's one attempt."""
    attempts = [a for a in info.get("attempts") or () if isinstance(a, dict)]
    name = info.get("deployment")
    if not attempts or (len(attempts) == 1 and name in (None, "#1") and not info.get("fallback")):
        return None
    before = attempts[:-1] if name is not None else attempts
    said = [f"{a.get('deployment')}: {a.get('status') or _short(a.get('reason'))} {a.get('outcome')}"
            for a in before]
    head = "no deployment answered"
    if name is not None:
        head = f"via {name}" + (" (fallback)" if info.get("fallback") else "")
    return head + (f" after {', '.join(said)}" if said else "")


def _short(reason: object) -> str:
    text = str(reason or "failed")
    return text if len(text) <= 60 else text[:59] + "…"


_INDEX = re.compile(r"\[\d+\]")


def collapse(paths: list[str]) -> list[str]:
    """One line for a long history: `input[3].phase, input[9].phase` reads `input[*].phase x2`.
    The metadata keeps every exact path; only the comment is shortened."""
    groups: dict[str, list[str]] = {}
    for path in paths:
        groups.setdefault(_INDEX.sub("[*]", path), []).append(path)
    return [same[0] if len(same) == 1 else f"{key} x{len(same)}" for key, same in groups.items()]


def cosmetic(info: dict[str, Any]) -> list[str]:
    """The dropped paths that change nothing the model sees or may do."""
    harmless = set(info.get("cosmetic") or ())
    return [path for path in info.get("dropped") or () if path in harmless]


def lossy(info: dict[str, Any]) -> list[str]:
    """The dropped paths that change what the model sees or may do; a flow saved before drops had
    kinds has no `cosmetic` list, and all its drops count."""
    harmless = set(info.get("cosmetic") or ())
    return [path for path in info.get("dropped") or () if path not in harmless]


def lost_something(info: dict[str, Any]) -> bool:
    """Whether the flow is marked: a lossy drop, a refusal or an error; notes and cosmetic drops
    alone leave it unmarked."""
    return bool(lossy(info) or info.get("refused") or info.get("error"))


def describe(flow: Any) -> None:
    """Comment and mark of a gateway flow from its `flow.metadata["gateway"]`."""
    info = flow.metadata[KEY]
    flow.comment = summary(info)
    if lost_something(info):
        flow.marked = MARK


class Found(Protocol):
    """What a translation step found: a `translators.Translation` or a `translators.core.report.Report`."""

    @property
    def dropped(self) -> list[str]: ...
    @property
    def cosmetic(self) -> list[str]: ...
    @property
    def notes(self) -> list[str]: ...


def merge(info: dict[str, Any], found: Found) -> None:
    """Adds what a step found to the flow's summary. `dropped` keeps every exact path in order;
    `cosmetic` names the harmless ones among them. A path one step called lossy stays lossy."""
    harmless = set(found.cosmetic)
    lost = {*lossy(info), *(path for path in found.dropped if path not in harmless)}
    info["dropped"] = list(dict.fromkeys([*info.get("dropped", []), *found.dropped]))
    cosmetic_paths = dict.fromkeys([*info.get("cosmetic", []), *found.cosmetic])
    info["cosmetic"] = [path for path in cosmetic_paths if path not in lost]
    info["notes"] = list(dict.fromkeys([*info.get("notes", []), *found.notes]))


_TERMINAL = (b"event: response.completed\n", b"event: response.incomplete\n", b"event: response.failed\n")


def usage_of(response: dict[str, Any] | None) -> dict[str, Any] | None:
    """Token usage of the Responses object the client got (`final_response`)."""
    usage = response.get("usage") if response is not None else None
    return usage if isinstance(usage, dict) else None


def failure_of(response: dict[str, Any] | None) -> str | None:
    """Why the answer the client got failed: a `failed` Responses object's `error` as `code:
    message`, or None for any other outcome. A stream that ended in `response.failed` is a failed
    flow, whatever its HTTP status (docs/mitmproxy.md "Where flows show information")."""
    if response is None or response.get("status") != "failed":
        return None
    error = response.get("error")
    if not isinstance(error, dict):
        return "failed"
    code, message = error.get("code"), error.get("message")
    return f"{code}: {message}" if code and message else str(message or code or "failed")


def searches_of(response: dict[str, Any] | None) -> int:
    """How many web searches the upstream ran: the `web_search_call` items the client got."""
    output = response.get("output") if response is not None else None
    if not isinstance(output, list):
        return 0
    return sum(1 for item in output if isinstance(item, dict) and item.get("type") == "web_search_call")


def final_response(body: bytes) -> dict[str, Any] | None:
    """The Responses object the client got: the whole body, or a stream's terminal event's."""
    try:
        if body.lstrip().startswith(b"{"):
            response = wirejson.loads(body)
            return response if isinstance(response, dict) else None
        # the last terminal event (an event line never occurs inside JSON data, whose newlines
        # are escaped); found from the end rather than by splitting a stream of megabytes
        start = max(body.rfind(marker) for marker in _TERMINAL)
        if start < 0 or (start and body[start - 1] != 0x0A):
            return None
        block = body[start:].split(b"\n\n", 1)[0]
        data = b"".join(line[5:] for line in block.split(b"\n") if line.startswith(b"data:"))
        response = wirejson.loads(data).get("response")
        return response if isinstance(response, dict) else None
    except (ValueError, AttributeError):
        pass
    return None

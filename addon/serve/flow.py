"""One flow's working state in one typed object, and its stage (docs/architecture.md "One flow,
one context").

Every hook of `addon/gateway.py` and every step of `addon/serve/pipeline.py` and
`addon/serve/upstream_answer.py` reads and writes the flow's `FlowCtx`: its client dialect, its
kind, its stage, its route, its translation, its stored turn, its stream hook and the one record
saved in `flow.metadata` (`flowinfo.KEY`). The hooks check the stage, which only moves forward
(`Stage`), never which fields happen to be set. The contexts live in `Flows`, keyed by
`flow.id`, not in the metadata: mitmproxy deep-copies the metadata and writes it whole for every
saved flow (`-w`), so it holds only what a saved flow must carry for its views and its replay
(`flowinfo.SAVED`), written here and nowhere else. A loaded flow gets its context back from those
keys (`Flows.get`); a context is dropped when its flow ends (`response`, `error`).
"""

from __future__ import annotations

import enum
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from mitmproxy import http

from addon.observe import flowinfo
from translators import Translation
from translators import client_dialects as client_registry
from translators.client_dialects import ClientDialect
from translators.wire import wirejson

if TYPE_CHECKING:
    from addon.routes.routing import Route
    from addon.serve.streaming import StreamHook
    from addon.state.stored_turn import StoredTurn

Kind = Literal["turn", "compaction_trigger", "compaction_endpoint", "count", "models",
               "catalog", "store", "usage", "websocket", "other"]
"""What the request is to the gateway, decided once (addon/serve/claim.py from its path, the read
step for a compaction trigger) and read by everyone after: a model turn; a compaction, by Codex's
trailing trigger item or by `/responses/compact` (docs/compaction.md "Two forms"); a token count;
the client dialect's models list or entry; Codex's model catalog; the store's own endpoints; a
client's `/gateway/usage`; a Responses WebSocket upgrade; another request on a gateway path, which
goes on untouched."""
SERVED: frozenset[Kind] = frozenset({"turn", "compaction_trigger", "compaction_endpoint", "count", "models"})
"""The kinds the pipeline serves (addon/serve/pipeline.py `serve`)."""
COMPACTIONS: frozenset[Kind] = frozenset({"compaction_trigger", "compaction_endpoint"})


class Stage(enum.IntEnum):
    """Where a flow is in its life; it only moves forward."""

    CLAIMED = 1
    """Taken on in `requestheaders`, its kind decided from its path."""
    READ = 2
    """Its body read within the bound; its kind final."""
    PLANNED = 3
    """Routed, its client admitted, its stored turn planned, its record begun."""
    TRANSLATED = 4
    SENT = 5
    """Re-targeted to the upstream (`pipeline.send`): mitmproxy sends it."""
    STREAMING = 6
    """The answer's head arrived and the answer streams through the stream hook."""
    ANSWERED = 7
    """The client's answer is final: translated, or written by the proxy itself."""
    SEALED = 8
    """Redacted, scrubbed, captured and described (addon/serve/seal.py): nothing more is done."""


@dataclass(slots=True, eq=False, weakref_slot=True)
class FlowCtx:
    """Everything the gateway knows of one flow in flight; the flow's metadata keeps only its
    saved part (`info` and the keys `flowinfo.SAVED` names)."""

    flow: http.HTTPFlow
    speaks: ClientDialect
    """What the client speaks (translators/client_dialects.py)."""
    kind: Kind = "turn"
    stage: Stage = Stage.CLAIMED
    endpoint: str | None = None
    """A state endpoint's path from `responses/` or `conversations` on (`responses/compact`,
    `conversations/conv_1/items`), found once when the flow is claimed; None for any other path."""
    route: Route | None = None
    """The route that serves the flow, once routed (the compaction route for a compaction)."""
    translation: Translation | None = None
    """The request's translation; the full one (its upstream body too) while the flow is live,
    since decoders may read it (Gemini's call-id seed); a restored one reads the flow's request."""
    turn: StoredTurn | None = None
    """What the store holds for the turn and what its answer records (addon/state/turns.py); None
    when the turn reads and writes no state."""
    hook: StreamHook | None = None
    """The stream callable on `flow.response.stream`, once the answer streams."""
    replay: bool = False
    """Sent again from a saved flow (mitmweb's Replay, `mitmdump -C`)."""
    sending: Any = None
    """How the flow goes upstream through the gateway's own leg (addon/serve/sending.py
    `Sending`), once sent; closed when the flow is let go of."""

    def at(self, stage: Stage) -> None:
        """The flow moves on to `stage` (never back)."""
        if stage > self.stage:
            self.stage = stage

    @property
    def compacting(self) -> bool:
        return self.kind in COMPACTIONS

    @property
    def counting(self) -> bool:
        return self.kind == "count"

    # -- the saved record -------------------------------------------------------------------
    @property
    def info(self) -> dict[str, Any]:
        """The flow's record (`flowinfo.KEY`), begun by `begin` or by whoever answered the flow."""
        return self.flow.metadata[flowinfo.KEY]

    @property
    def has_info(self) -> bool:
        return flowinfo.KEY in self.flow.metadata

    def begin(self, upstream: str, model: object, **more: Any) -> dict[str, Any]:
        """The flow's record, written once the gateway takes the flow on (`flowinfo.record`)."""
        info = flowinfo.record(upstream, model, **more)
        if self.counting:  # a count is no turn, estimated here or counted upstream (docs/metrics.md)
            info["kind"] = flowinfo.COUNT_KIND
        if self.speaks.name != client_registry.DEFAULT:
            info["client_dialect"] = self.speaks.name
        if self.replay:
            info["notes"].append("replayed: translated again from the saved client request")
        self.flow.metadata[flowinfo.KEY] = info
        return info

    def keep_client_request(self, text: str) -> None:
        self.flow.metadata[flowinfo.CLIENT_REQUEST] = text

    def translated(self, translation: Translation, saved: dict[str, Any]) -> None:
        """`saved`: the translation without its upstream body (it is the flow's request), for
        the views, the capture and a replay."""
        self.translation = translation
        self.flow.metadata[flowinfo.TRANSLATION] = saved
        self.at(Stage.TRANSLATED)

    def keep_upstream_response(self, raw: bytes) -> None:
        self.flow.metadata[flowinfo.UPSTREAM_RESPONSE] = raw


def speaks_of(metadata: dict[str, Any]) -> ClientDialect:
    """The client dialect a flow was taken on with (saved in its metadata), else the default."""
    name = metadata.get(flowinfo.CLIENT_DIALECT)
    known = isinstance(name, str) and name in client_registry.names()
    return client_registry.get(name if known else client_registry.DEFAULT)


_BY_FLOW: weakref.WeakKeyDictionary[http.HTTPFlow, FlowCtx] = weakref.WeakKeyDictionary()


def context_of(flow: http.HTTPFlow) -> FlowCtx | None:
    """The live context of a flow, for code mitmproxy calls with the flow alone (addon/patches/,
    the seal of an answer the proxy gives itself); None for a flow the gateway did not take on."""
    return _BY_FLOW.get(flow)


class Flows:
    """The context of each flow in flight, by `flow.id`."""

    def __init__(self) -> None:
        self._live: dict[str, FlowCtx] = {}

    def open(self, flow: http.HTTPFlow, speaks: ClientDialect, *, kind: Kind = "turn",
             endpoint: str | None = None, replay: bool = False) -> FlowCtx:
        """A fresh context (a flow sent again starts afresh); a client dialect other than the
        default is saved with the flow (the views and a replay read it)."""
        ctx = FlowCtx(flow, speaks, kind=kind, endpoint=endpoint, replay=replay)
        if speaks.name != client_registry.DEFAULT:
            flow.metadata[flowinfo.CLIENT_DIALECT] = speaks.name
        self._live[flow.id] = _BY_FLOW[flow] = ctx
        return ctx

    def live(self, flow: http.HTTPFlow) -> FlowCtx | None:
        """The context of a flow taken on in this process; None for any other."""
        return self._live.get(flow.id)

    def get(self, flow: http.HTTPFlow) -> FlowCtx | None:
        """The flow's context; for a saved flow loaded with its answer (its hooks run again, no
        request step ran), the one its saved metadata describes; None for a flow the gateway
        never took on."""
        ctx = self._live.get(flow.id)
        if ctx is None and flowinfo.TRANSLATION in flow.metadata:
            ctx = self._live[flow.id] = _BY_FLOW[flow] = _restored(flow)
        return ctx

    def drop(self, flow: http.HTTPFlow) -> FlowCtx | None:
        _BY_FLOW.pop(flow, None)
        ctx = self._live.pop(flow.id, None)
        if ctx is not None and ctx.sending is not None:
            ctx.sending.close()
        return ctx

    def __len__(self) -> int:
        return len(self._live)

    def __iter__(self) -> Iterator[FlowCtx]:
        return iter(list(self._live.values()))


def _restored(flow: http.HTTPFlow) -> FlowCtx:
    """A saved flow's context: its client dialect and its translation, whose upstream body is the
    flow's request; sealed if it was saved sealed, else as sent (saved in flight)."""
    ctx = FlowCtx(flow, speaks_of(flow.metadata))
    data = flow.metadata[flowinfo.TRANSLATION]
    try:
        body = wirejson.loads(flow.request.get_content(strict=False) or b"{}")
    except ValueError:
        body = {}
    ctx.translation = Translation.model_validate({**data, "body": body if isinstance(body, dict) else {}})
    if ctx.translation.compaction:
        endpoint = ctx.translation.compaction_kept is not None
        ctx.kind = "compaction_endpoint" if endpoint else "compaction_trigger"
    ctx.stage = Stage.SEALED if flow.metadata.get(flowinfo.SEALED) else Stage.SENT
    return ctx

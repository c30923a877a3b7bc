"""One flow's working state in one typed object (docs/architecture.md "One flow, one context").

Every hook of `addon/gateway.py` and every step of `addon/serve/pipeline.py` reads and writes the flow's
`FlowCtx`: its client dialect, its kind, its route, its translation, its stored-turn plan, its
stream hook and the one record saved in `flow.metadata` (`flowinfo.KEY`). The contexts live in
`Flows`, a dict on the Gateway keyed by `flow.id`, not in the metadata: mitmproxy deep-copies the
metadata and writes it whole for every saved flow (`-w`), so it holds only what a saved flow must
carry for its views and its replay (`flowinfo.SAVED`), written here and nowhere else. A loaded or
replayed flow gets its context back from those keys (`Flows.get`); a context is dropped when its
flow ends (`response`, `error`).
"""

from __future__ import annotations

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
    from addon.state.turns import Plan

Kind = Literal["turn", "compaction", "count", "models"]
"""What the flow asks: a model turn, a compaction (Codex's trigger or `/responses/compact`), a
token count, the client dialect's models list or entry."""


@dataclass(slots=True, eq=False)
class FlowCtx:
    """Everything the gateway knows of one flow in flight; the flow's metadata keeps only its
    saved part (`info` and the keys `flowinfo.SAVED` names)."""

    flow: http.HTTPFlow
    speaks: ClientDialect
    """What the client speaks (translators/client_dialects.py)."""
    kind: Kind = "turn"
    route: Route | None = None
    """The route that serves the flow, once routed (the compaction route for a compaction)."""
    translation: Translation | None = None
    """The request's translation; the full one (its upstream body too) while the flow is live,
    since decoders may read it (Gemini's call-id seed); a restored one reads the flow's request."""
    plan: Plan | None = None
    """What the store holds for the turn and what its answer will record (addon/state/turns.py)."""
    turn: dict[str, Any] | None = None
    """What the answer records in the store (`State.register`): the ids, the route, the client and
    the count of new input items of a stored turn (a compaction records nothing)."""
    inputs: Any = None
    """The turn's new input items until they are recorded (`State.register`): beside the flow,
    never in the metadata, which mitmproxy deep-copies (a 100k-item history: seconds)."""
    write: Any = None
    """The store write of the recorded turn, until the answer has ended (`State.written`)."""
    hook: StreamHook | None = None
    """The stream callable on `flow.response.stream`, once the answer streams."""
    replay: bool = False
    """Sent again from a saved flow (mitmweb's Replay, `mitmdump -C`)."""

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

    def keep_upstream_response(self, raw: bytes) -> None:
        self.flow.metadata[flowinfo.UPSTREAM_RESPONSE] = raw

    @property
    def done(self) -> bool:
        """Answered: by the proxy itself (`addon/serve/answers.py` `answer`, which any module may call
        without a context) or once its answer was translated."""
        return flowinfo.DONE in self.flow.metadata

    def mark_done(self) -> None:
        self.flow.metadata[flowinfo.DONE] = True

    @property
    def counting(self) -> bool:
        return self.kind == "count"


def speaks_of(metadata: dict[str, Any]) -> ClientDialect:
    """The client dialect a flow was taken on with (saved in its metadata), else the default."""
    name = metadata.get(flowinfo.CLIENT_DIALECT)
    known = isinstance(name, str) and name in client_registry.names()
    return client_registry.get(name if known else client_registry.DEFAULT)


class Flows:
    """The context of each flow in flight, by `flow.id`."""

    def __init__(self) -> None:
        self._live: dict[str, FlowCtx] = {}

    def open(self, flow: http.HTTPFlow, speaks: ClientDialect, *, replay: bool = False) -> FlowCtx:
        """A fresh context (a flow sent again starts afresh); a client dialect other than the
        default is saved with the flow (the views and a replay read it)."""
        ctx = FlowCtx(flow, speaks, replay=replay)
        if speaks.name != client_registry.DEFAULT:
            flow.metadata[flowinfo.CLIENT_DIALECT] = speaks.name
        self._live[flow.id] = ctx
        return ctx

    def get(self, flow: http.HTTPFlow) -> FlowCtx | None:
        """The flow's context; for a flow loaded or replayed with its answer (its hooks run again,
        no request step ran), the one its saved metadata describes; None for a flow the gateway
        never took on."""
        ctx = self._live.get(flow.id)
        if ctx is None and flowinfo.TRANSLATION in flow.metadata:
            ctx = self._live[flow.id] = _restored(flow)
        return ctx

    def drop(self, flow: http.HTTPFlow) -> FlowCtx | None:
        return self._live.pop(flow.id, None)

    def __len__(self) -> int:
        return len(self._live)

    def __iter__(self) -> Iterator[FlowCtx]:
        return iter(list(self._live.values()))


def _restored(flow: http.HTTPFlow) -> FlowCtx:
    """A saved flow's context: its client dialect and its translation, whose upstream body is the
    flow's request."""
    ctx = FlowCtx(flow, speaks_of(flow.metadata))
    data = flow.metadata[flowinfo.TRANSLATION]
    try:
        body = wirejson.loads(flow.request.get_content(strict=False) or b"{}")
    except ValueError:
        body = {}
    ctx.translation = Translation.model_validate({**data, "body": body if isinstance(body, dict) else {}})
    if ctx.translation.compaction:
        ctx.kind = "compaction"
    return ctx

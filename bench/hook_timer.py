"""mitmproxy script for bench/hooks.py, loaded last (after addon/gateway.py, or alone in a plain
mitmdump): a timeline of each turn inside the proxy, on the clock the bench's client and upstream
read too (`perf_counter_ns` is CLOCK_MONOTONIC, one clock for every process on the machine).

What it stamps, without editing addon/:
- every hook of every addon (mitmproxy's own included), one by one: `AddonManager.invoke_addon` is
  replaced on the running manager by the same loop with a clock around each call;
- the gateway's steps (STEPS): methods wrapped on their class, functions in their module and in
  every addon module (and the script module) that imported them by name; a step that is not there
  (the addon changed) is left out, never an error;
- the stream callable, per call (`addon.serve.streaming.StreamHook.__call__`);
- each pass of the cyclic collector (`gc.callbacks`);
- mitmproxy's own handling: every event a connection handler processes (`ConnectionHandler.
  server_event`: bytes from the client or the upstream, a hook or a connection completed), the task
  each hook runs in (`hook_task`); the upstream connection opened between the `server_connect` and
  `server_connected` hooks (this addon has both, so they are always stamped). mitmproxy starts hook
  tasks eagerly (`asyncio.eager_task_factory`): a hook runs inside the event that asked for it until
  it first suspends, so an event's span holds such hooks (bench/hooks.py `_own` takes them out).

The records stay in memory, a few hundred per turn; `GET /__bench__/timeline` (answered in
`requestheaders`, never sent on) returns them as JSON and clears them. The bench asks once a turn
is over, on a connection of its own whose records are left out. One turn at a time: records carry
no flow of their own but the client connection they came from.
"""

from __future__ import annotations

import functools
import gc
import inspect
import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from mitmproxy import ctx, http
from mitmproxy.proxy import server

PATH = "/__bench__/timeline"
ABLATE = frozenset(filter(None, os.environ.get("BENCH_HOOKS_ABLATE", "").split(",")))
"""What the bench asks to leave out, to weigh it by its absence (bench/hooks.py `--ablate`):
`steps` (no clock around the gateway's steps and stream callable: the timer's own share),
`credentials` (mitmproxy's `HttpStream._handle_event` without the gateway's wrapper,
addon/patches/wire_credentials.py `install`; the loopback upstream reads no key), `credentials-lean` (that
wrapper entered only for a flow that carries credentials, `_lean_credentials`)."""
_now = time.perf_counter_ns
_cpu = time.thread_time_ns
_records: list[dict[str, Any]] = []
_control: set[str] = set()
"""Client connection ids of the bench's own timeline requests: their records are dropped."""


def _add(kind: str, name: str, start: int, end: int, conn: str | None = None, cpu: int | None = None,
         **more: Any) -> None:
    """`cpu`: the event loop thread's CPU time over the same span (`thread_time_ns`), which leaves
    out the time it sat preempted by other processes. Read for hooks and steps only (a few dozen a
    turn): that clock is a system call, and reading it around each of mitmproxy's events and each
    stream callable call cost more than a millisecond per turn; those get `perf_counter_ns` only,
    read through the vDSO (as bench/callable_timer.py does)."""
    if conn is not None and conn in _control:
        return
    _records.append({"kind": kind, "name": name, "start": start, "end": end, "conn": conn, "cpu": cpu,
                     **more})


# -- mitmproxy's own handling -----------------------------------------------------------------------

def _event_name(handler: Any, event: Any) -> tuple[str, int]:
    kind = type(event).__name__
    connection = getattr(event, "connection", None)
    if connection is not None:
        kind += " client" if connection is handler.client else " server"
    command = getattr(event, "command", None)  # HookCompleted, OpenConnectionCompleted
    if command is not None:
        kind += f" {getattr(command, 'name', '') or type(command).__name__}"
    return kind, len(getattr(event, "data", b"") or b"")


def _patch_server() -> None:
    handler_cls = server.ConnectionHandler
    if getattr(handler_cls, "_bench_timed", False):
        return
    handler_cls._bench_timed = True  # type: ignore[attr-defined]
    server_event, hook_task = handler_cls.server_event, handler_cls.hook_task

    @functools.wraps(server_event)
    async def timed_event(self: Any, event: Any) -> None:
        start = _now()
        await server_event(self, event)
        name, size = _event_name(self, event)
        _add("mitm", name, start, _now(), self.client.id, bytes=size)

    @functools.wraps(hook_task)
    async def timed_hook_task(self: Any, hook: Any) -> None:
        start = _now()  # the task runs: the gap since the event that asked for it is a loop hop
        await hook_task(self, hook)
        _add("task", hook.name, start, _now(), self.client.id)

    handler_cls.server_event = timed_event  # type: ignore[method-assign]
    handler_cls.hook_task = timed_hook_task  # type: ignore[method-assign]


# -- the cyclic collector ---------------------------------------------------------------------------

_gc_start: list[int] = []


def _gc(phase: str, info: dict[str, Any]) -> None:
    if phase == "start":
        _gc_start[:] = [_now()]
    elif _gc_start:
        _add("gc", f"gc generation {info.get('generation')}", _gc_start[0], _now(),
             collected=info.get("collected", 0))


# -- every addon's hooks ----------------------------------------------------------------------------

def _patch_addons() -> None:
    manager = ctx.master.addons

    async def invoke_addon(addon: Any, event: Any) -> None:  # mitmproxy 12.3's loop, timed
        args = event.args()
        flow = args[0] if args else None
        conn = (flow.client_conn.id if isinstance(flow, http.HTTPFlow)
                else getattr(getattr(flow, "client", None), "id", None))  # server_connect(ed)'s data
        for each, func in manager._iter_hooks(addon, event):
            start, cpu = _now(), _cpu()
            res = func(*args)
            if res is not None and inspect.isawaitable(res):
                await res  # other tasks may run meanwhile: their CPU is counted here too
            cpu = _cpu() - cpu
            _add("hook", f"{type(each).__name__}.{event.name}", start, _now(), conn, cpu)

    manager.invoke_addon = invoke_addon


# -- the gateway's steps ----------------------------------------------------------------------------

def _timed(label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    if getattr(fn, "_bench_label", None):
        return fn
    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def timed_async(*args: Any, **kwargs: Any) -> Any:
            start, cpu = _now(), _cpu()
            try:
                return await fn(*args, **kwargs)
            finally:
                _add("step", label, start, _now(), cpu=_cpu() - cpu)

        timed_async._bench_label = label  # type: ignore[attr-defined]
        return timed_async

    @functools.wraps(fn)
    def timed(*args: Any, **kwargs: Any) -> Any:
        start, cpu = _now(), _cpu()
        try:
            return fn(*args, **kwargs)
        finally:
            _add("step", label, start, _now(), cpu=_cpu() - cpu)

    timed._bench_label = label  # type: ignore[attr-defined]
    return timed


STEPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # (label, where: "module:Class.attr" or "module:function"; "gateway" is the script module).
    # Every place that exists is wrapped, so the gateway of before and after a refactor are both
    # timed; a function imported by name is wrapped wherever the addon's modules hold it. The
    # label's first word is the hook the step runs under.
    ("requestheaders: claim the request", ("addon.serve.claim:claim",)),
    ("requestheaders: identify the client", ("addon.team.keys:Gate.identify",
                                             "addon.team.keys:Keys.identify")),
    ("requestheaders: model catalog check", ("addon.routes.catalog:Server.serve",)),
    ("request: read body (decode + parse + keep text)", ("gateway:Gateway._read_inline",
                                                         "addon.serve.pipeline:_read_inline")),
    ("request: read: decode (zstd, gzip...)", ("addon.serve.bodies:decoded",)),
    ("request: read: text kept for the saved flow", ("addon.serve.bodies:kept_text",)),
    ("request: route", ("addon.routes.routing:Router.route",)),
    ("request: client budgets", ("addon.team.budgets:Budgets.admit",)),
    ("request: state lookup", ("addon.state.turns:State.lookup", "addon.state.turns:Turns.lookup")),
    ("request: capabilities resolve", ("addon.routes.capabilities:Capabilities.resolve",)),
    ("request: translate", ("translators.api:translate_request",)),
    ("request: retarget (headers, URL, body bytes, credentials)", ("gateway:Gateway._retarget",
                                                                   "addon.serve.pipeline:retarget",
                                                                   "addon.serve.pipeline:send")),
    ("request: credentials (key / signing)", ("addon.upstream.auth:upstream_credentials",)),
    ("request: credentials attached", ("addon.upstream.credentials:attach",)),
    ("any: report merged into flow info", ("addon.observe.flowinfo:merge",)),
    ("responseheaders: keep sent request", ("addon.work.limits:keep_sent_request",)),
    ("responseheaders: screen headers", ("addon.upstream.headers:screen",)),
    ("responseheaders: stream translator built", ("translators.api:stream_translator",)),
    ("responseheaders: state recorder", ("addon.state.turns:State.recorder",
                                         "addon.state.turns:Turns.recorder")),
    ("response: answer (the steps below)", ("gateway:Gateway._answer", "addon.serve.pipeline:answer",
                                            "addon.serve.upstream_answer:_answer")),
    ("response: stream end", ("addon.serve.streaming:StreamHook.end",)),
    ("response: saved client copy", ("addon.serve.streaming:StreamHook.saved_client",)),
    ("response: saved upstream copy", ("addon.serve.streaming:StreamHook.saved_upstream",)),
    ("response: final response read", ("addon.observe.flowinfo:final_response",)),
    ("response: usage count", ("addon.state.turns:State.count", "addon.team.budgets:Budgets.count")),
    ("response: redact request headers", ("addon.upstream.auth:redact_request",)),
    ("response: scrub flow", ("addon.upstream.credentials:scrub_flow",)),
    ("response: capture saved", ("addon.observe.recording:save",)),
    ("response: describe", ("addon.observe.flowinfo:describe",)),
    ("response: store write awaited", ("addon.state.turns:State.written", "addon.state.turns:Turns.written")),
)


def _gateway_module() -> dict[str, Any] | None:
    gateway = ctx.master.addons.get("gateway")
    if gateway is None:
        return None
    hook = getattr(type(gateway), "request", None)
    return getattr(hook, "__globals__", None)  # the script module's namespace (not in sys.modules)


def _spaces(gateway: dict[str, Any]) -> list[dict[str, Any]]:
    """Every namespace the gateway's code looks names up in: the script module's, addon.*'s and
    the translators package's own (`translators.translate_request`)."""
    found = [gateway]
    for name, module in list(sys.modules.items()):
        if name in ("addon", "translators") or name.startswith("addon."):
            found.append(module.__dict__)
    return found


def _wrap_place(place: str, label: str, gateway: dict[str, Any], spaces: list[dict[str, Any]]) -> bool:
    module_name, _, path = place.partition(":")
    module = gateway if module_name == "gateway" else getattr(sys.modules.get(module_name), "__dict__", None)
    if module is None:
        return False
    owner_name, _, attr = path.rpartition(".")
    if owner_name:  # a method: wrapped on its class, where every instance finds it
        owner = module.get(owner_name)
        target = getattr(owner, attr, None) if owner is not None else None
        if target is None or not callable(target) or getattr(target, "_bench_label", None):
            return bool(target)
        setattr(owner, attr, _timed(label, target))
        return True
    target = module.get(attr)
    if target is None or not callable(target):
        return False
    if getattr(target, "_bench_label", None):
        return True
    wrapped = _timed(label, target)
    for space in [module, *spaces]:  # the module's own name, and each `from ... import name`
        for key, value in list(space.items()):
            if value is target:
                space[key] = wrapped
    return True


def _patch_steps() -> list[str]:
    """Wrap what is there; returns the labels wrapped."""
    gateway = _gateway_module()
    if gateway is None:
        return []
    spaces = _spaces(gateway)
    wrapped = [label for label, places in STEPS
               if [place for place in places if _wrap_place(place, label, gateway, spaces)]]
    streaming = sys.modules.get("addon.serve.streaming")
    if streaming is not None and not getattr(streaming.StreamHook.__call__, "_bench_label", None):
        untimed = streaming.StreamHook.__call__

        def timed_call(self: Any, data: bytes) -> Any:
            start = _now()
            out = untimed(self, data)
            _add("callable", "stream callable", start, _now(), bytes=len(data))
            return out

        timed_call._bench_label = "stream callable"  # type: ignore[attr-defined]
        streaming.StreamHook.__call__ = timed_call
        wrapped.append("stream callable")
    return wrapped


def _wire_patch() -> Any:
    """The module of the credentials wrapper: addon/patches/wire_credentials.py, or before it moved
    there addon/upstream/credentials.py (so the gateway of before and after are both timed); None
    for a gateway without one (its upstream leg sends the credentials itself: nothing to ablate)."""
    found = sys.modules.get("addon.patches.wire_credentials") or sys.modules.get("addon.upstream.credentials")
    return found if found is not None and hasattr(found, "_ORIGINAL") else None


def _unwrap_credentials() -> None:
    credentials = _wire_patch()
    if credentials is not None:
        from mitmproxy.proxy.layers import http as http_layer

        http_layer.HttpStream._handle_event = credentials._ORIGINAL  # type: ignore[method-assign]


def _lean_credentials() -> None:
    """The change weighed: every event of every HTTP stream goes through the gateway's wrapper, a
    Python loop around mitmproxy's generator; delegated with `yield from` (in C) unless the
    stream's flow carries credentials (attached in the `request` hook, before the head is sent)."""
    wire = _wire_patch()
    keeper = sys.modules.get("addon.upstream.credentials")
    if wire is None or keeper is None:
        return
    from mitmproxy.proxy.layers import http as http_layer

    original, wrapped, sent = wire._ORIGINAL, wire._handle_event, keeper._SENT

    def lean(self: Any, event: Any) -> Any:
        flow = getattr(self, "flow", None)
        if flow is None or flow not in sent:
            return (yield from original(self, event))
        return (yield from wrapped(self, event))

    http_layer.HttpStream._handle_event = lean  # type: ignore[method-assign]


# -- the addon --------------------------------------------------------------------------------------

class HookTimer:
    def __init__(self) -> None:
        self.steps: list[str] = []

    def running(self) -> None:
        if _gc not in gc.callbacks:
            gc.callbacks.append(_gc)
        if "credentials" in ABLATE:
            _unwrap_credentials()
        elif "credentials-lean" in ABLATE:
            _lean_credentials()
        _patch_server()
        _patch_addons()
        self.steps = [] if "steps" in ABLATE else _patch_steps()
        print(f"bench-hook-timer ready {len(self.steps)} steps", flush=True)

    def server_connect(self, data: Any) -> None:
        pass  # stamped by the timed invoke_addon: the upstream connection is opened after this

    def server_connected(self, data: Any) -> None:
        pass

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        if flow.request.path != PATH:
            return
        conn = flow.client_conn.id
        _control.add(conn)
        body = json.dumps({"records": [r for r in _records if r["conn"] != conn], "steps": self.steps,
                           "now": _now()}).encode()
        _records.clear()
        flow.response = http.Response.make(200, body, {"content-type": "application/json"})


addons = [HookTimer()]

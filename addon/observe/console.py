"""What the gateway says on mitmproxy's console (docs/console.md): the routes at start-up, a clean
line for a bad or unknown option (addon/observe/unknown_options.py), and one line per flow it
translated or let pass.

Everything goes through Python logging, mitmproxy's own log (docs/console.md "Quiet"), so
`-q` (`termlog_verbosity=error`, `flow_detail=0`) silences it as it silences mitmproxy: the flow
lines follow `flow_detail` as mitmproxy's dumper does, the start-up lines are `info`, the problems
`warning`. The flow line is read from the flow's metadata record (addon/observe/flowinfo.py), never
recomputed.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator
from typing import Any

from mitmproxy import ctx, exceptions, http

from addon.observe import costs, flowinfo
from addon.routes.routing import Route, Router
from addon.upstream import auth

log = logging.getLogger(__name__)

NOTE_CHARS = 90
"""A note longer than this is cut on the flow line; the flow's metadata keeps it whole."""


# -- start-up -------------------------------------------------------------------------------------
def route_line(route: Route) -> str:
    """`gpt-5* -> anthropic claude-sonnet-4-6 at https://api.anthropic.com, key $ANTHROPIC_API_KEY (set)`."""
    model = route.model or "(the client's model)"
    if route.deployments:  # its pool (docs/pools.md): each deployment where it goes, with what
        line = f"route {route.pattern} -> " + "; ".join(_member(d.name, d.route) for d in route.deployments)
    else:
        line = f"route {route.pattern} -> {_member('', route)[2:]}"
    if route.fallbacks:
        line += "; fallbacks: " + "; ".join(_member(d.name, d.route) for d in route.fallbacks)
    if route.summarizer is not None:
        line += f"; compaction -> {route.summarizer.dialect.name} {route.summarizer.model or model}"
    return line


def _member(name: str, route: Route) -> str:
    model = route.model or "(the client's model)"
    return f"{name}: {route.dialect.name} {model} at {route.base_url}, {credential(route)}"


def credential(route: Route) -> str:
    """What the route sends upstream, in the words of docs/options.md "Credentials follow the
    route" (`auth.upstream_credentials` is the rule)."""
    if route.key_env:
        return f"key ${route.key_env} ({'set' if auth.read_key(route.key_env) else 'NOT SET'})"
    signing = route.dialect.signing
    if signing is not None:
        return f"no key: {signing.what} from the {signing.source.name} credential chain"
    if auth.takes_client_credentials(route.dialect, route.base_url):
        return "the client's own credentials"
    return "no key"


def missing_keys(router: Router) -> list[str]:
    """A warning per route whose key variable is not set: its requests would go without a key."""
    return [f"route {route.pattern}: ${route.key_env} is not set, so its requests go upstream "
            "without a key (export it before starting mitmproxy)"
            for route in router.routes if not route.deployments
            and route.key_env and not auth.read_key(route.key_env)] + [
        f"route {route.pattern} deployment {d.name}: ${d.route.key_env} is not set, so its requests go "
        "upstream without a key (export it before starting mitmproxy)"
        for route in router.routes for d in (*route.deployments, *route.fallbacks)
        if d.route.key_env and not auth.read_key(d.route.key_env)]


_running = False
"""The proxy runs (`running` seen): an option error from now on is a `set`, not a start-up."""


def started() -> None:
    """Called from the gateway's `running` hook (addon/gateway.py)."""
    global _running
    _running = True


@contextlib.contextmanager
def option_errors() -> Iterator[None]:
    """Around each of the gateway's addons' `configure`. A bad option while mitmdump or mitmweb
    starts (docs/console.md "A bad option"): one line on stderr, exit 1, before the proxy listens
    (mitmproxy would print the traceback of the script's configure, then listen, then exit).
    Later (mitmweb's options editor, `set` commands) the error is raised, so mitmproxy rolls the
    change back and shows the message."""
    try:
        yield
    except exceptions.OptionsError as exc:
        if _running or not in_real_master():
            raise
        print(f"{os.path.basename(sys.argv[0]) or 'mitmproxy'}: {exc}", file=sys.stderr, flush=True)
        # SystemExit leaves the event loop as mitmproxy's own ErrorCheck addon does (sys.exit(1))
        sys.exit(1)


def in_real_master() -> bool:
    """A mitmdump or mitmweb start-up, which stops on logged errors (its `errorcheck` addon), as
    opposed to a test context (`mitmproxy.test.taddons`), where an option error is raised."""
    try:
        return ctx.master.addons.get("errorcheck") is not None
    except AttributeError:
        return False


# -- per flow -------------------------------------------------------------------------------------
def flow_line(flow: http.HTTPFlow) -> str | None:
    """One line for a flow the gateway took on (from `flow.metadata["gateway"]`), or one that
    matched `gateway_match` but no route; None for any other flow."""
    info = flow.metadata.get(flowinfo.KEY)
    if info is None:
        if flowinfo.UNROUTED in flow.metadata:
            return (f"{flow.metadata[flowinfo.UNROUTED]!s} matched no route: passed untranslated to "
                    f"{flow.request.pretty_url} ({status(flow)})")
        return None
    head = f"{info.get('client_model') or '?'} -> {info.get('upstream')} {info.get('model')}"
    if info.get("client"):
        head = f"[{info['client']}] {head}"  # who, with client keys (docs/team.md)
    if info.get("kind") == "compaction":
        head += " compaction"
    if info.get("client_dialect"):  # a client other than Responses (addon/serve/client_side.py)
        head += f" ({info['client_dialect']} client)"
    parts = [head, status(flow)]
    if went := flowinfo.via(info):
        parts.append(went)  # the deployment that answered, the attempts before it (docs/pools.md)
    if usage := tokens(info.get("usage")):
        parts.append(usage)
    if cost := costs.dollars(info.get("cost_usd")):
        parts.append(cost)  # the turn's cost in USD (addon/observe/costs.py)
    if info.get("refused"):
        parts.append(f"refused: {info['refused']}")
    if info.get("error"):
        parts.append(f"error: {info['error']}")
    if lost := flowinfo.lossy(info):
        parts.append("dropped: " + ", ".join(flowinfo.collapse(lost)))
    parts += [shorten(note) for note in info.get("notes") or ()]
    return " | ".join(parts)


def status(flow: http.HTTPFlow) -> str:
    if flow.response is not None:
        return str(flow.response.status_code)
    return "no answer" if flow.error is None else f"no answer: {flow.error.msg}"


def tokens(usage: Any) -> str | None:
    if not isinstance(usage, dict):
        return None
    given, written = usage.get("input_tokens"), usage.get("output_tokens")
    if given is None and written is None:
        return None
    return f"{given} in, {written} out"


def shorten(note: str) -> str:
    return note if len(note) <= NOTE_CHARS else note[:NOTE_CHARS - 1] + "…"


def flow_level(info: dict[str, Any] | None) -> int:
    """A flow that lost something (addon/observe/flowinfo.py `lost_something`) is a warning."""
    return logging.WARNING if info is None or flowinfo.lost_something(info) else logging.INFO


# -- the addon ------------------------------------------------------------------------------------
class Console:
    """Placed after the gateway in the script's `addons`: mitmproxy runs its hooks once the
    gateway's (awaited) have finished, so the flow's record is complete."""

    name = "gateway-console"
    """mitmproxy names addons by class; this one must not meet another `console`."""

    def __init__(self, router: Any) -> None:
        self._router = router
        """A callable giving the gateway's current `Router`."""
        self._shown: Router | None = None

    def configure(self, updated: set[str]) -> None:
        router = self._router()
        if router == self._shown or not router.routes:
            return
        self._shown = router
        for route in router.routes:
            log.info(route_line(route))
        if not any(route.pattern == "*" for route in router.routes):
            log.warning("a client model that matches no route passes to OpenAI untranslated (a "
                        "Messages client's, e.g. Claude Code's, to the host it named): end "
                        "gateway_model with *=MODEL to catch every model")
        for warning in missing_keys(router):
            log.warning(warning)

    def response(self, flow: http.HTTPFlow) -> None:
        self._say(flow)

    def error(self, flow: http.HTTPFlow) -> None:
        self._say(flow)

    @staticmethod
    def _say(flow: http.HTTPFlow) -> None:
        if "flow_detail" in ctx.options and ctx.options.flow_detail < 1:
            return  # mitmdump -q, or --set flow_detail=0: no flow lines, as mitmproxy's own dumper
        if (line := flow_line(flow)) is not None:
            log.log(flow_level(flow.metadata.get(flowinfo.KEY)), line)

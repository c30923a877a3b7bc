"""The hosted `web_search` tool on other vendors: which request gets the upstream's own search,
and which searches of the history go back (docs/websearch.md).

The client's tool asks for live search (`external_web_access: true`, Codex's `web_search =
"live"`) or for cached results only (Codex's default), which no other vendor offers. The operator
decides with `gateway_web_search`: `follow` does what the client says, `live` gives live search
even to a client that asked for cached results, `off` never searches. A search of the history
goes back to the vendor that ran it, as that vendor's own blocks (carried in the
`web_search_call` item's id, translators/features/vendor_state.py); any other target gets the answer's
text only.
"""

from __future__ import annotations

from typing import Literal

from translators.core.report import Report
from translators.ir.request import Request, WebSearchCall, WebSearchTool

Mode = Literal["off", "live", "follow"]
MODES: tuple[Mode, ...] = ("follow", "live", "off")
HOW_TO_GO_LIVE = ("for live search set web_search = \"live\" in Codex's config.toml "
                  "(or run the gateway with --set gateway_web_search=live)")


def prepare(request: Request, target: str, mode: str, report: Report) -> Request:
    """The request with the web search tool kept only where it is to be served (live), and the
    history's searches kept only where the target can take them back; everything else reported."""
    if mode not in MODES:
        raise ValueError(f"gateway_web_search must be one of {', '.join(MODES)}, not {mode!r}")
    tools = []
    for tool in request.tools:
        if tool.kind != "web_search":
            tools.append(tool)
        elif mode == "off":
            report.drop(tool.origin)
            report.note("web search dropped: the gateway runs with gateway_web_search=off")
        elif not tool.live and mode == "follow":
            report.drop(tool.origin)
            report.note(f"web search dropped: the client asked for cached results only "
                        f"(external_web_access: false), which the {target} upstream cannot give; "
                        f"{HOW_TO_GO_LIVE}")
        else:
            if not tool.live:
                report.note("web search is live: the client asked for cached results only, "
                            "gateway_web_search=live searches the live web")
            tools.append(tool.model_copy(update={"live": True}))
    searching = any(tool.kind == "web_search" for tool in tools)
    items = []
    for item in request.items:
        if item.type != "web_search" or (searching and _takes_back(item, target)):
            items.append(item)
        else:
            # another vendor's search, or no search declared now: the answer's text carries it
            report.drop(item.origin)
    if len(tools) == len(request.tools) and len(items) == len(request.items):
        return request
    return request.model_copy(update={"tools": tools, "items": items})


def _takes_back(item: WebSearchCall, target: str) -> bool:
    """A search the target ran itself, with the blocks it needs to see it again."""
    return item.state is not None and item.state.dialect == target and bool(item.state.blocks)


def declared(request: Request) -> WebSearchTool | None:
    """The web search tool this request asks the upstream to serve, if any."""
    for tool in request.tools:
        if tool.kind == "web_search":
            return tool
    return None


def decline(request: Request, report: Report, why: str) -> None:
    """A target without a search of its own: the tool is reported dropped, with the reason."""
    tool = declared(request)
    if tool is not None:
        report.drop(tool.origin)
        report.note(f"web search dropped: {why}")

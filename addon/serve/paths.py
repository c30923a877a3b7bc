"""Request paths as an upstream's server reads them (docs/team.md "Paths").

A server does not compare the bytes of a request target: it decodes percent-escapes of unreserved
characters, resolves `.` and `..` segments, merges duplicate slashes and (for most routers)
ignores a trailing slash and the case of its route literals. A gateway that compared the raw
path would let `//v1/responses`, `/v1/Responses`, `/v1/%72esponses` or `/v1/x/../responses`
pass as "not the gateway's", untranslated, unchecked and with the client's gateway key, to a
server that reads them as `/v1/responses`. So the path is normalised once, in `requestheaders`,
and when its normal form is one the gateway takes on, the request's path becomes that form; every
later check (gateway_match, a client dialect's paths, the store's endpoints, `/gateway/usage`,
the model catalog) reads it.

Pure functions; `settle` is the one step that touches a flow.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

AS_SENT = "gateway.path_as_sent"
"""flow.metadata key: the path the client sent, when the gateway took the request on under its
normal form."""
UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
"""RFC 3986 2.3: a percent-encoded unreserved character is the character itself (6.2.2.2)."""
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_SEGMENT = re.compile(r"[A-Za-z0-9._-]+")


def _unescape(match: re.Match[str]) -> str:
    char = chr(int(match[1], 16))
    return char if char in UNRESERVED else "%" + match[1].upper()  # 6.2.2.1: escapes in upper case


def canonical(path: str) -> str:
    """`path` (its query kept as sent) with unreserved escapes decoded, duplicate slashes merged,
    dot segments removed (RFC 3986 5.2.4) and no trailing slash; the case is kept. A target that
    is not a path (`*`, an absolute URL) is returned as it is."""
    bare, sep, query = path.partition("?")
    if not bare.startswith("/"):
        return path
    if "%" in bare:
        bare = _ESCAPE.sub(_unescape, bare)
    out: list[str] = []
    for segment in bare.split("/"):
        if segment in ("", "."):
            continue  # a duplicate slash, or "."
        if segment == "..":
            if out:
                out.pop()
            continue
        out.append(segment)
    return "/" + "/".join(out) + sep + query


def fold(path: str, literals: frozenset[str]) -> str:
    """`path` with each segment that is, in another case, one of the gateway's route `literals`
    (`v1`, `responses`, ...) in their case; ids and every other segment keep theirs (`resp_AbC`
    is another id than `resp_abc`)."""
    bare, sep, query = path.partition("?")
    segments = bare.split("/")
    changed = False
    for i, segment in enumerate(segments):
        lower = segment.lower()
        if lower != segment and lower in literals:
            segments[i], changed = lower, True
    return "/".join(segments) + sep + query if changed else path


def host(name: str) -> str:
    """A host name as DNS reads it: case ignored, a trailing dot (the root) dropped."""
    return name.lower().rstrip(".") if name else name


def literals(patterns: Iterable[str]) -> frozenset[str]:
    """The literal path segments of `host/path` or `/path` patterns (fnmatch; wildcards skipped)."""
    found = set()
    for pattern in patterns:
        path = pattern if pattern.startswith("/") else "/" + pattern.partition("/")[2]
        for segment in path.split("?", 1)[0].split("/"):
            if _SEGMENT.fullmatch(segment):
                found.add(segment.lower())
    return frozenset(found)


def settle(flow: Any, route_literals: frozenset[str], takes: Callable[[Any], bool]) -> bool:
    """The request's path in its normal form (`route_literals`: the gateway's route literals in
    their case, `literals`) when that form is one the gateway takes on (`takes`, asked with the
    normal form in place); otherwise the path stays as sent, and a request the gateway does not
    take on goes on as the client wrote it. True when the path was changed."""
    sent = flow.request.path
    normal = fold(canonical(sent), route_literals)
    if normal == sent:
        return False
    flow.request.path = normal
    if takes(flow):
        flow.metadata[AS_SENT] = sent
        return True
    flow.request.path = sent
    return False

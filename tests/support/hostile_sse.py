"""Hypothesis strategies for well-formed `text/event-stream` bodies with hostile JSON payloads.

Random bytes almost never make a `data:` line of JSON, so a fuzz test fed them exercises the framing
and nothing behind it. These strategies keep the framing right (LF or CRLF line ends, comments,
a payload spread over several `data:` lines, named or unnamed events, the WHATWG rules that
translators/wire/sse.py follows) and put the damage in the payloads: a vendor's real events, some left
as they are, some with one node replaced by a hostile value (another JSON type, huge numbers,
control characters, lone surrogates, very long text), removed, or given a new key. The decoders
therefore reach their event handlers, where a wrong type or a missing key would escape.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Callable, Iterable
from typing import Any

from hypothesis import strategies as st

from translators import TranslatorError
from translators.ir import events as ev

HOSTILE_TEXT = ["", "\x00", "\ud800", "\u2028", "\r\n", "data: x\n\n", "event: error", "\ufeff", "🦅",
                "\\", '"', "[DONE]", "a" * 5000]
"""Strings a payload may carry that a careless decoder mishandles."""

leaves = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.sampled_from(HOSTILE_TEXT)
)


def hostile_json(keys: Iterable[str]) -> st.SearchStrategy[Any]:
    """Any JSON value, its object keys drawn mostly from the vendor's own (`keys`)."""
    names = st.sampled_from(sorted(set(keys)) or ["type"]) | st.text(max_size=6)
    return st.recursive(leaves, lambda inner: st.lists(inner, max_size=3)
                        | st.dictionaries(names, inner, max_size=4), max_leaves=8)


def keys_of(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value).union(*(keys_of(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(keys_of(v) for v in value))
    return set()


def _slots(parent: Any) -> list[tuple[Any, Any]]:
    """(container, key) of every node under `parent`, depth first."""
    if isinstance(parent, dict):
        keys: Iterable[Any] = list(parent)
    else:
        keys = range(len(parent)) if isinstance(parent, list) else []
    return [slot for key in keys for slot in [(parent, key), *_slots(parent[key])]]


@st.composite
def damaged(draw: st.DrawFn, payload: Any, values: st.SearchStrategy[Any]) -> Any:
    """A copy of `payload` with one of its nodes (any depth, each as likely) replaced by one of
    `values`, removed, or given a new key."""
    root = [copy.deepcopy(payload)]
    parent, key = draw(st.sampled_from(_slots(root)))
    action = draw(st.sampled_from(["replace", "replace", "delete", "add"]))
    if action == "delete" and parent is not root:
        del parent[key]
    elif action == "add" and isinstance(parent[key], dict):
        parent[key][draw(st.text(max_size=6))] = draw(values)
    else:
        parent[key] = draw(values)
    return root[0]


def payloads_in(stream: bytes) -> list[Any]:
    """The JSON of every `data:` line of a recorded stream (one line per event in the recordings)."""
    out = []
    for line in stream.decode().splitlines():
        if line.startswith("data:") and line[5:].strip() != "[DONE]":
            out.append(json.loads(line[5:]))
    return out


@st.composite
def sse_body(draw: st.DrawFn, recordings: list[list[Any]], *, named: bool, done: bool = False) -> bytes:
    """A well-formed event stream of up to 12 events of one of `recordings` (a vendor's real
    payloads, stream by stream), in their order from the start or from anywhere, each left whole or
    damaged. `named`: an `event:` line names each event by its `type`; `done`: a `data: [DONE]`
    may close the stream (Chat Completions)."""
    values = hostile_json(keys_of(recordings))
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    recording = draw(st.sampled_from(recordings))
    start = 0 if draw(st.booleans()) else draw(st.integers(0, len(recording) - 1))
    frames = []
    for payload in recording[start:start + draw(st.integers(1, 12))]:
        if draw(st.integers(0, 3)) == 0:
            payload = draw(damaged(payload, values))
        lines = [": keep-alive"] if draw(st.integers(0, 7)) == 0 else []
        if named:
            kind = payload.get("type") if isinstance(payload, dict) else None
            lines.append(f"event: {kind if isinstance(kind, str) else 'message'}")
        text = json.dumps(payload, ensure_ascii=draw(st.booleans()), indent=draw(st.sampled_from([None, 1])))
        lines += [f"data: {line}" for line in text.split("\n")]  # several data lines join with "\n"
        frames.append(eol.join(lines) + eol + eol)
    if done and draw(st.booleans()):
        frames.append(f"data: [DONE]{eol}{eol}")
    return "".join(frames).encode("utf-8", "surrogatepass")


@st.composite
def chunked(draw: st.DrawFn, data: bytes) -> list[bytes]:
    """`data` cut at up to 8 random points."""
    cuts = sorted(set(draw(st.lists(st.integers(1, max(1, len(data) - 1)), max_size=8))))
    edges = [0, *(c for c in cuts if 0 < c < len(data)), len(data)]
    return [data[a:b] for a, b in itertools.pairwise(edges) if b > a]


def decoded(decoder: Any, chunks: list[bytes]) -> list[ev.Event]:
    """Every event a decoder gives for `chunks`, including those a protocol error carries; any
    exception other than the package's own propagates."""
    out: list[ev.Event] = []
    try:
        for chunk in chunks:
            out += decoder.feed(chunk)
        out += decoder.close()
    except TranslatorError as exc:
        out += getattr(exc, "decoded", [])
    return out


def reached(events: list[ev.Event]) -> bool:
    """Whether the decoder made something of a payload: an event other than a failure."""
    return any(not isinstance(event, ev.Failed) for event in events)


def assert_most_examples_reach_the_handlers(run: Callable[[], None], outcomes: list[bool],
                                            least: float = 0.5) -> None:
    """Runs a hypothesis test that appends, per example, whether its stream decoded an event, and
    checks that at least `least` of them did: a generator that stopped reaching the event handlers
    (random bytes reach none) fails here."""
    run()
    assert outcomes, "no example ran"
    share = sum(outcomes) / len(outcomes)
    assert share >= least, f"only {sum(outcomes)} of {len(outcomes)} generated streams decoded an event"

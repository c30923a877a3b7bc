"""Hypothesis strategies that break recorded upstream streams, byte-level and structure-aware.

Byte-level: cut, insert garbage, delete, overwrite, repeat a range, add stray framing.
Structure-aware: the recording's own payloads with a subtree swapped for a value of another type,
a key removed or added, an event renamed to another event of the same dialect, events dropped,
repeated or swapped; then written back in the recording's framing (so the decoder gets past the
framing and into the event handlers, where type confusion lives).
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterator
from typing import Any

from hypothesis import strategies as st

from tests.reliability.recorded import Recording, recordings_of

json_leaf = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.sampled_from(["", "end_turn", "tool_use", "STOP", "text", "0", "-1", "null"])
)
json_values = st.recursive(
    json_leaf,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.text(max_size=8)
            | st.sampled_from(["type", "index", "delta", "text", "id", "name", "content", "parts"]),
            inner,
            max_size=3,
        )
    ),
    max_leaves=8,
)

GARBAGE = [
    b"\xff\xfe\xfd",
    b"\x00",
    b"\r",
    b"\n",
    b"\n\n",
    b"\r\n\r\n",
    b"data: ",
    b"data: {\n\n",
    b"data: [DONE]\n\n",
    b"event: error\n",
    b"data: null\n\n",
    b"data: []\n\n",
    b'data: "x"\n\n',
    b":comment\n",
    b"[",
    b"]",
    b",",
    b"{",
    b"}",
    b'"',
    b"\\",
    b"\x00\x00\x00\x10\x00\x00\x00\x00",
    b"\xc3",
    b"\xe2\x82",
    b"\xf0\x9f\x98",
]


def _known_types(dialect: str) -> list[str]:
    types: set[str] = set()
    for rec in recordings_of(dialect):
        for payload in rec.payloads:
            if rec.framing == "eventstream":
                types.add(str(payload[0].get(":event-type", "")))
            elif isinstance(payload, dict) and isinstance(payload.get("type"), str):
                types.add(payload["type"])
    return sorted(t for t in types if t) or ["message"]


@st.composite
def _mutate_tree(draw: st.DrawFn, value: Any) -> Any:
    """A copy of `value` with one node (chosen by walking down from the root) replaced, removed
    or given a new key."""
    root = [copy.deepcopy(value)]
    parent: Any = root
    key: Any = 0
    node = root[0]
    while isinstance(node, dict | list) and node and draw(st.integers(0, 3)) > 0:
        keys = list(node.keys()) if isinstance(node, dict) else list(range(len(node)))
        parent, key = node, draw(st.sampled_from(keys))
        node = node[key]
    action = draw(st.sampled_from(["replace", "replace", "delete", "add"]))
    if action == "delete" and parent is not root:
        del parent[key]
    elif action == "add" and isinstance(node, dict):
        node[draw(st.text(max_size=8))] = draw(json_values)
    else:
        parent[key] = draw(json_values)
    return root[0]


@st.composite
def structured(draw: st.DrawFn, rec: Recording) -> bytes:
    payloads = list(rec.payloads)
    types = _known_types(rec.dialect)
    for _ in range(draw(st.integers(1, 3))):
        if not payloads:
            break
        i = draw(st.integers(0, len(payloads) - 1))
        action = draw(st.sampled_from(["tree", "tree", "tree", "retype", "drop", "repeat", "swap"]))
        if action == "drop":
            payloads.pop(i)
        elif action == "repeat":
            payloads.insert(i, payloads[i])
        elif action == "swap":
            j = draw(st.integers(0, len(payloads) - 1))
            payloads[i], payloads[j] = payloads[j], payloads[i]
        elif rec.framing == "eventstream":
            headers, body = payloads[i]
            headers = dict(headers)
            if action == "retype":
                headers[":event-type"] = draw(st.sampled_from(types))
            elif draw(st.integers(0, 5)) == 0:
                name = draw(st.sampled_from([":event-type", ":message-type", ":exception-type"]))
                headers[name] = draw(st.sampled_from(["event", "exception", "error", "", *types]))
            else:
                body = draw(_mutate_tree(body))
            payloads[i] = (headers, body)
        elif action == "retype" and isinstance(payloads[i], dict):
            payloads[i] = {**payloads[i], "type": draw(st.sampled_from(types))}
        else:
            payloads[i] = draw(_mutate_tree(payloads[i]))
    return rec.encode(payloads)


@st.composite
def byte_level(draw: st.DrawFn, data: bytes) -> bytes:
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(data)))
        action = draw(st.sampled_from(["cut", "insert", "insert", "delete", "overwrite", "repeat"]))
        if action == "cut":
            data = data[:at]
        elif action == "insert":
            junk = draw(st.sampled_from(GARBAGE) | st.binary(min_size=1, max_size=24))
            data = data[:at] + junk + data[at:]
        elif action == "delete":
            data = data[:at] + data[at + draw(st.integers(1, 64)) :]
        elif action == "overwrite":
            junk = draw(st.binary(min_size=1, max_size=8))
            data = data[:at] + junk + data[at + len(junk) :]
        else:
            end = at + draw(st.integers(1, 200))
            data = data[:end] + data[at:end] + data[end:]
    return data


@st.composite
def broken_stream(draw: st.DrawFn, dialect: str) -> tuple[Recording, bytes]:
    """(the recording it came from, its broken bytes)."""
    rec = draw(st.sampled_from(recordings_of(dialect)))
    kind = draw(st.sampled_from(["bytes", "structure", "structure", "both"]))
    data = rec.data if kind == "bytes" else draw(structured(rec))
    if kind != "structure":
        data = draw(byte_level(data))
    return rec, data


@st.composite
def chunking(draw: st.DrawFn, data: bytes) -> list[bytes]:
    """`data` cut at up to 12 random points (whole when none)."""
    points = draw(st.lists(st.integers(1, max(1, len(data) - 1)), max_size=12))
    cuts = sorted({p for p in points if 0 < p < len(data)})
    bounds = [0, *cuts, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds) if b > a]


WRONG_TYPES: list[Any] = [None, True, 7, 2.5, "s", [], {}, [{"x": 1}], {"x": [1]}]
"""One value of each JSON type (and a non-empty array and object)."""


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    return "number" if isinstance(value, int | float) else type(value).__name__


def retyped(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """(JSON path, a copy of `value` with that node replaced by a value of another JSON type),
    for every node under the root and every other type: exhaustive, not sampled."""
    children: list[tuple[str, Any]] = []
    if isinstance(value, dict):
        children = [(f"{path}.{k}" if path else str(k), k) for k in value]
    elif isinstance(value, list):
        children = [(f"{path}[{i}]", i) for i in range(len(value))]
    for child_path, key in children:
        child = value[key]
        for wrong in WRONG_TYPES:
            if _kind(wrong) != _kind(child) or (wrong in ([], {}) and child not in ([], {})):
                out = copy.copy(value)
                out[key] = copy.deepcopy(wrong)
                yield child_path, out
        for deeper_path, deeper in retyped(child, child_path):
            out = copy.copy(value)
            out[key] = deeper
            yield deeper_path, out

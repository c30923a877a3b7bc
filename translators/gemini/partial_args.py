"""Function-call arguments streamed piecewise (Vertex AI `streamFunctionCallArguments`;
docs/gemini.md "Streaming", fixture `gemini/vertex_thought_then_streamed_args.jsonl`).

Each `partialArgs` entry names one value by RFC 9535 JSON path (`$.id`, `$.a[0]['b c']`) and
holds it as `stringValue` / `numberValue` / `boolValue` / `nullValue`; a string continues
over several entries while `willContinue` is true. The arguments object is rebuilt from them.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from translators.core.errors import UpstreamProtocolError
from translators.wire import wirejson

_SEGMENT = re.compile(
    r"""\.([A-Za-z_$][\w$-]*)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]|\["((?:[^"\\]|\\.)*)"\]""")
MAX_INDEX = 100_000
"""An array index beyond any real argument list; refusing it keeps a bad path from allocating."""


def parse_path(path: str) -> list[str | int]:
    return list(_segments(path))


def _segments(path: str) -> tuple[str | int, ...]:
    # a streamed string names the same path in every piece, and calls repeat their paths: short
    # paths (all real ones) are parsed once; errors are not cached
    return _cached_segments(path) if len(path) <= 256 else _parse(path)


def _parse(path: str) -> tuple[str | int, ...]:
    if not path.startswith("$"):
        raise UpstreamProtocolError(f"Gemini sent a partial argument with a bad JSON path: {path!r}")
    segments: list[str | int] = []
    pos = 1
    while pos < len(path):
        match = _SEGMENT.match(path, pos)
        if match is None:
            raise UpstreamProtocolError(f"Gemini sent a partial argument with a bad JSON path: {path!r}")
        name, index, single, double = match.groups()
        if index is not None:
            if int(index) > MAX_INDEX:
                raise UpstreamProtocolError(f"Gemini sent a partial argument index out of reach: {path!r}")
            segments.append(int(index))
        else:
            quoted = single if single is not None else double
            segments.append(name if name is not None else re.sub(r"\\(.)", r"\1", quoted or ""))
        pos = match.end()
    return tuple(segments)


_cached_segments = lru_cache(maxsize=256)(_parse)


class _Pieces:
    """A string that came in several entries: its pieces, joined once when the arguments are
    written (docs/design.md "Limits"). Not a str, list or dict, so a path through it replaces
    it, as it would a string."""

    __slots__ = ("parts",)

    def __init__(self, parts: list[str]) -> None:
        self.parts = parts


def _joined(node: Any) -> Any:
    if isinstance(node, _Pieces):
        return "".join(node.parts)
    if isinstance(node, dict):
        return {key: _joined(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_joined(value) for value in node]
    return node


class ArgsBuilder:
    __slots__ = ("_continuing", "_pieced", "_root")

    def __init__(self, initial: Any = None) -> None:
        self._root: dict[str, Any] = dict(initial) if isinstance(initial, dict) else {}
        self._continuing: set[str] = set()
        self._pieced = False

    def add(self, partial: Any) -> None:
        if not isinstance(partial, dict) or not isinstance(partial.get("jsonPath"), str):
            raise UpstreamProtocolError("Gemini sent a partial argument without a jsonPath")
        path = partial["jsonPath"]
        segments = _segments(path)
        if not segments:
            raise UpstreamProtocolError("Gemini sent a partial argument for the whole arguments object")
        value = _value(partial)
        parent = self._container(segments[:-1], segments[-1])
        last = segments[-1]
        if isinstance(value, str) and path in self._continuing:
            before = _get(parent, last)
            if isinstance(before, _Pieces):
                before.parts.append(value)
                value = before
            else:
                value = _Pieces([before if isinstance(before, str) else "", value])
                self._pieced = True
        _set(parent, last, value)
        if partial.get("willContinue"):
            self._continuing.add(path)
        else:
            self._continuing.discard(path)

    def json(self) -> str:
        return wirejson.text(_joined(self._root) if self._pieced else self._root)

    def _container(self, segments: tuple[str | int, ...], child: str | int) -> Any:
        node: Any = self._root
        for i, segment in enumerate(segments):
            following = segments[i + 1] if i + 1 < len(segments) else child
            existing = _get(node, segment)
            if not isinstance(existing, dict | list):
                existing = [] if isinstance(following, int) else {}
                _set(node, segment, existing)
            node = existing
        if isinstance(child, int) != isinstance(node, list):
            raise UpstreamProtocolError("Gemini sent partial arguments whose JSON paths disagree")
        return node


def _value(partial: dict[str, Any]) -> Any:
    if "stringValue" in partial:
        return str(partial["stringValue"])
    if "numberValue" in partial:
        number = partial["numberValue"]
        # the wire type is a double: 3.0 is the integer 3 a JSON schema asked for
        return int(number) if isinstance(number, float) and number.is_integer() else number
    if "boolValue" in partial:
        return bool(partial["boolValue"])
    if "nullValue" in partial:
        return None
    raise UpstreamProtocolError("Gemini sent a partial argument without a value")


def _get(node: Any, key: str | int) -> Any:
    if isinstance(node, list):
        return node[key] if isinstance(key, int) and key < len(node) else None
    return node.get(key) if isinstance(key, str) else None


def _set(node: Any, key: str | int, value: Any) -> None:
    if isinstance(node, list) and isinstance(key, int):
        node.extend([None] * (key + 1 - len(node)))
        node[key] = value
    elif isinstance(node, dict) and isinstance(key, str):
        node[key] = value
    else:
        raise UpstreamProtocolError("Gemini sent partial arguments whose JSON paths disagree")

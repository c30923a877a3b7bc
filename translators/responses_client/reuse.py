"""The Responses decoder's items taken from the client's `ItemCache` (translators/core/item_cache.py)
instead of decoded again (docs/benchmarks.md "Request translation over a session").

Content is JSON text as orjson writes the parsed value: compact, in the client's own key order, so
two texts are equal exactly when the parsed values are (and their keys in the same order, which a
report's order follows). What that text cannot tell apart is never taken from the cache: a `NaN`
or an infinity, which Python's parser reads and orjson writes as `null` (an entry remembers where
its item held a null, and a request whose value there is not one decodes the item afresh; an item
holding a NaN itself is never stored), and what orjson cannot write (integers beyond 64 bits, lone
surrogates). Those are decoded afresh each time.

Two ways to find an item:
- a run: the last request of a conversation, as one text and the entry of each of its items. A
  request whose input starts with the same items, in the same places, takes those entries whole
  (a text comparison), and decodes only what follows: what a conversation's next turn adds.
- an entry by the item's own text: an item seen before elsewhere (another conversation of the same
  client, or an earlier place: the client cut its oldest items). Its origins and dropped paths are
  renumbered for its place now, and it is stored again so.

What decoding an item gives depends on its content and its place (`input[12]`) only, so an entry
keeps: the IR items, the dropped paths below the item (with their kind), the tools and namespaces
it declared (`additional_tools`, `tool_search_output`, and the top-level `tools`, kept the same
way) and the effort it set (`configuration_update`). Taken from the cache, those are given to the
request in the same order as decoding would have. An item whose decoding left a note, or named a
path outside itself, is decoded afresh each time; a refused item is never stored, so it is
refused again with the same error.

The IR items are shared by every request that reuses them: nothing changes an IR item once built
(translators/ir/request.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import orjson

from translators.core.item_cache import ItemCache
from translators.core.report import Kind, Report
from translators.ir.request import Item, Namespace, Tool
from translators.responses_client.tools import ToolCollector, ToolKey

if TYPE_CHECKING:
    from translators.responses_client.request import _ItemState

DIALECT = "responses"
"""The entries' namespace in a cache: another client dialect decodes the same text otherwise."""
DECLARING = frozenset({"additional_tools", "tool_search_output"})
"""Item types whose decoding declares tools."""
_NULL = b"null"
_COMMA, _CLOSE = ord(","), ord("]")

Handler = Callable[["_ItemState", dict[str, Any], str], list[Item]]
Where = tuple[str | int, ...]
"""A place inside a JSON value: its keys and indexes from the top."""


@dataclass(frozen=True, slots=True)
class Decoded:
    """What decoding one item (or the top-level tools) gave, at `path`."""

    path: str
    items: tuple[Item, ...]
    dropped: tuple[tuple[str, Kind], ...] = ()
    """Dropped paths below `path` (what follows it: `.phase`, `.content[1]`), with their kind."""
    tools: tuple[tuple[ToolKey, Tool], ...] = ()
    namespaces: tuple[tuple[str, Namespace], ...] = ()
    effort: str | None = None
    """The reasoning effort it set (`configuration_update`)."""
    nulls: tuple[Where, ...] = ()
    """Where its value holds a null: the places another value of the same text may hold a NaN."""
    plain: bool = field(init=False)
    """It dropped, declared and set nothing: only its IR items go to the request."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "plain", not (self.dropped or self.tools or self.namespaces
                                               or self.effort is not None))


@dataclass(frozen=True, slots=True)
class Run:
    """A request's input as one text, with the entry of each of its first `len(entries)` items."""

    text: bytes
    ends: tuple[int, ...]
    """Where each item's text ends in `text` (the offset just past its closing brace)."""
    entries: tuple[Decoded, ...]
    nulls: tuple[tuple[int, Where], ...]
    """Each null of its items: the item, and where in it (`Decoded.nulls`)."""


def key_of(value: Any) -> bytes | None:
    """The content key of a parsed JSON value (its text), or None when orjson cannot write it."""
    try:
        return orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError: a big integer, a lone surrogate
        return None


def nulls_of(value: Any) -> tuple[Where, ...] | None:
    """Where `value` holds a null; None when it holds a NaN or an infinity (which orjson writes
    as `null`, so its text does not stand for it)."""
    found: list[Where] = []
    stack: list[tuple[Any, Where]] = [(value, ())]
    while stack:
        node, where = stack.pop()
        kind = type(node)
        if kind is dict:
            stack.extend((child, (*where, key)) for key, child in node.items())
        elif kind is list:
            stack.extend((child, (*where, i)) for i, child in enumerate(node))
        elif node is None:
            found.append(where)
        elif kind is float and not math.isfinite(node):
            return None
    return tuple(found)


def _still_null(value: Any, nulls: tuple[Where, ...]) -> bool:
    """Whether `value`, whose text is that of the value `nulls` was taken from, holds a null at each
    of those places (not a NaN or an infinity, which its text cannot tell from a null)."""
    for where in nulls:
        node = value
        for step in where:
            node = node[step]
        if node is not None:
            return False
    return True


class Reuse:
    """Decodes one request's input through its client's cache: `begin`, then `again` for the
    items a run gives and `item` for the others, then `end`."""

    __slots__ = ("_base", "_continued", "_ends", "_entries", "_nulls", "_open", "_text", "cache")

    def __init__(self, cache: ItemCache) -> None:
        self.cache = cache
        self._text: bytes | None = None
        self._base: Run | None = None
        """The run the request starts with."""
        self._continued = False
        """The request repeats the whole of `_base`, which its own run makes useless."""
        self._entries: list[Decoded] = []
        self._ends: list[int] = []
        self._nulls: list[int] = []
        self._open = True
        """Every item so far has an entry: the request's run goes on."""

    # -- the items a run gives ----------------------------------------------------------------
    def begin(self, value: list[Any]) -> int:
        """How many leading items of `value` (the input array) a run gives."""
        text = key_of(value)
        if text is None:
            self._open = False
            return 0
        self._text = text
        best, taken = None, 0
        for run in self.cache.runs():
            shared = _shared(run, text)
            if shared > taken:
                best, taken = run, shared
        if best is None:
            return 0
        nulls = [(i, where) for i, where in best.nulls if i < taken]
        if not all(_still_null(value[i], (where,)) for i, where in nulls):
            self._open = False  # the same text as the run's, but a NaN where the run had a null
            return 0
        self._base, self._continued = best, taken == len(best.entries)
        self._entries = list(best.entries[:taken])
        self._ends = list(best.ends[:taken])
        self._nulls = nulls
        self.cache.took(taken)
        return taken

    def again(self, state: _ItemState, count: int, items: list[Item], system: list[str]) -> None:
        """The run's first `count` items given to `state` as decoding them did, in order (`keep`
        adds each one's IR items to `items`, or the system prompt). An entry that did nothing but
        give IR items (`Decoded.plain`, most of a history) costs one `extend`."""
        keep = state.keep
        for i, entry in enumerate(self._entries[:count]):
            if not entry.plain:
                _effects(entry, f"input[{i}]", state)
            if items:
                items.extend(entry.items)
            else:
                keep(entry.items, items, system)

    def skip(self) -> None:
        """An item decoded without `item` (one the decoder drops whole): the run ends before it."""
        self._open = False

    # -- the others -----------------------------------------------------------------------------
    def item(self, state: _ItemState, handler: Handler, raw: dict[str, Any], path: str,
             kind: str) -> list[Item]:
        """`handler`'s items for `raw` at `path`, its drops and tools given to `state`, from the
        cache when the item was seen."""
        key = key_of(raw)
        if key is None:
            self._open = False
            return handler(state, raw, path)
        found = self.cache.get((DIALECT, key))
        if found is not None and found.nulls and not _still_null(raw, found.nulls):
            found = None  # a NaN where the entry's item had a null: decoded afresh, not stored
            self._open = False
            return handler(state, raw, path)
        if found is None:
            report = Report()
            tools = ToolCollector(report) if kind in DECLARING else None
            main_report, main_tools, reasoning = state.report, state.tools, state.reasoning
            state.report, state.tools = report, tools or main_tools
            try:
                items = handler(state, raw, path)
            finally:
                state.report, state.tools = main_report, main_tools
            effort = state.reasoning.effort if state.reasoning is not reasoning else None
            state.reasoning = reasoning
            nulls = nulls_of(raw) if _NULL in key else ()
            found = _entry(path, items, report, tools, effort, nulls)
            if found is None:  # not reusable: what it gave goes to the request as it is
                self._open = False
                _merge(report, main_report)
                if tools is not None:
                    main_tools.restore(*tools.declared())
                _set_effort(state, effort)
                return items
            self.cache.put((DIALECT, key), found, len(key))
        elif found.path != path:
            found = _moved(found, path)
            self.cache.put((DIALECT, key), found, len(key))
        if self._open:
            self._nulls.extend((len(self._entries), where) for where in found.nulls)
            self._entries.append(found)
            self._ends.append((self._ends[-1] + 1 if self._ends else 1) + len(key))
        return _give(found, path, state)

    def end(self) -> None:
        """Keep the request's run: the items it decoded, for the conversation's next request."""
        text, ends = self._text, self._ends
        if text is None or not ends:
            return
        if self._open and ends[-1] + 1 != len(text):  # orjson wrote the array otherwise: no run
            return  # pragma: no cover - a safeguard, orjson's compact array is its items joined
        base, continued = self._base, self._continued
        run = Run(text if self._open else text[:ends[-1]], tuple(ends), tuple(self._entries),
                  tuple(self._nulls))
        self.cache.add_run(run, len(run.text), lambda old: continued and old is base)

    # -- the top-level tools ----------------------------------------------------------------
    def tools(self, collector: ToolCollector, declarations: Any, path: str) -> None:
        """The top-level `tools` declared into `collector`, from the cache when seen."""
        key = key_of(declarations) if isinstance(declarations, list) else None
        if key is None:
            collector.add_all(declarations, path)
            return
        found = self.cache.get((DIALECT, key))
        if found is not None and found.nulls and not _still_null(declarations, found.nulls):
            collector.add_all(declarations, path)
            return
        if found is None:
            recorder = ToolCollector(Report())
            recorder.add_all(declarations, path)
            nulls = nulls_of(declarations) if _NULL in key else ()
            found = _entry(path, [], recorder.report, recorder, None, nulls)
            if found is None:
                _merge(recorder.report, collector.report)
                collector.restore(*recorder.declared())
                return
            self.cache.put((DIALECT, key), found, len(key))
        for suffix, kind in found.dropped:
            collector.report.drop(path + suffix, kind)
        collector.restore(found.tools, found.namespaces)


def _shared(run: Run, text: bytes) -> int:
    """How many leading items `text` has the same as `run` (the same bytes up to the end of each)."""
    ends = run.ends
    last = ends[-1]
    if len(text) > last and text[last] in (_COMMA, _CLOSE) and text.startswith(run.text[:last]):
        return len(ends)
    low, high = 0, len(ends) - 1  # the answer is in [low, high]: items 0..k-1 are the same
    while low < high:
        middle = (low + high + 1) // 2
        end = ends[middle - 1]
        if len(text) > end and text.startswith(run.text[:end]):
            low = middle
        else:
            high = middle - 1
    return low


def _entry(path: str, items: list[Item], report: Report, tools: ToolCollector | None,
           effort: str | None, nulls: tuple[Where, ...] | None) -> Decoded | None:
    """The entry for what decoding at `path` gave; None when it cannot be reused: its value holds
    a NaN (`nulls` None), its decoding left a note or named a path outside it."""
    if nulls is None or report.notes:
        return None
    cosmetic = set(report.cosmetic)
    dropped = []
    for dropped_path in report.dropped:
        if not dropped_path.startswith(path):
            return None
        dropped.append((dropped_path[len(path):], "cosmetic" if dropped_path in cosmetic else "lossy"))
    declared, namespaces = tools.declared() if tools is not None else ((), ())
    return Decoded(path, tuple(items), tuple(dropped), declared, namespaces, effort,  # type: ignore[arg-type]
                   nulls)


def _give(found: Decoded, path: str, state: _ItemState) -> list[Item]:
    _effects(found, path, state)
    return list(found.items)


def _effects(found: Decoded, path: str, state: _ItemState) -> None:
    """What decoding the item did besides its IR items: drops, tools, the effort."""
    for suffix, kind in found.dropped:
        state.report.drop(path + suffix, kind)
    if found.tools or found.namespaces:
        state.tools.restore(found.tools, found.namespaces)
    _set_effort(state, found.effort)


def _set_effort(state: _ItemState, effort: str | None) -> None:
    if effort is not None:
        state.reasoning = state.reasoning.model_copy(update={"effort": effort})


def _merge(recorded: Report, report: Report) -> None:
    cosmetic = set(recorded.cosmetic)
    for path in recorded.dropped:
        report.drop(path, "cosmetic" if path in cosmetic else "lossy")
    for note in recorded.notes:
        report.note(note)


# -- an item seen at another place ----------------------------------------------------------------

def _moved(found: Decoded, path: str) -> Decoded:
    """`found` as decoding it at `path` gives: every origin below its old place renumbered."""
    old = found.path

    def origin(value: str) -> str:
        return path + value[len(old):] if value.startswith(old) else value

    items = tuple(_moved_item(item, origin) for item in found.items)
    tools = tuple((key, tool.model_copy(update={"origin": origin(tool.origin)})) for key, tool in found.tools)
    return replace(found, path=path, items=items, tools=tools)


def _moved_item(item: Any, origin: Callable[[str], str]) -> Any:
    """An item or part, its origin and its breakpoint's renumbered, its parts' likewise."""
    changes: dict[str, Any] = {}
    if getattr(item, "origin", ""):
        changes["origin"] = origin(item.origin)
    mark = getattr(item, "cache", None)
    if mark is not None and mark.origin:
        changes["cache"] = mark.model_copy(update={"origin": origin(mark.origin)})
    parts = getattr(item, "parts", None)
    if parts is not None:
        changes["parts"] = [_moved_item(part, origin) for part in parts]
    return replace(item, **changes) if changes else item

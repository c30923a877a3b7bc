"""What a translation could not carry: dropped fields as dotted paths, each of a kind, and notes.

A drop is `lossy` (the upstream model sees less, or may do what the client forbade: a tool, an
image, a message, `text.format`, `reasoning.effort`) or `cosmetic` (nothing the model sees or may
do changes: `tools[3].strict`, `text.verbosity`). The kind is decided here, once: a path matching
`COSMETIC` is cosmetic, every other path is lossy, so a new drop site that names nothing counts as
lossy and shows up rather than hides. A site whose loss depends on the value passes `kind=`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Set
from typing import Any, Literal

Kind = Literal["lossy", "cosmetic"]

COSMETIC: tuple[str, ...] = (
    # strict schema adherence of a tool or of the output format: the schema itself still goes
    # upstream, only its enforcement is missing (docs/structured-output.md)
    "tools[*].strict",
    "tools[*].tools[*].strict",
    "text.format.strict",
    # how long the answer should be, and whether a summary of the reasoning comes back: the
    # question, the tools and the model's reasoning are unchanged
    "text.verbosity",
    "reasoning.summary",
    # GPT-5's label on its own earlier messages (commentary / final answer, docs/codex.md "Input
    # items"); the message text is sent, other models have no such label
    "input[*].phase",
    # the resolution OpenAI renders an image at; the image itself is sent whole
    "input[*].content[*].detail",
    "input[*].output[*].detail",
    # OpenAI account bookkeeping: billing tier, tags and end-user ids nobody's answer depends on
    "service_tier",
    "metadata",
    "user",
    "safety_identifier",
    "prompt_cache_retention",
)
"""Path patterns of cosmetic drops; `[*]` stands for any index. Every other path is lossy."""

_COSMETIC = re.compile("|".join(re.escape(p).replace(r"\[\*\]", r"\[\d+\]") for p in COSMETIC))


def kind_of(path: str) -> Kind:
    """The kind of a dropped path when its site says nothing: cosmetic only if `COSMETIC` says so."""
    return "cosmetic" if _COSMETIC.fullmatch(path) else "lossy"


class Report:
    """Collects dropped paths (`input[3].phase`, `text.verbosity`) with their kind, and notes.

    Order is kept and duplicates are ignored, so the list reads in request order and a field
    named twice (once by the decoder, once by an encoder) appears once; named as both kinds, it
    is lossy.
    """

    __slots__ = ("_dropped", "_notes", "_rename")

    def __init__(self, dropped: list[str] | None = None, notes: list[str] | None = None) -> None:
        self._dropped: dict[str, Kind] = {}
        self._notes: dict[str, None] = dict.fromkeys(notes or ())
        self._rename: Callable[[str], str] | None = None
        for path in dropped or ():
            self.drop(path)

    def rename(self, rename: Callable[[str], str]) -> None:
        """Paths named from now on are written `rename(path)`, their kind decided on the path as
        named: a client dialect whose words are not the IR's (translators/messages_client/paths.py)."""
        self._rename = rename

    def drop(self, path: str, kind: Kind | None = None) -> None:
        kind = kind or kind_of(path)
        if self._rename is not None:
            path = self._rename(path)
        if self._dropped.get(path) != "lossy":
            self._dropped[path] = kind

    def drop_unread(self, fields: Mapping[str, Any], read: Set[str], path: str, *,
                    skip_empty: bool = False) -> None:
        """Name each key of `fields` outside `read` as `path.key`, in request order (a set
        difference would order them by string hash, which changes from one process to the next).
        `skip_empty`: a key whose value is null, `[]` or `""` carries nothing to lose."""
        if fields.keys() <= read:
            return
        for key, value in fields.items():
            if key not in read and not (skip_empty and value in (None, [], "")):
                self.drop(f"{path}.{key}")

    def note(self, text: str) -> None:
        self._notes[text] = None

    @property
    def dropped(self) -> list[str]:
        """Every dropped path, of either kind, in the order first named."""
        return list(self._dropped)

    @property
    def cosmetic(self) -> list[str]:
        """The dropped paths whose loss changes nothing the model sees or may do."""
        return [path for path, kind in self._dropped.items() if kind == "cosmetic"]

    @property
    def lossy(self) -> list[str]:
        return [path for path, kind in self._dropped.items() if kind == "lossy"]

    @property
    def notes(self) -> list[str]:
        return list(self._notes)

    def __bool__(self) -> bool:
        return bool(self._dropped or self._notes)

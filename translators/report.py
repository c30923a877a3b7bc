"""What a translation could not carry: dropped fields as dotted paths, and notes."""

from __future__ import annotations

from collections.abc import Mapping, Set
from typing import Any


class Report:
    """Collects dropped paths (`input[3].phase`, `text.verbosity`) and free-text notes.

    Order is kept and duplicates are ignored, so the list reads in request order and a field
    named twice (once by the decoder, once by an encoder) appears once.
    """

    __slots__ = ("_dropped", "_notes")

    def __init__(self, dropped: list[str] | None = None, notes: list[str] | None = None) -> None:
        self._dropped: dict[str, None] = dict.fromkeys(dropped or ())
        self._notes: dict[str, None] = dict.fromkeys(notes or ())

    def drop(self, path: str) -> None:
        self._dropped[path] = None

    def drop_unread(self, fields: Mapping[str, Any], read: Set[str], path: str, *,
                    skip_empty: bool = False) -> None:
        """Name each key of `fields` outside `read` as `path.key`, in request order (a set
        difference would order them by string hash, which changes from one process to the next).
        `skip_empty`: a key whose value is null, `[]` or `""` carries nothing to lose."""
        if fields.keys() <= read:
            return
        for key, value in fields.items():
            if key not in read and not (skip_empty and value in (None, [], "")):
                self._dropped[f"{path}.{key}"] = None

    def note(self, text: str) -> None:
        self._notes[text] = None

    @property
    def dropped(self) -> list[str]:
        return list(self._dropped)

    @property
    def notes(self) -> list[str]:
        return list(self._notes)

    def __bool__(self) -> bool:
        return bool(self._dropped or self._notes)

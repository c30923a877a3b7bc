"""Id factories. Translators never call uuid or the clock inline, so tests can compare bytes."""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Callable

IdFactory = Callable[[str], str]
"""Given a prefix (`resp`, `msg`, `fc`...), returns a fresh id such as `msg_1a2b...`."""


def random_ids() -> IdFactory:
    """Ids unique across turns, as the live proxy needs (Codex echoes item ids back)."""

    def new_id(prefix: str) -> str:
        return f"{prefix}_{secrets.token_hex(12)}"

    return new_id


def sequential_ids(seed: str = "") -> IdFactory:
    """Deterministic ids (`msg_1`, `fc_2`...) for tests and reproducible CLI output."""
    counter = itertools.count(1)

    def new_id(prefix: str) -> str:
        return f"{prefix}_{seed}{next(counter)}"

    return new_id

"""A `gateway_*` option nobody declared stops mitmdump at start-up (docs/console.md "Unknown
options"), with the nearest known name.

mitmproxy keeps a `--set NAME=VALUE` (or a `NAME: VALUE` of its `config.yaml`) whose name no addon
has declared in `options.deferred` and applies it once an addon declares the name; a name nobody
declares stays there and mitmproxy never says so. A misspelled `gateway_upstrem=chat` would then
run on the default upstream. The gateway's `configure` calls `check` once every addon of the
script (and each `$GATEWAY_DIALECTS` dialect's options) is declared, inside the same guard as a
bad value: one line on stderr and exit 1 while starting (addon/observe/console.py `option_errors`).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from mitmproxy import exceptions

PREFIX = "gateway_"


def problems(deferred: Iterable[str], known: Iterable[str]) -> list[str]:
    """What is wrong with each deferred `gateway_` name no addon declared, with the nearest known
    `gateway_` name; other addons' names are theirs to report."""
    declared = set(known)
    # compared without the prefix: every name shares `gateway_`, which would make any name near
    ours = sorted(name.removeprefix(PREFIX) for name in declared if name.startswith(PREFIX))
    found = []
    for name in sorted(deferred):
        if not name.startswith(PREFIX) or name in declared:
            continue
        near = difflib.get_close_matches(name.removeprefix(PREFIX), ours, n=1)
        hint = (f"did you mean {PREFIX}{near[0]}?" if near
                else "no gateway option has a name near it (docs/options.md lists them)")
        found.append(f"unknown option {name}: {hint}")
    return found


def check(deferred: Iterable[str], known: Iterable[str]) -> None:
    """Raise `OptionsError` naming every unknown `gateway_` option, in one line."""
    if found := problems(deferred, known):
        raise exceptions.OptionsError("; ".join(found))

"""The gateway's command-line tools: `python -m addon <command> ...` (from the repository,
`./run <command> ...`, which uses the gateway's own `.venv`).

    clients   client keys: add, rotate, remove, list (docs/team.md)
    usage     what each client used, from the store (docs/team.md "Usage and budgets")
    catalog   Codex's model catalog as a file (docs/long-sessions.md)
    replay    a capture through real mitmdump, offline (docs/captures.md; `./run demo`)
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

COMMANDS = {
    "clients": "addon.team.clients_file",
    "usage": "addon.team.usage",
    "catalog": "addon.routes.catalog",
    "replay": "addon.observe.replay",
}


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in COMMANDS:
        print(__doc__, file=sys.stderr)
        return 2
    return int(importlib.import_module(COMMANDS[args[0]]).main(args[1:]) or 0)


if __name__ == "__main__":
    sys.exit(main())

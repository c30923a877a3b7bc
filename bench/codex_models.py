"""`python -m bench.codex_models [--check]`: regenerate `addon/codex-<version>-models.json`, the
catalog bundled in the installed Codex CLI, from the binary itself (`codex debug models --bundled`).

The gateway copies these entries when it serves Codex's model catalog (addon/routes/catalog.py,
docs/codex.md "Model catalog"): a served entry replaces Codex's own as a whole, so everything but
the context window must be what the binary ships. The file is Codex's output byte for byte.
`--check` only compares and exits 1 when the shipped file differs.
"""

from __future__ import annotations

import argparse
import sys

from addon.routes.catalog import BUNDLED_PATH, BUNDLED_VERSION
from tests.support.codex_cli import CODEX_VERSION, bundled_catalog


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.codex_models",
                                     description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 when the file differs")
    args = parser.parse_args(argv)
    if CODEX_VERSION != BUNDLED_VERSION:
        print(f"the test harness installs Codex {CODEX_VERSION} but addon/routes/catalog.py ships "
              f"{BUNDLED_VERSION}: change BUNDLED_VERSION first", file=sys.stderr)
        return 1
    fresh = bundled_catalog()
    if args.check:
        same = BUNDLED_PATH.is_file() and BUNDLED_PATH.read_bytes() == fresh
        print(f"{BUNDLED_PATH.name}: {'up to date' if same else 'differs from the binary'}")
        return 0 if same else 1
    BUNDLED_PATH.write_bytes(fresh)
    print(f"wrote {BUNDLED_PATH} ({len(fresh)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The clients file (`gateway_clients`, docs/team.md): its `[[client]]` tables read and checked, and
written by the `clients` command.

    [[client]]
    name = "ana"
    key_sha256 = "9f86d081..."
    models = ["gpt-5*"]          # optional: patterns of the client models this client may use
    tokens_per_day = 2000000     # optional: input + output tokens per UTC day (0: no limit)
    requests_per_minute = 60     # optional (0: no limit)
    usd_per_day = 5.0            # optional: USD per UTC day, by the price table (0: no limit)
    usd_per_month = 100.0        # optional: USD per UTC calendar month (0: no limit)

`python -m addon clients add NAME --file clients.toml` makes a key, prints it once and appends its
hash; `rotate NAME`, `remove NAME` and `list` too. The file keeps each key's SHA-256 only, never the
key.
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import re
import secrets
import sys
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

KEY_PREFIX = "gwk-"
"""Gateway keys start with this, so a leaked one is recognised (and told apart from a vendor's)."""
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")
_HASH = re.compile(r"^[0-9a-f]{64}$")
_FIELDS = {"name", "key_sha256", "models", "tokens_per_day", "requests_per_minute", "usd_per_day",
           "usd_per_month"}
_USD = ("usd_per_day", "usd_per_month")


class ClientsError(ValueError):
    """A clients file that cannot be used; the message says what to change."""


@dataclass(frozen=True, slots=True)
class Client:
    name: str
    key_sha256: str
    models: tuple[str, ...] = ()
    """fnmatch patterns of the client model names this client may ask for; empty: any."""
    tokens_per_day: int = 0
    """Input + output tokens per UTC day (usage recorded in the store); 0: no limit."""
    requests_per_minute: int = 0
    """Requests per rolling minute, counted in the store (every gateway on it); 0: no limit."""
    usd_per_day: float = 0.0
    """USD per UTC day, each turn priced by the price table (addon/observe/costs.py); 0: no limit."""
    usd_per_month: float = 0.0
    """USD per UTC calendar month; 0: no limit."""

    @property
    def limited(self) -> bool:
        """Any budget the store counts (tokens or USD)."""
        return bool(self.tokens_per_day or self.usd_per_day or self.usd_per_month)

    def allows(self, model: str) -> bool:
        return not self.models or any(fnmatch.fnmatchcase(model, p) for p in self.models)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()


def new_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def parse(text: str, where: str = "clients file") -> tuple[Client, ...]:
    """The `[[client]]` tables of a clients file, checked."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ClientsError(f"{where} is not TOML: {exc}") from None
    tables = data.get("client", [])
    if set(data) - {"client"} or not isinstance(tables, list):
        raise ClientsError(f"{where}: write [[client]] tables only")
    found: list[Client] = []
    for n, table in enumerate(tables):
        at = f"{where}: client[{n}]"
        if not isinstance(table, dict):
            raise ClientsError(f"{at} is not a table")
        if unknown := set(table) - _FIELDS:
            raise ClientsError(f"{at}: unknown field(s) {', '.join(sorted(unknown))}; known: "
                               f"{', '.join(sorted(_FIELDS))}")
        name, digest = table.get("name"), table.get("key_sha256")
        if not isinstance(name, str) or not _NAME.match(name):
            raise ClientsError(f"{at}: name must be 1-64 letters, digits, '.', '_', '@' or '-'")
        if not isinstance(digest, str) or not _HASH.match(digest.lower()):
            raise ClientsError(f"{at} ({name}): key_sha256 must be 64 hex digits "
                               "(python -m addon clients add)")
        models = table.get("models", [])
        if not isinstance(models, list) or not all(isinstance(m, str) and m for m in models):
            raise ClientsError(f"{at} ({name}): models must be a list of patterns, e.g. [\"gpt-5*\"]")
        limits: dict[str, Any] = {}
        for field in ("tokens_per_day", "requests_per_minute"):
            value = table.get(field, 0)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ClientsError(f"{at} ({name}): {field} must be a whole number >= 0 (0: no limit)")
            limits[field] = value
        for field in _USD:
            value = table.get(field, 0)
            if not isinstance(value, int | float) or isinstance(value, bool) or not 0 <= value < float("inf"):
                raise ClientsError(f"{at} ({name}): {field} must be a number of US dollars >= 0 "
                                   "(0: no limit)")
            limits[field] = float(value)
        found.append(Client(name, digest.lower(), tuple(models), **limits))
    names = [c.name for c in found]
    if dup := {n for n in names if names.count(n) > 1}:
        raise ClientsError(f"{where}: client name(s) used twice: {', '.join(sorted(dup))}")
    hashes = [c.key_sha256 for c in found]
    if len(set(hashes)) != len(hashes):
        raise ClientsError(f"{where}: two clients have the same key_sha256")
    return tuple(found)


def load(path: str) -> tuple[Client, ...]:
    where = Path(path).expanduser()
    try:
        text = where.read_text(encoding="utf-8")
    except OSError as exc:
        raise ClientsError(f"clients file {str(where)!r} cannot be read: {exc.strerror or exc}") from None
    return parse(text, f"clients file {str(where)!r}")


# -- the file, for the command ----------------------------------------------------------------
def _toml_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def table(client: Client) -> str:
    lines = ["[[client]]", f"name = {_toml_string(client.name)}",
             f"key_sha256 = {_toml_string(client.key_sha256)}"]
    if client.models:
        lines.append("models = [" + ", ".join(_toml_string(m) for m in client.models) + "]")
    if client.tokens_per_day:
        lines.append(f"tokens_per_day = {client.tokens_per_day}")
    if client.requests_per_minute:
        lines.append(f"requests_per_minute = {client.requests_per_minute}")
    for field in _USD:
        if value := getattr(client, field):
            lines.append(f"{field} = {value!r}")
    return "\n".join(lines) + "\n"


def _write(path: Path, clients: Iterable[Client]) -> None:
    text = "\n".join(table(c) for c in clients)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.chmod(0o600)
    temporary.replace(path)  # atomic: a proxy reading the file never sees half of it


def _limits(c: Client) -> str:
    return "\t".join([f"models={','.join(c.models)}" if c.models else "models=any",
                      f"tokens_per_day={c.tokens_per_day or 'unlimited'}",
                      f"requests_per_minute={c.requests_per_minute or 'unlimited'}",
                      f"usd_per_day={c.usd_per_day or 'unlimited'}",
                      f"usd_per_month={c.usd_per_month or 'unlimited'}"])


def main(argv: Sequence[str] | None = None, out: Any = None) -> int:
    out = out or sys.stdout
    parser = argparse.ArgumentParser(prog="python -m addon clients",
                                     description="Issue, list and revoke the gateway's client keys "
                                                 "(the file gateway_clients names).")
    parser.add_argument("--file", default="clients.toml", help="the clients file (default: clients.toml)")
    # `--file` also after the command (`add ana --file clients.toml`, as docs/team.md writes it);
    # SUPPRESS keeps a subcommand from resetting a `--file` given before it
    either = argparse.ArgumentParser(add_help=False)
    either.add_argument("--file", default=argparse.SUPPRESS, help="the clients file")
    commands = parser.add_subparsers(dest="command", required=True)
    add = commands.add_parser("add", parents=[either],
                              help="make a new key for NAME, print it once, store its hash")
    add.add_argument("name")
    add.add_argument("--models", default="", help="comma-separated patterns, e.g. gpt-5*,o4*")
    add.add_argument("--tokens-per-day", type=int, default=0)
    add.add_argument("--requests-per-minute", type=int, default=0)
    add.add_argument("--usd-per-day", type=float, default=0.0)
    add.add_argument("--usd-per-month", type=float, default=0.0)
    rotate = commands.add_parser("rotate", parents=[either], help="give NAME a new key (printed once)")
    rotate.add_argument("name")
    change = commands.add_parser("set", parents=[either],
                                 help="change NAME's models or budgets (its key stays)")
    change.add_argument("name")
    change.add_argument("--models", help="comma-separated patterns; empty: any model")
    for flag, kind in (("--tokens-per-day", int), ("--requests-per-minute", int), ("--usd-per-day", float),
                       ("--usd-per-month", float)):
        change.add_argument(flag, type=kind, help="0: no limit")
    commands.add_parser("list", parents=[either], help="the clients and their limits (never a key)")
    remove = commands.add_parser("remove", parents=[either], help="revoke NAME's key")
    remove.add_argument("name")
    args = parser.parse_args(argv)
    path = Path(args.file).expanduser()
    try:
        clients = load(str(path)) if path.exists() else ()
        if args.command == "add":
            if any(c.name == args.name for c in clients):
                raise ClientsError(f"{args.name!r} is in {str(path)!r} already: `rotate` gives it a new key")
            key = new_key()
            models = tuple(m.strip() for m in args.models.split(",") if m.strip())
            added = Client(args.name, hash_key(key), models, args.tokens_per_day, args.requests_per_minute,
                           args.usd_per_day, args.usd_per_month)
            parse(table(added))  # the same checks as the proxy's
            _write(path, (*clients, added))
            print(f"client {args.name!r} added to {path}; its key (shown once, not stored):\n{key}", file=out)
        elif args.command == "rotate":
            old = next((c for c in clients if c.name == args.name), None)
            if old is None:
                raise ClientsError(f"no client {args.name!r} in {str(path)!r}")
            key = new_key()
            _write(path, (replace(c, key_sha256=hash_key(key)) if c is old else c for c in clients))
            print(f"client {args.name!r} has a new key (shown once, not stored); the old one is refused "
                  f"from now on:\n{key}", file=out)
        elif args.command == "set":
            old = next((c for c in clients if c.name == args.name), None)
            if old is None:
                raise ClientsError(f"no client {args.name!r} in {str(path)!r}")
            changes: dict[str, Any] = {f: getattr(args, f) for f in ("tokens_per_day", "requests_per_minute",
                                                                    *_USD) if getattr(args, f) is not None}
            if args.models is not None:
                changes["models"] = tuple(m.strip() for m in args.models.split(",") if m.strip())
            new = replace(old, **changes)
            parse(table(new))  # the same checks as the proxy's
            _write(path, (new if c is old else c for c in clients))
            print(f"client {args.name!r} changed in {path}: {_limits(new)}", file=out)
        elif args.command == "list":
            for c in clients:
                print(f"{c.name}\t{c.key_sha256[:12]}...\t" + _limits(c), file=out)
        else:
            if not any(c.name == args.name for c in clients):
                raise ClientsError(f"no client {args.name!r} in {str(path)!r}")
            _write(path, (c for c in clients if c.name != args.name))
            print(f"client {args.name!r} removed from {path}; its key is refused from now on", file=out)
    except ClientsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

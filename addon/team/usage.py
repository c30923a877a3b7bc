"""Usage per client: what each answered turn cost upstream, kept in the store (addon/state/store/sql.py
`gw_usage`, one row per client, UTC day, route and model) and read back three ways: the budgets
(`tokens_per_day`, addon/team/budgets.py), a client's own `GET /gateway/usage`, and the operator's

    python -m addon usage STORE [--client NAME] [--day YYYY-MM-DD | --from DAY --to DAY] [--json]

where STORE is the SQLite file (gateway_store_path) or the postgresql:// URL (gateway_store_url).
Counts come from the answer the client got (its `usage`, a Responses or a Messages one: the
upstream's figures as the translators carried them over, docs/team.md "Usage"); the cost is the
one the flow's record says (addon/observe/costs.py), 0 for a turn with no price.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from addon.observe.costs import dollars
from addon.state.store import StoreError, open_store
from translators.core import pricing

PATH = "/gateway/usage"
"""Where a client reads its own usage, on any host the gateway serves."""
TOKENS = ("requests", "input_tokens", "cached_tokens", "output_tokens", "reasoning_tokens",
          "partial_requests")
FIELDS = (*TOKENS, "cost_usd")
"""A row's figures: whole counts, then the cost in USD. `partial_requests`: of `requests`, those
the client abandoned mid-answer, counted from the usage the upstream had reported by then."""
_MAX_DAYS = 366


def today() -> str:
    """The UTC day usage is counted in (and `tokens_per_day` spent)."""
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")


def counts(usage: dict[str, Any] | None, cost_usd: Any = None, *, partial: bool = False) -> dict[str, Any]:
    """One answered turn's figures from the usage the client got (none: the request alone) and
    its cost from the flow's record (`info["cost_usd"]`). Input counts cached and written tokens
    in, output counts reasoning in, whichever client shape the usage has. `partial`: the client
    abandoned the turn mid-answer, `usage` is what the upstream had reported by then."""
    tokens = pricing.usage_of(usage) or pricing.TokenUsage()
    cost = cost_usd if isinstance(cost_usd, int | float) and not isinstance(cost_usd, bool) else 0.0
    return {"requests": 1, "input_tokens": tokens.input_total, "cached_tokens": tokens.cache_read,
            "output_tokens": tokens.output, "reasoning_tokens": tokens.reasoning,
            "cost_usd": float(cost) if cost > 0 else 0.0, "partial_requests": int(partial)}


def days(first: str | None, last: str | None, today: str) -> tuple[str, str] | str:
    """The range `first`..`last` (YYYY-MM-DD, UTC): `first` defaults to `last`, else today;
    `last` to today (`--from D` alone runs to today). A message when it is not one."""
    try:
        start = datetime.date.fromisoformat(first or last or today)
        end = datetime.date.fromisoformat(last or today)
    except ValueError:
        return "from and to must be days written YYYY-MM-DD"
    if end < start:
        return "to is before from"
    if (end - start).days >= _MAX_DAYS:
        return f"a range of at most {_MAX_DAYS} days"
    return start.isoformat(), end.isoformat()


def totals(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {name: sum(int(row.get(name) or 0) for row in rows) for name in TOKENS}
    out["cost_usd"] = round(sum(float(row.get("cost_usd") or 0) for row in rows), 10)
    return out


def document(client: str, span: tuple[str, str], rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """`GET /gateway/usage`'s answer: the client's rows of the range and their totals."""
    return {"object": "gateway.usage", "client": client, "from": span[0], "to": span[1],
            "totals": totals(rows), "data": [{k: v for k, v in row.items() if k != "client"} for row in rows]}


def table(rows: Sequence[dict[str, Any]]) -> str:
    """Per client: its total line, then one line per day, route and model."""
    lines = ["client\tday\troute\tmodel\t" + "\t".join(FIELDS)]
    by_client: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_client.setdefault(row["client"], []).append(row)
    for client, own in by_client.items():
        name = client or "(no client key)"
        lines.append(f"{name}\t*\t*\t*\t" + _figures(totals(own)))
        for row in own:
            lines.append(f"{name}\t{row['day']}\t{row['route']}\t{row['model']}\t" + _figures(row))
    if by_client:
        lines.append("*\t*\t*\t*\t" + _figures(totals(rows)))
    return "\n".join(lines) + "\n"


def _figures(row: dict[str, Any]) -> str:
    cost = dollars(float(row.get("cost_usd") or 0)) or "$0"
    return "\t".join([*(str(row.get(f) or 0) for f in TOKENS), cost])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m addon usage",
                                     description="Usage per client recorded by the gateway "
                                                 "(with gateway_clients).")
    parser.add_argument("store", help="the store: a SQLite file or a postgresql:// URL")
    parser.add_argument("--client", help="one client only")
    parser.add_argument("--day", help="one UTC day, YYYY-MM-DD (default: today)")
    parser.add_argument("--from", dest="first", help="first day of a range")
    parser.add_argument("--to", dest="last", help="last day of a range (default: today)")
    parser.add_argument("--json", action="store_true", help="the rows as JSON")
    args = parser.parse_args(argv)
    today = datetime.datetime.now(datetime.UTC).date().isoformat()
    span = days(args.day or args.first, args.day or args.last, today)  # --from D alone: D to today
    if isinstance(span, str):
        print(f"error: {span}", file=sys.stderr)
        return 2
    if "://" not in args.store and not Path(args.store).expanduser().is_file():
        # a mistyped path must not become a new, empty store that reports no usage
        print(f"error: no store at {args.store!r} (the gateway's gateway_store_path)", file=sys.stderr)
        return 1
    try:
        store = open_store(args.store, ttl=0, max_bytes=0)
        try:
            rows = store.usage(*span, client=args.client)
        finally:
            store.close()
    except StoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"from": span[0], "to": span[1], "totals": totals(rows), "data": rows}, indent=1))
    else:
        print(f"usage from {span[0]} to {span[1]} (UTC)", file=sys.stderr)
        sys.stdout.write(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
